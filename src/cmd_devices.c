/* cmd_devices.c - `haplik devices`: the GPUs haplik can use, or why none. */
#include "hk_cli.h"
#include "hk_engine.h"

#include <string.h>

static hk_status_t devices_main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("Usage: haplik devices\n\n"
               "List the GPUs haplik can use (ordinal, name, memory, compute capability,\n"
               "multiprocessors), or say why none is usable. Exit status 0 when at least one\n"
               "GPU is usable, 3 when none is.\n");
        return hk_cli_close_stdout();
    }
    if (argc > 1) {
        fprintf(stderr, "haplik: error: devices takes no arguments; see 'haplik devices --help'\n");
        return HK_E_INPUT;
    }
    const int n = hk_engine_list_devices(stdout);
    const hk_status_t rc = hk_cli_close_stdout();
    return rc ? rc : n > 0 ? HK_OK : HK_E_NODEV;
}

int hk_cmd_devices(int argc, char **argv)
{
    return hk_status_exit(devices_main(argc, argv));
}
