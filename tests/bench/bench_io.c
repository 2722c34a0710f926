/* bench_io.c - how long parsing and table writing take, without scoring.
 *
 *   tests/bench/bench_io INPUT [OUT [THREADS [FORMAT]]]   (build: make tests/bench/bench_io)
 *
 * Reads INPUT into batches as `score` does (the GPU batch size, one batch
 * reused: the steady state of score's pool of batches, without the first
 * touch of their memory), fills
 * every likelihood with a varied value, writes the table to OUT (default
 * /dev/null) as FORMAT (output.format: json, jsonl, tsv; BGZF when OUT ends in .gz,
 * as for score) and prints the seconds of each phase and the input rate. */
#include "hk_config.h"
#include "hk_engine.h"
#include "hk_log.h"
#include "hk_reader.h"
#include "hk_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: bench_io INPUT [OUT [THREADS [FORMAT]]]\n"); return 2; }
    hk_config_t c;
    hk_config_init(&c);
    if (argc > 4 && hk_config_set(&c, HK_KEY_OUTPUT_FORMAT, "FORMAT", argv[4])) return 2;
    hk_reader_t *r;
    hk_table_t *t;
    if (hk_reader_open(argv[1], HK_FMT_AUTO, hk_model_seq_rules(&c.model), NULL, &r)) return 2;
    const hk_status_t opened = hk_table_open(argc > 2 ? argv[2] : "/dev/null", &c,
                                             (const char *const *)argv + 1, 1, &t);
    const int threads = argc > 3 ? atoi(argv[3]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    hk_reader_set_threads(r, threads);
    if (opened) { fprintf(stderr, "(writing to a temporary file beside %s failed; give OUT)\n",
                      argc > 2 ? argv[2] : "/dev/null"); return 3; }
    hk_batch_t b;
    hk_batch_init(&b);
    double parse = 0, write = 0, t0;
    unsigned long long pairs = 0, cells = 0, regions = 0;
    size_t got;
    hk_status_t st;
    for (;;) {
        t0 = now();
        st = hk_reader_next(r, &b, hk_engine_batch_pairs(&c), &got);
        parse += now() - t0;
        if (st || got == 0) break;
        for (size_t i = 0; i < b.n_pairs; i++) b.lk[i] = -1.0 - (double)(i % 9973) / 97.0;
        t0 = now();
        if (hk_table_write(t, &b)) return 3;
        write += now() - t0;
        pairs += b.n_pairs; cells += b.cells; regions += b.n_regions;
        hk_batch_clear(&b);
    }
    if (st) return 2;
    hk_summary_t s = { .regions = regions, .pairs = pairs, .cells = cells, .backend = "none" };
    t0 = now();
    if (hk_table_finish(t, &s)) return 3;
    write += now() - t0;
    struct stat sb;
    const double mb = stat(argv[1], &sb) == 0 ? (double)sb.st_size / 1e6 : 0;
    printf("%d parsing threads\n", threads);
    printf("input %.1f MB, %llu regions, %llu pairs, %.3g cells\n", mb, regions, pairs, (double)cells);
    printf("parse %.3f s (%.0f MB/s)\nwrite %.3f s (%.2f M pairs/s)\n", parse, mb / parse, write,
           pairs / write / 1e6);
    hk_reader_close(r);
    hk_batch_free(&b);
    return 0;
}
