/* hk_configs.h - the kernel configurations, listed once.
 *
 * X(P, K): one read-haplotype pair per group of P threads, each thread holding
 * K read rows in registers, so one tile covers P*K read rows. A read goes to
 * the first configuration of its list whose tile holds it (lists are ordered
 * by tile size); reads longer than the last tile use that configuration's
 * multi-tile kernel. Instantiations (hk_kernel_*.cu), dispatch (hk_engine.cu)
 * and the benchmark (hk_bench.cu) are all generated from these lists.
 */
#ifndef HK_CONFIGS_H
#define HK_CONFIGS_H

/* float path, scaled recurrence (6 FP32 instructions per cell) */
#define HK_FLOAT_CONFIGS(X) \
    X(4, 4)   /* reads    1..16  */ \
    X(4, 8)   /* reads   17..32  */ \
    X(8, 8)   /* reads   33..64  */ \
    X(8, 16)  /* reads   65..128 */ \
    X(16, 16) /* reads  129..256 */ \
    X(32, 16) /* reads  257..512, longer reads: multi-tile */

/* double path (double mode and mixed-mode recomputes), plain recurrence */
#define HK_DOUBLE_CONFIGS(X) \
    X(8, 4)   /* reads    1..32  */ \
    X(16, 4)  /* reads   33..64  */ \
    X(32, 4)  /* reads   65..128 */ \
    X(32, 8)  /* reads  129..256, longer reads: multi-tile */

#define HK_COUNT_CONFIG(P, K) +1
enum {
    HK_N_FLOAT_CONFIGS = 0 HK_FLOAT_CONFIGS(HK_COUNT_CONFIG),
    HK_N_DOUBLE_CONFIGS = 0 HK_DOUBLE_CONFIGS(HK_COUNT_CONFIG)
};

#endif
