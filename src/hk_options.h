/* hk_options.h - the values of the HK_* knobs (hk_knobs.h) as one plain value.
 *
 * The environment is read once, at the edge: a command (src/cmd_*.c,
 * hk_cli.c) or the GKL library's state (src/gkl/hk_gkl_state.c) fills the
 * opt member of its hk_config_t with hk_options_read (hk_options.c) and
 * passes it down with the config: to the engine, the reader, the table, and
 * the CUDA engine (hk_cuda_open takes the cuda part, kernels/hk_cuda.h).
 * The modules below read these fields, never the environment; a test or a
 * program that compares two ways of working sets a field. The settings that
 * are the process's (tracing, the CPU's pass and anti-diagonal mode) are
 * handed to their modules by hk_options_apply.
 *
 * hk_options_init gives the registry's defaults and reads nothing. Plain C,
 * header only: the CUDA engine includes it and links nothing of src/.
 */
#ifndef HK_OPTIONS_H
#define HK_OPTIONS_H

#include <stdint.h>
#include "hk_knobs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* HK_KNOB_DEFAULT_<NAME>: each knob's default, from the registry. */
#define HK_KNOB_DEFAULT_ID(NAME, FOR, DEF, MIN, MAX, WORDS, DOC) HK_KNOB_DEFAULT_##NAME = (DEF),
enum { HK_KNOBS(HK_KNOB_DEFAULT_ID) };
#undef HK_KNOB_DEFAULT_ID

/* The reader's (hk_reader_open, hk_source, hk_lines). */
typedef struct {
    int block_kb;        /* HK_BLOCK_KB: KB a reading thread takes at a time; 0 the built-in */
    int max_block_mb;    /* HK_MAX_BLOCK_MB: the largest block; 0 the built-in cap */
    int side_first;      /* HK_STEP_ORDER=side: side jobs before steps */
    int gunzip;          /* HK_GUNZIP: 0 auto, 1 direct, 2 ahead */
    int bgzf_htslib;     /* HK_BGZF=htslib: BGZF input through htslib */
    int batch_wait;      /* HK_BATCH_END=wait: a batch handed on once every one before it is set */
} hk_read_opts_t;

/* The CUDA engine's (hk_cuda_open). */
typedef struct {
    int       cgap_set;      /* HK_CUDA_CGAP_SET: 0, the constant-gap kernels get no common set */
    uint64_t  chunk_cells;   /* HK_CUDA_CHUNK_CELLS: cells per chunk; 0 by the batch */
    int       pin;           /* HK_CUDA_PIN: 0, batches are not page-locked */
    int       pack;          /* HK_CUDA_PACK: 0 auto, 1 the GPU, 2 the host */
    int       host_threads;  /* HK_CUDA_HOST_THREADS: per device; 0 the built-in count */
    long long slot_mb;       /* HK_CUDA_SLOT_MB: a chunk's input cap; 0 none, -1 the built-in */
    unsigned  ramp;          /* HK_CUDA_RAMP: small chunks a device's pipeline starts with */
    unsigned  item_cols;     /* HK_CUDA_ITEM_COLS: columns per work item; 0 by the chunk */
    int       one_stream;    /* HK_CUDA_ONE_STREAM: a chunk's kernels on one stream */
    int       pd_cg;         /* HK_PD_CG: 0, constant-gap PDHMM reads go to the per-row kernels */
} hk_cuda_opts_t;

typedef struct {
    int  trace;              /* HK_TRACE (hk_options_apply: hk_log_set_tracing) */
    char cpu_pass[16];       /* HK_CPU_PASS: "" auto, else the pass's name (hk_options_apply) */
    int  cpu_diag;           /* HK_CPU_DIAG: 0 auto, 1 off, 2 all (hk_options_apply) */
    int  open_early;         /* HK_OPEN_EARLY: 0, an input is opened once the one before is read */
    long open_delay_ms;      /* HK_OPEN_DELAY_MS: hk_engine_start takes this much longer */
    int  all_gpus_visible;   /* HK_ALL_GPUS_VISIBLE: CUDA sees every GPU */
    /* what the user or a scheduler chose, which hk_engine_prepare_run leaves alone */
    int  env_visible_devices;   /* CUDA_VISIBLE_DEVICES is set */
    int  env_max_connections;   /* CUDA_DEVICE_MAX_CONNECTIONS is set */
    int  table_threads;      /* HK_TABLE_THREADS: the table's formatting threads; 0 the run's */
    const char *temp_dir;    /* $TMPDIR, else /tmp: temporary files (hk_options_apply: hk_outfile_set_temp_dir) */
    hk_read_opts_t read;
    hk_cuda_opts_t cuda;
    /* the GKL-compatible library's (src/gkl) */
    int       gkl_gpu_small;       /* HK_GKL_GPU_SMALL: 0, no small-call path */
    int       gkl_gpu_queue;       /* HK_GKL_GPU_QUEUE */
    int       gkl_engines;         /* HK_GKL_ENGINES: 0 the built-in count */
    long long gkl_gpu_min_kcells;  /* HK_GKL_GPU_MIN_KCELLS */
    int       gkl_gpu_precision;   /* HK_GKL_GPU_PRECISION: 0 double, 1 the calls' own */
} hk_options_t;

