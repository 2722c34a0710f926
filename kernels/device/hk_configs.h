/* hk_configs.h - the kernel configurations, listed once.
 *
 * X(P, K): one read-haplotype pair per group of P threads, each thread holding
 * K read rows in registers, so one tile covers P*K read rows. A read goes to
 * the first configuration of its list whose tile holds it (lists are ordered
 * by tile size; an entry whose tile is not larger than an earlier one's is
 * never dispatched, only benchmarked); reads longer than the last tile use
 * that configuration's multi-tile kernel. Instantiations (hk_kernel_*.cu),
 * dispatch (host/hk_chunk.cu) and the benchmark (host/hk_bench.cu) are all
 * generated from these lists. Each list says why it is what it is; the
 * measurements behind it are in docs/PERFORMANCE.md.
 */
#ifndef HK_CONFIGS_H
#define HK_CONFIGS_H

/* float path, scaled recurrence (5 FP32 instructions per cell), per-row
 * coefficients (reads whose gap qualities vary). The tiles were chosen where
 * 12 rows per lane ran best (4 blocks of 128 lanes per SM at 128
 * registers), 10 and 14 filling the gaps; few lanes with many rows lost to
 * more lanes with fewer (2x16 to 4x8, 8x8 to 4x16). X(P, K, C): C columns
 * per step, as in HK_CGAP_CONFIGS; four ran the NA12878-like mix faster,
 * 32 lanes stay at two (their pipeline fill costs more than four save). */
#define HK_FLOAT_CONFIGS(X) \
    X(4, 4, 4)   /* reads    1..16  */ \
    X(4, 8, 4)   /* reads   17..32  */ \
    X(4, 10, 4)  /* reads   33..40  */ \
    X(4, 12, 4)  /* reads   41..48  */ \
    X(4, 14, 4)  /* reads   49..56  */ \
    X(4, 16, 4)  /* reads   57..64  */ \
    X(8, 10, 4)  /* reads   65..80  */ \
    X(8, 12, 4)  /* reads   81..96  */ \
    X(8, 14, 4)  /* reads   97..112 */ \
    X(8, 16, 4)  /* reads  113..128 */ \
    X(16, 10, 4) /* reads  129..160 */ \
    X(16, 12, 4) /* reads  161..192 */ \
    X(16, 16, 4) /* reads  193..256 */ \
    X(32, 16, 2) /* reads  257..512, longer reads: multi-tile (two columns per step, 2 blocks per SM) */

/* float path for reads with constant gap qualities (hk_read_gaps_t: one
 * coefficient set per read, not per row), single tile only. Fewer registers
 * per row leave room for more rows per lane, which spreads each step's fixed
 * cost (shuffles, haplotype codes, control) over more cells, with the
 * chunk's coefficients in uniform registers and tables free of bank
 * conflicts (hk_fwd_pair.cuh, hk_fwd.cuh). The list maximises the
 * NA12878-like mix's rate, padding included, from a measured sweep of 35
 * tiles; 16x24 is for reads of 321-384 bases, which the slower 32x14 would
 * take otherwise.
 * X(P, K, C): C columns per step (hk_fwd_pair.cuh), 4 or 2. Four spread the
 * step's cost over twice the cells (fewer SASS instructions per cell) and
 * ran faster for every tile of up to 16 lanes but 4x22; with 32 lanes the
 * item's pipeline fill (31 steps) costs more than that. */
#define HK_CGAP_CONFIGS(X) \
    X(2, 8, 4)   /* reads    1..16  */ \
    X(2, 12, 4)  /* reads   17..24  */ \
    X(2, 14, 4)  /* reads   25..28  */ \
    X(2, 20, 4)  /* reads   29..40  */ \
    X(2, 22, 4)  /* reads   41..44  */ \
    X(4, 12, 4)  /* reads   45..48  */ \
    X(4, 14, 4)  /* reads   49..56  */ \
    X(4, 16, 4)  /* reads   57..64  */ \
    X(4, 18, 4)  /* reads   65..72  */ \
    X(4, 20, 4)  /* reads   73..80  */ \
    X(4, 22, 2)  /* reads   81..88  */ \
    X(4, 24, 4)  /* reads   89..96  */ \
    X(8, 14, 4)  /* reads   97..112 */ \
    X(8, 16, 4)  /* reads  113..128 */ \
    X(8, 18, 4)  /* reads  129..144 */ \
    X(8, 20, 4)  /* reads  145..160 */ \
    X(8, 24, 4)  /* reads  161..192 */ \
    X(16, 14, 4) /* reads  193..224 */ \
    X(16, 16, 4) /* reads  225..256 */ \
    X(16, 18, 4) /* reads  257..288 */ \
    X(16, 20, 4) /* reads  289..320 */ \
    X(16, 24, 4) /* reads  321..384 */ \
    X(32, 14, 2) /* reads  385..448 */ \
    X(32, 16, 2) /* reads  449..512; longer reads: the float family's multi-tile kernel */

