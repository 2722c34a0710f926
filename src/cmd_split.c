/* cmd_split.c - `haplik split INPUT OUT1 ... OUTN`: cut a dump into N shards
 * at region boundaries, contiguous and balanced by cells.
 *
 * Two passes over the input: the first measures each region's cells, the
 * second writes each region to its shard. Each shard starts with the region's
 * "# source-line" tag so that scoring a shard reports the original line, and
 * concatenating the shards' tables gives the table of the whole input.
 */
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_outfile.h"
#include "hk_reader.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define SPLIT_BATCH_PAIRS (1u << 16)

static void usage(FILE *fp)
{
    fprintf(fp,
        "Usage: haplik split [options] INPUT OUT1 [OUT2 ...]\n\n"
        "Cut a dump into N shards (N = number of OUT files) at region boundaries, contiguous\n"
        "and balanced by cells (sum of read length x haplotype length). Always writes all N\n"
        "files (some may hold no region); each is complete or absent. The shards keep the\n"
        "input's format, region names and original line numbers, so that merging the\n"
        "shards' tables gives the table of the whole input. INPUT must be a file (it is\n"
        "read twice); plain, gzip or BGZF.\n\n"
        "Options:\n"
        "      --format F   input format: auto, gatk or batch [auto]\n"
        "      --quiet      no notices\n"
        "  -h, --help       this help\n");
}

int hk_cmd_split(int argc, char **argv)
{
    static const struct option opts[] = {
        { "format", required_argument, NULL, 'f' }, { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    int format = HK_FMT_AUTO, c;
    optind = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if ((format = hk_reader_parse_format(optarg)) < 0) {
                hk_log_error("--format: expected auto, gatk or batch");
                return HK_EXIT_INPUT;
            }
            break;
        case 'q': hk_log_set_quiet(1); break;
        case 'h': usage(stdout); return hk_cli_close_stdout() ? HK_EXIT_RUNTIME : 0;
        default: usage(stderr); return HK_EXIT_INPUT;
        }
    }
    if (argc - optind < 2) { usage(stderr); return HK_EXIT_INPUT; }
    const char *input = argv[optind];
    char **outs = argv + optind + 1;
    const int n = argc - optind - 1;
    if (!strcmp(input, "-")) {
        hk_log_error("split: INPUT must be a file, not standard input (it is read twice)");
        return HK_EXIT_INPUT;
    }
    /* the raw model: qualities and letters pass through unchanged */
    const hk_model_t raw = { .precision = HK_PREC_DOUBLE, .min_base_quality = 0, .gcp = -1,
                             .unknown_as_n = 1 };
    hk_outfile_catch_signals();

    /* pass 1: cells per region */
    int status = HK_EXIT_INPUT;
    const char *werr = NULL;   /* the shard a write failed on */
    uint64_t *cells = NULL, total = 0;
    size_t n_regions = 0, cap = 0;
    hk_batch_t b;
    hk_batch_init(&b);
    hk_outfile_t **out = calloc((size_t)n, sizeof *out);
    char **last_name = calloc((size_t)n, sizeof *last_name);   /* the tag each shard is under */
    hk_reader_t *rd = hk_reader_open(input, format, &raw);
    if (!rd || !out || !last_name) goto done;
    int got;
    while ((got = hk_reader_next(rd, &b, SPLIT_BATCH_PAIRS)) > 0) {
        if (n_regions + b.n_regions > cap) {
            cap = 2 * (n_regions + b.n_regions);
            uint64_t *p = realloc(cells, cap * sizeof *p);
            if (!p) { hk_log_error("out of memory"); status = HK_EXIT_RUNTIME; goto done; }
            cells = p;
        }
        for (size_t i = 0; i < b.n_regions; i++) total += cells[n_regions++] = b.regions[i].cells;
        hk_batch_clear(&b);
    }
    if (got < 0) { status = got == -2 ? HK_EXIT_RUNTIME : HK_EXIT_INPUT; goto done; }
    format = hk_reader_format(rd);
    hk_reader_close(rd);

    /* pass 2: region i goes to the shard holding the midpoint of its cells */
    status = HK_EXIT_RUNTIME;
    for (int k = 0; k < n; k++) {
        if (!(out[k] = hk_outfile_open(outs[k]))) goto done;
        if (format == HK_FMT_GATK &&
            fputs("# hap-bases read-bases read-qual read-ins-qual read-del-qual gcp "
                  "expected-result\n", hk_outfile_fp(out[k])) == EOF)
            { werr = outs[k]; goto write_error; }
    }
    status = HK_EXIT_INPUT;
    if (!(rd = hk_reader_open(input, format, &raw))) goto done;
    uint64_t before = 0;
    size_t ri = 0;
    while ((got = hk_reader_next(rd, &b, SPLIT_BATCH_PAIRS)) > 0) {
        for (size_t i = 0; i < b.n_regions; i++, ri++) {
            if (ri >= n_regions) { hk_log_error("%s: changed while being split", input); goto done; }
            long double mid = (long double)before + (long double)cells[ri] / 2;
            int k = total ? (int)(mid * n / (long double)total) : 0;
            if (k >= n) k = n - 1;
            before += cells[ri];
            if (hk_reader_write_region(hk_outfile_fp(out[k]), &b, i, format, &last_name[k]))
                { werr = outs[k]; goto write_error; }
        }
        hk_batch_clear(&b);
    }
    if (got < 0) { status = got == -2 ? HK_EXIT_RUNTIME : HK_EXIT_INPUT; goto done; }
    status = HK_EXIT_OK;
    for (int k = 0; k < n; k++) {
        hk_outfile_t *o = out[k];
        out[k] = NULL;
        if (hk_outfile_commit(o)) status = HK_EXIT_RUNTIME;
    }
    goto done;
write_error:
    hk_log_error("%s: write failed: %s", werr, strerror(errno));
    status = HK_EXIT_RUNTIME;
done:
    if (out) for (int k = 0; k < n; k++) hk_outfile_abort(out[k]);
    free(out);
    if (last_name) for (int k = 0; k < n; k++) free(last_name[k]);
    free(last_name);
    hk_reader_close(rd);
    hk_batch_free(&b);
    free(cells);
    return status;
}
