/* hk_cli.c - see hk_cli.h. */
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_outfile.h"
#include "hk_table.h"
#include "hk_text.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* getopt values: a key's flag is OPT_KEY + its index in hk_config_keys.h */
enum { OPT_QUIET = 256, OPT_NO_SEQUENCES, OPT_PRINT_CONFIG, OPT_PLAN, OPT_PART, OPT_KEY = 512 };

/* The options of score and check: the fixed ones, then one per key. */
static void score_options(struct option *o)
{
    static const struct option fixed[] = {
        { "config", required_argument, NULL, 'c' },
        { "output", required_argument, NULL, 'o' },
        { "no-sequences", no_argument, NULL, OPT_NO_SEQUENCES },
        { "quiet", no_argument, NULL, OPT_QUIET },
        { "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
        { "plan", required_argument, NULL, OPT_PLAN },
        { "part", required_argument, NULL, OPT_PART },
        { "help", no_argument, NULL, 'h' },
    };
    const int n_fixed = (int)(sizeof fixed / sizeof *fixed);
    memcpy(o, fixed, sizeof fixed);
    for (int k = 0; k < HK_N_KEYS; k++)
        o[n_fixed + k] = (struct option){ hk_config_key_flag(k), required_argument, NULL, OPT_KEY + k };
    o[n_fixed + HK_N_KEYS] = (struct option){ NULL, 0, NULL, 0 };
}
#define N_SCORE_OPTIONS (8 + HK_N_KEYS + 1)

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
                "BGZF; - for standard input) and write the likelihood table.\n\n");
    fprintf(fp,
        "Options:\n"
        "  -c, --config FILE        JSON configuration: the keys below, e.g. {\"engine\": {\"threads\": 4}}\n"
        "  -o, --output FILE        write the table to FILE [%s]\n"
        "      --quiet              no notices or progress on stderr\n"
        "      --print-config       print the settings (file, then flags) as JSON and exit\n"
        "      --plan PLAN          read only part --part of the one INPUT, in place, as PLAN\n"
        "                           (haplik split --plan) says: the table of that shard\n"
        "      --part K             the part of --plan to score, from 1\n"
        "  -h, --help               this help\n\n"
        "Settings: each flag sets the configuration key in parentheses and overrides\n"
        "the file; [the default]; \"null\" clears a key that may be null:\n",
        check ? "no table" : "standard output");
    hk_config_t c;
    hk_config_init(&c);
    hk_config_print_flags(fp, &c);
    hk_config_free(&c);
    fprintf(fp, "      --no-sequences           the same as --sequences false\n"
            "\nExit status: 0 success, 1 check found differences, 2 usage, config or input "
            "error, 3 runtime or device failure.\n");
}

/* A value that is the next option, not a value: `-o --quiet`, `-c -o`. One
 * dash alone is standard input or output. */
static int looks_like_option(const char *v) { return v[0] == '-' && v[1] != '\0'; }

