/* haplik.c - main(): dispatch to the subcommands of hk_cli.h. */
#include "hk_cli.h"
#include "hk_log.h"
#include "hk_outfile.h"
#include "hk_text.h"
#include "config.h"

#include <htslib/hts.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *what;
} commands[] = {
    { "score",   hk_cmd_score,   "score every read-haplotype pair, write the likelihood table" },
    { "check",   hk_cmd_check,   "score and compare with the expected values of a results file" },
    { "split",   hk_cmd_split,   "cut a dump into N shards balanced by cells" },
    { "merge",   hk_cmd_merge,   "join shard tables into one" },
    { "shard",   hk_cmd_shard,   "make N genome shards (BED) balanced by length from a .fai" },
    { "bench",   hk_cmd_bench,   "synthetic GPU kernel benchmark (TCUPS per configuration)" },
    { "devices", hk_cmd_devices, "list the usable GPUs, or say why there is none" },
};

static void usage(FILE *fp)
{
    fprintf(fp, "haplik %s - Pair-HMM likelihoods of GATK HaplotypeCaller dumps, on GPUs\n\n"
            "Usage: haplik COMMAND [options] ...\n\nCommands:\n", PACKAGE_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(fp, "  %-8s %s\n", commands[i].name, commands[i].what);
    fprintf(fp, "\n'haplik COMMAND --help' describes each command and its options.\n"
            "Exit status: 0 success, 1 check found differences, 2 usage, config or input error,\n"
            "3 runtime or device failure.\n");
}

int main(int argc, char **argv)
{
    /* before anything opens a file: a closed standard stream must not lend
     * its number to an output, and no signal may leave a temporary file */
    hk_outfile_guard_std_streams();
    hk_outfile_catch_signals();
    if (argc < 2) { usage(stderr); return HK_EXIT_INPUT; }
    /* htslib's own messages would make a second line per error: haplik
     * reports every failure itself, with file and line */
    hts_set_log_level(HTS_LOG_OFF);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return hk_status_exit(hk_cli_close_stdout());
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("haplik %s (MIT licence)\n", PACKAGE_VERSION);
        /* what this build reads and scores with (configure's choices) */
        printf("built with: htslib %s; gzip input through %s; %s\n", hts_version(),
#ifdef HAVE_ISAL
               "Intel ISA-L",
#else
               "htslib (zlib)",
#endif
#ifdef HAVE_CUDA
               "CUDA engine");
#else
               "no CUDA engine (CPU only)");
#endif
        return hk_status_exit(hk_cli_close_stdout());
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    const char *names[sizeof commands / sizeof *commands];
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) names[i] = commands[i].name;
    const char *near = hk_text_nearest(argv[1], names, sizeof commands / sizeof *commands);
    /* the usage first: the error is the last line on stderr */
    usage(stderr);
    fputc('\n', stderr);
    if (near) hk_log_error("unknown command '%s' (did you mean %s?)", argv[1], near);
    else hk_log_error("unknown command '%s'", argv[1]);
    return HK_EXIT_INPUT;
}
