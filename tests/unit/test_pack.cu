/* test_pack.cu - the CUDA engine's host side, without a GPU: chunks planned
 * and packed as hk_cuda_score does, checked byte by byte.
 *
 * Random batches (reads of 0-1000 bases, constant and varied gap qualities,
 * haplotypes of 0-600 bases, many of 1-3, odd and even) are cut into small
 * chunks and packed with 1 and 3 host threads, with every row packed and
 * with the rows listed for a copy straight from the batch. For every chunk: the block
 * fits the planner's limit; every pair of the chunk is covered by exactly
 * one work item or is a degenerate pair (an empty sequence), with its
 * result slot; items sit in the bin of the kernel their read goes to (in
 * mixed mode, reads longer than HK_MIXED_FLOAT_MAX_READ in the double
 * multi-tile kernel's, one pair per item; in float mode, not); the
 * read rows and haplotype codes are the batch's; and the padded copy that
 * the kernels of 2 or 4 columns per step read (made by the GPU from the
 * packed codes: here by the same code on the host, over garbage) has every
 * haplotype at an offset that is a multiple of HK_HAP_ALIGN, its codes, and
 * HK_HAP_PAD up to the next multiple, and lies past what the host fills and
 * copies. Output is TAP. */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hk_host_internal.h"
#include "hk_items.cuh"
extern "C" {                       /* C headers without guards of their own */
#include "hk_model.h"
#include "tap.h"
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* A random batch of n regions. */
static void make_batch(hk_batch_t *b, const hk_model_t *m, int n)
{
    const hk_seq_rules_t rules = hk_model_seq_rules(m);
    static char seq[HK_MIXED_FLOAT_MAX_HAP + 256], q[1024], gi[1024], gd[1024], gg[1024];
    hk_batch_error_t bad;
    for (int g = 0; g < n; g++) {
        if (hk_batch_begin_region(b, NULL, 1)) abort();
        const int nh = 1 + (int)rnd(rnd(4) ? 6 : 40), nr = 1 + (int)rnd(12);
        const bool tiny = rnd(3) == 0;                 /* haplotypes of 1-3 bases */
        for (int h = 0; h < nh; h++) {
            /* now and then longer than HK_MIXED_FLOAT_MAX_HAP: its pairs straight to double in mixed mode */
            const int len = rnd(50) == 0 ? 0 : tiny ? 1 + (int)rnd(3)
                          : rnd(300) == 0 ? (int)HK_MIXED_FLOAT_MAX_HAP + 1 + (int)rnd(200) : 1 + (int)rnd(600);
            for (int i = 0; i < len; i++) seq[i] = "ACGTN"[rnd(rnd(30) ? 4 : 5)];
            if (hk_batch_add_hap(b, &rules, seq, (uint32_t)len, &bad)) abort();
        }
        for (int r = 0; r < nr; r++) {
            /* now and then longer than HK_MIXED_FLOAT_MAX_READ: straight to double in mixed mode */
            const int len = rnd(40) == 0 ? 0 : rnd(60) == 0 ? 700 + (int)rnd(300) : 1 + (int)rnd(rnd(8) ? 160 : 700);
            const bool constant = rnd(4) != 0;
            /* one constant read in 6 has another insertion quality (Q41) */
            const char body = rnd(6) ? 'I' : 'J';
            for (int i = 0; i < len; i++) {
                seq[i] = "ACGTN"[rnd(rnd(30) ? 4 : 5)];
                q[i] = (char)(33 + 2 + rnd(40));
                gi[i] = constant ? (i + 1 == len ? 'N' : body) : (char)(37 + rnd(50));
                gd[i] = constant ? (i + 1 == len ? 'N' : 'I') : (char)(37 + rnd(50));
                gg[i] = constant ? '+' : (char)(34 + rnd(49));   /* from Q1: Q0 is refused */
            }
            if (hk_batch_add_read(b, &rules, seq, q, gi, gd, gg, (uint32_t)len, &bad)) abort();
        }
        if (hk_batch_end_region(b)) abort();
    }
}

/* Check one packed chunk; returns the number of problems (printed). */
static int check_chunk(const hk_batch_t *b, const hk_chunk &ch, const unsigned char *in,
                       const std::vector<uint64_t> &degen, const hk_plan_limits &lim, int precision)
{
    int bad = 0;
    auto fail = [&](const char *what, size_t i) {
        if (bad++ < 5) printf("# chunk of reads %zu-%zu: %s (%zu)\n", ch.r0, ch.r1, what, i);
    };
    if (ch.in_bytes > lim.in_bytes) fail("block larger than the planner's limit", ch.in_bytes);
    if (ch.off_hbase2 < ch.h2d_bytes || ch.h2d_bytes > ch.in_bytes) fail("padded copy inside the copied part", ch.h2d_bytes);
    if (ch.pad_haps != ch.h1 - ch.h0) fail("haplotypes to pad", ch.pad_haps);
    /* the constant-gap kernels' set: one of the chunk's constant reads' (3 reads in 4 are
     * constant, and the planner samples 32), the common one (Q40, not Q41) in a chunk of
     * 32 reads or more */
    bool any_constant = false, set_of_a_read = false;
    for (size_t r = ch.r0; r < ch.r1; r++) {
        any_constant |= b->read_gaps[r].constant != 0;
        set_of_a_read |= hk_cgap_match(b->read_gaps[r], ch.cgap);
    }
    if (any_constant != set_of_a_read) fail("the chunk's constant-gap set is none of its reads'", ch.r0);
    if (ch.r1 - ch.r0 >= 32 && any_constant && ch.cgap.ins != 40) fail("the chunk's constant-gap set is not the common one", ch.cgap.ins);
    const hk_item *items = reinterpret_cast<const hk_item *>(in);
    const uint32_t *ro = reinterpret_cast<const uint32_t *>(in + ch.off_read_off);
    const uint32_t *ho = reinterpret_cast<const uint32_t *>(in + ch.off_hap_off);
    const uint32_t *ho2 = reinterpret_cast<const uint32_t *>(in + ch.off_hap_off2);
    const uint8_t *hb = in + ch.off_hbase, *hb2 = in + ch.off_hbase2;
    const uint64_t rbase0 = b->read_off[ch.r0], hbase0 = b->hap_off[ch.h0];

    /* reads: offsets and rows */
    for (size_t r = ch.r0; r <= ch.r1; r++)
        if (ro[r - ch.r0] != b->read_off[r] - rbase0) fail("read offset", r);
    const size_t rp = b->read_off[ch.r1] - rbase0;
    if (memcmp(in + ch.off_read[0], b->read_base + rbase0, rp)) fail("read bases", 0);
    if (memcmp(in + ch.off_read[1], b->read_q + rbase0, rp)) fail("base qualities", 0);
    const uint8_t *gap_rows[3] = { b->read_i, b->read_d, b->read_g };
    for (size_t r = ch.r0; r < ch.r1; r++) {     /* the gap rows of the reads that have them */
        if (b->read_gaps[r].constant) continue;
        if (!ch.has_gap_rows) { fail("a read with gap rows in a chunk without them", r); break; }
        for (int k = 0; k < 3; k++)
            if (memcmp(in + ch.off_read[2 + k] + (b->read_off[r] - rbase0), gap_rows[k] + b->read_off[r],
                       hk_batch_read_len(b, r))) { fail("gap row", r); break; }
    }
    /* haplotypes: both copies */
    if (ho2[0] != 0) fail("first padded offset", 0);
    if (ch.off_hbase2 + ho2[ch.h1 - ch.h0] > ch.in_bytes) fail("padded copy past the block", ho2[ch.h1 - ch.h0]);
    for (size_t h = ch.h0; h < ch.h1; h++) {
        const size_t i = h - ch.h0, n = hk_batch_hap_len(b, h);
        if (ho[i] != b->hap_off[h] - hbase0) fail("haplotype offset", h);
        if (ho2[i] % HK_HAP_ALIGN) fail("padded haplotype at an unaligned offset", h);
        if (ho2[i + 1] - ho2[i] != (n + HK_HAP_ALIGN - 1) / HK_HAP_ALIGN * HK_HAP_ALIGN)
            fail("padded haplotype length", h);
        for (size_t k = 0; k < n; k++) {
            const uint8_t want = (uint8_t)(b->hap_base[b->hap_off[h] + k] | (k == 0 ? HK_HAP_FIRST : 0));
            if (hb[ho[i] + k] != want || hb2[ho2[i] + k] != want) { fail("haplotype code", h); break; }
        }
        for (size_t k = n; k < ho2[i + 1] - ho2[i]; k++)
            if (hb2[ho2[i] + k] != HK_HAP_PAD) { fail("pad after a haplotype", h); break; }
    }
    /* items: every pair once, or degenerate */
    std::vector<int> seen(ch.n_pairs, 0);
    for (uint64_t i : degen) {
        if (i >= ch.n_pairs) { fail("degenerate pair out of the chunk", i); continue; }
        seen[i]++;
    }
    int bin = 0;
    uint32_t n_long = 0, foreign_items = 0;   /* foreign_items: constant-gap bins (bits) holding a read of another set */
    if ((precision == HK_PREC_MIXED) != (ch.long_bin >= 0)) fail("long reads' bin in this mode", ch.long_bin);
    for (uint32_t k = 0; k < ch.n_items; k++) {
        while (bin < ch.n_bins && k >= ch.cfg_end[bin]) bin++;
        const hk_item &it = items[k];
        if (bin >= ch.n_bins || k < ch.cfg_begin[bin]) { fail("item outside every bin", k); continue; }
        const size_t r = ch.r0 + it.read;
        if (r >= ch.r1 || it.n_haps == 0 || it.n_haps > HK_MAX_ITEM_HAPS) { fail("item read or size", k); continue; }
        size_t g = 0;
        while (!(r >= b->regions[g].read0 && r < (size_t)b->regions[g].read0 + b->regions[g].n_reads)) g++;
        const hk_region_t *rg = &b->regions[g];
        const size_t h = ch.h0 + it.hap;
        if (h < rg->hap0 || h + it.n_haps > (size_t)rg->hap0 + rg->n_haps) { fail("item haplotypes outside its region", k); continue; }
        const uint64_t out = rg->pair0 + (uint64_t)(r - rg->read0) * rg->n_haps + (h - rg->hap0) - ch.pair0;
        if (it.out != out) fail("item result slot", k);
        const uint64_t cols = b->hap_off[h + it.n_haps] - b->hap_off[h];
        if (it.n_haps > 1 && cols > ch.item_cols) fail("item longer than the chunk's column cap", k);
        const bool constant = b->read_gaps[r].constant;
        const uint32_t m = hk_batch_read_len(b, r);
        bool long_hap = false;
        for (uint32_t j = 0; j < it.n_haps; j++)
            long_hap |= b->hap_off[h + j + 1] - b->hap_off[h + j] > HK_MIXED_FLOAT_MAX_HAP;
        const bool long_read = precision == HK_PREC_MIXED && (m > HK_MIXED_FLOAT_MAX_READ || long_hap);
        const bool cgap_bin = bin > ch.n_single && bin != ch.long_bin;
        if ((bin == ch.long_bin) != long_read) fail("long pair not in the double bin, or another pair in it", k);
        if (long_read && it.n_haps != 1) fail("a long pair's item holds more than one pair", k);
        n_long += bin == ch.long_bin;
        if (cgap_bin != (constant && m <= 512 && !long_read)) fail("item in the wrong kernel family", k);
        if (cgap_bin && !hk_cgap_match(b->read_gaps[r], ch.cgap)) foreign_items |= 1u << (bin - ch.n_single - 1);
        for (uint32_t j = 0; j < it.n_haps && it.out + j < ch.n_pairs; j++) seen[it.out + j]++;
    }
    for (uint64_t i = 0; i < ch.n_pairs; i++)
        if (seen[i] != 1) { fail("a pair not covered exactly once", i); break; }
    if (n_long != ch.n_long) fail("n_long is not the long bin's size", ch.n_long);
    /* a constant-gap launch with a read of another set takes each read's coefficients;
     * one whose reads all have the chunk's set, the chunk's */
    uint32_t foreign_reads = 0;
    for (size_t r = ch.r0; r < ch.r1; r++) {
        const int cg = hk_pick_config(hk_batch_read_len(b, r), HK_FAM_CGAP);
        if (b->read_gaps[r].constant && cg >= 0 && !hk_cgap_match(b->read_gaps[r], ch.cgap)) foreign_reads |= 1u << cg;
    }
    if ((foreign_items & ~ch.cgap_foreign) || (ch.cgap_foreign & ~foreign_reads))
        fail("constant-gap launches marked for each read's coefficients", ch.cgap_foreign);
    return bad;
}

/* GPU packing (hk_gpack.cu) against the host's: chunk g staged and packed
 * in g_in (lk: its results, where the pairs of empty sequences got -inf)
 * must hold what the host's packing put in ref_in, byte for byte, and bin
 * for bin. Returns the number of problems (printed). */
static int compare_gpack(const hk_chunk &ref, const unsigned char *ref_in, const std::vector<uint64_t> &degen,
                         const hk_chunk &g, const unsigned char *g_in, const double *lk, const char *where)
{
    int bad = 0;
    auto fail = [&](const char *what, size_t i) {
        if (bad++ < 5) printf("# %s, chunk of reads %zu-%zu: %s (%zu)\n", where, ref.r0, ref.r1, what, i);
    };
    const size_t nr = ref.r1 - ref.r0, nh = ref.h1 - ref.h0;
    if (g.n_items != ref.n_items) fail("item count", g.n_items);
    if (g.n_bins != ref.n_bins || g.long_bin != ref.long_bin) fail("bins", g.n_bins);
    for (int k = 0; k < ref.n_bins; k++)
        if ((ref.cfg_end[k] > ref.cfg_begin[k] || g.cfg_end[k] > g.cfg_begin[k]) &&
            (g.cfg_begin[k] != ref.cfg_begin[k] || g.cfg_end[k] != ref.cfg_end[k])) fail("bin bounds", k);
    if (g.n_long != ref.n_long) fail("long reads' items", g.n_long);
    if (g.n_degen != degen.size()) fail("empty-sequence pairs", g.n_degen);
    if (g.has_gap_rows != ref.has_gap_rows) fail("gap rows", g.has_gap_rows);
    if (g.cgap_foreign != ref.cgap_foreign) fail("constant-gap launches with another set", g.cgap_foreign);
    if (g.n_items == ref.n_items && memcmp(g_in + g.off_items, ref_in + ref.off_items, ref.n_items * sizeof(hk_item)))
        fail("items", 0);
    const struct { size_t a, b, n; const char *what; } same[] = {
        { g.off_read_off, ref.off_read_off, (nr + 1) * 4, "read offsets" },
        { g.off_hap_off, ref.off_hap_off, (nh + 1) * 4, "haplotype offsets" },
        { g.off_hap_off2, ref.off_hap_off2, (nh + 1) * 4, "padded haplotype offsets" },
        { g.off_gaps, ref.off_gaps, nr * sizeof(hk_read_gaps_t), "gap summaries" } };
    for (const auto &x : same)
        if (memcmp(g_in + x.a, ref_in + x.b, x.n)) fail(x.what, 0);
    size_t inf = 0;
    for (uint64_t p : degen) inf += std::isinf(lk[p]) && lk[p] < 0;
    for (uint64_t p = 0; p < ref.n_pairs; p++) inf -= std::isinf(lk[p]) && lk[p] < 0;
    if (inf != 0 || degen.size() != g.n_degen) fail("-inf where the host lists empty-sequence pairs, and only there", inf);
    return bad;
}

/* The GPU, when there is one: its packing of a staged chunk, brought back. */
static bool gpu_pack(const hk_chunk &ch, const unsigned char *staged, std::vector<unsigned char> &out,
                     std::vector<double> &lk)
{
    unsigned char *d_in = nullptr;
    double *d_lk = nullptr;
    void *d_tmp = nullptr;
    const size_t tmp = hk_gpack_tmp_bytes(ch.n_pairs);
    const char *what;
    bool ok = cudaMalloc(&d_in, ch.in_bytes) == cudaSuccess && cudaMalloc(&d_lk, (ch.n_pairs + 1) * 8) == cudaSuccess &&
              cudaMalloc(&d_tmp, tmp) == cudaSuccess && cudaMemset(d_in, 0xab, ch.in_bytes) == cudaSuccess &&
              cudaMemset(d_lk, 0, (ch.n_pairs + 1) * 8) == cudaSuccess &&
              cudaMemcpy(d_in, staged, ch.h2d_bytes, cudaMemcpyHostToDevice) == cudaSuccess &&
              hk_chunk_gpack(&ch, d_in, d_lk, d_tmp, tmp, out.data(), 0, &what) == cudaSuccess &&
              cudaMemcpy(out.data(), d_in, ch.off_result, cudaMemcpyDeviceToHost) == cudaSuccess &&
              cudaMemcpy(lk.data(), d_lk, ch.n_pairs * 8, cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaFree(d_in);
    cudaFree(d_lk);
    cudaFree(d_tmp);
    return ok;
}

static bool have_gpu()
{
    int n = 0;
    static const bool yes = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    return yes;
}

/* Plan and pack all of b in chunks within lim; check each. */
static void pack_all(hk_batch_t *b, const hk_plan_limits &lim, unsigned threads, int precision, bool direct,
                     const char *what_)
{
    char what[160];
    snprintf(what, sizeof what, "%s%s", what_, direct ? ", rows straight from the batch" : "");
    hk_pool pool(threads - 1);
    std::vector<unsigned char> in(lim.in_bytes), in_g(lim.in_bytes), in_d(lim.in_bytes);
    std::vector<uint64_t> degen;
    std::vector<double> lk(lim.pairs + 1), lk_d(lim.pairs + 1);
    size_t reg = 0, r = 0, chunks = 0, pairs = 0, long_pairs = 0;
    int bad = 0, plan_failed = 0, bad_g = 0, bad_d = 0, gpu_failed = 0;
    while (r < b->n_reads) {
        while (reg < b->n_regions && r >= (size_t)b->regions[reg].read0 + b->regions[reg].n_reads) reg++;
        hk_chunk ch;
        if (hk_chunk_plan(b, &lim, reg, r, b->n_reads, &ch)) { plan_failed = 1; break; }
        hk_chunk_pack(b, &ch, precision, direct, in.data(), &degen, &pool);
        /* what the host leaves unwritten is not copied to the GPU: there go
         * the rows listed for a copy from the batch (done here as the engine
         * does on the GPU), then the GPU's first step (here on the host)
         * marks the haplotypes' first bases and makes their padded copy */
        memset(in.data() + ch.h2d_bytes, 0xab, ch.in_bytes - ch.h2d_bytes);
        if (!direct && ch.n_copies) bad++, printf("# rows listed for a copy though not asked for\n");
        for (int i = 0; i < ch.n_copies; i++) {
            if (ch.copy[i].off < ch.h2d_bytes || ch.copy[i].off + ch.copy[i].bytes > ch.off_hbase2) {
                bad++;
                printf("# row copy %d outside the rows' part of the block\n", i);
                continue;
            }
            memcpy(in.data() + ch.copy[i].off, ch.copy[i].src, ch.copy[i].bytes);
        }
        hk_chunk_pad_host(&ch, in.data());
        bad += check_chunk(b, ch, in.data(), degen, lim, precision);
        /* the GPU's packing, its steps run here, then on the GPU */
        hk_chunk g = ch;
        hk_chunk_stage(b, &g, precision, false, in_g.data());
        if (g.in_bytes > lim.in_bytes) bad_g++, printf("# GPU packing's block larger than the planner's limit\n");
        memset(in_g.data() + g.h2d_bytes, 0xab, g.in_bytes - g.h2d_bytes);
        std::fill(lk.begin(), lk.end(), 0.0);
        hk_chunk_gpack_host(&g, in_g.data(), lk.data());
        hk_chunk_gpack_done(&g, in_g.data());
        bad_g += compare_gpack(ch, in.data(), degen, g, in_g.data(), lk.data(), "GPU packing's steps on the host");
        if (have_gpu() && !gpu_failed) {
            hk_chunk gd = ch;
            hk_chunk_stage(b, &gd, precision, false, in_d.data());
            if (!gpu_pack(gd, in_d.data(), in_d, lk_d)) gpu_failed = 1;
            else {
                hk_chunk_gpack_done(&gd, in_d.data());
                bad_d += compare_gpack(ch, in.data(), degen, gd, in_d.data(), lk_d.data(), "GPU packing on the GPU");
            }
        }
        long_pairs += ch.n_long;
        chunks++;
        pairs += ch.n_pairs;
        r = ch.r1;
        reg = ch.reg1 - 1;
    }
    TAP_OK(!plan_failed && pairs == b->n_pairs, "%s, %u thread(s): %zu chunks hold all %zu pairs of %zu regions (%zu)",
           what, threads, chunks, b->n_pairs, b->n_regions, pairs);
    TAP_OK(bad == 0, "%s, %u thread(s): items, rows and both haplotype copies as the batch has them, "
           "%zu pairs of long reads to double (%d problems)", what, threads, long_pairs, bad);
    TAP_OK(bad_g == 0, "%s, %u thread(s): GPU packing's steps, run on the host, give the host packing's items, bins, offsets "
           "and -inf pairs (%d problems)", what, threads, bad_g);
    if (!have_gpu())
        printf("# SKIP %s: no CUDA device: GPU packing on the GPU not checked\n", what);
    else
        TAP_OK(!gpu_failed && bad_d == 0, "%s: GPU packing on the GPU gives the host packing's items, bins, "
               "offsets and -inf pairs (%d problems%s)", what, bad_d, gpu_failed ? ", a CUDA call failed" : "");
}

/* HK_CU: calls made in turn until one fails, which is named in the message. */
static int calls_made;
static cudaError_t succeeds(int) { calls_made++; return cudaSuccess; }
static cudaError_t fails_alloc() { calls_made++; return cudaErrorMemoryAllocation; }
static cudaError_t names_itself(const char **what) { calls_made++; *what = "a launch"; return cudaErrorLaunchFailure; }

static void test_checked_calls()
{
    hk_cu_calls cu;
    const bool all = HK_CU(cu, succeeds, 1) && HK_CU(cu, fails_alloc) && HK_CU(cu, succeeds, 2);
    HK_CU(cu, succeeds, 3);
    char err[256] = "";
    const hk_status_t st = cu.fail(7, err, sizeof err);
    TAP_OK(!all && calls_made == 2 && !cu.ok() && !strcmp(cu.what, "fails_alloc") && st == HK_E_NOMEM &&
           !strncmp(err, "fails_alloc failed on CUDA device 7: ", 37),
           "HK_CU: the calls after the first that fails are not made; it is named: %s", err);
    hk_cu_calls self;
    calls_made = 0;
    const bool named = HK_CU(self, succeeds, 1) && HK_CU_SELF(self, names_itself(&self.what)) &&
                       HK_CU_AS(self, "never", succeeds(2));
    TAP_OK(!named && calls_made == 2 && self.e == cudaErrorLaunchFailure && !strcmp(self.what, "a launch"),
           "HK_CU_SELF: a function that names its own failing call keeps that name (%s)", self.what);
}

int main(void)
{
    test_checked_calls();
    hk_model_t m = { HK_PREC_MIXED, HK_FLOAT_THRESHOLD, 6, -1, 0 };
    hk_batch_t b;
    hk_batch_init(&b);
    make_batch(&b, &m, 2000);
    hk_plan_limits small;                   /* many chunks, regions cut among them */
    small.in_bytes = 128 << 10;
    small.min_in_bytes = 0;
    small.pairs = small.min_pairs = 4096;
    small.items = 16384;
    small.cells = 2000000;
    hk_plan_limits whole;                   /* one chunk: the threads split its reads */
    whole.in_bytes = 64 << 20;
    whole.min_in_bytes = 0;
    whole.pairs = whole.min_pairs = 1 << 24;
    whole.items = 1 << 24;
    whole.cells = ~0ull;
    hk_plan_limits short_items = small;     /* small chunks cap their items' columns */
    short_items.item_cols = HK_ITEM_COLS_MIN;
    for (bool direct : { false, true }) {
        for (unsigned threads : { 1u, 3u }) {
            pack_all(&b, small, threads, HK_PREC_MIXED, direct, "mixed, small chunks");
            pack_all(&b, whole, threads, HK_PREC_MIXED, direct, "mixed, one chunk");
            pack_all(&b, short_items, threads, HK_PREC_MIXED, direct, "mixed, small chunks, items of 256 columns");
        }
        pack_all(&b, small, 3, HK_PREC_FLOAT, direct, "float, small chunks");
    }
    hk_batch_free(&b);
    return TAP_DONE();
}