hk_status_t hk_cli_parse_score_opts(const char *cmd, int argc, char **argv, hk_cli_opts_t *o,
                                    int *first_input)
{
    *first_input = 0;
    hk_config_init(&o->cfg);
    o->output = NULL;
    o->config = NULL;
    o->plan = NULL;
    o->part = 0;
    /* One pass of getopt (it permutes argv, so a second pass would see another
     * order): the flags are recorded, then applied over the config file. */
    struct { int opt; const char *arg; } *flags = calloc((size_t)argc + 1, sizeof *flags);
    if (!flags) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    int n_flags = 0, c, print = 0;
    hk_status_t rc = HK_E_INPUT;
    const char *config = NULL;
    opterr = 0;
    optind = 0;
    struct option options[N_SCORE_OPTIONS];
    score_options(options);
    while ((c = getopt_long(argc, argv, ":c:o:h", options, NULL)) != -1) {
        if (c == 'h') { free(flags); hk_cli_usage_score(stdout, cmd); return HK_OK; }
        if (c == ':' || c == '?') {
            hk_cli_bad_option(cmd, c, argv[optind - 1], options);
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
        if (c == OPT_PART) {
            char *end;
            errno = 0;
            const long k = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || k < 1 || k > 1000000) {
                hk_log_error("%s: --part: expected a whole number from 1 to 1000000, found '%s'",
                             cmd, optarg);
                goto out;
            }
            o->part = (int)k;
        } else if (c == OPT_PLAN) o->plan = optarg;
        else if (c == 'c') config = optarg;
        else if (c == 'o') o->output = optarg;
        else { flags[n_flags].opt = c; flags[n_flags++].arg = optarg; }
    }
    if (config && hk_config_load(&o->cfg, config)) goto out;
    for (int i = 0; i < n_flags; i++) {
        const char *a = flags[i].arg;
        hk_status_t bad = HK_OK;
        if (flags[i].opt == OPT_QUIET) hk_log_set_quiet(1);
        else if (flags[i].opt == OPT_PRINT_CONFIG) print = 1;
        else if (flags[i].opt == OPT_NO_SEQUENCES)
            bad = hk_config_set(&o->cfg, HK_KEY_OUTPUT_SEQUENCES, "--no-sequences", "false");
        else {
            const int k = flags[i].opt - OPT_KEY;
            char where[64];
            snprintf(where, sizeof where, "--%s", hk_config_key_flag(k));
            bad = hk_config_set(&o->cfg, k, where, a);
        }
        if (bad) goto out;
    }
    o->config = config;
    if (print) {
        /* printed to standard output: never onto the config it read */
        const char *out = NULL;
        if (config && hk_outfile_check_paths(&out, 1, &config, 1)) goto out;
        hk_config_print(stdout, &o->cfg);
        free(flags);
        return HK_OK;
    }
    if (optind >= argc) {
        hk_log_error("%s: no INPUT given (use - for standard input); see 'haplik %s --help'",
                     cmd, cmd);
        goto out;
    }
    if ((o->plan || o->part) && (!o->plan || !o->part || argc - optind != 1)) {
        hk_log_error("%s: --plan PLAN and --part K go together, with one INPUT; see 'haplik %s "
                     "--help'", cmd, cmd);
        goto out;
    }
    *first_input = optind;
    rc = HK_OK;
out:
    free(flags);
    return rc;
}

hk_status_t hk_cli_check_score_paths(int check, const hk_cli_opts_t *o, int format,
                                     char *const *inputs, int n)
{
    const char *outs[3];
    size_t n_outs = 0;
    char *sidecar = NULL;
    const int table_on_stdout = o->output && !strcmp(o->output, "-");
    if (!check || o->output) outs[n_outs++] = o->output ? o->output : "-";
    hk_status_t rc = o->output || !check ? hk_table_sidecar_name(o->output, format, &sidecar) : HK_OK;
    if (rc) return rc;
    if (sidecar) outs[n_outs++] = sidecar;
    if (check && !table_on_stdout) outs[n_outs++] = "-";   /* the report */
    const char **ins = malloc(((size_t)n + 2) * sizeof *ins);
    if (!ins) { hk_log_error("out of memory"); free(sidecar); return HK_E_NOMEM; }
    size_t n_ins = 0;
    for (int i = 0; i < n; i++) ins[n_ins++] = inputs[i];
    if (o->plan) ins[n_ins++] = o->plan;
    if (o->config) ins[n_ins++] = o->config;
    rc = hk_outfile_check_paths(outs, n_outs, ins, n_ins);
    free(ins);
    free(sidecar);
    return rc;
}

void hk_cli_bad_option(const char *cmd, int c, const char *arg, const struct option *opts)
{
    if (c == ':') {
        hk_log_error("%s: option '%s' needs a value; see 'haplik %s --help'", cmd, arg, cmd);
        return;
    }
    const char *near = NULL;
    if (opts && arg[0] == '-' && arg[1] == '-') {   /* --name or --name=value */
        char word[65];
        const size_t len = strcspn(arg + 2, "=");
        size_t n = 0;
        while (opts[n].name) n++;
        const char **names = malloc((n ? n : 1) * sizeof *names);
        if (names && len < sizeof word) {
            memcpy(word, arg + 2, len);
            word[len] = '\0';
            for (size_t i = 0; i < n; i++) names[i] = opts[i].name;
            near = hk_text_nearest(word, names, n);
        }
        free(names);
    }
    if (near)
        hk_log_error("%s: unknown option '%s' (did you mean --%s?); see 'haplik %s --help'", cmd, arg, near, cmd);
    else
        hk_log_error("%s: unknown option '%s'; see 'haplik %s --help'", cmd, arg, cmd);
}

hk_status_t hk_cli_close_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        hk_log_error("writing standard output: %s", strerror(errno));
        return HK_E_RUNTIME;
    }
    return HK_OK;
}
