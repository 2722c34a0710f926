/* hk_types.h - the types and rules every layer shares: the host code (src/)
 * and the CUDA engine (kernels/) both include this, and it includes nothing of
 * haplik's. The dependency order of the modules, bottom up:
 *   hk_types  <-  hk_batch  <-  hk_model, kernels/hk_cuda.h  <-  hk_engine
 *   hk_types  <-  hk_source <-  hk_lines <- hk_format_* <- hk_reader
 * (docs/ARCHITECTURE.md draws the whole path).
 */
#ifndef HK_TYPES_H
#define HK_TYPES_H

#include <errno.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Arithmetic of a scorer (SPEC section 1). */
enum { HK_PREC_MIXED = 0, HK_PREC_FLOAT = 1, HK_PREC_DOUBLE = 2 };

/* Mixed precision's default threshold (model.float_threshold, SPEC section
 * 1): a pair whose scaled float sum is below it is scored again in double.
 * GATK's and GKL's value; the configuration's default is its text
 * (HK_STR, hk_config_keys.h). */
#define HK_FLOAT_THRESHOLD 1e-28
#define HK_STR_(x) #x
#define HK_STR(x) HK_STR_(x)

/* The scale constant C of SPEC section 1, which keeps the sums away from
 * underflow: the first row's deletions start at C / (haplotype length), and
 * log10(C) comes off the result. The GPU's kernels and every CPU pass use
 * these. */
#define HK_LOG2_SCALE_F 120
#define HK_LOG2_SCALE_D 1020
#define HK_SCALE_F 0x1p120f        /* 2^HK_LOG2_SCALE_F (tests/unit/test_model checks) */
#define HK_SCALE_D 0x1p1020        /* 2^HK_LOG2_SCALE_D */
#define HK_LOG10_2 0.30102999566398119521
#define HK_LOG10_SCALE_F (HK_LOG2_SCALE_F * HK_LOG10_2)
#define HK_LOG10_SCALE_D (HK_LOG2_SCALE_D * HK_LOG10_2)

/* Longest read and longest haplotype of a pair that mixed mode scores in
 * float; a pair with a longer one goes straight to double, on the CPU
 * (src/hk_cpu.h) and the GPU (kernels/hk_items.cuh) alike, so that mixed
 * stays within 1e-4 of double at every length (SPEC 1). Float's error grows
 * linearly with both lengths. Measured on the CPU's float pass (exact
 * matches, constant qualities, where the rounding of the row coefficients
 * adds up instead of cancelling): at most 6.3e-8 log10 per read base (Q58-75
 * with gap-open Q60; 2.3e-8 at Q37 with gap-open Q40; 4.6e-9 with varied
 * qualities), so 1e-4 is reached at about 1,600 bases; 800 keeps a factor of
 * two: the worst case measured at 800 is 5.1e-5. Along the haplotype, reads
 * that fit it at many places (repeats) gather error from every column: at
 * most about 6e-9 per haplotype base (2.4e-5 at 4,000, 9.5e-5 at 16,000,
 * 1.8e-4 at 32,000), so 4,096 adds at most about 2.5e-5 to the read's share. */
#define HK_MIXED_FLOAT_MAX_READ 800u
#define HK_MIXED_FLOAT_MAX_HAP 4096u

/* Base codes: 0..3 for A C G T, HK_BASE_N for N. A PDHMM batch (SPEC 1b,
 * where equality is case-sensitive) keeps the case: a lower-case letter's
 * code is its upper-case code + HK_BASE_LOWER (5..9 for a c g t n). */
#define HK_BASE_N 4
#define HK_BASE_LOWER 5

/* The flags of a PDHMM haplotype's PD byte (SPEC 1b). */
enum { HK_PD_SNP = 1, HK_PD_DEL_START = 2, HK_PD_DEL_END = 4, HK_PD_A = 8, HK_PD_C = 16,
       HK_PD_G = 32, HK_PD_T = 64, HK_PD_N = 128 };

/* Longest read or haplotype accepted (positions are 32-bit throughout). */
#define HK_MAX_SEQ_LEN 1000000u

/* How sequences are normalised as they enter a batch: the model's rules for
 * its input (SPEC section 1), applied once so that no backend applies them. */
typedef struct {
    int min_base_quality;   /* base qualities are raised to at least this */
    int gcp;                /* >= 0 replaces every gap-continuation quality; -1 keeps them */
    int unknown_as_n;       /* 1: bytes other than ACGTN read as N; 0: an input error */
    int pdhmm;              /* 1: a PDHMM dump (SPEC 1b): codes keep the case, qualities are
                               taken as written (no floor, no refusal of gap-open sums >= 1
                               or of gap-continuation Q0: that model clamps them) */
} hk_seq_rules_t;

/* The outcome of a fallible function, in every layer (the CUDA boundary
 * included): HK_OK, or the kind of failure, which decides the exit status
 * (hk_status_exit; SPEC: command line). The message was logged, or written
 * to the caller's buffer, where the failure was found; details such as
 * which field of a record was bad travel beside it, never in it. */
typedef enum {
    HK_OK = 0,
    HK_E_DIFF = 1,          /* a check found differences */
    HK_E_INPUT = 2,         /* the input, a usage or the configuration: the user's to fix */
    HK_E_RUNTIME = 3,       /* I/O, a thread, a CUDA call: the run's, not the input's */
    HK_E_NOMEM = 4,         /* host or device memory ran out */
    HK_E_NODEV = 5,         /* no usable GPU (the engine then scores on the CPU) */
    HK_E_INVAL = 6          /* a bad argument: a caller's mistake */
} hk_status_t;

/* The process exit status of s: 0, 1, 2 or 3. */
static inline int hk_status_exit(hk_status_t s) { return s <= HK_E_RUNTIME ? (int)s : 3; }

/* The status of a failed open, read or stat (errno e) of a file the user
 * named: the run's where a resource of the process or the host failed (too
 * many open files, memory, an I/O error: exit 3), else the file's (not
 * there, not readable, not a file: the user's to fix, exit 2). */
static inline hk_status_t hk_status_of_errno(int e)
{
    if (e == ENOMEM) return HK_E_NOMEM;
    return e == EMFILE || e == ENFILE || e == ENOBUFS || e == EAGAIN || e == EIO || e == EINTR ||
           e == ENOSPC || e == EDQUOT ? HK_E_RUNTIME : HK_E_INPUT;
}

/* On every function that returns an hk_status_t (or another result that
 * must be checked): ignoring it is a compile-time warning. */
#define HK_RESULT_USED __attribute__((warn_unused_result))

#ifdef __cplusplus
}
#endif
#endif
