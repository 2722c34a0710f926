/* test_pdhmm_emu.cu - the PDHMM kernels' code (kernels/device/hk_pdhmm.cuh) run on
 * the CPU, against the CPU reference
 * (hk_pdhmm_score_pair), so that their logic is checked where there is no GPU
 * (CI, the developers' machines). Built by nvcc like test_pack, but every
 * kernel function is compiled as host code: __device__ and __shared__ are
 * emptied, and each lane of a block of HK_BLOCK_THREADS is a host thread, the
 * warp's intrinsics (shuffles, votes, reductions, __syncwarp) meeting at a
 * barrier per warp. The chunks are planned and packed by the engine's own
 * code (hk_chunk_plan, hk_pd_chunk_pack), then every bin is run by the kernel
 * the engine would launch for it.
 * Random regions: every PD byte value, one-base haplotypes, reads longer than
 * their haplotypes and than the largest tile (the multi-tile kernel), gap
 * qualities that leave match-to-match at 0 (the SAFE form), upper and lower
 * case, N and n; within 1e-9 (pd_tolerance). Shared memory starts as
 * garbage, as on a GPU. What this does
 * not check: timing-dependent behaviour of real warps (compute-sanitizer's
 * racecheck on the device does), and the launch code. Output is TAP.
 * EMU_REGIONS=N scores N random regions per form instead of 30 (slower).
 */
#include <cuda_runtime.h>
#include "hk_cuda_internal.h"     /* HK_BLOCK_THREADS, before the device code is emptied */
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

/* ---- the emulated device ---- */
#undef __device__
#undef __global__
#undef __forceinline__
#undef __shared__
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__
#define __shfl_up_sync emu_shfl_up_sync
#define __any_sync emu_any_sync
#define __reduce_max_sync emu_reduce_max_sync
#define __syncwarp emu_syncwarp
#define __ldg emu_ldg
#define threadIdx emu_tid
#define blockIdx emu_bid
#define gridDim emu_gdim

static thread_local uint3 emu_tid, emu_bid, emu_gdim;

/* A warp: a reusable barrier of 32 threads and one exchange slot per lane. */
struct emu_warp {
    std::mutex mu;
    std::condition_variable cv;
    unsigned waiting = 0, generation = 0;
    uint64_t buf[32];
    void sync()
    {
        std::unique_lock<std::mutex> lk(mu);
        const unsigned gen = generation;
        if (++waiting == 32) {
            waiting = 0;
            generation++;
            cv.notify_all();
        } else {
            cv.wait(lk, [&] { return generation != gen; });
        }
    }
};
static emu_warp emu_warps[HK_BLOCK_THREADS / 32];
static emu_warp &emu_w() { return emu_warps[emu_tid.x / 32]; }

template <class T> static T emu_shfl_up_sync(unsigned, T v, int delta, int width)
{
    emu_warp &w = emu_w();
    const int l = emu_tid.x & 31;
    uint64_t x = 0;
    memcpy(&x, &v, sizeof v);
    w.buf[l] = x;
    w.sync();
    T r = v;
    if (l % width >= delta) memcpy(&r, &w.buf[l - delta], sizeof r);
    w.sync();
    return r;
}
static int emu_any_sync(unsigned, int p)
{
    emu_warp &w = emu_w();
    w.buf[emu_tid.x & 31] = p != 0;
    w.sync();
    int r = 0;
    for (int i = 0; i < 32; i++) r |= (int)w.buf[i];
    w.sync();
    return r;
}
static unsigned emu_reduce_max_sync(unsigned, unsigned v)
{
    emu_warp &w = emu_w();
    w.buf[emu_tid.x & 31] = v;
    w.sync();
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r = std::max(r, (unsigned)w.buf[i]);
    w.sync();
    return r;
}
static void emu_syncwarp() { emu_w().sync(); }
template <class T> static T emu_ldg(const T *p) { return *p; }
alignas(16) unsigned char hk_smem_raw[1 << 18];

#include "hk_pdhmm.cuh"
#include "hk_pdhmm.h"
#include "tap.h"

/* Run fn as one block of HK_BLOCK_THREADS threads (a grid of one block: the
 * kernels stride over their items), one warp after the other: the warps of
 * these kernels share nothing (each group has its own shared memory), and
 * 32 threads at a time keep the barriers cheap on a machine of few cores. */
