/* hk_cli.c - see hk_cli.h. */
#include "hk_cli.h"
#include "hk_log.h"

#include <errno.h>
#include <getopt.h>
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

int hk_cli_parse_score_opts(const char *cmd, int argc, char **argv, hk_cli_opts_t *o,
                            int *first_input)
{
    hk_config_init(&o->cfg);
    o->output = NULL;
    const char *config = NULL;
    int c;
    /* pass 1: the config file and --help, so that flags override the file */
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "c:o:h", score_options, NULL)) != -1) {
        if (c == 'c') config = optarg;
        else if (c == 'h') { hk_cli_usage_score(stdout, cmd); return -1; }
    }
    if (config && hk_config_load(&o->cfg, config)) return HK_EXIT_INPUT;
    /* pass 2: every flag */
    opterr = 1;
    optind = 0;
    while ((c = getopt_long(argc, argv, "c:o:h", score_options, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case 'c': break;
        case 'o': o->output = optarg; break;
        case OPT_BACKEND: rc = hk_config_set_backend(&o->cfg, "--backend", optarg); break;
        case OPT_DEVICES: rc = hk_config_set_devices(&o->cfg, "--devices", optarg); break;
        case OPT_THREADS: rc = hk_config_set_threads(&o->cfg, "--threads", optarg); break;
        case OPT_PRECISION: rc = hk_config_set_precision(&o->cfg, "--precision", optarg); break;
        case OPT_FORMAT: rc = hk_config_set_input_format(&o->cfg, "--format", optarg); break;
        case OPT_OUTPUT_FORMAT:
            rc = hk_config_set_output_format(&o->cfg, "--output-format", optarg); break;
        case OPT_NO_SEQUENCES: o->cfg.sequences = 0; break;
        case OPT_TOLERANCE: rc = hk_config_set_tolerance(&o->cfg, "--tolerance", optarg); break;
        case OPT_QUIET: hk_log_set_quiet(1); break;
        default:
            fprintf(stderr, "Try 'haplik %s --help'.\n", cmd);
            return HK_EXIT_INPUT;
        }
        if (rc) return HK_EXIT_INPUT;
    }
    if (optind >= argc) {
        hk_log_error("%s: no INPUT given (use - for standard input); see 'haplik %s --help'",
                     cmd, cmd);
        return HK_EXIT_INPUT;
    }
    *first_input = optind;
    return HK_EXIT_OK;
}

int hk_cli_close_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        hk_log_error("writing standard output: %s", strerror(errno));
        return -1;
    }
    return 0;
}
