/* hk_batch.h - a batch of regions packed for scoring.
 *
 * The batch is the one unit of work that flows reader -> engine -> table. Its
 * arrays are plain data so that the CPU model and the CUDA engine (kernels/)
 * read the same layout; nothing here is specific to a backend.
 *
 * Layout
 *   read k:  positions [read_off[k], read_off[k+1]) of read_text, read_base,
 *            read_q, read_i, read_d, read_g;
 *   hap k:   positions [hap_off[k], hap_off[k+1]) of hap_text, hap_base, hap_pd;
 *   region:  reads [read0, read0 + n_reads), haps [hap0, hap0 + n_haps), and
 *            the likelihood of its read r against its hap h at
 *            lk[pair0 + r * n_haps + h] (read-major, as GATK writes pairs).
 * Base codes are 0..3 for A C G T and 4 for N (a PDHMM batch keeps the case:
 * see HK_BASE_LOWER). Qualities are Phred values
 * already normalised by the model (base-quality floor, gcp override), so a
 * backend applies no further rule to them. read_gaps[k] sums up read k's gap
 * qualities (set with its sequences), so that a backend can skip their rows.
 *
 * Ownership: the batch owns every array and every region name; hk_batch_clear
 * empties it for reuse keeping its capacity, hk_batch_free releases it.
 */
#ifndef HK_BATCH_H
#define HK_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include "hk_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A read's gap qualities in brief. When `constant`, every position but the
 * last has insertion, deletion and gap-continuation quality ins, del, gcp,
 * and the last has ins_last, del_last, gcp_last: HaplotypeCaller's usual
 * "IIII...IN" without indel recalibration. Such a read's rows are then
 * usually not written at all (`rows` 0: the summary is the whole of them,
 * and writing three bytes per base for nothing was a third of the reader's
 * stores); code on the host reads a read's rows with hk_batch_gap_rows. A
 * PDHMM batch keeps every read's rows (its GPU packing copies them).
 * The layout is fixed (8 bytes): the CUDA engine copies these to the GPU as
 * they are, and its kernels read a constant read's summary, never its rows. */
typedef struct {
    uint8_t constant;
    uint8_t ins, del, gcp;
    uint8_t ins_last, del_last, gcp_last;
    uint8_t rows;        /* 1: read_i, read_d, read_g hold the read's rows */
} hk_read_gaps_t;

typedef struct {
    char    *name;     /* region tag, NULL when the input has none */
    long     line;     /* 1-based input line where the region starts (as reported:
                          a "# source-line" tag sets it) */
    long     first_line, last_line;   /* the lines of this input that hold it, 1-based */
    uint32_t read0;    /* first read of the region in the batch */
    uint32_t n_reads;
    uint32_t hap0;     /* first haplotype of the region in the batch */
    uint32_t n_haps;
    uint64_t pair0;    /* index of the region's first result in lk[] */
    uint64_t cells;    /* sum over pairs of read length * haplotype length */
    uint32_t input;    /* the batch's `input` when the region began (which input holds it) */
} hk_region_t;

typedef struct {
    size_t       n_regions, m_regions;
    hk_region_t *regions;

    size_t    n_reads, m_reads;      /* read_off has n_reads + 1 entries */
    uint64_t *read_off;
    size_t    n_read_pos, m_read_pos;
    int       no_text;               /* set by the owner: no read_text or hap_text (a table
                                        without sequences needs neither) */
    char     *read_text;             /* bases as written in the input; NULL with no_text */
    uint8_t  *read_base;             /* base codes */
    uint8_t  *read_q, *read_i, *read_d, *read_g; /* Phred qualities */
    hk_read_gaps_t *read_gaps;       /* per read (see above) */

    size_t    n_haps, m_haps;        /* hap_off has n_haps + 1 entries */
    uint64_t *hap_off;
    size_t    n_hap_pos, m_hap_pos;
    char     *hap_text;              /* NULL with no_text */
    uint8_t  *hap_base;
    uint8_t  *hap_pd;                /* PD bytes (SPEC 1b) of a PDHMM batch, set by its reader */

    int       pdhmm;                 /* 1: every region is a PDHMM dump's (SPEC 1b): scored with
                                        that model, its tables carry haplotype_pd */

    size_t    n_pairs, m_pairs;
    double   *lk;                    /* results, log10 */
    double   *expected;              /* the input's own value per pair, NaN if none */

    long     *read_line, *hap_line;  /* input line of each read / hap (for errors) */
    long     *pair_line;             /* input line of each pair's own record (a results
                                        file's); 0: the pair has none, its read's line tells */
    uint32_t  input;                 /* set by the owner: the input being read, copied into
                                        each region begun (the table names it) */

    uint64_t  cells;                 /* sum of the regions' cells */
    uint64_t  n_recomputed;          /* pairs the scorer recomputed in double */
    uint32_t  max_read_len, max_hap_len;
    /* the largest region's needs, so that a scorer can bound one read's
     * work without a pass over the regions */
    uint32_t  max_region_haps;       /* haplotypes */
    uint64_t  max_region_hap_cols;   /* sum of its haplotypes' lengths */

    /* Set by a backend that pinned some of the arrays (the CUDA engine):
     * called with an array's address before the batch moves or frees it,
     * so that the backend lets go of it first. Kept by hk_batch_free. */
    void    (*on_release)(void *ctx, const void *array);
    void     *release_ctx;
} hk_batch_t;