static void emu_block(const std::function<void()> &fn)
{
    memset(hk_smem_raw, 0x7f, sizeof hk_smem_raw);
    for (unsigned w = 0; w < HK_BLOCK_THREADS / 32; w++) {
        std::vector<std::thread> th;
        for (unsigned i = 0; i < 32; i++)
            th.emplace_back([w, i, &fn] {
                emu_tid = make_uint3(w * 32 + i, 0, 0);
                emu_bid = make_uint3(0, 0, 0);
                emu_gdim = make_uint3(1, 1, 1);
                fn();
            });
        for (auto &t : th) t.join();
    }
}

/* What two orders of double arithmetic may differ by at a log10 likelihood
 * of v: 1e-9, plus a few units of the CPU's scaled sum's last place where it
 * is subnormal (below about -615, where GATK's own value keeps only the
 * digits above 2^-1074: 1.7e-9 was seen at -621.9). The GPU's constant-gap
 * form scales by 2^986 (HK_PD_CG_LOG2C), so its sums would turn subnormal
 * about 10 orders before the CPU's: it hands those to the host (-inf),
 * which scores them as the CPU does, and the tolerance is the CPU's. */
static double pd_tolerance(double v)
{
    return 1e-9 + 4 * 0.4343 * pow(10.0, -323.306 - (v + 1020 * 0.30102999566398119521));
}

/* ---- random PDHMM batches ---- */

static const hk_seq_rules_t RULES = { 0, -1, 0, 1 };
static unsigned long long rs = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (uint32_t)(rs % n);
}

static int random_region(hk_batch_t *b, int cs)
{
    enum { MAXL = 600 };
    static char hs[8][MAXL], r[MAXL], q[MAXL], gi[MAXL], gd[MAXL], gg[MAXL];
    static uint8_t pd[MAXL];
    hk_batch_error_t bad;
    const int R = 1 + (int)rnd(5), H = 1 + (int)rnd(5);
    const bool low = cs % 3 == 1;              /* gap-open qualities of Q0-3 now and then */
    const int maxr = cs % 5 == 0 ? 520 : cs % 3 == 0 ? 200 : 60;
    int hl[8];
    if (hk_batch_begin_region(b, NULL, cs + 1)) return -1;
    for (int h = 0; h < H; h++) {
        hl[h] = 1 + (int)rnd(cs % 4 == 0 ? 5 : 150);
        for (int j = 0; j < hl[h]; j++) {
            hs[h][j] = "ACGTNacgtn"[rnd(10)];
            pd[j] = rnd(3) == 0 ? (uint8_t)rnd(256) : 0;
        }
        if (hk_batch_add_hap(b, &RULES, hs[h], (uint32_t)hl[h], &bad)) return -1;
        memcpy(b->hap_pd + b->hap_off[b->n_haps - 1], pd, (size_t)hl[h]);
    }
    for (int k = 0; k < R; k++) {
        const int m = 1 + (int)rnd((uint32_t)maxr), src = (int)rnd((uint32_t)H);
        /* half the reads: constant gap qualities but for the last base (the CG
         * form), from Q1 (match-to-match below 1/2: not CG) to Q93 */
        const bool cgap = rnd(2);
        const char cb[3] = { (char)(33 + 1 + rnd(93)), (char)(33 + 1 + rnd(93)), (char)(33 + rnd(41)) };
        const char cl[3] = { (char)(33 + 1 + rnd(93)), (char)(33 + 1 + rnd(93)), (char)(33 + rnd(41)) };
        for (int i = 0; i < m; i++) {
            r[i] = i < hl[src] && rnd(10) ? hs[src][i] : "ACGTNacgtn"[rnd(10)];
            q[i] = (char)(33 + rnd(42));
            gi[i] = (char)(33 + (!low || rnd(40) ? 20 + rnd(30) : rnd(4)));
            gd[i] = (char)(33 + (!low || rnd(40) ? 20 + rnd(30) : rnd(4)));
            gg[i] = (char)(33 + rnd(40));
            if (cgap) {
                const char *g = i + 1 == m ? cl : cb;
                gi[i] = g[0]; gd[i] = g[1]; gg[i] = g[2];
            }
        }
        if (hk_batch_add_read(b, &RULES, r, q, gi, gd, gg, (uint32_t)m, &bad)) return -1;
    }
    return hk_batch_end_region(b);
}