/* double path (double mode and mixed-mode recomputes), plain recurrence (8
 * FP64 instructions per cell), two columns per step; the last entry's
 * multi-tile kernel takes longer reads and the recompute list. 32x8 runs at
 * 2 blocks per SM (hk_launch.cuh); one column per step was slower for every
 * tile and much slower for the multi-tile kernel (haplik bench --precision
 * double). */
#define HK_DOUBLE_CONFIGS(X) \
    X(8, 4)   /* reads    1..32  */ \
    X(16, 4)  /* reads   33..64  */ \
    X(32, 4)  /* reads   65..128 */ \
    X(32, 8)  /* reads  129..256, longer reads: multi-tile */

/* PDHMM (SPEC 1b), double only (kernels/hk_pdhmm.cuh): 7 FP64 instructions
 * per cell and about 20 registers per row (M, I, D and 6 coefficients; the
 * branch values live in shared memory, touched only at flagged columns).
 * X(P, K), one column per step; a read goes to the first entry whose tile
 * holds it. The tiles of 6 rows keep the emission coefficients in shared
 * memory (SHC, hk_pdhmm.cuh: 168 registers, 3 blocks per SM) and ran
 * faster than the 4- and 8-row tiles around them; they sit between the
 * 8-row tiles, which pad less than the next 8-row tile. Two columns per
 * step (fewer rows per lane in 255 registers) ran slower at every tile.
 * Figures: docs/PERFORMANCE.md. */
#define HK_PDHMM_CONFIGS(X) \
    X(2, 8)   /* reads    1..16  */ \
    X(4, 6)   /* reads   17..24  */ \
    X(4, 8)   /* reads   25..32  */ \
    X(8, 6)   /* reads   33..48  */ \
    X(8, 8)   /* reads   49..64  */ \
    X(16, 6)  /* reads   65..96  */ \
    X(16, 8)  /* reads   97..128 */ \
    X(32, 6)  /* reads  129..192 */ \
    X(32, 8)  /* reads  193..256 */

/* PDHMM, reads with constant gap qualities (the CG form of hk_pdhmm.cuh: 5
 * FP64 instructions per cell, the gap coefficients per lane): X(P, K), one
 * column per step, single tile; a read goes to the first entry whose tile
 * holds it, longer reads to HK_PDHMM_CONFIGS. Faster than the per-row form
 * at every tile; the 7-row tiles cut the padding of reads of 49-56 and
 * 97-112 bases at 3 blocks per SM. */
#define HK_PDHMM_CG_CONFIGS(X) \
    X(2, 8)   /* reads    1..16  */ \
    X(4, 6)   /* reads   17..24  */ \
    X(4, 8)   /* reads   25..32  */ \
    X(4, 10)  /* reads   33..40  */ \
    X(4, 12)  /* reads   41..48  */ \
    X(8, 7)   /* reads   49..56  */ \
    X(8, 8)   /* reads   57..64  */ \
    X(8, 10)  /* reads   65..80  */ \
    X(8, 12)  /* reads   81..96  */ \
    X(16, 7)  /* reads   97..112 */ \
    X(16, 8)  /* reads  113..128 */ \
    X(16, 10) /* reads  129..160 */ \
    X(16, 12) /* reads  161..192 */ \
    X(32, 8)  /* reads  193..256 */

/* PDHMM reads longer than the last tile: the multi-tile kernel's P and K
 * (32x8 spills in its multi-tile form; 32x4 does not). */
#define HK_PDHMM_MULTI(X) X(32, 4)

#define HK_COUNT_CONFIG(P, K) +1
#define HK_COUNT_CONFIG3(P, K, X) +1
enum {
    HK_N_FLOAT_CONFIGS = 0 HK_FLOAT_CONFIGS(HK_COUNT_CONFIG3),
    HK_N_CGAP_CONFIGS = 0 HK_CGAP_CONFIGS(HK_COUNT_CONFIG3),
    HK_N_DOUBLE_CONFIGS = 0 HK_DOUBLE_CONFIGS(HK_COUNT_CONFIG),
    HK_N_PDHMM_CONFIGS = 0 HK_PDHMM_CONFIGS(HK_COUNT_CONFIG),
    HK_N_PDHMM_CG_CONFIGS = 0 HK_PDHMM_CG_CONFIGS(HK_COUNT_CONFIG)
};

#endif