/* Which rule a sequence broke (hk_batch_error_t.code): data that names the
 * fault, beside the function's hk_status_t (HK_E_INPUT). */
typedef enum {
    HK_BATCH_BAD_BASE = 1,  /* a base that is not one of the rules' letters */
    HK_BATCH_BAD_QUAL = 2,  /* a quality outside Phred+33 0..93 */
    HK_BATCH_BAD_GAP = 3,   /* gap-open qualities leave match-to-match <= 0 */
    HK_BATCH_BAD_GCP = 4    /* a gap-continuation quality of Q0: gap-to-match = 0 */
} hk_batch_fault_t;

/* Initialise an empty batch (no allocation). */
void hk_batch_init(hk_batch_t *b);
/* Keep no text of the sequences (read_text, hap_text stay NULL): for a table
 * without sequences. Call on an empty batch; hk_batch_free keeps the setting. */
void hk_batch_set_no_text(hk_batch_t *b, int no_text);
/* Empty the batch, keeping its capacity. */
void hk_batch_clear(hk_batch_t *b);
/* Release everything; accepts NULL. */
void hk_batch_free(hk_batch_t *b);

/* A character error found by normalisation. */
typedef struct {
    hk_batch_fault_t code;
    int      is_read;   /* 1: read `index`, 0: haplotype `index` */
    size_t   index;
    long     line;      /* its input line (read_line / hap_line) */
    int      field;     /* 0 bases, 1 base qualities, 2 ins, 3 del, 4 gcp */
    uint32_t pos;       /* position in the sequence */
    unsigned char bad;  /* the offending character */
} hk_batch_error_t;

/* Fast path for readers, in two steps. Append a read (haplotype) of len
 * positions to the last region, recording its input line, without its data:
 * HK_OK, HK_E_INPUT (longer than HK_MAX_SEQ_LEN) or HK_E_NOMEM. Then give it its sequences with
 * hk_batch_set_read (set_hap): the text, qualities as Phred+33 characters,
 * copied and normalised with the rules; from several threads at
 * once for different reads, while nothing is appended (appending may move
 * the arrays). HK_OK, or HK_E_INPUT with *err describing the first bad
 * character. */
HK_RESULT_USED hk_status_t hk_batch_append_read(hk_batch_t *b, uint32_t len, long line);
HK_RESULT_USED hk_status_t hk_batch_append_hap(hk_batch_t *b, uint32_t len, long line);
HK_RESULT_USED hk_status_t hk_batch_set_read(hk_batch_t *b, const hk_seq_rules_t *rules, size_t k,
                                             const char *bases, const char *qual, const char *ins,
                                             const char *del, const char *gcp, hk_batch_error_t *err);
HK_RESULT_USED hk_status_t hk_batch_set_hap(hk_batch_t *b, const hk_seq_rules_t *rules, size_t k,
                                            const char *bases, hk_batch_error_t *err);

/* The reader's bulk path (hk_reader.c): the walk only counts reads (n_reads,
 * n_read_pos, the region's n_reads), after making room with
 * hk_batch_reserve_reads; read_off, read_line and the sequences are then
 * written on all threads with hk_batch_set_read_at, which takes the read's
 * position and length (read_off[k], the read before's, may be written by
 * another thread meanwhile). HK_OK or HK_E_NOMEM; setting: as hk_batch_set_read. */
HK_RESULT_USED hk_status_t hk_batch_reserve_reads(hk_batch_t *b, size_t reads, size_t read_pos);
HK_RESULT_USED hk_status_t hk_batch_set_read_at(hk_batch_t *b, const hk_seq_rules_t *rules, size_t k,
                                                uint64_t off, uint32_t len, const char *bases,
                                                const char *qual, const char *ins, const char *del,
                                                const char *gcp, hk_batch_error_t *err);
/* The same for haplotypes (hk_walk_place_haps): room for haps haplotypes and
 * hap_pos positions, then offsets, lines and sequences written on all
 * threads, hk_batch_set_hap_at taking the haplotype's position and length. */
HK_RESULT_USED hk_status_t hk_batch_reserve_haps(hk_batch_t *b, size_t haps, size_t hap_pos);
HK_RESULT_USED hk_status_t hk_batch_set_hap_at(hk_batch_t *b, const hk_seq_rules_t *rules, size_t k,
                                               uint64_t off, uint32_t len, const char *bases,
                                               hk_batch_error_t *err);
