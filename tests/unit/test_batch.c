/* test_batch.c - a batch's normalisation of sequences (hk_batch_set_read/hap)
 * against a reference written here byte by byte from SPEC section 1's rules:
 * random reads and haplotypes of every length around the 16-byte steps of the
 * fast path, valid and with one bad byte in each field at each kind of place,
 * under each rule set. Codes, qualities, gap summaries and the reported error
 * (kind, field, position) must all agree. Also: a batch without text, and
 * a batch's large arrays advised to use huge pages. */
#include "hk_batch.h"
#include "tap.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static unsigned long long rng = 0x2545F4914F6CDD1Dull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static int ref_code(unsigned char c)
{
    switch (c | 0x20) {
    case 'a': return 0;
    case 'c': return 1;
    case 'g': return 2;
    case 't': return 3;
    case 'n': return HK_BASE_N;
    }
    return -1;
}

/* The reference: what a read must become, or which error it must raise. */
typedef struct {
    hk_batch_fault_t code;   /* 0: none */
    int      field;
    uint32_t pos;
    uint8_t  base[64], q[4][64];
} expect_t;

static int gap_undefined(int i, int d)
{
    double e = 1.0, x = 1.0;
    for (int k = 0; k < i; k++) e /= 1.2589254117941673;   /* 10^(-1/10) */
    for (int k = 0; k < d; k++) x /= 1.2589254117941673;
    return e + x >= 1.0 - 1e-12;
}

static void reference(const hk_seq_rules_t *rules, const char *f[5], uint32_t len, expect_t *x)
{
    x->code = (hk_batch_fault_t)0;
    for (uint32_t i = 0; i < len; i++) {          /* bases first, then each quality field */
        int c = ref_code((unsigned char)f[0][i]);
        if (c < 0 && !rules->unknown_as_n) { *x = (expect_t){ .code = HK_BATCH_BAD_BASE, .field = 0, .pos = i }; return; }
        x->base[i] = (uint8_t)(c < 0 ? HK_BASE_N : c);
    }
    for (int k = 0; k < 4; k++)
        for (uint32_t i = 0; i < len; i++) {
            int v = (unsigned char)f[k + 1][i] - 33;
            if (v < 0 || v > 93) { *x = (expect_t){ .code = HK_BATCH_BAD_QUAL, .field = k + 1, .pos = i }; return; }
            if (k == 0 && v < rules->min_base_quality) v = rules->min_base_quality;
            x->q[k][i] = (uint8_t)v;
        }
    for (uint32_t i = 0; i < len; i++)
        if (gap_undefined(x->q[1][i], x->q[2][i])) { *x = (expect_t){ .code = HK_BATCH_BAD_GAP, .field = 2, .pos = i }; return; }
    if (rules->gcp < 0) {
        for (uint32_t i = 0; i < len; i++)
            if (x->q[3][i] == 0) { *x = (expect_t){ .code = HK_BATCH_BAD_GCP, .field = 4, .pos = i }; return; }
    } else {
        memset(x->q[3], rules->gcp, len);
    }
}

static char rnd_base(void)
{
    static const char b[] = "ACGTNacgtn";
    return b[rnd(rnd(8) ? 8 : 10)];
}

/* The flags /proc/self/smaps gives the mapping that holds p ("hg": advised
 * to use huge pages), in flags[n]; 0, or -1 when not found. */
static int vm_flags_of(const void *p, char *flags, size_t n)
{
    FILE *fp = fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0, found = -1;
    while (fp && found < 0 && fgets(line, sizeof line, fp)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (inside && !strncmp(line, "VmFlags:", 8)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(flags, n, "%.*s", (int)(n - 1), line + 8);
            found = 0;
        }
    }
    if (fp) fclose(fp);
    return found;
}

/* A batch's large arrays are advised to use transparent huge pages
 * (hk_mem.c: far fewer page faults, cheaper to free), where the kernel can. */
static void large_arrays_advised(void)
{
    void *probe = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const int thp = probe != MAP_FAILED && madvise(probe, 4 << 20, MADV_HUGEPAGE) == 0;
    if (probe != MAP_FAILED) munmap(probe, 4 << 20);
    char flags[256] = "";
    if (!thp || vm_flags_of(&thp, flags, sizeof flags) < 0) {   /* &thp: the stack's mapping */
        printf("ok %d - # SKIP this kernel takes no MADV_HUGEPAGE, or has no /proc/self/smaps\n", ++tap_n);
        return;
    }
    hk_batch_t b;
    hk_batch_init(&b);
    const int rc = hk_batch_reserve_reads(&b, 1u << 16, (size_t)32 << 20);
    TAP_OK(rc == 0 && b.read_base && vm_flags_of(b.read_base, flags, sizeof flags) == 0 &&
           strstr(flags, " hg") != NULL, "a batch's 32 MB of read bases is advised to huge pages (VmFlags:%s)",
           flags);
    hk_batch_free(&b);
}