static inline void hk_cuda_opts_init(hk_cuda_opts_t *o)
{
    o->cgap_set = HK_KNOB_DEFAULT_CUDA_CGAP_SET;
    o->chunk_cells = HK_KNOB_DEFAULT_CUDA_CHUNK_CELLS;
    o->pin = HK_KNOB_DEFAULT_CUDA_PIN;
    o->pack = HK_KNOB_DEFAULT_CUDA_PACK;
    o->host_threads = HK_KNOB_DEFAULT_CUDA_HOST_THREADS;
    o->slot_mb = HK_KNOB_DEFAULT_CUDA_SLOT_MB;
    o->ramp = HK_KNOB_DEFAULT_CUDA_RAMP;
    o->item_cols = HK_KNOB_DEFAULT_CUDA_ITEM_COLS;
    o->one_stream = HK_KNOB_DEFAULT_CUDA_ONE_STREAM;
    o->pd_cg = HK_KNOB_DEFAULT_PD_CG;
}

static inline void hk_read_opts_init(hk_read_opts_t *o)
{
    o->block_kb = HK_KNOB_DEFAULT_BLOCK_KB;
    o->max_block_mb = HK_KNOB_DEFAULT_MAX_BLOCK_MB;
    o->side_first = HK_KNOB_DEFAULT_STEP_ORDER == 1;
    o->gunzip = HK_KNOB_DEFAULT_GUNZIP;
    o->bgzf_htslib = HK_KNOB_DEFAULT_BGZF == 1;
    o->batch_wait = HK_KNOB_DEFAULT_BATCH_END == 1;
}

/* The registry's defaults: what a run does with no HK_* variable set. */
static inline void hk_options_init(hk_options_t *o)
{
    o->temp_dir = "/tmp";
    o->trace = HK_KNOB_DEFAULT_TRACE;
    o->cpu_pass[0] = '\0';
    o->cpu_diag = HK_KNOB_DEFAULT_CPU_DIAG;
    o->open_early = HK_KNOB_DEFAULT_OPEN_EARLY;
    o->open_delay_ms = HK_KNOB_DEFAULT_OPEN_DELAY_MS;
    o->all_gpus_visible = HK_KNOB_DEFAULT_ALL_GPUS_VISIBLE;
    o->env_visible_devices = 0;
    o->env_max_connections = 0;
    o->table_threads = HK_KNOB_DEFAULT_TABLE_THREADS;
    hk_read_opts_init(&o->read);
    hk_cuda_opts_init(&o->cuda);
    o->gkl_gpu_small = HK_KNOB_DEFAULT_GKL_GPU_SMALL;
    o->gkl_gpu_queue = HK_KNOB_DEFAULT_GKL_GPU_QUEUE;
    o->gkl_engines = HK_KNOB_DEFAULT_GKL_ENGINES;
    o->gkl_gpu_min_kcells = HK_KNOB_DEFAULT_GKL_GPU_MIN_KCELLS;
    o->gkl_gpu_precision = HK_KNOB_DEFAULT_GKL_GPU_PRECISION;
}

/* hk_options.c (the edge; not for the CUDA engine): */
/* o from the HK_* variables, read once per process (hk_knob): the default
 * of each that is not set, or not valid (warned once); and whether the CUDA
 * variables that hk_engine_prepare_run would set are set. */
void hk_options_read(hk_options_t *o);
/* Hand the process's settings of o to their modules: tracing (hk_log), the
 * CPU's pass (before its first use) and its anti-diagonal mode. */
void hk_options_apply(const hk_options_t *o);

#ifdef __cplusplus
}
#endif
#endif
