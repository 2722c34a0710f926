/* hk_options.c - the HK_* knobs read into an hk_options_t, at the edge
 * (hk_options.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "hk_cpu.h"
#include "hk_log.h"
#include "hk_options.h"
#include "hk_outfile.h"

void hk_options_read(hk_options_t *o)
{
    hk_options_init(o);
    o->trace = hk_knob(HK_KNOB_TRACE) != 0;
    if (hk_knob(HK_KNOB_CPU_PASS) > 0) {   /* 0: auto */
        const char *w = hk_knob_word(HK_KNOB_CPU_PASS);
        snprintf(o->cpu_pass, sizeof o->cpu_pass, "%s", w ? w : "");
    }
    o->cpu_diag = (int)hk_knob(HK_KNOB_CPU_DIAG);
    o->open_early = hk_knob(HK_KNOB_OPEN_EARLY) != 0;
    o->open_delay_ms = (long)hk_knob(HK_KNOB_OPEN_DELAY_MS);
    o->all_gpus_visible = hk_knob(HK_KNOB_ALL_GPUS_VISIBLE) != 0;
    o->env_visible_devices = getenv("CUDA_VISIBLE_DEVICES") != NULL;
    o->env_max_connections = getenv("CUDA_DEVICE_MAX_CONNECTIONS") != NULL;
    o->table_threads = (int)hk_knob(HK_KNOB_TABLE_THREADS);
    const char *tmp = getenv("TMPDIR");
    if (tmp && *tmp) o->temp_dir = tmp;

    hk_read_opts_t *r = &o->read;
    r->block_kb = (int)hk_knob(HK_KNOB_BLOCK_KB);
    r->max_block_mb = (int)hk_knob(HK_KNOB_MAX_BLOCK_MB);
    r->side_first = hk_knob(HK_KNOB_STEP_ORDER) == 1;
    r->gunzip = (int)hk_knob(HK_KNOB_GUNZIP);
    r->bgzf_htslib = hk_knob(HK_KNOB_BGZF) == 1;
    r->batch_wait = hk_knob(HK_KNOB_BATCH_END) == 1;

    hk_cuda_opts_t *g = &o->cuda;
    g->cgap_set = hk_knob(HK_KNOB_CUDA_CGAP_SET) != 0;
    g->chunk_cells = (uint64_t)hk_knob(HK_KNOB_CUDA_CHUNK_CELLS);
    g->pin = hk_knob(HK_KNOB_CUDA_PIN) != 0;
    g->pack = (int)hk_knob(HK_KNOB_CUDA_PACK);
    g->host_threads = (int)hk_knob(HK_KNOB_CUDA_HOST_THREADS);
    g->slot_mb = hk_knob_is_set(HK_KNOB_CUDA_SLOT_MB) ? hk_knob(HK_KNOB_CUDA_SLOT_MB) : -1;
    g->ramp = (unsigned)hk_knob(HK_KNOB_CUDA_RAMP);
    g->item_cols = (unsigned)hk_knob(HK_KNOB_CUDA_ITEM_COLS);
    g->one_stream = hk_knob(HK_KNOB_CUDA_ONE_STREAM) != 0;
    g->pd_cg = hk_knob(HK_KNOB_PD_CG) != 0;

    o->gkl_gpu_small = hk_knob(HK_KNOB_GKL_GPU_SMALL) != 0;
    o->gkl_gpu_queue = (int)hk_knob(HK_KNOB_GKL_GPU_QUEUE);
    o->gkl_engines = (int)hk_knob(HK_KNOB_GKL_ENGINES);
    o->gkl_gpu_min_kcells = hk_knob(HK_KNOB_GKL_GPU_MIN_KCELLS);
    o->gkl_gpu_precision = (int)hk_knob(HK_KNOB_GKL_GPU_PRECISION);
}

void hk_options_apply(const hk_options_t *o)
{
    hk_log_set_tracing(o->trace);
    hk_outfile_set_temp_dir(o->temp_dir);
    hk_cpu_set_pass(o->cpu_pass[0] ? o->cpu_pass : NULL);
    hk_cpu_set_diag(o->cpu_diag == 1 ? HK_DIAG_OFF : o->cpu_diag == 2 ? HK_DIAG_ALL : HK_DIAG_AUTO);
}
