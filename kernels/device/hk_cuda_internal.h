/* hk_cuda_internal.h - what the CUDA translation units share (C++ only). */
#ifndef HK_CUDA_INTERNAL_H
#define HK_CUDA_INTERNAL_H

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>
#include "hk_batch.h"
#include "hk_configs.h"
#include "hk_cuda_small.h"

/* One unit of work: read `read` against haplotypes hap .. hap+n_haps-1 of the
 * chunk (consecutive haplotypes of one region); the result of hap + h goes to
 * lk[out + h]. Indices are chunk-relative. */
struct hk_item {
    uint32_t read, hap, n_haps, out;
};

/* Most haplotypes in one item (the per-group table of C/n values). */
#define HK_MAX_ITEM_HAPS 32
/* Haplotype columns per item, at most (unless one haplotype is longer):
 * short enough that a chunk's items spread over the whole GPU, long enough to
 * amortise the pipeline fill. */
#define HK_ITEM_COLS 1024u
/* The smallest cap a chunk may use instead (hk_plan_limits::item_cols): a
 * small chunk's kernels last as long as its longest item, whatever the
 * chunk's size. */
#define HK_ITEM_COLS_MIN 256u

/* The code that pads a haplotype in hbase2 to a multiple of HK_HAP_ALIGN
 * columns: HK_HAP_PAD_BIT set (the kernels of 2 or 4 columns per step give
 * that column an emission of zero), base N (a valid table index for any
 * other reader). */
#define HK_HAP_PAD_BIT 32
#define HK_HAP_PAD (4 | HK_HAP_PAD_BIT)
#define HK_HAP_ALIGN 4

/* Pad columns after a haplotype of n bases in hbase2. */
__host__ __device__ inline uint32_t hk_hap_pads(uint64_t n) { return (uint32_t)(0 - n) & (HK_HAP_ALIGN - 1); }
/* The most bytes hbase2 takes for nh haplotypes of hp bases in all. */
__host__ __device__ inline size_t hk_hap2_bytes(size_t hp, size_t nh) { return hp + (HK_HAP_ALIGN - 1) * nh; }

/* Bit 3 of a haplotype code marks the haplotype's first base. */
#define HK_HAP_FIRST 8

/* Haplotype h as the kernels read it, made on the GPU from the bases the
 * host copied in (hk_launch_pad_haps): its first base marked in hbase (at
 * hap_off), and its padded copy in hbase2 (at hap_off2); positions [lane,
 * .., n) step by `step`. On the host too: the packing tests' reference. */
__host__ __device__ inline void hk_pad_hap(uint8_t *hbase, const uint32_t *hap_off, uint8_t *hbase2,
                                           const uint32_t *hap_off2, uint32_t h, uint32_t lane, uint32_t step)
{
    const uint32_t a = hap_off[h], n = hap_off[h + 1] - a, a2 = hap_off2[h];
    for (uint32_t k = lane; k < n; k += step) {
        uint8_t v = hbase[a + k];
        if (k == 0) hbase[a] = v |= HK_HAP_FIRST;
        hbase2[a2 + k] = v;
    }
    if (lane == 0)
        for (uint32_t k = 0; k < hk_hap_pads(n); k++) hbase2[a2 + n + k] = HK_HAP_PAD;
}

/* Reads whose gap qualities are constant (hk_read_gaps_t, from the batch)
 * are packed without their three gap rows, and their float pairs go to the
 * constant-gap kernels (single tile); the other kernels take such a read's
 * qualities from its summary. */
static_assert(sizeof(hk_read_gaps_t) == 8, "read gap summaries are copied as 8-byte words");

/* The body coefficients of the constant-gap kernels (hk_coef_const in
 * hk_fwd_pair.cuh: a', b' and c of the scaled recurrence) for gap error
 * probabilities ei, ed, eg; one expression for host and device. A chunk's
 * kernels take them as a kernel parameter (hk_chunk_dev::cgap): the compiler
 * keeps them in uniform registers, and the cells' FMAs read two vector
 * registers instead of three (an H100 ran the tiles 10-18 % faster). Warps
 * whose reads all have the chunk's set do (hk_fwd_pair.cuh); the others
 * compute the same values from their reads, so a pair's result does not
 * depend on its chunk. */
enum {
    HK_CG_NONE,    /* per-row coefficients (the general kernels) */
    HK_CG_READ,    /* constant gap qualities, each read's coefficients (registers) */
    HK_CG_CHUNK    /* constant gap qualities, the chunk's set (hk_chunk_dev::cgap) */
};
struct hk_cgap_coef {
    float k1, k2, k3;
};
__host__ __device__ inline hk_cgap_coef hk_cgap_body(double ei, double ed, double eg)
{
    const double mm = 1.0 - (ei + ed);
    return hk_cgap_coef{ (float)((1.0 - eg) * ei / mm), (float)((1.0 - eg) * ed / mm), (float)eg };
}

