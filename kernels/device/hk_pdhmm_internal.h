/* hk_pdhmm_internal.h - what the PDHMM kernels (hk_pdhmm.cuh, hk_kernel_pdhmm.cu)
 * share with the engine (hk_pipeline.cu, hk_bench.cu). C++ only.
 *
 * A PDHMM chunk is packed like the other families' (hk_chunk.cu: items
 * binned by configuration, offsets, read rows), but every read row is there
 * (bases, base, insertion, deletion and gap-continuation qualities) and the
 * haplotypes are not base codes: each position becomes one 32-bit code word
 * (HK_PDC_*) that says, for this column, which read base codes match it (the
 * emission, SNP alternatives included) and what the carried state of SPEC 1b
 * is before it. The state depends only on the PD bytes, never on the data:
 * it is the same for every row from the second on, and the first row may
 * differ only before the haplotype's first flagged column (the sweep starts
 * NORMAL, later rows start in the state the previous row ended in). So both
 * are worked out once per haplotype on the host.
 */
#ifndef HK_PDHMM_INTERNAL_H
#define HK_PDHMM_INTERNAL_H

#include <cstdint>
#include <vector>
#include <cuda_runtime.h>
#include "hk_cuda_internal.h"
#include "hk_host_internal.h"

/* The code word of a haplotype column. */
#define HK_PDC_MASK      0x3ffu      /* bit c: read base code c (0..9) matches the column */
#define HK_PDC_S2_SHIFT  10          /* state before the column, rows 2.. (HK_PDS_*) */
#define HK_PDC_S1_SHIFT  12          /* the same for row 1 */
#define HK_PDC_DEL_END   (1u << 14)  /* the PD byte has DEL_END: I takes max(B, X) from above */
#define HK_PDC_SLOW      (1u << 15)  /* the branch values matter here (a state other than
                                        NORMAL, DEL_END, or INSIDE after it): the
                                        general cell; elsewhere the plain recurrence */
#define HK_PDC_FIRST     (1u << 16)  /* a haplotype's first column */
#define HK_PDC_STOP      (1u << 17)  /* the column after an item's last (kernel only) */
enum { HK_PDS_NORMAL = 0, HK_PDS_INSIDE = 1, HK_PDS_AFTER = 2 };

/* The device view of a PDHMM chunk. */
struct hk_pd_dev {
    const uint8_t  *rbase;              /* read base codes, case kept (0..9) */
    const uint8_t  *rq, *ri, *rd, *rg;  /* Phred qualities as written */
    const uint32_t *read_off;           /* n_reads + 1, chunk-relative */
    const uint32_t *hcode;              /* haplotype code words */
    const uint32_t *hap_off;            /* n_haps + 1, chunk-relative */
    double         *lk;                 /* results of the chunk's pairs */
};

/* One scratch cell of the multi-tile kernel (the row above a tile): the
 * values and branch values. Fits the engine's scratch column
 * (hk_double_scratch_col_bytes). */
struct hk_pd_cell { double m, i, d, bm, bi, bd; };

/* Bins of a PDHMM chunk: the configurations' single-tile kernels
 * (HK_PDHMM_CONFIGS), the constant-gap form's (HK_PD_BIN_CG + k, k indexing
 * HK_PDHMM_CG_CONFIGS), the multi-tile kernel, the SAFE multi-tile kernel
 * (reads with mm = 0 rows). */
enum { HK_PD_BIN_CG = HK_N_PDHMM_CONFIGS, HK_PD_BIN_MULTI = HK_PD_BIN_CG + HK_N_PDHMM_CG_CONFIGS,
       HK_PD_BIN_SAFE = HK_PD_BIN_MULTI + 1, HK_PD_BINS = HK_PD_BIN_SAFE + 1 };

/* Launchers (hk_kernel_pdhmm.cu). cfg indexes HK_PDHMM_CONFIGS. */
cudaError_t hk_launch_pdhmm(int cfg, const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                            cudaStream_t st);
/* safe: the form for reads with a row whose match-to-match is 0 (hk_pdhmm.cuh). */
cudaError_t hk_launch_pdhmm_multi(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                  const hk_scratch *sc, bool safe, cudaStream_t st);
int hk_pdhmm_rows(int cfg);
int hk_pdhmm_group(int cfg);
/* The constant-gap form (hk_pdhmm.cuh, CG); cfg indexes HK_PDHMM_CG_CONFIGS. */
cudaError_t hk_launch_pdhmm_cg(int cfg, const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                               cudaStream_t st);
int hk_pdhmm_cg_rows(int cfg);

/* The code words of one haplotype of n positions (hb base codes, pd PD
 * bytes) into out[0..n); the first gets HK_PDC_FIRST. */
void hk_pd_codes(const uint8_t *hb, const uint8_t *pd, uint32_t n, uint32_t *out);

/* Bytes of a PDHMM chunk's input block besides its items: reads [r0, r1),
 * haps [h0, h1) of b. */
size_t hk_pd_chunk_data_bytes(const hk_batch_t *b, size_t r0, size_t r1, size_t h0, size_t h1);
/* Pack chunk ch of a PDHMM batch into `in` (as hk_chunk_pack does for the
 * others: bins [0, HK_N_PDHMM_CONFIGS) are the configurations' single-tile
 * kernels, then the multi-tile kernel and its SAFE form), the pairs of an
 * empty sequence to *degenerate. */
void hk_pd_chunk_pack(const hk_batch_t *b, hk_chunk *ch, unsigned char *in,
                      std::vector<uint64_t> *degenerate, hk_pool *pool);
hk_pd_dev hk_pd_chunk_view(const hk_chunk *ch, unsigned char *d_in, double *d_lk);
/* Launch a packed PDHMM chunk's kernels (longest tiles first, spread over
 * st and xs's side streams when xs is given). */
cudaError_t hk_pd_chunk_launch(const hk_chunk *ch, const hk_pd_dev *c, const hk_item *d_items,
                               const hk_scratch *sc, cudaStream_t st, const hk_side *xs,
                               const char **what);

#endif
