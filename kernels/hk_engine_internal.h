/* hk_engine_internal.h - the engine's types, shared by hk_engine.cu and the
 * benchmark entry point (hk_bench.cu). C++ only. */
#ifndef HK_ENGINE_INTERNAL_H
#define HK_ENGINE_INTERNAL_H

#include <cstddef>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>
#include "hk_cuda.h"
#include "hk_cuda_internal.h"

/* A chunk: reads [r0, r1) of regions [reg0, reg1), haps [h0, h1), results
 * lk[pair0 .. pair0 + n_pairs). Offsets are into the packed input block. */
struct hk_chunk {
    size_t   reg0, reg1, r0, r1, h0, h1;
    uint64_t pair0, n_pairs, cells;
    int      n_cfg;                            /* single-tile configurations + 1 (multi-tile) */
    uint32_t cfg_begin[HK_N_FLOAT_CONFIGS + HK_N_DOUBLE_CONFIGS + 1];
    uint32_t cfg_end[HK_N_FLOAT_CONFIGS + HK_N_DOUBLE_CONFIGS + 1];
    uint32_t n_items;
    size_t   off_read_off, off_hap_off, off_read[5], off_hbase, in_bytes;
};

/* How large a chunk may grow. */
struct hk_plan_limits {
    size_t   in_bytes, min_in_bytes;
    uint64_t pairs, min_pairs, items, cells;
};

/* One staging slot: pinned host and device buffers of one chunk in flight. */
struct hk_slot {
    unsigned char *h_in, *h_out;   /* pinned: packed input; results + redo count */
    unsigned char *d_in;
    double        *d_lk;
    hk_item       *d_redo;
    uint32_t      *d_nredo;
    void          *d_scratch;
    hk_scratch     scratch;
    size_t         in_cap;
    uint64_t       pairs_cap;
    bool           busy;
    hk_chunk       ch;
    uint64_t       degen;
    std::vector<double> lk_host;   /* -inf where a pair is degenerate */
    cudaEvent_t    done;           /* kept by slot_free: must stay last */
};

struct hk_dev {
    int            ord;
    cudaDeviceProp prop;
    cudaStream_t   st[2];
    hk_slot        slot[2];
};

struct hk_cuda {
    std::vector<hk_dev> dev;
};

void hk_cu_seterr(char *err, size_t errlen, const char *fmt, ...);
int  hk_cu_fail(cudaError_t e, const char *call, int dev, char *err, size_t errlen);
int  hk_chunk_plan(const hk_batch_t *b, const hk_plan_limits *lim, size_t reg, size_t r0,
                   size_t r_end, hk_chunk *ch);
void hk_chunk_pack(const hk_batch_t *b, hk_chunk *ch, bool dbl, unsigned char *in,
                   double *lk_out, uint64_t *degenerate);
hk_chunk_dev hk_chunk_view(const hk_chunk *ch, unsigned char *d_in, double *d_lk,
                           hk_item *d_redo, uint32_t *d_nredo, int precision, double thr);
cudaError_t hk_chunk_launch(const hk_chunk *ch, const hk_chunk_dev *c, const hk_item *d_items,
                            const hk_scratch *sc, cudaStream_t st, const char **what);
int  hk_slot_reserve(hk_dev *d, hk_slot *s, hk_plan_limits *lim, uint32_t max_hap,
                     char *err, size_t errlen);

#endif
