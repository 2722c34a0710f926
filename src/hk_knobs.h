/* hk_knobs.h - the HK_* environment variables that haplik reads, listed once.
 *
 * Each knob is an integer in [MIN, MAX], or, where WORDS is not NULL, one of
 * the words WORDS lists ("a|b|c"), whose value is its index. The environment
 * is read once, on the first hk_knob() call; a value that is not a whole
 * integer in range (strtol with an end pointer) or not one of the words is
 * refused with one warning line, and the default stands. An empty value is
 * the same as none.
 *
 * Who a knob is for (the second column):
 *   USERS   documented in README.md, always read;
 *   TESTS   read always, for the tests that compare two ways of doing the
 *           same work (each says which test); documented in docs/KNOBS.md;
 *   TUNING  for measuring alternatives to the defaults (docs/PERFORMANCE.md):
 *           read only by a build configured with --enable-tuning-knobs; any
 *           other build warns that it ignores one that is set.
 * docs/KNOBS.md has one row per entry, checked against this list by
 * tests/unit/test_knobs.
 *
 * The environment is read at the edge only: the commands and the GKL
 * library's state read the knobs into an hk_options_t (hk_options.h) and
 * pass it down; nothing below them calls hk_knob. Plain C, no
 * dependencies: the CUDA engine includes the list (through hk_options.h)
 * and links nothing of it.
 */
#ifndef HK_KNOBS_H
#define HK_KNOBS_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, FOR, DEFAULT, MIN, MAX, WORDS, DOC): the variable is HK_<NAME>. */
#define HK_KNOBS(X) \
    X(TRACE, USERS, 0, 0, 1, NULL, \
      "1: print on stderr when each batch was read, scored and written, and the engine's choices") \
    X(CPU_PASS, USERS, 0, 0, 5, "auto|scalar|sse2|avx2|avx512|neon", \
      "the CPU engine's vector pass; auto: the widest this CPU runs") \
    X(CPU_DIAG, TESTS, 0, 0, 2, "auto|off|all", \
      "float pairs the CPU scores across anti-diagonals: auto by cost, off none, all every one (gkl.bats compares)") \
    X(OPEN_EARLY, TESTS, 1, 0, 1, NULL, \
      "0: open each input only once the one before is read (score.bats compares both orders)") \
    X(BLOCK_KB, TESTS, 0, 64, 16384, NULL, \
      "KB a reading thread takes at a time; 0: the built-in size (formats.bats: lines across blocks)") \
    X(CUDA_CGAP_SET, TESTS, 1, 0, 1, NULL, \
      "0: the constant-gap kernels get no common set and compute every read's own (gpu_vs_cpu)") \
    X(CUDA_CHUNK_CELLS, TESTS, 0, 1, 1000000000000, NULL, \
      "cells per GPU chunk; 0: by the batch (gpu_vs_cpu, pdhmm_vs_cpu: many small chunks)") \
    X(ALL_GPUS_VISIBLE, TESTS, 0, 0, 1, NULL, \
      "1: CUDA sees every GPU, not only those the run uses (scripts/bench-startup.sh compares)") \
    X(OPEN_DELAY_MS, TESTS, 0, 0, 60000, NULL, \
      "ms added to the engine's start-up (score.bats: reading runs ahead of a slow start-up)") \
    X(GKL_GPU_SMALL, TESTS, 1, 0, 1, NULL, \
      "0: region-sized library calls take the GPU engine's path, not the small-call kernel (gkl.bats: routing)") \
    X(GKL_GPU_QUEUE, TESTS, 0, 0, 1000, NULL, \
      "region-sized library calls that may wait for a busy GPU before the next goes to the CPU (gkl.bats: gathering)") \
    X(BATCH_END, TUNING, 0, 0, 1, "overlap|wait", \
      "wait: hand each batch on only once every batch before it is set") \
    X(TABLE_THREADS, TUNING, 0, 1, 256, NULL, \
      "threads that format the table; 0: the run's thread count") \
    X(MAX_BLOCK_MB, TUNING, 0, 4, 256, NULL, \
      "largest block the reader takes, in MB; 0: the built-in cap") \
    X(STEP_ORDER, TUNING, 0, 0, 1, "steps|side", \
      "side: the reader's threads take side jobs before the cycle's reading and scanning (`steps`)") \
    X(GUNZIP, TUNING, 0, 0, 2, "auto|direct|ahead", \
      "gzip input inflated by the reading thread (direct) or one ahead of it (ahead); auto: by the threads") \
    X(BGZF, TUNING, 0, 0, 1, "own|htslib", \
      "htslib: BGZF input read through htslib rather than inflated on the reader's threads") \
    X(CUDA_PIN, TUNING, 1, 0, 1, NULL, \
      "0: batches are not page-locked; the GPU's input goes through the staging buffers") \
    X(CUDA_PACK, TUNING, 0, 0, 2, "auto|gpu|host", \
      "who packs the chunks: auto, the host for a small call and the GPU for others; gpu; host") \
    X(CUDA_PACK_READS, TUNING, 512, 1, 1000000, NULL, \
      "reads per part when the host's threads pack a chunk") \
    X(CUDA_HOST_THREADS, TUNING, 0, 1, 4, NULL, \
      "host threads per device that plan and pack; 0: the built-in count") \
    X(CUDA_SLOT_MB, TUNING, -1, 0, 1000000, NULL, \
      "cap on a chunk's input block, in MB; 0: none; unset: the built-in cap") \
    X(CUDA_RAMP, TUNING, 4, 0, 7, NULL, \
      "small chunks a device's pipeline starts with") \
    X(CUDA_ITEM_COLS, TUNING, 0, 1, 1000000, NULL, \
      "haplotype columns per work item; 0: by the chunk's size") \
    X(CUDA_ONE_STREAM, TUNING, 0, 0, 1, NULL, \
      "1: a chunk's kernels on one stream, none on the side streams") \
    X(PD_CG, TUNING, 1, 0, 1, NULL, \
      "0: PDHMM reads of constant gap qualities go to the per-row kernels") \
    X(GKL_ENGINES, TUNING, 0, 1, 4, NULL, \
      "GPU engines the GKL-compatible library gathers calls on; 0: the built-in count") \
    X(GKL_GPU_MIN_KCELLS, TUNING, 0, 0, 1000000, NULL, \
      "region-sized library calls go to the GPU only with at least this many K cells per CPU thread") \
    X(GKL_GPU_PRECISION, TUNING, 0, 0, 1, "double|config", \
      "the library GPU's precision for mixed-precision calls: double; config, the calls' own")