/* End the region begun, as hk_batch_end_region, for a region whose reads
 * (haplotypes) hold read_bases (hap_bases) positions in all (their offsets
 * may not be written yet);
 * lk[] and, unless fill_expected is 0, expected[] are left for the caller
 * to fill with NaN. */
HK_RESULT_USED hk_status_t hk_batch_end_region_sized(hk_batch_t *b, uint64_t read_bases,
                                                     uint64_t hap_bases, int fill_expected);

/* Read k's gap rows (insertion, deletion, gap-continuation qualities) in
 * rows[0..2]: the batch's own where it holds them (read_gaps[k].rows), else
 * written from the read's summary into scratch, 3 * its length bytes. The
 * one way host code reads them. */
void hk_batch_gap_rows(const hk_batch_t *b, size_t k, uint8_t *scratch, const uint8_t *rows[3]);

/* Whether appending a read (haplotype) of len positions leaves every array
 * where it is: setting sequences from other threads may go on meanwhile. */
static inline int hk_batch_read_fits(const hk_batch_t *b, uint32_t len)
{ return b->n_reads + 2 <= b->m_reads && b->n_read_pos + len <= b->m_read_pos; }
static inline int hk_batch_hap_fits(const hk_batch_t *b, uint32_t len)
{ return b->n_haps + 2 <= b->m_haps && b->n_hap_pos + len <= b->m_hap_pos; }

/* Building a batch: begin a region, add its reads and haplotypes (in any
 * order), end it. Sequences are normalised with the rules. name is copied
 * (NULL for none). end_region sizes the region's results, sets lk[] to NaN
 * and expected[] to NaN. begin and end: HK_OK or HK_E_NOMEM. The add
 * functions: HK_OK; HK_E_INPUT for a sequence the rules refuse (err->code
 * says which rule, err->field and err->pos where; code 0: longer than
 * HK_MAX_SEQ_LEN), which is not added; or HK_E_NOMEM. */
HK_RESULT_USED hk_status_t hk_batch_begin_region(hk_batch_t *b, const char *name, long line);
HK_RESULT_USED hk_status_t hk_batch_add_read(hk_batch_t *b, const hk_seq_rules_t *rules, const char *bases,
                                             const char *qual, const char *ins, const char *del,
                                             const char *gcp, uint32_t len, hk_batch_error_t *err);
/* hk_batch_add_read with the qualities as Phred values (0..93 valid; a
 * value above is HK_BATCH_BAD_QUAL), not text: what a caller that holds raw
 * values (the JNI library's holders) gives without a round trip through text. */
HK_RESULT_USED hk_status_t hk_batch_add_read_phred(hk_batch_t *b, const hk_seq_rules_t *rules, const char *bases,
                                                   const uint8_t *qual, const uint8_t *ins, const uint8_t *del,
                                                   const uint8_t *gcp, uint32_t len, hk_batch_error_t *err);
HK_RESULT_USED hk_status_t hk_batch_add_hap(hk_batch_t *b, const hk_seq_rules_t *rules, const char *bases,
                                            uint32_t len, hk_batch_error_t *err);
HK_RESULT_USED hk_status_t hk_batch_end_region(hk_batch_t *b);
/* The region being built or last built. */
static inline hk_region_t *hk_batch_last_region(hk_batch_t *b)
{ return &b->regions[b->n_regions - 1]; }

/* Append every region of src to dst, as if they had been read into it:
 * sequences, qualities, gap summaries and rows, input lines and expected
 * values; results NaN; region names are not copied (NULL). For gathering
 * small batches into one scoring call. Both batches keep no text, and hold
 * the same model (pdhmm). HK_OK; HK_E_INVAL (text kept, or models differ);
 * HK_E_NOMEM, dst holding what it held. */
HK_RESULT_USED hk_status_t hk_batch_append_batch(hk_batch_t *dst, const hk_batch_t *src);

/* Capacities of a batch, to size another one like it. */
typedef struct {
    size_t regions, reads, read_pos, haps, hap_pos, pairs;
} hk_batch_caps_t;

/* The capacities b has now. */
hk_batch_caps_t hk_batch_caps(const hk_batch_t *b);
/* The bytes of b's arrays, as allocated. */
size_t hk_batch_bytes(const hk_batch_t *b);
/* Grow b to at least caps and touch the new memory with nthreads threads, so
 * that filling it later (one thread) takes no page faults. HK_OK or
 * HK_E_NOMEM. */
HK_RESULT_USED hk_status_t hk_batch_prefault(hk_batch_t *b, const hk_batch_caps_t *caps, int nthreads);

/* Length of read k / hap k. */
static inline uint32_t hk_batch_read_len(const hk_batch_t *b, size_t k)
{ return (uint32_t)(b->read_off[k + 1] - b->read_off[k]); }
static inline uint32_t hk_batch_hap_len(const hk_batch_t *b, size_t k)
{ return (uint32_t)(b->hap_off[k + 1] - b->hap_off[k]); }

#ifdef __cplusplus
}
#endif
#endif