/* Whether a read's gap qualities g are the chunk's constant-gap set c: both
 * constant, the six qualities equal (whether its rows are kept aside). */
__host__ __device__ inline bool hk_cgap_match(const hk_read_gaps_t &g, const hk_read_gaps_t &c)
{
    return g.constant && c.constant && g.ins == c.ins && g.del == c.del && g.gcp == c.gcp &&
           g.ins_last == c.ins_last && g.del_last == c.del_last && g.gcp_last == c.gcp_last;
}

/* The device view of one chunk. */
struct hk_chunk_dev {
    const uint8_t  *rbase;          /* read base codes */
    const uint8_t  *rq;             /* base qualities (Phred) */
    const uint8_t  *ri, *rd, *rg;   /* gap qualities of reads that are not constant */
    const hk_read_gaps_t *gaps;     /* per read */
    const uint32_t *read_off;       /* n_reads + 1, chunk-relative */
    uint8_t        *hbase;          /* hap base codes; HK_HAP_FIRST marks a hap's first base */
    const uint32_t *hap_off;        /* n_haps + 1, chunk-relative */
    uint8_t        *hbase2;         /* the same codes, each haplotype padded to a multiple of */
    const uint32_t *hap_off2;       /* HK_HAP_ALIGN (HK_HAP_PAD after its last base) */
    double         *lk;             /* results of the chunk's pairs */
    hk_item        *redo;           /* mixed mode: pairs to recompute in double */
    uint32_t       *n_redo;         /* their count (device) */
    double          threshold;      /* mixed mode: recompute below this scaled sum */
    int             precision;      /* HK_PREC_* */
    hk_read_gaps_t  cgap_set;       /* hk_chunk::cgap, the chunk's constant-gap set */
    hk_cgap_coef    cgap;           /* its body coefficients */
};

/* Scratch of the multi-tile kernels: one row of (M, I, D) per haplotype
 * column, two rows (ping-pong) per group. */
struct hk_scratch {
    void    *ptr;
    size_t   cols;    /* columns per row */
    uint32_t groups;  /* groups it has room for */
};

/* Launchers (host). cfg indexes the family's configuration list. items and
 * n_items describe the work; when n_items_dev is not NULL the count is read
 * from the device instead (grid-stride over at most max_items). */
/* A chunk's n_haps haplotypes as the kernels read them (hk_pad_hap). */
cudaError_t hk_launch_pad_haps(const hk_chunk_dev *c, uint32_t n_haps, cudaStream_t st);
cudaError_t hk_launch_float(int cfg, const hk_chunk_dev *c, const hk_item *items,
                            uint32_t n_items, cudaStream_t st);
/* The constant-gap family (HK_CGAP_CONFIGS); chunk_set: every read of the
 * launch has the chunk's set (HK_CG_CHUNK), else HK_CG_READ. */
cudaError_t hk_launch_float_cgap(int cfg, bool chunk_set, const hk_chunk_dev *c, const hk_item *items,
                                 uint32_t n_items, cudaStream_t st);
cudaError_t hk_launch_float_multi(const hk_chunk_dev *c, const hk_item *items,
                                  uint32_t n_items, const hk_scratch *sc, cudaStream_t st);
cudaError_t hk_launch_double(int cfg, const hk_chunk_dev *c, const hk_item *items,
                             uint32_t n_items, cudaStream_t st);
cudaError_t hk_launch_double_multi(const hk_chunk_dev *c, const hk_item *items,
                                   uint32_t n_items, const uint32_t *n_items_dev,
                                   const hk_scratch *sc, cudaStream_t st);

/* The small-call kernel (hk_cuda_small.h): the pairs laid out by lay in
 * d_in; their sums to sums and whether each is float's to in_float (the
 * host's mapped memory), and seq to *flag (mapped too) once every sum is
 * there. count: a device counter at 0, left
 * at 0. */
/* Load the small-call kernel's module on the current device now, not at its
 * first launch. */
cudaError_t hk_small_kernel_load(void);
cudaError_t hk_launch_small(const unsigned char *d_in, const hk_small_layout_t *lay, double *sums, uint8_t *in_float,
                            unsigned *count, unsigned *flag, unsigned seq, cudaStream_t st);

/* Tile rows and group size of configuration cfg of each family. */
int hk_float_rows(int cfg);
int hk_float_group(int cfg);
int hk_cgap_rows(int cfg);
int hk_cgap_group(int cfg);
int hk_double_rows(int cfg);
int hk_double_group(int cfg);
/* Bytes of scratch per group and column of the multi-tile kernels. */
size_t hk_float_scratch_col_bytes(void);
size_t hk_double_scratch_col_bytes(void);

#define HK_BLOCK_THREADS 128

#endif
