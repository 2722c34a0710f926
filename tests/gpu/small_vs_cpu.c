/* small_vs_cpu.c - the GPU's small-call path (kernels/hk_cuda_small.h,
 * src/gkl/hk_gkl_small.h) against the CPU model in each precision (mixed:
 * float first, double below the threshold; double; float): every pair bit
 * for bit, and the same count of pairs recomputed in double.
 *
 * Random regions, in each precision: reads of 1 to 256 bases (each rows-per-lane count 1 to 8,
 * and both sides of every multiple of 32), haplotypes of 1 to 700, Ns in
 * both, qualities 6 to 40, gap qualities varied and constant; a region
 * whose pairs are beyond GATK's double range (a sum of 0, rescued on the
 * CPU); in mixed precision, a call whose sums fall on both sides of the
 * threshold; several regions in one call. Then what the path refuses at once
 * (HK_E_NODEV, results untouched): a read of 257 bases, a call larger than
 * a slot, every slot taken. Last, 8 threads calling at once on 3 slots:
 * every call that got a slot is right, and the others were refused.
 * Without a usable GPU it prints a SKIP line (tap_skip_all). Output is TAP.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/tap.h"
#include "hk_batch.h"
#include "hk_config.h"
#include "hk_cuda.h"
#include "hk_model.h"

#ifdef HAVE_CUDA
#include "gkl/hk_gkl_small.h"

#define SENTINEL 1234.5

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Add one region: nr reads of rlen0 .. rlen1 bases against nh haplotypes of
 * about hlen bases; mism: a read base is replaced with this chance in 100
 * (100: every base, for pairs beyond GATK's double range). */
static void add_region(hk_batch_t *b, int nr, uint32_t rlen0, uint32_t rlen1, int nh, uint32_t hlen, int mism)
{
    static const char acgtn[] = "ACGTN";
    const hk_seq_rules_t rules = { .min_base_quality = 6, .gcp = -1 };
    static char hap[800], read[300], q[300], ins[300], del[300], gcp[300];
    hk_batch_error_t bad;
    if (hk_batch_begin_region(b, NULL, 0)) abort();
    for (uint32_t i = 0; i < hlen; i++) hap[i] = mism == 100 ? 'A' : acgtn[next_rand() % 50 ? next_rand() % 4 : 4];
    for (int h = 0; h < nh; h++) {
        const uint32_t len = h ? hlen - next_rand() % (hlen < 8 ? hlen : 8) : hlen;
        if (mism < 100) hap[next_rand() % len] = acgtn[next_rand() % 4];
        if (hk_batch_add_hap(b, &rules, hap, len, &bad)) abort();
    }
    for (int r = 0; r < nr; r++) {
        const uint32_t rlen = rlen0 + next_rand() % (rlen1 - rlen0 + 1);
        const int constant = next_rand() % 2;
        const uint32_t off = next_rand() % hlen;
        for (uint32_t i = 0; i < rlen; i++) {
            read[i] = (int)(next_rand() % 100) < mism ? acgtn[next_rand() % 4] : hap[(i + off) % hlen];
            if (next_rand() % 80 == 0) read[i] = 'N';
            q[i] = (char)(33 + 6 + next_rand() % 35);
            ins[i] = (char)(33 + (constant ? 45 : 10 + next_rand() % 40));
            del[i] = (char)(33 + (constant ? 45 : 10 + next_rand() % 40));
            gcp[i] = (char)(33 + (constant ? 10 : 5 + next_rand() % 20));
        }
        if (constant && rlen) ins[rlen - 1] = del[rlen - 1] = 'N';   /* HaplotypeCaller's last base */
        if (mism == 100)   /* no way through: C against A everywhere, every gap and extension at Q40 */
            for (uint32_t i = 0; i < rlen; i++) {
                read[i] = 'C';
                q[i] = ins[i] = del[i] = gcp[i] = (char)(33 + 40);
            }
        if (hk_batch_add_read(b, &rules, read, q, ins, del, gcp, rlen, &bad)) abort();
    }
    if (hk_batch_end_region(b)) abort();
}

static void new_batch(hk_batch_t *b)
{
    hk_batch_init(b);
    hk_batch_set_no_text(b, 1);
}

static const char *const prec_name[] = { [HK_PREC_MIXED] = "mixed", [HK_PREC_FLOAT] = "float",
                                         [HK_PREC_DOUBLE] = "double" };

/* The model of precision prec, with the default threshold. */
static hk_model_t model_of(int prec)
{
    hk_config_t cfg;
    hk_config_init(&cfg);
    hk_model_t m = cfg.model;
    m.precision = prec;
    hk_config_free(&cfg);
    return m;
}

