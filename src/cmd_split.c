/* cmd_split.c - `haplik split INPUT OUT1 ... OUTN`: cut a dump into N shards
 * at region boundaries, contiguous and balanced by cells (hk_split.h), all N
 * written or none; `haplik split --plan PLAN --parts N INPUT`: the same
 * shards as byte ranges of INPUT, read in place by `haplik score --plan`.
 */
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_outfile.h"
#include "hk_reader.h"
#include "hk_split.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void usage(FILE *fp)
{
    fprintf(fp,
        "Usage: haplik split [options] INPUT OUT1 [OUT2 ...]\n"
        "       haplik split [options] --plan PLAN --parts N INPUT\n\n"
        "Cut a dump into N shards (N = number of OUT files) at region boundaries, contiguous\n"
        "and balanced by cells (sum of read length x haplotype length). Always writes all N\n"
        "files (some may hold no region), all of them or none. The shards are the input's\n"
        "own lines (expected values, comments and tags as written), with the original line\n"
        "numbers kept, so that merging the shards' tables gives the table of the whole\n"
        "input. INPUT must be a regular file (it is read twice); plain, gzip or BGZF. The\n"
        "shards are plain text.\n\n"
        "With --plan, nothing is copied: PLAN (- for standard output) lists the same N\n"
        "shards as byte ranges of INPUT, with the line each begins on and the region tag in\n"
        "force there; `haplik score --plan PLAN --part K INPUT` scores shard K in place and\n"
        "writes the table the shard file would give. INPUT must be plain text (a compressed\n"
        "dump cannot be read from the middle: cut it into files instead).\n\n"
        "Options:\n"
        "      --plan PLAN  write the plan of N parts to PLAN instead of shard files\n"
        "      --parts N    the number of parts of --plan (1 or more)\n"
        "      --format F   input format: auto, pdhmm, gatk or batch [auto]\n"
        "      --quiet      no notices\n"
        "  -h, --help       this help\n");
}

/* One file per shard: raise the soft limit on open files to the hard one
 * when N needs it, rather than fail at shard 1021. */
static void room_for_files(int n)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)n + 64) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)n + 64
                      ? (rlim_t)n + 64 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* split --plan PLAN --parts N INPUT: the plan alone, complete or absent. */
static hk_status_t plan_only(char **argv, int argc, int format, const char *plan_out, int parts)
{
    if (!plan_out || !parts || argc - optind != 1) {
        hk_log_error("split: --plan PLAN and --parts N go together, with one INPUT; see "
                     "'haplik split --help'");
        return HK_E_INPUT;
    }
    const char *input = argv[optind];
    if (hk_outfile_check_paths(&plan_out, 1, &input, 1)) return HK_E_INPUT;
    if (!strcmp(input, "-")) {
        hk_log_error("split: INPUT must be a file, not standard input (its parts are read in place)");
        return HK_E_INPUT;
    }
    hk_split_plan_t *plan;
    hk_options_t opt;   /* the HK_* knobs: the reader's */
    hk_options_read(&opt);
    hk_options_apply(&opt);
    hk_status_t status = hk_split_plan(input, format, &opt.read, parts, &plan);
    if (status) return status;
    hk_outfile_t *out;
    if (!(status = hk_outfile_open(plan_out, &out))) status = hk_split_write_plan(plan, hk_outfile_fp(out), plan_out);
    if (!status) status = hk_outfile_commit(out);
    else hk_outfile_abort(out);
    if (status == HK_OK)
        hk_log_notice("split: %zu regions planned in %d parts", hk_split_n_regions(plan), parts);
    hk_split_free(plan);
    return status;
}

static hk_status_t split_main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "format", required_argument, NULL, 'f' }, { "quiet", no_argument, NULL, 'q' },
        { "plan", required_argument, NULL, 'p' }, { "parts", required_argument, NULL, 'n' },
        { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    int format = HK_FMT_AUTO, c;
    const char *plan_out = NULL;
    long parts = 0;
    char *end;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if ((format = hk_reader_parse_format(optarg)) < 0) {
                hk_log_error("split: --format: expected auto, pdhmm, gatk or batch");
                return HK_E_INPUT;
            }
            break;
        case 'q': hk_log_set_quiet(1); break;
        case 'p': plan_out = optarg; break;
        case 'n':
            errno = 0;
            parts = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || parts < 1 || parts > 1000000) {
                hk_log_error("split: --parts: expected a whole number from 1 to 1000000, "
                             "found '%s'", optarg);
                return HK_E_INPUT;
            }
            break;
        case 'h': usage(stdout); return hk_cli_close_stdout();
        default: hk_cli_bad_option("split", c, argv[optind - 1], opts); return HK_E_INPUT;
        }
    }
    if (plan_out || parts) return plan_only(argv, argc, format, plan_out, (int)parts);
    if (argc - optind < 2) { usage(stderr); return HK_E_INPUT; }
    const char *input = argv[optind];
    const char *const *names = (const char *const *)argv + optind + 1;
    const int n = argc - optind - 1;
    if (hk_outfile_check_paths(names, (size_t)n, &input, 1)) return HK_E_INPUT;
    if (!strcmp(input, "-")) {
        hk_log_error("split: INPUT must be a file, not standard input (it is read twice)");
        return HK_E_INPUT;
    }

    hk_split_plan_t *plan;
    hk_options_t opt;   /* the HK_* knobs: the reader's */
    hk_options_read(&opt);
    hk_options_apply(&opt);
    hk_status_t status = hk_split_plan(input, format, &opt.read, n, &plan);
    if (status) return status;
    room_for_files(n);
    hk_outfile_t **out = calloc((size_t)n, sizeof *out);
    FILE **fps = calloc((size_t)n, sizeof *fps);
    status = HK_E_NOMEM;
    if (!out || !fps) { hk_log_error("out of memory"); goto done; }
    for (int k = 0; k < n; k++) {
        if ((status = hk_outfile_open(names[k], &out[k]))) goto done;
        fps[k] = hk_outfile_fp(out[k]);
    }
    if ((status = hk_split_write(plan, fps, names))) goto done;
    status = hk_outfile_commit_all(out, (size_t)n);
    if (status == HK_OK)
        hk_log_notice("split: %zu regions into %d shards", hk_split_n_regions(plan), n);
done:
    if (out) for (int k = 0; k < n; k++) hk_outfile_abort(out[k]);
    free(out);
    free(fps);
    hk_split_free(plan);
    return status;
}

int hk_cmd_split(int argc, char **argv)
{
    return hk_status_exit(split_main(argc, argv));
}
