/* hk_cli.h - the subcommands and what they share.
 *
 * Each hk_cmd_* parses its own arguments and returns the process exit status
 * (SPEC section 5): 0 success, 1 check found differences, 2 usage, config or
 * input error, 3 runtime or device failure. Inside, failures travel as
 * hk_status_t (hk_types.h); a command turns its outcome into the exit status
 * once, with hk_status_exit. HK_EXIT_* name the exit statuses, nothing else.
 */
#ifndef HK_CLI_H
#define HK_CLI_H

#include <getopt.h>
#include <stdio.h>
#include "hk_config.h"

enum { HK_EXIT_OK = 0, HK_EXIT_DIFF = 1, HK_EXIT_INPUT = 2, HK_EXIT_RUNTIME = 3 };

int hk_cmd_score(int argc, char **argv);
int hk_cmd_check(int argc, char **argv);
int hk_cmd_split(int argc, char **argv);
int hk_cmd_merge(int argc, char **argv);
int hk_cmd_devices(int argc, char **argv);
int hk_cmd_shard(int argc, char **argv);
int hk_cmd_bench(int argc, char **argv);

/* Options shared by score and check, applied over the config file; the
 * config file (-c) is loaded first whatever its position. */
typedef struct {
    hk_config_t cfg;
    const char *output;    /* -o, NULL for standard output */
    const char *config;    /* -c, NULL when none */
    const char *plan;      /* --plan: the input is read in part, as this plan says */
    int         part;      /* --part, 1-based (with --plan) */
} hk_cli_opts_t;

/* Parse score/check options: HK_OK, then *first_input is argv's index of
 * the first input, or 0 where --help or --print-config was printed (nothing
 * more to do); HK_E_INPUT on a usage or config error (logged). Every option is read in one pass
 * (getopt permutes argv: a second pass would see the arguments in another
 * order); -c and -o may be given once; --print-config onto the config file
 * it read is refused (hk_outfile_check_paths). The outputs of a run are
 * checked against its inputs by hk_cli_check_score_paths, once the table's
 * format is known. */
HK_RESULT_USED hk_status_t hk_cli_parse_score_opts(const char *cmd, int argc, char **argv, hk_cli_opts_t *o,
                                                   int *first_input);

/* Refuse, before any work, a run of score (check: nonzero) whose outputs
 * would replace or append to what it reads: the outputs are the table (-o, or
 * standard output for score), its sidecar (a tsv table, format as picked)
 * and check's report on standard output; the inputs are inputs[0, n), the
 * plan and the config file. HK_OK, HK_E_INPUT or HK_E_NOMEM (logged). */
HK_RESULT_USED hk_status_t hk_cli_check_score_paths(int check, const hk_cli_opts_t *o, int format,
                                                   char *const *inputs, int n);

/* Log a getopt failure of a command: c is ':' (a value is missing) or '?'
 * (an unknown option); arg is argv[optind - 1]; opts: the command's long
 * options (may be NULL), whose nearest name to an unknown --option is
 * suggested ("did you mean --output?"). Needs getopt's optstring to start
 * with ':'. */
void hk_cli_bad_option(const char *cmd, int c, const char *arg, const struct option *opts);



/* Print a command's usage and the default configuration. */
void hk_cli_usage_score(FILE *fp, const char *cmd);

/* Standard output must really have been written: fclose-level check.
 * HK_OK or HK_E_RUNTIME (logged). */
HK_RESULT_USED hk_status_t hk_cli_close_stdout(void);

#endif