/* The CPU's values in m's precision into want[], its recompute count into
 * *recomputed. */
static double *cpu_ref(hk_batch_t *b, const hk_model_t *m, size_t *recomputed)
{
    b->n_recomputed = 0;
    if (hk_model_score_batch(m, b, 1)) abort();
    double *want = malloc(b->n_pairs * sizeof *want);
    memcpy(want, b->lk, b->n_pairs * sizeof *want);
    if (recomputed) *recomputed = b->n_recomputed;
    return want;
}

static void poison(hk_batch_t *b)
{
    for (size_t i = 0; i < b->n_pairs; i++) b->lk[i] = SENTINEL;
}

static int untouched(const hk_batch_t *b)
{
    for (size_t i = 0; i < b->n_pairs; i++)
        if (b->lk[i] != SENTINEL) return 0;
    return 1;
}

/* Score b on the small path in precision prec and compare with the CPU:
 * the pairs that differ (a different recompute count counts as one more). */
static size_t differ(hk_cuda_small_t *s, hk_batch_t *b, int prec, hk_status_t *rc)
{
    const hk_model_t m = model_of(prec);
    size_t cpu_recomputed;
    double *want = cpu_ref(b, &m, &cpu_recomputed);
    poison(b);
    b->n_recomputed = 0;
    char err[512] = "";
    *rc = hk_gkl_small_score(s, b, &m, NULL, err, sizeof err);
    if (*rc) printf("# %s\n", err);
    size_t n = b->n_recomputed != cpu_recomputed;
    if (n) printf("# %s: %zu pairs recomputed in double, the CPU %zu\n", prec_name[prec], b->n_recomputed,
                  cpu_recomputed);
    for (size_t i = 0; i < b->n_pairs; i++)
        if (memcmp(&b->lk[i], &want[i], sizeof(double))) {
            if (n < 3) printf("# pair %zu: GPU %.17g CPU %.17g\n", i, b->lk[i], want[i]);
            n++;
        }
    free(want);
    return n;
}

/* Whether the small path refuses b at once (HK_E_NODEV), leaving its results untouched. */
static int refused(hk_cuda_small_t *s, hk_batch_t *b, hk_status_t *rc)
{
    char err[512];
    const hk_model_t m = model_of(HK_PREC_MIXED);
    poison(b);
    *rc = hk_gkl_small_score(s, b, &m, NULL, err, sizeof err);
    return *rc == HK_E_NODEV && untouched(b);
}

typedef struct {
    hk_cuda_small_t *s;
    hk_batch_t       b;
    double          *want;
    int              scored, refused, wrong;
} thread_arg_t;

static void *caller(void *p)
{
    thread_arg_t *a = p;
    const hk_model_t m = model_of(HK_PREC_MIXED);
    for (int k = 0; k < 200; k++) {
        poison(&a->b);
        char err[512];
        const hk_status_t rc = hk_gkl_small_score(a->s, &a->b, &m, NULL, err, sizeof err);
        if (rc == HK_OK) {
            a->scored++;
            a->wrong += memcmp(a->b.lk, a->want, a->b.n_pairs * sizeof(double)) != 0;
        } else if (rc == HK_E_NODEV && untouched(&a->b)) {
            a->refused++;
        } else {
            a->wrong++;
        }
    }
    return NULL;
}

