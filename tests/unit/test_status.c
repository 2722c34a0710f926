/* test_status.c - the outcome kinds (hk_status_t) and what they become: each
 * kind's exit status is the one documented in docs/SPEC.md's exit-status
 * table, and the CUDA engine's device limits (hk_cuda_limits_check) refuse
 * a device that falls short of a kernel form and pass the architectures the
 * build targets. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hk_cli.h"
#include "hk_types.h"
#ifdef HAVE_CUDA
#include "hk_cuda.h"
#endif
#include "tap.h"

static const struct {
    hk_status_t kind;
    const char *name;
    int exit;               /* the exit status SPEC documents for it */
} kinds[] = {
    { HK_OK, "HK_OK", 0 },           { HK_E_DIFF, "HK_E_DIFF", 1 },   { HK_E_INPUT, "HK_E_INPUT", 2 },
    { HK_E_RUNTIME, "HK_E_RUNTIME", 3 }, { HK_E_NOMEM, "HK_E_NOMEM", 3 }, { HK_E_NODEV, "HK_E_NODEV", 3 },
    { HK_E_INVAL, "HK_E_INVAL", 3 },
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static void test_exit_codes(void)
{
    int wrong = 0;
    for (size_t i = 0; i < N_KINDS; i++)
        if (hk_status_exit(kinds[i].kind) != kinds[i].exit) {
            printf("# %s exits %d, documented %d\n", kinds[i].name, hk_status_exit(kinds[i].kind), kinds[i].exit);
            wrong++;
        }
    TAP_OK(wrong == 0, "each of the %zu kinds exits with its documented status", N_KINDS);
    TAP_OK(HK_EXIT_OK == hk_status_exit(HK_OK) && HK_EXIT_DIFF == hk_status_exit(HK_E_DIFF) &&
           HK_EXIT_INPUT == hk_status_exit(HK_E_INPUT) && HK_EXIT_RUNTIME == hk_status_exit(HK_E_RUNTIME),
           "HK_EXIT_* are the exit statuses of HK_OK, HK_E_DIFF, HK_E_INPUT and HK_E_RUNTIME");
}

/* The statuses of SPEC's exit-status table (rows "| N | meaning |" after the
 * line that begins "Exit status"): a bit per status, or -1 unreadable. */
static long spec_statuses(void)
{
    const char *data = getenv("HK_TESTDATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/../../docs/SPEC.md", data ? data : "tests/data");
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char line[1024];
    long bits = 0;
    int in_table = 0;
    while (fgets(line, sizeof line, fp)) {
        if (!strncmp(line, "Exit status", 11)) { in_table = 1; continue; }
        if (!in_table) continue;
        int st;
        char bar;
        if (sscanf(line, "| %d %c", &st, &bar) == 2 && bar == '|' && st >= 0 && st < 32) bits |= 1L << st;
        else if (bits && line[0] != '|') break;     /* the table's end */
    }
    fclose(fp);
    return bits;
}

static void test_spec_table(void)
{
    const long spec = spec_statuses();
    long made = 0;
    for (size_t i = 0; i < N_KINDS; i++) made |= 1L << hk_status_exit(kinds[i].kind);
    TAP_OK(spec > 0, "docs/SPEC.md has an exit-status table");
    TAP_OK(spec == made, "SPEC's exit statuses (bits %#lx) are those the kinds exit with (%#lx)", spec, made);
}

#ifdef HAVE_CUDA
static void test_device_limits(void)
{
    char err[512] = "";
    const size_t need = hk_cuda_smem_need();
    /* sm_90's opt-in shared memory per block, then sm_89's and sm_80's */
    static const size_t arch_smem[] = { 232448, 101376, 166912 };
    int fits = 1;
    for (size_t i = 0; i < sizeof arch_smem / sizeof *arch_smem; i++) {
        const hk_cuda_limits_t lim = { arch_smem[i], 1024, 32 };
        fits &= hk_cuda_limits_check(&lim, err, sizeof err) == HK_OK;
    }
    TAP_OK(fits, "the kernels fit every architecture built for (most shared memory a form needs: %zu bytes)", need);
    TAP_OK(need > 48 * 1024, "some form needs more than the default 48 KB per block (%zu), so the limit matters", need);

    hk_cuda_limits_t lim = { need, 1024, 32 };
    TAP_OK(hk_cuda_limits_check(&lim, err, sizeof err) == HK_OK, "a device with just enough shared memory fits");
    lim.smem_block_optin = need - 1;
    err[0] = '\0';
    const hk_status_t rc = hk_cuda_limits_check(&lim, err, sizeof err);
    TAP_OK(rc == HK_E_NODEV && strstr(err, "shared memory per block") && strstr(err, "kernel of"),
           "a byte less is refused, naming the form: %s", err);
    lim = (hk_cuda_limits_t){ 232448, 1024, 64 };
    TAP_OK(hk_cuda_limits_check(&lim, err, sizeof err) == HK_E_NODEV && strstr(err, "warps of 64"),
           "warps of 64 threads are refused: %s", err);
    lim = (hk_cuda_limits_t){ 232448, 64, 32 };
    TAP_OK(hk_cuda_limits_check(&lim, err, sizeof err) == HK_E_NODEV, "blocks of at most 64 threads are refused: %s",
           err);
    TAP_OK(hk_cuda_limits_check(NULL, err, sizeof err) == HK_E_INVAL, "no limits: a bad argument");

    /* the device itself: with a GPU, device 0 (an H100 or H200 where the
     * project is tested) must fit; without one, asking fails */
    int n = 0;
    char why[512] = "";
    const int have = hk_cuda_device_count(&n, why, sizeof why) == HK_OK && n > 0;
    err[0] = '\0';
    const hk_status_t dev = hk_cuda_device_fits(0, err, sizeof err);
    if (have) TAP_OK(dev == HK_OK, "GPU 0 can run every kernel form%s%s", *err ? ": " : "", err);
    else TAP_OK(dev != HK_OK && *err, "without a GPU, asking device 0 fails with a reason: %s", err);
}
#endif

int main(void)
{
    test_exit_codes();
    test_spec_table();
#ifdef HAVE_CUDA
    test_device_limits();
#endif
    return TAP_DONE();
}
