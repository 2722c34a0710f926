/* hk_cli.c - see hk_cli.h. */
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_outfile.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_BACKEND = 256, OPT_DEVICES, OPT_THREADS, OPT_PRECISION, OPT_FORMAT,
    OPT_OUTPUT_FORMAT, OPT_TOLERANCE, OPT_QUIET, OPT_NO_SEQUENCES
};

static const struct option score_options[] = {
    { "config", required_argument, NULL, 'c' },
    { "output", required_argument, NULL, 'o' },
    { "backend", required_argument, NULL, OPT_BACKEND },
    { "devices", required_argument, NULL, OPT_DEVICES },
    { "threads", required_argument, NULL, OPT_THREADS },
    { "precision", required_argument, NULL, OPT_PRECISION },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "output-format", required_argument, NULL, OPT_OUTPUT_FORMAT },
    { "no-sequences", no_argument, NULL, OPT_NO_SEQUENCES },
    { "tolerance", required_argument, NULL, OPT_TOLERANCE },
    { "quiet", no_argument, NULL, OPT_QUIET },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
};

void hk_cli_usage_score(FILE *fp, const char *cmd)
{
    int check = !strcmp(cmd, "check");
    fprintf(fp, "Usage: haplik %s [options] INPUT...\n\n", cmd);
    if (check)
        fprintf(fp, "Score every read-haplotype pair of HaplotypeCaller results files and compare\n"
                "with their expected-result column. Prints the pairs compared, the largest\n"
                "difference and the count over the tolerance; exits 1 when any pair is over it.\n\n");
    else
        fprintf(fp, "Score every read against every haplotype of each region of the INPUTs\n"
                "(HaplotypeCaller --pair-hmm-results-file dumps or batch files; plain, gzip or\n"
                "BGZF; - for standard input) and write the JSON likelihood table.\n\n");
    fprintf(fp,
        "Options (a flag overrides the config file):\n"
        "  -c, --config FILE        JSON configuration (see below for every key)\n"
        "  -o, --output FILE        write the table to FILE [%s]\n"
        "      --backend B          auto, cuda or cpu            (engine.backend)\n"
        "      --devices LIST       all, or GPU ordinals 0,1,...  (engine.devices)\n"
        "      --threads N          CPU threads, 0 = all cores   (engine.threads)\n"
        "      --precision P        mixed, float or double       (model.precision)\n"
        "      --format F           input format: auto, gatk, batch (input.format)\n"
        "      --output-format F    json or jsonl                (output.format)\n"
        "      --no-sequences       leave reads and haplotypes out of the table (output.sequences)\n"
        "      --tolerance T        check: largest accepted difference (check.tolerance)\n"
        "      --quiet              no notices or progress on stderr\n"
        "  -h, --help               this help\n\n"
        "Defaults (the configuration file's keys; every key is optional):\n",
        check ? "no table" : "standard output");
    hk_config_t c;
    hk_config_init(&c);
    hk_config_print(fp, &c);
    fprintf(fp, "\nExit status: 0 success, 1 check found differences, 2 usage, config or input "
            "error, 3 runtime or device failure.\n");
}

/* A value that is the next option, not a value: `-o --quiet`, `-c -o`. One
 * dash alone is standard input or output. */
static int looks_like_option(const char *v) { return v[0] == '-' && v[1] != '\0'; }

int hk_cli_parse_score_opts(const char *cmd, int argc, char **argv, hk_cli_opts_t *o,
                            int *first_input)
{
    hk_config_init(&o->cfg);
    o->output = NULL;
    /* One pass of getopt (it permutes argv, so a second pass would see another
     * order): the flags are recorded, then applied over the config file. */
    struct { int opt; const char *arg; } *flags = calloc((size_t)argc + 1, sizeof *flags);
    if (!flags) { hk_log_error("out of memory"); return HK_EXIT_RUNTIME; }
    int n_flags = 0, c, rc = HK_EXIT_INPUT;
    const char *config = NULL;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":c:o:h", score_options, NULL)) != -1) {
        if (c == 'h') { free(flags); hk_cli_usage_score(stdout, cmd); return -1; }
        if (c == ':' || c == '?') {
            hk_cli_bad_option(cmd, c, argv[optind - 1]);
            goto out;
        }
        if ((c == 'c' || c == 'o') && looks_like_option(optarg)) {
            hk_log_error("%s: option %s needs a value (found the option '%s'); see 'haplik %s "
                         "--help'", cmd, c == 'c' ? "-c/--config" : "-o/--output", optarg, cmd);
            goto out;
        }
        if ((c == 'c' && config) || (c == 'o' && o->output)) {
            hk_log_error("%s: option %s given twice", cmd, c == 'c' ? "-c/--config" : "-o/--output");
            goto out;
        }
        if (c == 'c') config = optarg;
        else if (c == 'o') o->output = optarg;
        else { flags[n_flags].opt = c; flags[n_flags++].arg = optarg; }
    }
    if (config && hk_config_load(&o->cfg, config)) goto out;
    for (int i = 0; i < n_flags; i++) {
        const char *a = flags[i].arg;
        int bad = 0;
        switch (flags[i].opt) {
        case OPT_BACKEND: bad = hk_config_set_backend(&o->cfg, "--backend", a); break;
        case OPT_DEVICES: bad = hk_config_set_devices(&o->cfg, "--devices", a); break;
        case OPT_THREADS: bad = hk_config_set_threads(&o->cfg, "--threads", a); break;
        case OPT_PRECISION: bad = hk_config_set_precision(&o->cfg, "--precision", a); break;
        case OPT_FORMAT: bad = hk_config_set_input_format(&o->cfg, "--format", a); break;
        case OPT_OUTPUT_FORMAT: bad = hk_config_set_output_format(&o->cfg, "--output-format", a); break;
        case OPT_NO_SEQUENCES: o->cfg.sequences = 0; break;
        case OPT_TOLERANCE: bad = hk_config_set_tolerance(&o->cfg, "--tolerance", a); break;
        case OPT_QUIET: hk_log_set_quiet(1); break;
        }
        if (bad) goto out;
    }
    if (optind >= argc) {
        hk_log_error("%s: no INPUT given (use - for standard input); see 'haplik %s --help'",
                     cmd, cmd);
        goto out;
    }
    const char *output = o->output;
    if (hk_outfile_check_paths(&output, 1, (const char *const *)argv + optind,
                               (size_t)(argc - optind)))
        goto out;
    *first_input = optind;
    rc = HK_EXIT_OK;
out:
    free(flags);
    return rc;
}

void hk_cli_bad_option(const char *cmd, int c, const char *arg)
{
    if (c == ':')
        hk_log_error("%s: option '%s' needs a value; see 'haplik %s --help'", cmd, arg, cmd);
    else
        hk_log_error("%s: unknown option '%s'; see 'haplik %s --help'", cmd, arg, cmd);
}

int hk_cli_close_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        hk_log_error("writing standard output: %s", strerror(errno));
        return -1;
    }
    return 0;
}
