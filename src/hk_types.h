/* hk_types.h - the types and rules every layer shares: the host code (src/)
 * and the CUDA engine (kernels/) both include this, and it includes nothing of
 * haplik's. The dependency order of the modules, bottom up:
 *   hk_types  <-  hk_batch  <-  hk_model, kernels/hk_cuda.h  <-  hk_engine
 *   hk_types  <-  hk_source <-  hk_lines <- hk_format_* <- hk_reader
 * (docs/ARCHITECTURE.md draws the whole path).
 */
#ifndef HK_TYPES_H
#define HK_TYPES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Arithmetic of a scorer (SPEC section 1). */
enum { HK_PREC_MIXED = 0, HK_PREC_FLOAT = 1, HK_PREC_DOUBLE = 2 };

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

/* What went wrong, as the exit status it calls for (SPEC: command line). */
typedef enum {
    HK_ERR_NONE = 0,
    HK_ERR_INPUT = 2,       /* the input is bad: the user's to fix */
    HK_ERR_RUNTIME = 3      /* memory, I/O, a device: the run's, not the input's */
} hk_err_kind_t;

#ifdef __cplusplus
}
#endif
#endif
