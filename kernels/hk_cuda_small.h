/* hk_cuda_small.h - the GPU's path for one small call: a HaplotypeCaller
 * region (tens to hundreds of pairs) scored in double with one copy in and
 * one kernel, whose warps write their sums straight into the host's pinned
 * memory and raise a flag there that the caller polls: no copy back, no
 * event (measured on an H200 host: a copy in, a kernel and a copy back with
 * an event took 22.6 us with nothing to compute, 15.0 us without the copy
 * back and the event). On a stream of the calling thread's own.
 *
 * The engine's pipeline (hk_cuda.h) is built for millions of pairs: a call
 * plans chunks, stages, packs and launches a kernel per tile size on
 * several streams. For one region that took 0.1-0.2 ms of host time and
 * GPU latency (docs/PERFORMANCE.md), as long as scoring the region on a
 * core. Here a warp scores a pair: lane t holds rows t*K .. t*K+K-1 (K =
 * ceil(read length / 32)) and walks the haplotype's columns one step
 * behind lane t-1, which hands it its last row through a shuffle. The host
 * packs each read's qualities, four bytes a row, and the kernel makes the
 * row's probabilities (eight doubles a row packed on the host made packing
 * and the copy in 16 times the bytes: docs/PERFORMANCE.md, "On a GPU host").
 *
 * Every cell is GATK's recurrence with the host's operand order and no
 * fused multiply-add, and the last row is summed in column order, in the
 * CPU's precision policy (float first, kept above the threshold, else
 * double; float's results below FLT_MIN flushed to zero as the CPU's float
 * passes do): a pair's sum is the CPU pass's, bit for bit, so a call's
 * values do not depend on which path scored it (tests/gpu/small_vs_cpu).
 * The caller turns sums into log10 likelihoods and rescues a double sum of
 * 0 on the CPU (hk_model_rescue_pair), as the CPU does.
 *
 * Slots (a stream, pinned and device memory each), spread over the GPUs,
 * are taken by one call at a time: a call that finds none free is told so
 * at once and scores elsewhere. C interface; CUDA C++ behind it (kernels/host/hk_small.cu).
 */
#ifndef HK_CUDA_SMALL_H
#define HK_CUDA_SMALL_H

#include <stddef.h>
#include <stdint.h>
#include "../src/hk_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest read the kernel takes: 32 lanes of at most HK_SMALL_MAX_K rows. */
#define HK_SMALL_MAX_K 8
#define HK_SMALL_MAX_READ (32 * HK_SMALL_MAX_K)

/* A row of a read: its Phred qualities (base, insertion and deletion gap
 * open, gap continuation) as the batch holds them; the kernel turns them into
 * GATK's probabilities as hk_cpu_row_coeffs does, from the same table. */
typedef struct {
    uint8_t q, ins, del, gcp;
} hk_small_row_t;

/* A pair: read and haplotype indices; its sum goes to sums[the pair's index]. */
typedef struct {
    uint32_t read, hap;
} hk_small_pair_t;

/* A read (first row in rows[], length) or a haplotype (first base in
 * hbase[], length). */
typedef struct {
    uint32_t at, len;
} hk_small_seq_t;

/* Where each array lies in a slot's input block (byte offsets, 8-aligned),
 * the results' place after it, and the precision policy (hk_model_t's). */
typedef struct {
    uint32_t n_pairs, n_reads, n_haps, max_hap;
    size_t   pairs, reads, haps, rows, rbase, hbase, bytes;   /* bytes: the input's end */
    size_t   sums;                                            /* n_pairs doubles: each pair's scaled sum */
    size_t   in_float;                                        /* n_pairs bytes: 1 where the sum is float's */
    int      precision;                                       /* HK_PREC_* */
    double   float_threshold;                                 /* mixed: float's sum kept from here up */
} hk_small_layout_t;

typedef struct hk_cuda_small hk_cuda_small_t;

/* Plan a layout for the counts given (rows: the reads' bases in all,
 * hap_bases: the haplotypes') and the precision policy (HK_PREC_*, and
 * mixed's threshold, as hk_model_t has them); 0, or -1 when it does not fit
 * a slot of slot_bytes. */
int hk_small_layout(hk_small_layout_t *lay, int precision, double float_threshold, uint32_t n_pairs,
                    uint32_t n_reads, uint32_t n_haps, uint64_t rows, uint64_t hap_bases, uint32_t max_hap,
                    size_t slot_bytes);

/* n_slots slots of slot_bytes each (pinned on the host and on a device),
 * slot k on ordinals[k % n_ordinals]; each device's first slot and the
 * kernel are made ready here, the others when first taken. HK_OK;
 * HK_E_NODEV, HK_E_NOMEM or HK_E_RUNTIME with err filled. */
HK_RESULT_USED hk_status_t hk_cuda_small_open(const int *ordinals, int n_ordinals, int n_slots, size_t slot_bytes,
                                              hk_cuda_small_t **out, char *err, size_t errlen);
/* A free slot's input block (slot_bytes of pinned memory) and its number in
 * *slot; NULL when every slot is taken. */
void *hk_cuda_small_take(hk_cuda_small_t *s, int *slot);
/* Score the pairs packed in slot's block by lay: copy in, launch, and wait
 * for the sums (polling, yielding the core). On HK_OK the sums are in the
 * block at lay->sums. The slot stays taken either way: hk_cuda_small_give
 * returns it. */
HK_RESULT_USED hk_status_t hk_cuda_small_run(hk_cuda_small_t *s, int slot, const hk_small_layout_t *lay,
                                             char *err, size_t errlen);
void hk_cuda_small_give(hk_cuda_small_t *s, int slot);
/* No slot may be taken. Accepts NULL. */
void hk_cuda_small_close(hk_cuda_small_t *s);

#ifdef __cplusplus
}
#endif

#endif
