/* hk_configs.h - the kernel configurations, listed once.
 *
 * X(P, K): one read-haplotype pair per group of P threads, each thread holding
 * K read rows in registers, so one tile covers P*K read rows. A read goes to
 * the first configuration of its list whose tile holds it (lists are ordered
 * by tile size; an entry whose tile is not larger than an earlier one's is
 * never dispatched, only benchmarked); reads longer than the last tile use
 * that configuration's multi-tile kernel. Instantiations (hk_kernel_*.cu), dispatch (hk_engine.cu)
 * and the benchmark (hk_bench.cu) are all generated from these lists.
 */
#ifndef HK_CONFIGS_H
#define HK_CONFIGS_H

/* float path, scaled recurrence (5 FP32 instructions per cell), per-row
 * coefficients (reads whose gap qualities vary). The list was chosen for the
 * one-column kernels, where 12 rows per lane ran best (4 blocks of 128 lanes
 * per SM at 128 registers) and 10 and 14 filled the gaps; 2x16 (1.68 TCUPS)
 * lost to 4x8 (1.99) and 8x8 (2.03) to 4x16 (2.41) on an H100. With two
 * columns per step the tiles run at 3.0-3.3 TCUPS: see docs/PERFORMANCE.md.
 * X(P, K, C): C columns per step, as in HK_CGAP_CONFIGS; four ran the
 * NA12878-like mix 6 % faster and equal 128 4 % (H100, 2026-11-24, ninth
 * session), 32 lanes stay at two. */
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
 * cost (shuffles, haplotype codes, control) over more cells: with two columns
 * per step, K = 20-24 ran at 3.6-3.8 TCUPS on an H100, K = 12-16 at 3.3-3.5;
 * with the chunk's coefficients in uniform registers and tables free of bank
 * conflicts (hk_fwd_pair.cuh, hk_fwd.cuh), 3.6-4.6 (2026-11-27, fourteenth
 * session). The list maximises the NA12878-like mix's rate, padding included, from a
 * measured sweep of 35 tiles (docs/PERFORMANCE.md); 16x24 is for reads of
 * 321-384 bases, which 32x14 (3.1) would take otherwise.
 * X(P, K, C): C columns per step (hk_fwd_pair.cuh), 4 or 2. Four spread the
 * step's cost over twice the cells (the 4x20 loop: 6.45 -> 6.28 SASS
 * instructions per cell; 8x16 6.72 -> 6.34) and ran 1-10 % faster on an
 * H100 for every tile of up to 16 lanes but 4x22; with 32 lanes the item's
 * pipeline fill (31 steps) costs more than that (docs/PERFORMANCE.md,
 * 2026-11-24, ninth session). */
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
 * multi-tile kernel takes longer reads and the recompute list. Measured on an
 * H100 (haplik bench --precision double, kernels alone): 8x4, 16x4, 32x4
 * 1.16-1.22 TCUPS, 32x8 1.28-1.29 (2 blocks per SM, hk_launch.cuh), the
 * multi-tile kernel 0.93-0.94; one column per step 1.07-1.18 and 0.44-0.47
 * (docs/PERFORMANCE.md, 2026-11-24). */
#define HK_DOUBLE_CONFIGS(X) \
    X(8, 4)   /* reads    1..32  */ \
    X(16, 4)  /* reads   33..64  */ \
    X(32, 4)  /* reads   65..128 */ \
    X(32, 8)  /* reads  129..256, longer reads: multi-tile */

/* PDHMM (SPEC 1b), double only (kernels/hk_pdhmm.cuh, hk_pdhmm_pair.cuh): 7
 * FP64 instructions per cell and about 20 registers per row (M, I, D and 6
 * coefficients; the branch values live in shared memory, touched only at
 * flagged columns). X(P, K, MODES): MODES says in which kernel form the
 * entry is dispatched, HK_PD_ONE (one column per step, the default) or
 * HK_PD_TWO (two columns per step, HK_PD_COLUMNS=2; eight rows per lane do
 * not fit it and keep one column); a read goes to the first entry of its
 * form whose tile holds it, the others are only benchmarked. Measured on an
 * H100, equal lengths (kernels alone, TCUPS; docs/PERFORMANCE.md): one
 * column 2x8 0.92, 4x8 0.89, 8x8 0.84, 16x8 0.81, 32x8 0.78, and 0.71-0.80
 * at 4 or 6 rows; two columns 0.58-0.85, below one column at every tile.
 * The tiles of 6 rows keep the emission coefficients in shared memory
 * (SHC, hk_pdhmm.cuh: 168 registers, 3 blocks per SM) and ran at 0.81-0.89
 * (4x6 0.89, 8x6 0.82, 16x6 0.81, 32x6 0.85): one column takes them between
 * the 8-row tiles, which pad less than the next 8-row tile (2026-11-24). */
#define HK_PD_ONE 1
#define HK_PD_TWO 2
#define HK_PDHMM_CONFIGS(X) \
    X(2, 8, HK_PD_ONE)              /* reads    1..16  */ \
    X(4, 4, HK_PD_TWO)              /* two columns:  1..16  */ \
    X(4, 6, HK_PD_ONE | HK_PD_TWO)  /* reads   17..24  */ \
    X(8, 4, HK_PD_TWO)              /* two columns: 25..32  */ \
    X(4, 8, HK_PD_ONE)              /* reads   25..32  */ \
    X(8, 6, HK_PD_ONE | HK_PD_TWO)  /* reads   33..48  */ \
    X(16, 4, HK_PD_TWO)             /* two columns: 49..64  */ \
    X(8, 8, HK_PD_ONE)              /* reads   49..64  */ \
    X(16, 6, HK_PD_ONE | HK_PD_TWO) /* reads   65..96  */ \
    X(32, 4, HK_PD_TWO)             /* two columns: 97..128 */ \
    X(16, 8, HK_PD_ONE)             /* reads   97..128 */ \
    X(32, 6, HK_PD_ONE | HK_PD_TWO) /* reads  129..192 */ \
    X(32, 8, HK_PD_ONE | HK_PD_TWO) /* reads  193..256 (one column in both forms) */

/* PDHMM, reads with constant gap qualities (the CG form of hk_pdhmm.cuh: 5
 * FP64 instructions per cell, the gap coefficients per lane): X(P, K), one
 * column per step, single tile; a read goes to the first entry whose tile
 * holds it, longer reads to HK_PDHMM_CONFIGS. Measured on an H100 at equal
 * lengths (docs/PERFORMANCE.md): 1.04-1.26 TCUPS, the NA12878-like mix 1.05
 * (2026-11-24); the 7-row tiles cut the padding of reads of 49-56 and
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
    HK_N_PDHMM_CONFIGS = 0 HK_PDHMM_CONFIGS(HK_COUNT_CONFIG3),
    HK_N_PDHMM_CG_CONFIGS = 0 HK_PDHMM_CG_CONFIGS(HK_COUNT_CONFIG)
};

#endif
