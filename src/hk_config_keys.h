/* hk_config_keys.h - every configuration key, listed once (SPEC section 4).
 *
 * From this list come the defaults (hk_config_init), the JSON loader and its
 * key-path errors, the command-line flags, their one validator per key (a
 * file value and a flag value go through the same rule and the same
 * message), and the `--help` listing with the live defaults. A key added here
 * has all of them; the README's configuration table is checked against the
 * list by tests/config.bats.
 *
 * X(ID, PATH, TYPE, FIELD, LO, HI, CHOICES, DEFAULT, FLAG, METAVAR, HELP)
 *   TYPE     CHOICE (one of CHOICES, '|'-separated; stored as its index),
 *            NAME (one of CHOICES, stored as the name: the config does not
 *            depend on the module that interprets it), INT (LO..HI),
 *            INT_OR_NULL (LO..HI, null stored as -1), NUMBER (LO..HI),
 *            BOOL, DEVICES ("all" or ordinals LO..HI), DIR_OR_NULL
 *   FIELD    the member of hk_config_t
 *   DEFAULT  in the flag's syntax, parsed by the key's own validator
 */
#ifndef HK_CONFIG_KEYS_H
#define HK_CONFIG_KEYS_H

#define HK_CONFIG_KEYS(X)                                                                        \
    X(INPUT_FORMAT, "input.format", NAME, input_format, 0, 0, "auto|pdhmm|gatk|batch", "auto",    \
      "format", "F", "input format; auto detects it from the content")                           \
    X(OUTPUT_FORMAT, "output.format", CHOICE, output_format, 0, 0, "json|jsonl|tsv|auto", "auto", \
      "output-format", "F", "table format (JSON, JSON Lines, long TSV); auto: from -o's extension, else json") \
    X(OUTPUT_COMPRESSION, "output.compression", CHOICE, compression, 0, 0, "auto|none|bgzf",      \
      "auto", "compression", "C", "BGZF (htslib, threaded); auto: when the output ends in .gz")  \
    X(OUTPUT_DECIMALS, "output.decimals", INT, decimals, 0, 12, NULL, "6", "decimals", "N",       \
      "digits after the point of each likelihood")                                               \
    X(OUTPUT_SEQUENCES, "output.sequences", BOOL, sequences, 0, 0, NULL, "true", "sequences",     \
      "BOOL", "write reads and haplotypes into json tables (--no-sequences: false)")             \
    X(MODEL_PRECISION, "model.precision", CHOICE, model.precision, 0, 0, "mixed|float|double",    \
      "mixed", "precision", "P", "mixed: float, double below float_threshold (GATK's policy)")   \
    X(MODEL_FLOAT_THRESHOLD, "model.float_threshold", NUMBER, model.float_threshold, 0, 1e300,    \
      NULL, HK_STR(HK_FLOAT_THRESHOLD), "float-threshold", "X", "mixed: scaled float sums below this are redone in double") \
    X(MODEL_MIN_BASE_QUALITY, "model.min_base_quality", INT, model.min_base_quality, 0, 93, NULL, \
      "6", "min-base-quality", "Q", "base qualities are raised to at least this")                \
    X(MODEL_GCP, "model.gcp", INT_OR_NULL, model.gcp, 1, 93, NULL, "null", "gcp", "Q",            \
      "replace every gap-continuation quality; null keeps the input's")                          \
    X(MODEL_UNKNOWN_BASES, "model.unknown_bases", CHOICE, model.unknown_as_n, 0, 0, "error|as_n", \
      "error", "unknown-bases", "W", "letters other than ACGTN: an input error, or read as N")   \
    X(ENGINE_BACKEND, "engine.backend", CHOICE, backend, 0, 0, "auto|cuda|cpu", "auto",           \
      "backend", "B", "auto: the GPU when one is usable, else the CPU")                          \
    X(ENGINE_DEVICES, "engine.devices", DEVICES, n_devices, 0, HK_MAX_ORDINAL, NULL, "all", "devices",      \
      "LIST", "all, or GPU ordinals 0,1,... that share the work")                                \
    X(ENGINE_THREADS, "engine.threads", INT, threads, 0, 1024, NULL, "0", "threads", "N",         \
      "CPU threads, 0 = all cores")                                                              \
    X(ENGINE_MAX_BATCH_PAIRS, "engine.max_batch_pairs", INT, max_batch_pairs, 0, 1000000000,      \
      NULL, "0", "max-batch-pairs", "N", "pairs per batch (bounds memory), 0 = 262144")            \
    X(ENGINE_GPU_LOCK_DIR, "engine.gpu_lock_dir", DIR_OR_NULL, gpu_lock_dir, 0, 0, NULL, "null",  \
      "gpu-lock-dir", "DIR", "claim the first free GPU by flock on DIR/gpu<N>.lock")             \
    X(CHECK_TOLERANCE, "check.tolerance", NUMBER, tolerance, 0, 1e300, NULL, "1e-4",              \
      "tolerance", "T", "check: largest accepted difference")

/* HK_KEY_OUTPUT_FORMAT, ...: the index of each key in the list. */
enum {
#define HK_KEY_ENUM(id, ...) HK_KEY_##id,
    HK_CONFIG_KEYS(HK_KEY_ENUM)
#undef HK_KEY_ENUM
    HK_N_KEYS
};

#endif
