/* hk_config.h - settings (SPEC section 4): defaults, JSON file, flags.
 *
 * hk_config_init sets the built-in defaults, the one place they live;
 * hk_config_load overlays a JSON file, validating every key; command-line
 * flags are applied last by the caller through the same setters, so a flag
 * and a key are checked by one rule.
 */
#ifndef HK_CONFIG_H
#define HK_CONFIG_H

#include <stdio.h>
#include "hk_model.h"

enum { HK_OUT_JSON = 0, HK_OUT_JSONL = 1 };
enum { HK_BACKEND_AUTO = 0, HK_BACKEND_CUDA = 1, HK_BACKEND_CPU = 2 };

#define HK_MAX_DEVICES 64

typedef struct {
    int    input_format;            /* HK_FMT_* */
    int    output_format;           /* HK_OUT_* */
    int    decimals;                /* digits after the point */
    int    sequences;               /* write reads and haplotypes */
    hk_model_t model;
    int    backend;                 /* HK_BACKEND_* */
    int    n_devices;               /* -1: all */
    int    devices[HK_MAX_DEVICES];
    int    threads;                 /* CPU threads, 0 = all cores */
    long   max_batch_pairs;         /* pairs per batch, 0 = automatic */
    char  *gpu_lock_dir;            /* NULL: no locking */
    double tolerance;               /* check: largest accepted difference */
} hk_config_t;

void hk_config_init(hk_config_t *c);
void hk_config_free(hk_config_t *c);

/* Overlay the JSON file at path. -1 on error, logged as "PATH: KEY: what". */
int hk_config_load(hk_config_t *c, const char *path) __attribute__((warn_unused_result));

/* Setters shared by the file and the flags; each returns 0 or -1 after
 * logging "WHERE: what" (WHERE is a key path or a flag). */
int hk_config_set_precision(hk_config_t *c, const char *where, const char *v);
int hk_config_set_backend(hk_config_t *c, const char *where, const char *v);
int hk_config_set_devices(hk_config_t *c, const char *where, const char *list);
int hk_config_set_threads(hk_config_t *c, const char *where, const char *v);
int hk_config_set_input_format(hk_config_t *c, const char *where, const char *v);
int hk_config_set_output_format(hk_config_t *c, const char *where, const char *v);
int hk_config_set_tolerance(hk_config_t *c, const char *where, const char *v);

/* Names for messages and the table. */
const char *hk_config_precision_name(int precision);
const char *hk_config_backend_name(int backend);

/* The defaults as a JSON document (for --help and `haplik config`). */
void hk_config_print(FILE *fp, const hk_config_t *c);

#endif
