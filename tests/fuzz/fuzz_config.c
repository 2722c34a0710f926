/* fuzz_config.c - libFuzzer target for the configuration loader
 * (hk_config_load: cJSON parse and key validation) and the flags' validator that the
 * command-line flags share with it.
 *
 * Input: the configuration file's content. The same bytes, up to the first
 * NUL, are also given to every string setter as a flag value would be.
 * Checks: no crash or sanitizer report; a load that succeeds leaves every
 * setting in its documented range.
 */
#include "hk_config.h"
#include "hk_log.h"
#include "hk_reader.h"
#include <string.h>
#include "fuzz_common.h"

#include <math.h>
#include <stdint.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_config: check failed: %s (%s:%d)\n", \
                                           #c, __FILE__, __LINE__); abort(); } } while (0)

static void check_ranges(const hk_config_t *c)
{
    CHECK(hk_reader_parse_format(c->input_format) >= 0);
    CHECK(c->output_format >= HK_OUT_JSON && c->output_format <= HK_OUT_AUTO);
    CHECK(c->compression >= HK_COMPRESS_AUTO && c->compression <= HK_COMPRESS_BGZF);
    CHECK(c->decimals >= 0 && c->decimals <= 12);
    CHECK(c->sequences == 0 || c->sequences == 1);
    CHECK(c->model.min_base_quality >= 0 && c->model.min_base_quality <= 93);
    CHECK(c->model.gcp >= -1 && c->model.gcp <= 93);
    CHECK(c->model.float_threshold >= 0 && isfinite(c->model.float_threshold));
    CHECK(c->backend >= HK_BACKEND_AUTO && c->backend <= HK_BACKEND_CPU);
    CHECK(c->n_devices == -1 || (c->n_devices >= 1 && c->n_devices <= HK_MAX_DEVICES));
    for (int i = 0; i < c->n_devices; i++) CHECK(c->devices[i] >= 0 && c->devices[i] <= 1023);
    CHECK(c->threads >= 0 && c->threads <= 1024);
    CHECK(c->max_batch_pairs >= 0);
    CHECK(c->tolerance >= 0 && isfinite(c->tolerance));
    CHECK(!c->gpu_lock_dir || *c->gpu_lock_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    hk_log_set_quiet(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_tmp_path("config");
    if (fuzz_write_file(path, data, size)) return 0;
    static FILE *devnull;
    if (!devnull) devnull = fopen("/dev/null", "w");

    hk_config_t c;
    hk_config_init(&c);
    if (hk_config_load(&c, path) == 0) {
        check_ranges(&c);
        hk_config_print(devnull, &c);
    }
    hk_config_free(&c);

    /* the flags' setters, on the same text */
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    hk_config_init(&c);
    for (int k = 0; k < HK_N_KEYS; k++) (void)!hk_config_set(&c, k, "--flag", s);
    check_ranges(&c);
    hk_config_free(&c);
    free(s);
    return 0;
}