#define MULTI_P(P, K) P
#define MULTI_K(P, K) K
static constexpr int MP = HK_PDHMM_MULTI(MULTI_P), MK = HK_PDHMM_MULTI(MULTI_K);
#define CFG_P(P, K) P,
#define CFG_K(P, K) K,
static const int cfg_p[] = { HK_PDHMM_CONFIGS(CFG_P) }, cfg_k[] = { HK_PDHMM_CONFIGS(CFG_K) };
#define CG_P(P, K) P,
#define CG_K(P, K) K,
static const int cg_p[] = { HK_PDHMM_CG_CONFIGS(CG_P) }, cg_k[] = { HK_PDHMM_CG_CONFIGS(CG_K) };

/* Score batch b (one region or more) as the engine would, into lk. -1 also where a multi-tile item
 * carries more than one haplotype (the engine's scratch has room for one
 * haplotype's columns; this emulation's has more, so it would not show). */
static int emulate(hk_batch_t *b, std::vector<double> &lk, unsigned *bins_used)
{
    hk_plan_limits lim;
    lim.in_bytes = lim.min_in_bytes = (size_t)1 << 24;
    lim.pairs = lim.min_pairs = 1u << 16;
    lim.items = 1u << 16;
    lim.cells = ~0ull;
    hk_chunk ch;
    if (hk_chunk_plan(b, &lim, 0, 0, b->n_reads, &ch) || ch.r1 != b->n_reads) return -1;
    static std::vector<unsigned char> in((size_t)1 << 24);
    std::vector<uint64_t> degen;
    hk_pd_chunk_pack(b, &ch, in.data(), &degen, nullptr);
    lk.assign(ch.n_pairs, 1234.5);
    const hk_pd_dev c = hk_pd_chunk_view(&ch, in.data(), lk.data());
    const hk_item *items = reinterpret_cast<const hk_item *>(in.data());
    for (uint64_t i : degen) lk[i] = -INFINITY;
    const size_t sc_cols = 1024;
    std::vector<unsigned char> scratch(hk_double_scratch_col_bytes() * sc_cols * (HK_BLOCK_THREADS / 2));
    for (int k = 0; k < ch.n_bins; k++) {
        const uint32_t b0 = ch.cfg_begin[k], n = ch.cfg_end[k] - b0;
        if (!n) continue;
        *bins_used |= 1u << k;
        if (k == HK_PD_BIN_MULTI || k == HK_PD_BIN_SAFE)   /* scratch holds one haplotype's columns */
            for (uint32_t x = b0; x < b0 + n; x++)
                if (items[x].n_haps != 1) return -1;
        std::function<void()> fn;
        const size_t stride = sc_cols * hk_double_scratch_col_bytes();
        const int g = k - HK_PD_BIN_CG;          /* the CG form's configuration, in its default SHC form */
        if (k == HK_PD_BIN_MULTI)
            fn = [&, b0, n] { hk_pd_fwd<MP, MK, true, false>::body(c, items + b0, n, scratch.data(), stride); };
        else if (k == HK_PD_BIN_SAFE)
            fn = [&, b0, n] { hk_pd_fwd<MP, MK, true, true>::body(c, items + b0, n, scratch.data(), stride); };
#define EMU_CG(P, K)                                                                                           \
        else if (g >= 0 && cg_p[g] == P && cg_k[g] == K)                                                        \
            fn = [&, b0, n] { hk_pd_fwd<P, K, false, false, true, true>::body(c, items + b0, n, nullptr, 0); };
        HK_PDHMM_CG_CONFIGS(EMU_CG)
#define EMU_CFG(P, K)                                                                                 \
        else if (cfg_p[k] == P && cfg_k[k] == K)                                                      \
            fn = [&, b0, n] { hk_pd_fwd<P, K, false, false>::body(c, items + b0, n, nullptr, 0); };
        HK_PDHMM_CONFIGS(EMU_CFG)
        emu_block(fn);
    }
    return 0;
}

/* Pairs whose likelihood falls where double's scaled sums turn subnormal
 * (log10 -598 to -634: a read of C against a haplotype of A, each base a
 * mismatch or a gap at Q56-64), in the constant-gap form and, with gap
 * qualities that vary, the others; each emulated as the engine would score
 * it, its -inf scored on the host as src/hk_engine.c does, must be the
 * CPU's within pd_tolerance. */