#define HK_KNOB_ID(NAME, FOR, DEF, MIN, MAX, WORDS, DOC) HK_KNOB_##NAME,
typedef enum { HK_KNOBS(HK_KNOB_ID) HK_N_KNOBS } hk_knob_t;
#undef HK_KNOB_ID

typedef enum { HK_KNOB_FOR_USERS, HK_KNOB_FOR_TESTS, HK_KNOB_FOR_TUNING } hk_knob_for_t;

typedef struct {
    const char   *name;     /* "HK_TRACE" */
    hk_knob_for_t who;
    long long     dflt, min, max;
    const char   *words;    /* "a|b" or NULL */
    const char   *doc;      /* one line */
} hk_knob_info_t;

/* The knob's value (the default unless the environment set a valid one). */
long long hk_knob(hk_knob_t k);
/* A word knob's value as its word, e.g. "avx2" (valid until the thread's
 * next call); NULL for others. */
const char *hk_knob_word(hk_knob_t k);
/* Whether the environment set the knob (to a valid value that this build reads). */
int hk_knob_is_set(hk_knob_t k);
/* The description of knob k (static storage). */
const hk_knob_info_t *hk_knob_info(hk_knob_t k);
/* Whether this build reads the TUNING knobs (--enable-tuning-knobs). */
int hk_knobs_tuning(void);

/* Tests of this registry: read the environment again, warnings included.
 * Not for use while other threads read knobs. (A test that compares two ways
 * of working sets a field of hk_options_t, hk_options.h.) */
void hk_knobs_reread(void);

#ifdef __cplusplus
}
#endif
#endif
