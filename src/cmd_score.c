/* cmd_score.c - `haplik score` and `haplik check`: their arguments, and
 * check's report; the run itself is hk_run.c's. */
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_run.h"
#include "hk_table.h"

#include <stdio.h>
#include <string.h>

static hk_status_t score_or_check(int check, int argc, char **argv)
{
    const char *cmd = check ? "check" : "score";
    hk_cli_opts_t o;
    int first;
    hk_status_t rc = hk_cli_parse_score_opts(cmd, argc, argv, &o, &first);
    if (rc == HK_OK && first == 0) { hk_config_free(&o.cfg); return hk_cli_close_stdout(); }
    if (rc) { hk_config_free(&o.cfg); return rc; }
    /* the output's name and format, before any work */
    if ((o.output && !*o.output && (hk_log_error("%s: -o/--output: the output's name is empty", cmd), 1)) ||
        hk_table_pick_format(o.output, o.cfg.output_format, &o.cfg.output_format)) {
        hk_config_free(&o.cfg);
        return HK_E_INPUT;
    }
    /* no output may be a file it reads: the dumps, the plan, the config */
    if ((rc = hk_cli_check_score_paths(check, &o, o.cfg.output_format, argv + first, argc - first))) {
        hk_config_free(&o.cfg);
        return rc;
    }
    hk_split_part_t part = { 0 };
    if (o.plan && (rc = hk_split_load_part(o.plan, o.part, argv[first], &part))) {
        hk_config_free(&o.cfg);
        return rc;
    }
    /* the HK_* knobs, read here once and handed down with the config */
    hk_options_read(&o.cfg.opt);
    hk_options_apply(&o.cfg.opt);
    hk_run_stats_t r;
    hk_status_t status = hk_run(&o.cfg, argv + first, argc - first, o.plan ? &part : NULL, o.output, check, &r);
    hk_split_part_free(&part);
    if (status == 0 && check) {
        if (r.compared == 0 && r.expected_neg_inf == 0) {
            hk_log_error("check: no pair has an expected value (check needs HaplotypeCaller "
                         "results files, which carry one)");
            status = HK_E_INPUT;
        } else {
            /* the table has standard output (-o -): the report goes to stderr */
            FILE *rep = o.output && !strcmp(o.output, "-") ? stderr : stdout;
            fprintf(rep, "pairs compared: %llu\n", (unsigned long long)r.compared);
            fprintf(rep, "largest difference: %.3g (region %llu at line %ld, read %u, haplotype %u)\n",
                    r.max_diff, (unsigned long long)r.max_region, r.max_line, r.max_read, r.max_hap);
            fprintf(rep, "over tolerance %g: %llu\n", o.cfg.tolerance, (unsigned long long)r.over);
            if (r.expected_neg_inf)
                fprintf(rep, "pairs the input gives as -Infinity (beyond GATK's double range; not "
                        "compared): %llu\n", (unsigned long long)r.expected_neg_inf);
            if (r.no_expected)
                fprintf(rep, "pairs without an expected value: %llu\n",
                        (unsigned long long)r.no_expected);
            status = r.over ? HK_E_DIFF : HK_OK;
        }
    }
    hk_config_free(&o.cfg);
    if (hk_cli_close_stdout()) status = HK_E_RUNTIME;
    return status;
}

int hk_cmd_score(int argc, char **argv) { return hk_status_exit(score_or_check(0, argc, argv)); }
int hk_cmd_check(int argc, char **argv) { return hk_status_exit(score_or_check(1, argc, argv)); }