static void test_subnormal_range(void)
{
    hk_batch_t b;
    hk_batch_init(&b);
    static char hs[128], r[128], q[128], gi[128], gd[128], gg[128];
    hk_batch_error_t bad;
    bool built = true;
    for (int form = 0; form < 2 && built; form++) {   /* constant gaps (CG), varied */
        built = !hk_batch_begin_region(&b, NULL, form + 1);
        memset(hs, 'A', 120);
        built = built && !hk_batch_add_hap(&b, &RULES, hs, 120, &bad);
        if (built) memset(b.hap_pd + b.hap_off[b.n_haps - 1], 0, 120);
        for (int m = 100; m <= 107 && built; m++)
            for (int qv = 56; qv <= 64 && built; qv += 2) {
                for (int i = 0; i < m; i++) {
                    r[i] = 'C';
                    q[i] = (char)(33 + qv);
                    gi[i] = gd[i] = (char)(33 + (i + 1 == m ? 40 : form && i % 2 ? qv - 1 : qv));
                    gg[i] = (char)(33 + qv);
                }
                built = !hk_batch_add_read(&b, &RULES, r, q, gi, gd, gg, (uint32_t)m, &bad);
            }
        built = built && !hk_batch_end_region(&b);
    }
    b.pdhmm = 1;
    std::vector<double> ws(hk_pdhmm_ws_size(b.max_hap_len) / sizeof(double) + 1);
    if (built) {
        const int cols = 1;   /* one haplotype column per step: the kernels' only form */
        std::vector<double> lk;
        unsigned bins = 0;
        if (hk_pdhmm_score_batch(&b, 1) || emulate(&b, lk, &bins)) {
            hk_batch_free(&b);
            TAP_OK(0, "building and scoring the subnormal-range batch");
            return;
        }
        size_t in_range = 0, bad_pairs = 0, rescued = 0;
        double worst = 0;
        for (size_t g = 0; g < b.n_regions; g++) {
            const hk_region_t *rg = &b.regions[g];
            const uint64_t ho = b.hap_off[rg->hap0];
            for (uint32_t k = 0; k < rg->n_reads; k++) {
                const size_t rk = rg->read0 + k, i = rg->pair0 + k;
                const uint64_t o = b.read_off[rk];
                double e = lk[i];
                if (e == -INFINITY) {   /* the engine's: the CPU's pass on the host */
                    e = hk_pdhmm_score_pair(b.read_base + o, b.read_q + o, b.read_i + o, b.read_d + o, b.read_g + o,
                                            hk_batch_read_len(&b, rk), b.hap_base + ho, b.hap_pd + ho,
                                            hk_batch_hap_len(&b, rg->hap0), ws.data());
                    rescued++;
                }
                const double f = b.lk[i], d = fabs(e - f);
                in_range += f >= -631 && f <= -600;
                worst = std::max(worst, d);
                if (!(d <= pd_tolerance(f))) {
                    bad_pairs++;
                    printf("# %d column(s), region %zu read %u (%u bases): emulated %.12g, CPU %.12g\n", cols, g, k,
                           hk_batch_read_len(&b, rk), e, f);
                }
            }
        }
        TAP_OK(bad_pairs == 0 && in_range >= 20 && (bins >> HK_PD_BIN_CG & ((1u << HK_N_PDHMM_CG_CONFIGS) - 1)) != 0,
               "%d column(s) per step, likelihoods of -598 to -634: %zu pairs (%zu in -631..-600, %zu -inf on the host), "
               "%zu over the tolerance, largest difference %.3g; the constant-gap form ran (bins 0x%x)",
               cols, b.n_pairs, in_range, rescued, bad_pairs, worst, bins);
    }
    if (!built) TAP_OK(0, "building and scoring the subnormal-range batch");
    hk_batch_free(&b);
}

/* Packing on several of the pool's threads gives the bytes of packing on one
 * (a batch of more than 2048 reads per part). */