int main(void)
{
    int n_dev = 0;
    char err[512];
    if (hk_cuda_device_count(&n_dev, err, sizeof err) || n_dev < 1)
        return tap_skip_all("no usable GPU: the small-call path is not checked here");
    hk_cuda_small_t *s;
    const int first_gpu = 0;
    if (hk_cuda_small_open(&first_gpu, 1, 3, HK_GKL_SMALL_SLOT_BYTES, &s, err, sizeof err)) {
        printf("# %s\n", err);
        return 1;
    }
    hk_status_t rc;

    /* every rows-per-lane count, each side of a multiple of 32 */
    static const uint32_t lens[][2] = { { 1, 1 }, { 2, 31 }, { 32, 33 }, { 34, 64 }, { 65, 96 }, { 97, 128 },
                                        { 129, 160 }, { 161, 192 }, { 193, 224 }, { 225, 255 }, { 256, 256 } };
    for (int prec = HK_PREC_MIXED; prec <= HK_PREC_DOUBLE; prec++)
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            hk_batch_t b;
            new_batch(&b);
            add_region(&b, 6, lens[i][0], lens[i][1], 1 + (int)(next_rand() % 5), 1 + next_rand() % 700, 5);
            const size_t n = differ(s, &b, prec, &rc);
            TAP_OK(rc == HK_OK && n == 0, "%-6s reads of %u-%u bases: %zu pairs equal the CPU's (%zu differ)",
                   prec_name[prec], lens[i][0], lens[i][1], b.n_pairs, n);
            hk_batch_free(&b);
        }
    {   /* mixed: sums on both sides of the threshold in one call (from 2 to 68 mismatches in 100) */
        hk_batch_t b;
        new_batch(&b);
        for (int g = 0; g < 12; g++) add_region(&b, 4, 60, 256, 3, 100 + next_rand() % 600, 2 + 6 * g);
        const size_t n = differ(s, &b, HK_PREC_MIXED, &rc);
        TAP_OK(rc == HK_OK && n == 0 && b.n_recomputed > 0 && b.n_recomputed < b.n_pairs,
               "mixed, %zu pairs of which %zu recomputed in double: equal the CPU's (%zu differ)", b.n_pairs,
               b.n_recomputed, n);
        hk_batch_free(&b);
    }
    {   /* many regions in one call, short haplotypes too */
        hk_batch_t b;
        new_batch(&b);
        for (int g = 0; g < 40; g++)
            add_region(&b, 1 + (int)(next_rand() % 8), 1, 151, 1 + (int)(next_rand() % 6), 1 + next_rand() % 500, 3);
        const size_t n = differ(s, &b, HK_PREC_MIXED, &rc);
        TAP_OK(rc == HK_OK && n == 0, "40 regions in one call: %zu pairs equal (%zu differ)", b.n_pairs, n);
        hk_batch_free(&b);
    }
    {   /* beyond GATK's double range: the sum is 0, the CPU rescues it */
        hk_batch_t b;
        new_batch(&b);
        add_region(&b, 3, 250, 256, 2, 600, 100);
        const size_t n = differ(s, &b, HK_PREC_MIXED, &rc);
        int finite = 1;
        for (size_t i = 0; i < b.n_pairs; i++) finite &= isfinite(b.lk[i]) && b.lk[i] < -631;
        TAP_OK(rc == HK_OK && n == 0 && finite, "pairs beyond GATK's double range: rescued, finite, below -631 "
               "and equal (%zu differ; first %g)", n, b.lk[0]);
        hk_batch_free(&b);
    }

    /* refused at once, results untouched */
    {
        hk_batch_t b;
        new_batch(&b);
        add_region(&b, 2, 257, 257, 2, 300, 5);
        TAP_OK(refused(s, &b, &rc), "a read of 257 bases: refused, untouched (rc %d)", (int)rc);
        hk_batch_free(&b);
        new_batch(&b);
        while (b.n_read_pos < HK_GKL_SMALL_SLOT_BYTES / sizeof(hk_small_row_t)) add_region(&b, 30, 200, 256, 4, 400, 5);
        TAP_OK(refused(s, &b, &rc), "%zu read bases, more than a slot holds: refused (rc %d)", b.n_read_pos, (int)rc);
        hk_batch_free(&b);
    }
    {
        int slot[3];
        for (int k = 0; k < 3; k++) hk_cuda_small_take(s, &slot[k]);
        hk_batch_t b;
        new_batch(&b);
        add_region(&b, 3, 50, 100, 2, 300, 5);
        TAP_OK(refused(s, &b, &rc), "every slot taken: refused at once (rc %d)", (int)rc);
        for (int k = 0; k < 3; k++) hk_cuda_small_give(s, slot[k]);
        const size_t n = differ(s, &b, HK_PREC_MIXED, &rc);
        TAP_OK(rc == HK_OK && n == 0, "the slots given back: scored again, equal");
        hk_batch_free(&b);
    }

    /* 8 threads, 3 slots */
    thread_arg_t a[8];
    pthread_t t[8];
    for (int i = 0; i < 8; i++) {
        memset(&a[i], 0, sizeof a[i]);
        a[i].s = s;
        new_batch(&a[i].b);
        add_region(&a[i].b, 1 + (int)(next_rand() % 8), 10, 151, 1 + (int)(next_rand() % 4), 100 + next_rand() % 400, 5);
        const hk_model_t m = model_of(HK_PREC_MIXED);
        a[i].want = cpu_ref(&a[i].b, &m, NULL);
    }
    for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, caller, &a[i]);
    int scored = 0, refused = 0, wrong = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        scored += a[i].scored;
        refused += a[i].refused;
        wrong += a[i].wrong;
        free(a[i].want);
        hk_batch_free(&a[i].b);
    }
    TAP_OK(wrong == 0 && scored > 0 && scored + refused == 1600,
           "8 threads on 3 slots: %d calls scored, all equal; %d refused at once; %d wrong", scored, refused, wrong);
    hk_cuda_small_close(s);
    return TAP_DONE();
}

#else
int main(void) { return tap_skip_all("built without CUDA: the small-call path is not checked"); }
#endif
