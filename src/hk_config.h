/* hk_config.h - settings (SPEC section 4): defaults, JSON file, flags.
 *
 * Every key is listed once, in hk_config_keys.h. hk_config_init sets the
 * defaults of that list; hk_config_load overlays a JSON file; flags are
 * applied last by the caller through hk_config_set. A file value and a flag
 * value of one key pass the same validator and fail with the same message,
 * "WHERE: expected ..." (WHERE: "FILE: key.path" or "--flag").
 * Nothing here depends on the modules that use the settings: the input
 * format, for one, is kept as its name.
 */
#ifndef HK_CONFIG_H
#define HK_CONFIG_H

#include <stddef.h>
#include <stdio.h>
#include "hk_config_keys.h"
#include "hk_model.h"
#include "hk_options.h"

/* Values of the CHOICE keys: the index of the name in the key's list. */
enum { HK_OUT_JSON = 0, HK_OUT_JSONL = 1, HK_OUT_TSV = 2, HK_OUT_AUTO = 3 };
enum { HK_COMPRESS_AUTO = 0, HK_COMPRESS_NONE = 1, HK_COMPRESS_BGZF = 2 };
enum { HK_BACKEND_AUTO = 0, HK_BACKEND_CUDA = 1, HK_BACKEND_CPU = 2 };

#define HK_MAX_DEVICES 64
#define HK_MAX_ORDINAL 1023   /* the largest GPU ordinal engine.devices takes (hk_config_keys.h) */

typedef struct {
    char   input_format[16];        /* "auto", "gatk", "batch": the reader parses it */
    int    output_format;           /* HK_OUT_*; AUTO: from the output's name, else json */
    int    compression;             /* HK_COMPRESS_* */
    int    decimals;                /* digits after the point */
    int    sequences;               /* write reads and haplotypes */
    hk_model_t model;
    int    backend;                 /* HK_BACKEND_* */
    int    n_devices;               /* -1: all */
    int    devices[HK_MAX_DEVICES];
    int    threads;                 /* CPU threads, 0 = all cores */
    int    max_batch_pairs;         /* pairs per batch, 0 = automatic */
    char  *gpu_lock_dir;            /* NULL: no locking; owned */
    double tolerance;               /* check: largest accepted difference */
    hk_options_t opt;               /* the HK_* knobs: not keys of the file or flags; the
                                     * defaults until the edge reads them (hk_options.h) */
} hk_config_t;

/* The keys' defaults, and opt's (hk_options_init: the environment is not read). */
void hk_config_init(hk_config_t *c);
/* Frees what c owns (not c); accepts a config only initialised. */
void hk_config_free(hk_config_t *c);

/* Overlay the JSON file at path. HK_OK, or HK_E_INPUT (HK_E_NOMEM) logged
 * as "PATH: KEY: what". */
HK_RESULT_USED hk_status_t hk_config_load(hk_config_t *c, const char *path);

/* Set key (HK_KEY_*) from its text, as a flag gives it ("null" clears a key
 * that may be null). HK_OK, or HK_E_INPUT after logging "WHERE: expected
 * ..." (HK_E_NOMEM: out of memory). */
HK_RESULT_USED hk_status_t hk_config_set(hk_config_t *c, int key, const char *where, const char *text);

/* The key's path ("model.gcp"), flag name without dashes ("gcp"), the flag
 * value's placeholder and one line of help. */
const char *hk_config_key_path(int key);
const char *hk_config_key_flag(int key);
const char *hk_config_key_metavar(int key);
const char *hk_config_key_help(int key);

/* The key's value in c as JSON text ("\"mixed\"", "6", "null", "[0, 1]"). */
void hk_config_value_json(const hk_config_t *c, int key, char *buf, size_t n);

/* Name of a CHOICE key's value (hk_config_choice_name(HK_KEY_MODEL_PRECISION,
 * HK_PREC_DOUBLE) is "double"). */
const char *hk_config_choice_name(int key, int value);

/* c as one JSON document, grouped by section. */
void hk_config_print(FILE *fp, const hk_config_t *c);
/* The flags of every key with c's values in brackets (for --help). */
void hk_config_print_flags(FILE *fp, const hk_config_t *c);

#endif