/* Batches of random regions appended into one: the result holds every
 * region as built directly, read by read, haplotype by haplotype. */
static void appended_batches(const hk_seq_rules_t *rules)
{
    enum { PARTS = 5 };
    hk_batch_t part[PARTS], all, whole;
    hk_batch_init(&all);
    hk_batch_init(&whole);
    hk_batch_set_no_text(&all, 1);
    hk_batch_set_no_text(&whole, 1);
    int failed = 0;
    for (int k = 0; k < PARTS; k++) {
        hk_batch_init(&part[k]);
        hk_batch_set_no_text(&part[k], 1);
        for (int g = 0, ng = (int)rnd(3); g < ng; g++) {   /* 0-2 regions: some batches empty */
            hk_batch_t *to[2] = { &part[k], &whole };
            const int nr = (int)rnd(4), nh = (int)rnd(3);   /* some regions without reads or haplotypes */
            char f[5][64], h[64];
            for (int t = 0; t < 2; t++) failed |= hk_batch_begin_region(to[t], NULL, 10 * k + g) != HK_OK;
            for (int r = 0; r < nr; r++) {
                const uint32_t len = 1 + rnd(60);
                for (uint32_t i = 0; i < len; i++) {
                    f[0][i] = rnd_base();
                    for (int x = 1; x < 5; x++) f[x][i] = (char)(33 + 10 + rnd(40));
                }
                hk_batch_error_t e;
                for (int t = 0; t < 2; t++)
                    failed |= hk_batch_add_read(to[t], rules, f[0], f[1], f[2], f[3], f[4], len, &e) != HK_OK;
            }
            for (int x = 0; x < nh; x++) {
                const uint32_t len = 1 + rnd(60);
                for (uint32_t i = 0; i < len; i++) h[i] = rnd_base();
                hk_batch_error_t e;
                for (int t = 0; t < 2; t++) failed |= hk_batch_add_hap(to[t], rules, h, len, &e) != HK_OK;
            }
            for (int t = 0; t < 2; t++) failed |= hk_batch_end_region(to[t]) != HK_OK;
        }
        failed |= hk_batch_append_batch(&all, &part[k]) != HK_OK;
    }
    int differ = failed || all.n_regions != whole.n_regions || all.n_reads != whole.n_reads ||
                 all.n_haps != whole.n_haps || all.n_pairs != whole.n_pairs || all.cells != whole.cells ||
                 all.n_read_pos != whole.n_read_pos || all.n_hap_pos != whole.n_hap_pos ||
                 all.max_read_len != whole.max_read_len || all.max_hap_len != whole.max_hap_len ||
                 all.max_region_haps != whole.max_region_haps ||
                 all.max_region_hap_cols != whole.max_region_hap_cols;
    for (size_t g = 0; !differ && g < all.n_regions; g++) {
        const hk_region_t *a = &all.regions[g], *w = &whole.regions[g];
        differ = a->read0 != w->read0 || a->n_reads != w->n_reads || a->hap0 != w->hap0 || a->n_haps != w->n_haps ||
                 a->pair0 != w->pair0 || a->cells != w->cells || a->line != w->line;
    }
    for (size_t r = 0; !differ && r < all.n_reads; r++) {
        const uint64_t o = all.read_off[r];
        const uint32_t len = hk_batch_read_len(&all, r);
        uint8_t scratch[2][3 * 64];
        const uint8_t *gap[2][3];
        hk_batch_gap_rows(&all, r, scratch[0], gap[0]);
        hk_batch_gap_rows(&whole, r, scratch[1], gap[1]);
        differ = o != whole.read_off[r] || len != hk_batch_read_len(&whole, r) ||
                 memcmp(all.read_base + o, whole.read_base + o, len) || memcmp(all.read_q + o, whole.read_q + o, len) ||
                 memcmp(&all.read_gaps[r], &whole.read_gaps[r], sizeof all.read_gaps[r]);
        for (int x = 0; x < 3 && !differ; x++) differ = memcmp(gap[0][x], gap[1][x], len) != 0;
    }
    for (size_t x = 0; !differ && x < all.n_haps; x++)
        differ = all.hap_off[x] != whole.hap_off[x] ||
                 memcmp(all.hap_base + all.hap_off[x], whole.hap_base + whole.hap_off[x], hk_batch_hap_len(&all, x));
    for (size_t i = 0; !differ && i < all.n_pairs; i++) differ = !isnan(all.lk[i]);
    TAP_OK(!differ, "%zu regions of %d batches appended into one: as if built into it (%zu reads, %zu haplotypes)",
           all.n_regions, PARTS, all.n_reads, all.n_haps);
    hk_batch_t text;
    hk_batch_init(&text);
    TAP_OK(whole.n_regions == 0 || hk_batch_append_batch(&text, &whole) == HK_E_INVAL,
           "appending into a batch that keeps text is refused");
    hk_batch_free(&text);
    for (int k = 0; k < PARTS; k++) hk_batch_free(&part[k]);
    hk_batch_free(&all);
    hk_batch_free(&whole);
}