static void test_parallel_pack(void)
{
    hk_batch_t b;
    hk_batch_init(&b);
    for (int cs = 0; cs < 2500; cs++)
        if (random_region(&b, cs % 5 == 0 ? 1 : cs)) { TAP_OK(0, "building the packing batch"); return; }
    b.pdhmm = 1;
    hk_plan_limits lim;
    lim.in_bytes = lim.min_in_bytes = (size_t)1 << 28;
    lim.pairs = lim.min_pairs = 1u << 22;
    lim.items = 1u << 22;
    lim.cells = ~0ull;
    hk_chunk one, many;
    std::vector<unsigned char> a((size_t)1 << 26), c((size_t)1 << 26);
    std::vector<uint64_t> da, dc;
    const bool planned = !hk_chunk_plan(&b, &lim, 0, 0, b.n_reads, &one) && one.r1 == b.n_reads;
    many = one;
    hk_pd_chunk_pack(&b, &one, a.data(), &da, nullptr);
    {
        hk_pool pool(3);
        hk_pd_chunk_pack(&b, &many, c.data(), &dc, &pool);
    }
    TAP_OK(planned && one.in_bytes <= a.size() && !memcmp(&one, &many, sizeof one) &&
           !memcmp(a.data(), c.data(), one.in_bytes) && da == dc,
           "packing %zu reads on 4 threads gives the bytes of packing on one (%zu bytes, %u items, %zu degenerate pairs)",
           b.n_reads, one.in_bytes, one.n_items, da.size());
    hk_batch_free(&b);
}

int main(void)
{
    test_parallel_pack();
    test_subnormal_range();
    {   /* the code words' match masks against the emission rule, every base and PD byte */
        size_t wrong = 0;
        for (uint8_t hb = 0; hb < 2 * HK_BASE_LOWER; hb++)
            for (unsigned p = 0; p < 256; p++) {
                const uint8_t pd = (uint8_t)p;
                uint32_t code;
                hk_pd_codes(&hb, &pd, 1, &code);
                for (uint8_t rc = 0; rc < 2 * HK_BASE_LOWER; rc++)
                    wrong += (code >> rc & 1) != (uint32_t)hk_pdhmm_matches(rc, hb, pd);
            }
        TAP_OK(wrong == 0, "code words: the match mask of every base and PD byte is the emission rule's (%zu wrong)",
               wrong);
    }
    const int regions = getenv("EMU_REGIONS") ? atoi(getenv("EMU_REGIONS")) : 30;
    {
        size_t pairs = 0, bad = 0, unwritten = 0;
        double worst = 0, worst_normal = 0;     /* all pairs; those above -600 */
        unsigned bins = 0;                      /* a bit per bin that ran */
        static_assert(HK_PD_BINS <= 32, "the bins fit the bit mask");
        for (int cs = 0; cs < regions; cs++) {
            hk_batch_t b;
            hk_batch_init(&b);
            if (random_region(&b, cs)) { TAP_OK(0, "building region %d", cs); return TAP_DONE(); }
            b.pdhmm = 1;
            std::vector<double> lk;
            if (hk_pdhmm_score_batch(&b, 1) || emulate(&b, lk, &bins)) {
                TAP_OK(0, "scoring region %d", cs);
                return TAP_DONE();
            }
            for (size_t i = 0; i < b.n_pairs; i++) {
                const double g = lk[i], f = b.lk[i];
                pairs++;
                if (g == 1234.5) { unwritten++; continue; }
                if (!std::isfinite(g) || !std::isfinite(f)) {
                    bad += !(g == f || (g == -INFINITY && f < -600));   /* -inf: the engine rescues */
                    continue;
                }
                const double d = fabs(g - f);
                worst = std::max(worst, d);
                if (f >= -600) worst_normal = std::max(worst_normal, d);
                bad += !(d <= pd_tolerance(f));
                if (!(d <= pd_tolerance(f))) printf("# region %d pair %zu: emulated %.12g, CPU %.12g\n", cs, i, g, f);
            }
            hk_batch_free(&b);
        }
        TAP_OK(bad == 0 && unwritten == 0, "%zu pairs, %zu over the tolerance, largest "
               "difference %.3g (%.3g above -600), %zu unwritten", pairs, bad, worst, worst_normal, unwritten);
        TAP_OK((bins >> HK_PD_BIN_MULTI & 3) == 3, "the multi-tile kernel and its SAFE form ran (bins 0x%x)", bins);
        const unsigned cg_bins = bins >> HK_PD_BIN_CG & ((1u << HK_N_PDHMM_CG_CONFIGS) - 1);
        TAP_OK(__builtin_popcount(cg_bins) >= HK_N_PDHMM_CG_CONFIGS / 2, "the constant-gap form ran in %d of its "
               "%d configurations (bins 0x%x)", __builtin_popcount(cg_bins),
               HK_N_PDHMM_CG_CONFIGS, bins);
    }
    return TAP_DONE();
}