/* Whether the read of f (len positions), given as raw Phred values (each
 * character - 33, mod 256) to hk_batch_add_read_phred, fares as its text did
 * in b (rc, *e): the same refusal (rule, field, position) or the same rows
 * and gap summary. */
static int same_as_phred(const hk_seq_rules_t *rules, const hk_batch_t *b, hk_status_t rc,
                         const hk_batch_error_t *e, const char *f[5], uint32_t len)
{
    uint8_t raw[4][64];
    for (int k = 0; k < 4; k++)
        for (uint32_t i = 0; i < len; i++) raw[k][i] = (uint8_t)((unsigned char)f[k + 1][i] - 33);
    hk_batch_t p;
    hk_batch_init(&p);
    hk_batch_error_t pe = { 0 };
    hk_status_t prc = hk_batch_begin_region(&p, NULL, 1);
    if (!prc) prc = hk_batch_add_read_phred(&p, rules, f[0], raw[0], raw[1], raw[2], raw[3], len, &pe);
    int same = prc == rc;
    if (same && rc) same = pe.code == e->code && pe.field == e->field && pe.pos == e->pos && p.n_reads == 0;
    if (same && !rc) {
        uint8_t s1[3 * 64], s2[3 * 64];
        const uint8_t *g1[3], *g2[3];
        hk_batch_gap_rows(b, 0, s1, g1);
        hk_batch_gap_rows(&p, 0, s2, g2);
        const hk_read_gaps_t x = b->read_gaps[0], y = p.read_gaps[0];
        same = !memcmp(b->read_base, p.read_base, len) && !memcmp(b->read_q, p.read_q, len) &&
               x.constant == y.constant && x.rows == y.rows && x.ins == y.ins && x.del == y.del && x.gcp == y.gcp &&
               x.ins_last == y.ins_last && x.del_last == y.del_last && x.gcp_last == y.gcp_last;
        for (int k = 0; k < 3; k++) same &= !memcmp(g1[k], g2[k], len);
    }
    hk_batch_free(&p);
    return same;
}

int main(void)
{
    const hk_seq_rules_t rule_sets[] = { { 6, -1, 0, 0 }, { 0, -1, 1, 0 }, { 20, 10, 0, 0 }, { 0, 40, 1, 0 } };
    int n_ok = 0, n_err = 0, wrong = 0, summaries_wrong = 0, n_summary_only = 0, phred_wrong = 0;
    for (int trial = 0; trial < 60000; trial++) {
        const hk_seq_rules_t *rules = &rule_sets[trial % 4];
        const uint32_t len = 1 + rnd(63);
        char f[5][64];
        for (uint32_t i = 0; i < len; i++) {
            f[0][i] = rnd_base();
            f[1][i] = (char)(33 + rnd(60));
            /* gap qualities often constant (HaplotypeCaller's usual), sometimes low */
            f[2][i] = (char)(trial & 8 ? 33 + 45 : 33 + 1 + rnd(60));
            f[3][i] = (char)(trial & 8 ? 33 + 45 : 33 + 1 + rnd(60));
            f[4][i] = (char)(trial & 16 ? 33 + 10 : 33 + rnd(50));
        }
        if (trial & 32) {                          /* HaplotypeCaller's "IIII...IN" */
            f[2][len - 1] = f[3][len - 1] = (char)(33 + 40);
            f[4][len - 1] = (char)(33 + 12);
        }
        if (rnd(3) == 0) {                         /* one bad byte somewhere */
            const int field = (int)rnd(5);
            const uint32_t at = rnd(4) == 0 ? len - 1 : rnd(len);
            static const char bad[] = { 'X', '!' - 1, '~' + 1, '\t', (char)0x80, 'R', ' ' };
            f[field][at] = bad[rnd(sizeof bad)];
            if (field > 0 && rnd(2)) f[field][at] = (char)(33 + rnd(3));   /* low, maybe an error */
        }
        const char *fp[5] = { f[0], f[1], f[2], f[3], f[4] };
        expect_t x;
        reference(rules, fp, len, &x);

        hk_batch_t b;
        hk_batch_init(&b);
        hk_batch_error_t e = { 0 };
        hk_status_t rc = hk_batch_begin_region(&b, NULL, 1);
        if (!rc) rc = hk_batch_append_read(&b, len, 7);
        if (!rc) rc = hk_batch_set_read(&b, rules, 0, f[0], f[1], f[2], f[3], f[4], &e);
        if (x.code) {
            n_err++;
            if (rc != HK_E_INPUT || e.code != x.code || e.field != x.field || e.pos != x.pos || e.line != 7) wrong++;
        } else {
            n_ok++;
            uint8_t scratch[3 * 64];
            const uint8_t *gap[3] = { NULL, NULL, NULL };
            if (rc == 0) hk_batch_gap_rows(&b, 0, scratch, gap);
            const uint8_t *got[5] = { b.read_base, b.read_q, gap[0], gap[1], gap[2] };
            int same = rc == 0 && !memcmp(b.read_text, f[0], len) && !memcmp(got[0], x.base, len);
            for (int k = 0; k < 4; k++) same &= !memcmp(got[k + 1], x.q[k], len);
            wrong += !same;
            if (same) {
                const hk_read_gaps_t g = b.read_gaps[0];
                int constant = 1;
                for (uint32_t i = 1; i + 1 < len; i++)
                    constant &= x.q[1][i] == x.q[1][0] && x.q[2][i] == x.q[2][0] && x.q[3][i] == x.q[3][0];
                summaries_wrong += g.constant != constant || g.ins != x.q[1][0] || g.del != x.q[2][0] ||
                                   g.gcp != x.q[3][0] || g.ins_last != x.q[1][len - 1] ||
                                   g.del_last != x.q[2][len - 1] || g.gcp_last != x.q[3][len - 1] ||
                                   (!g.rows && !g.constant);
                n_summary_only += !g.rows && len > 2;
            }
        }
        phred_wrong += !same_as_phred(rules, &b, rc, &e, fp, len);
        hk_batch_free(&b);
    }
    TAP_OK(wrong == 0, "reads: %d valid, %d with an error; %d normalised or reported otherwise than "
           "the reference", n_ok, n_err, wrong);
    TAP_OK(summaries_wrong == 0, "gap summaries: %d differ from the reference", summaries_wrong);
    TAP_OK(n_summary_only > 5000, "constant gap qualities kept as their summary alone (%d reads), their "
           "rows the reference's", n_summary_only);
    TAP_OK(n_ok > 10000 && n_err > 5000, "both kinds were drawn often (%d, %d)", n_ok, n_err);
    TAP_OK(phred_wrong == 0, "raw Phred qualities (hk_batch_add_read_phred): %d reads differ from their text's "
           "(batch or error)", phred_wrong);

    int hap_wrong = 0, hap_err = 0;
    for (int trial = 0; trial < 30000; trial++) {
        const hk_seq_rules_t *rules = &rule_sets[trial % 4];
        const uint32_t len = 1 + rnd(63);
        char h[64];
        for (uint32_t i = 0; i < len; i++) h[i] = rnd_base();
        long bad_at = -1;
        if (rnd(3) == 0) h[bad_at = rnd(len)] = "XR-\0"[rnd(4)];
        hk_batch_t b;
        hk_batch_init(&b);
        hk_batch_error_t e = { 0 };
        hk_status_t rc = hk_batch_begin_region(&b, NULL, 1);
        if (!rc) rc = hk_batch_append_hap(&b, len, 3);
        if (!rc) rc = hk_batch_set_hap(&b, rules, 0, h, &e);
        if (bad_at >= 0 && !rules->unknown_as_n) {
            hap_err++;
            hap_wrong += rc != HK_E_INPUT || e.code != HK_BATCH_BAD_BASE || e.pos != (uint32_t)bad_at || e.is_read;
        } else {
            int same = rc == 0 && !memcmp(b.hap_text, h, len);
            for (uint32_t i = 0; i < len; i++) {
                int c = ref_code((unsigned char)h[i]);
                same &= b.hap_base[i] == (c < 0 ? HK_BASE_N : c);
            }
            hap_wrong += !same;
        }
        hk_batch_free(&b);
    }
    TAP_OK(hap_wrong == 0 && hap_err > 1000, "haplotypes: %d normalised or reported otherwise than "
           "the reference (%d with an error)", hap_wrong, hap_err);
    /* a batch without text (a table without sequences): the same codes, no text kept */
    int no_text_wrong = 0;
    for (int trial = 0; trial < 2000; trial++) {
        const uint32_t len = 1 + rnd(63);
        char f[5][64], h[64];
        for (uint32_t i = 0; i < len; i++) {
            h[i] = f[0][i] = rnd_base();
            for (int k = 1; k < 5; k++) f[k][i] = (char)(33 + 10 + rnd(40));
        }
        hk_batch_t with, without;
        hk_batch_init(&with);
        hk_batch_init(&without);
        hk_batch_set_no_text(&without, 1);
        hk_batch_error_t e;
        hk_batch_t *bs[2] = { &with, &without };
        for (int k = 0; k < 2; k++) {
            hk_status_t rc = hk_batch_begin_region(bs[k], NULL, 1);
            if (!rc) rc = hk_batch_append_read(bs[k], len, 1);
            if (!rc) rc = hk_batch_set_read(bs[k], &rule_sets[0], 0, f[0], f[1], f[2], f[3], f[4], &e);
            if (!rc) rc = hk_batch_append_hap(bs[k], len, 2);
            if (!rc) rc = hk_batch_set_hap(bs[k], &rule_sets[0], 0, h, &e);
            no_text_wrong += rc != 0;
        }
        uint8_t scratch[2][3 * 64];
        const uint8_t *gap[2][3];
        for (int k = 0; k < 2 && no_text_wrong == 0; k++) hk_batch_gap_rows(bs[k], 0, scratch[k], gap[k]);
        no_text_wrong += no_text_wrong || without.read_text != NULL || without.hap_text != NULL ||
                         memcmp(with.read_base, without.read_base, len) ||
                         memcmp(with.read_q, without.read_q, len) ||
                         memcmp(gap[0][2], gap[1][2], len) ||
                         memcmp(with.hap_base, without.hap_base, len);
        hk_batch_free(&with);
        hk_batch_free(&without);
    }
    TAP_OK(no_text_wrong == 0, "a batch without text: %d differ from one with it, or kept text",
           no_text_wrong);
    /* a PDHMM batch keeps its rows even where they are constant: its GPU packing copies them */
    {
        const hk_seq_rules_t pd = { 0, -1, 0, 1 };
        const char *bases = "ACGTACGTACGTACGTACGTA", *q = "IIIIIIIIIIIIIIIIIIIII", *ins = "IIIIIIIIIIIIIIIIIIIIN",
                   *gcp = "+++++++++++++++++++++";
        const uint32_t len = (uint32_t)strlen(bases);
        hk_batch_t b;
        hk_batch_init(&b);
        hk_batch_error_t e;
        hk_status_t rc = hk_batch_begin_region(&b, NULL, 1);
        if (!rc) rc = hk_batch_append_read(&b, len, 1);
        if (!rc) rc = hk_batch_set_read(&b, &pd, 0, bases, q, ins, ins, gcp, &e);
        TAP_OK(rc == 0 && b.read_gaps[0].constant && b.read_gaps[0].rows && b.read_i[len - 1] == 'N' - 33 &&
               b.read_d[0] == 'I' - 33 && b.read_g[3] == '+' - 33,
               "a PDHMM read with constant gap qualities keeps its rows");
        hk_batch_free(&b);
    }
    for (int rep = 0; rep < 3; rep++) appended_batches(&rule_sets[0]);
    /* a first region without reads, or without haplotypes: no pairs, no offsets read */
    for (int k = 0; k < 2; k++) {
        hk_batch_t b;
        hk_batch_init(&b);
        hk_batch_set_no_text(&b, 1);
        hk_batch_error_t e;
        hk_status_t rc = hk_batch_begin_region(&b, NULL, 1);
        if (!rc && k == 0) rc = hk_batch_add_hap(&b, &rule_sets[0], "ACGT", 4, &e);
        if (!rc && k == 1) rc = hk_batch_add_read(&b, &rule_sets[0], "ACGT", "IIII", "IIII", "IIII", "++++", 4, &e);
        if (!rc) rc = hk_batch_end_region(&b);
        TAP_OK(rc == HK_OK && b.n_pairs == 0 && b.cells == 0, "a first region without %s: no pairs",
               k == 0 ? "reads" : "haplotypes");
        hk_batch_free(&b);
    }
    large_arrays_advised();
    return TAP_DONE();
}
