/* hk_pdhmm.cu - the PDHMM kernel family (hk_pdhmm.cuh): one single-tile
 * kernel per entry of HK_PDHMM_CONFIGS and HK_PDHMM_MULTI's multi-tile
 * kernel; the code words of the haplotypes; packing a PDHMM chunk and
 * launching its kernels (host). See hk_pdhmm_internal.h. */
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "hk_pdhmm.cuh"
#include "hk_pdhmm_pair.cuh"
#include "hk_pdhmm.h"           /* hk_pdhmm_matches: the emission rule, written once */

/* ---- kernels: a single-tile kernel per HK_PDHMM_CONFIGS entry, and the
 * multi-tile kernel of HK_PDHMM_MULTI for reads longer than every tile ---- */

/* Blocks per multiprocessor the registers must allow: about 20 registers per
 * row plus 60 for the rest; 4 rows in 128 registers spill, so 3 blocks (168
 * registers) up to 4 rows, else 2 (255); the multi-tile kernels (scratch,
 * more state) 2 whatever K. SHC (the emission coefficients in shared memory,
 * about 13 registers per row): HK_PD_SHC_MINB blocks. */
#ifndef HK_PD_SHC_MINB
#define HK_PD_SHC_MINB 3
#endif
#ifndef HK_PD_SHC_MINB4
#define HK_PD_SHC_MINB4 4
#endif
/* CG (constant gaps), without limits (ptxas, sm_90): with SHC 166 registers
 * at 6 rows, 192-194 at 8, 224 at 10, 241 at 12; without, 202 at 6 and
 * 251-255 from 8 on. In 168 (3 blocks) the SHC form spills 12-32 bytes at 8
 * rows and 300 or more at 10; so 3 blocks up to 8 rows with SHC, else 2. */
#ifndef HK_PD_CG_MINB
#define HK_PD_CG_MINB 3
#endif
template <int K, bool MULTI, bool SHC, bool CG> constexpr int hk_pd_min_blocks()
{
    return CG ? (SHC && K <= 8 ? HK_PD_CG_MINB : 2)
              : SHC && !MULTI && K <= 4 ? HK_PD_SHC_MINB4 : SHC && !MULTI && K <= 6 ? HK_PD_SHC_MINB : K <= 4 && !MULTI ? 3 : 2;
}

template <int P, int K, bool MULTI, bool SAFE, bool SHC, bool CG>
__global__ void __launch_bounds__(HK_BLOCK_THREADS, (hk_pd_min_blocks<K, MULTI, SHC, CG>()))
hk_pd_kernel(hk_pd_dev c, const hk_item *items, uint32_t n_items, unsigned char *scratch, size_t stride)
{
    hk_pd_fwd<P, K, MULTI, SAFE, SHC, CG>::body(c, items, n_items, scratch, stride);
}

/* Whether the single-tile kernels of up to 6 rows per lane keep the emission
 * coefficients in shared memory (SHC, hk_pdhmm.cuh): HK_PD_SHC=0 or 1 in the
 * environment (for measurements; read once), else HK_PD_SHC_DEFAULT. */
/* A 0/1 switch from the environment, read once into cache (else dflt). */
static int pd_env01(std::atomic<int> &cache, const char *name, int dflt)
{
    int v = cache.load(std::memory_order_relaxed);
    if (v < 0) {
        const char *e = getenv(name);
        v = e && !strcmp(e, "0") ? 0 : e && !strcmp(e, "1") ? 1 : dflt;
        cache.store(v, std::memory_order_relaxed);
    }
    return v;
}

static std::atomic<int> pd_shc{-1};
bool hk_pd_shc() { return pd_env01(pd_shc, "HK_PD_SHC", HK_PD_SHC_DEFAULT) != 0; }

template <int P, int K, bool MULTI, bool SAFE, bool SHC, bool CG = false>
static cudaError_t hk_pd_launch_form(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                     const hk_scratch *sc, cudaStream_t st)
{
    typedef hk_pd_fwd<P, K, MULTI, SAFE, SHC, CG> F;
    if (n_items == 0) return cudaSuccess;
    auto fn = hk_pd_kernel<P, K, MULTI, SAFE, SHC, CG>;
    if (F::SMEM_BYTES > 48 * 1024) {    /* once per device (devices 0..63), not at every launch */
        static std::atomic<uint64_t> set_on{0};
        int dev = 0;
        cudaError_t e = cudaGetDevice(&dev);
        if (e != cudaSuccess) return e;
        const uint64_t bit = dev < 64 ? 1ull << dev : 0;
        if (!(set_on.load(std::memory_order_acquire) & bit)) {
            e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)F::SMEM_BYTES);
            if (e != cudaSuccess) return e;
            set_on.fetch_or(bit, std::memory_order_acq_rel);
        }
    }
    uint64_t blocks = ((uint64_t)n_items + F::GROUPS - 1) / F::GROUPS;
    if (blocks > 0x7fffffffu) blocks = 0x7fffffffu;
    unsigned char *scratch = nullptr;
    size_t stride = 0;
    if (MULTI) {                       /* one scratch row per group: the grid is capped */
        if (!sc || sc->groups < F::GROUPS) return cudaErrorInvalidValue;
        blocks = std::min<uint64_t>(blocks, sc->groups / F::GROUPS);
        scratch = static_cast<unsigned char *>(sc->ptr);
        stride = sc->cols * hk_double_scratch_col_bytes();
    }
    fn<<<(unsigned)blocks, HK_BLOCK_THREADS, F::SMEM_BYTES, st>>>(*c, items, n_items, scratch, stride);
    return cudaGetLastError();
}

template <int P, int K, bool MULTI, bool SAFE = false>
static cudaError_t hk_pd_launch(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                const hk_scratch *sc, cudaStream_t st)
{
    if constexpr (K <= 6 && !MULTI)    /* SHC where it fits 3-4 blocks (hk_pd_shc_default) */
        if (hk_pd_shc()) return hk_pd_launch_form<P, K, MULTI, SAFE, true>(c, items, n_items, sc, st);
    return hk_pd_launch_form<P, K, MULTI, SAFE, false>(c, items, n_items, sc, st);
}

/* The constant-gap form (CG, hk_pdhmm.cuh); its emission coefficients in
 * shared memory or registers as HK_PD_CG_SHC says (0 or 1; read once),
 * else HK_PD_CG_SHC_DEFAULT. */
#ifndef HK_PD_CG_SHC_DEFAULT
#define HK_PD_CG_SHC_DEFAULT 1
#endif
static std::atomic<int> pd_cg_shc{-1}, pd_cg_on{-1};
bool hk_pd_cg(void) { return pd_env01(pd_cg_on, "HK_PD_CG", 1) != 0; }
void hk_pd_set_cg(bool on) { pd_cg_on.store(on ? 1 : 0, std::memory_order_relaxed); }

template <int P, int K>
static cudaError_t hk_pd_cg_launch(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                   const hk_scratch *sc, cudaStream_t st)
{
    if (pd_env01(pd_cg_shc, "HK_PD_CG_SHC", HK_PD_CG_SHC_DEFAULT))
        return hk_pd_launch_form<P, K, false, false, true, true>(c, items, n_items, sc, st);
    return hk_pd_launch_form<P, K, false, false, false, true>(c, items, n_items, sc, st);
}

/* Two columns need more registers: 2 blocks (255) whatever K (4 rows in 168
 * spill). */
template <int P, int K>
__global__ void __launch_bounds__(HK_BLOCK_THREADS, 2)
hk_pd_pair_kernel(hk_pd_dev c, const hk_item *items, uint32_t n_items)
{
    hk_pd_pair<P, K>::body(c, items, n_items);
}

/* Eight rows per lane do not fit two columns in 255 registers (they spill
 * in the loop): those configurations keep one column per step. */
template <int P, int K>
static cudaError_t hk_pd_pair_launch(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                     const hk_scratch *sc, cudaStream_t st)
{
    if constexpr (K >= 8) return hk_pd_launch<P, K, false>(c, items, n_items, sc, st);
    typedef hk_pd_pair<P, K < 8 ? K : 6> F;
    if (n_items == 0) return cudaSuccess;
    auto fn = hk_pd_pair_kernel<P, K < 8 ? K : 6>;
    if (F::SMEM_BYTES > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)F::SMEM_BYTES);
        if (e != cudaSuccess) return e;
    }
    uint64_t blocks = ((uint64_t)n_items + F::GROUPS - 1) / F::GROUPS;
    if (blocks > 0x7fffffffu) blocks = 0x7fffffffu;
    fn<<<(unsigned)blocks, HK_BLOCK_THREADS, F::SMEM_BYTES, st>>>(*c, items, n_items);
    return cudaGetLastError();
}

typedef cudaError_t (*hk_pd_fn)(const hk_pd_dev *, const hk_item *, uint32_t, const hk_scratch *, cudaStream_t);
#define HK_PD_CFG_P(P, K, MODES) P,
#define HK_PD_CFG_K(P, K, MODES) K,
#define HK_PD_CFG_MODES(P, K, MODES) MODES,
static constexpr int pd_p[] = { HK_PDHMM_CONFIGS(HK_PD_CFG_P) };
static constexpr int pd_k[] = { HK_PDHMM_CONFIGS(HK_PD_CFG_K) };
static constexpr int pd_modes[] = { HK_PDHMM_CONFIGS(HK_PD_CFG_MODES) };
#define HK_PD_FN(P, K, MODES) hk_pd_launch<P, K, false>,
static const hk_pd_fn pd_fn[] = { HK_PDHMM_CONFIGS(HK_PD_FN) };
#define HK_PD_PAIR_FN(P, K, MODES) hk_pd_pair_launch<P, K>,
static const hk_pd_fn pd_pair_fn[] = { HK_PDHMM_CONFIGS(HK_PD_PAIR_FN) };
#define HK_PD_CG_P(P, K) P,
#define HK_PD_CG_K(P, K) K,
static constexpr int pd_cg_p[] = { HK_PDHMM_CG_CONFIGS(HK_PD_CG_P) };
static constexpr int pd_cg_k[] = { HK_PDHMM_CG_CONFIGS(HK_PD_CG_K) };
#define HK_PD_CG_FN(P, K) hk_pd_cg_launch<P, K>,
static const hk_pd_fn pd_cg_fn[] = { HK_PDHMM_CG_CONFIGS(HK_PD_CG_FN) };
#define HK_PD_MULTI_LAUNCH(P, K) safe ? hk_pd_launch<P, K, true, true>(c, items, n_items, sc, st) \
                                      : hk_pd_launch<P, K, true, false>(c, items, n_items, sc, st)

int hk_pdhmm_rows(int cfg) { return pd_p[cfg] * pd_k[cfg]; }
int hk_pdhmm_group(int cfg) { return pd_p[cfg]; }
int hk_pdhmm_cg_rows(int cfg) { return pd_cg_p[cfg] * pd_cg_k[cfg]; }

extern "C" int hk_cuda_pdhmm_cg_configs(int *p, int *k, int max)
{
    for (int c = 0; c < HK_N_PDHMM_CG_CONFIGS && c < max; c++) {
        p[c] = pd_cg_p[c];
        k[c] = pd_cg_k[c];
    }
    return HK_N_PDHMM_CG_CONFIGS;
}

cudaError_t hk_launch_pdhmm_cg(int cfg, const hk_pd_dev *c, const hk_item *items, uint32_t n_items, cudaStream_t st)
{
    if (cfg < 0 || cfg >= HK_N_PDHMM_CG_CONFIGS) return cudaErrorInvalidValue;
    return pd_cg_fn[cfg](c, items, n_items, nullptr, st);
}

cudaError_t hk_launch_pdhmm(int cfg, const hk_pd_dev *c, const hk_item *items, uint32_t n_items, cudaStream_t st)
{
    if (cfg < 0 || cfg >= HK_N_PDHMM_CONFIGS) return cudaErrorInvalidValue;
    return pd_fn[cfg](c, items, n_items, nullptr, st);
}

cudaError_t hk_launch_pdhmm_pair(int cfg, const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                 cudaStream_t st)
{
    if (cfg < 0 || cfg >= HK_N_PDHMM_CONFIGS) return cudaErrorInvalidValue;
    return pd_pair_fn[cfg](c, items, n_items, nullptr, st);
}

cudaError_t hk_launch_pdhmm_multi(const hk_pd_dev *c, const hk_item *items, uint32_t n_items,
                                  const hk_scratch *sc, bool safe, cudaStream_t st)
{
    return HK_PDHMM_MULTI(HK_PD_MULTI_LAUNCH);
}

/* ---- code words ---- */

/* The state after a column with PD byte p (SPEC 1b: AFTER lasts one column,
 * DEL_START opens a span, DEL_END closes it and wins). */
static inline int pd_next(int st, uint8_t p)
{
    if (st == HK_PDS_AFTER) st = HK_PDS_NORMAL;
    if (p & HK_PD_DEL_START) st = HK_PDS_INSIDE;
    if (p & HK_PD_DEL_END) st = HK_PDS_AFTER;
    return st;
}

/* The match masks, from hk_pdhmm_matches (the emission rule, written once):
 * of a haplotype code without alternatives, and the read codes an SNP's
 * alternatives (the PD byte's A C G T bits) add. 27M positions of an
 * NA12878-like batch took about 0.4 s with ten calls per position. */
static uint32_t pd_base_mask[2 * HK_BASE_LOWER], pd_alt_mask[16];
static std::once_flag pd_masks_once;
static void pd_masks_init()
{
    for (uint8_t hb = 0; hb < 2 * HK_BASE_LOWER; hb++)
        for (uint8_t rc = 0; rc < 2 * HK_BASE_LOWER; rc++)
            pd_base_mask[hb] |= (uint32_t)hk_pdhmm_matches(rc, hb, 0) << rc;
    for (unsigned alts = 0; alts < 16; alts++)
        for (uint8_t rc = 0; rc < 2 * HK_BASE_LOWER; rc++)   /* at an 'n', less what 'n' matches itself */
            if (hk_pdhmm_matches(rc, HK_BASE_LOWER + HK_BASE_N, (uint8_t)(HK_PD_SNP | alts << 3)) &&
                !hk_pdhmm_matches(rc, HK_BASE_LOWER + HK_BASE_N, 0))
                pd_alt_mask[alts] |= 1u << rc;
}

void hk_pd_codes(const uint8_t *hb, const uint8_t *pd, uint32_t n, uint32_t *out)
{
    std::call_once(pd_masks_once, pd_masks_init);
    /* row 1 starts NORMAL; the end state of a row is what every later row
     * starts with (after the first flagged column the states agree, so it is
     * the same at the end of every row) */
    int st = HK_PDS_NORMAL;
    for (uint32_t j = 0; j < n; j++) {
        const uint32_t mask = pd_base_mask[hb[j] < 2 * HK_BASE_LOWER ? hb[j] : HK_BASE_N] |
                              (pd[j] & HK_PD_SNP ? pd_alt_mask[(pd[j] >> 3) & 15] : 0u);
        out[j] = mask | (uint32_t)st << HK_PDC_S1_SHIFT | (pd[j] & HK_PD_DEL_END ? HK_PDC_DEL_END : 0u);
        st = pd_next(st, pd[j]);
    }
    for (uint32_t j = 0; j < n; j++) {
        const int s1 = (int)(out[j] >> HK_PDC_S1_SHIFT) & 3;
        out[j] |= (uint32_t)st << HK_PDC_S2_SHIFT;
        const int a1 = pd_next(s1, pd[j]), a2 = pd_next(st, pd[j]);
        /* the branch values are read at DEL_END and AFTER columns, and carried
         * there from the columns before them while INSIDE */
        if (s1 != HK_PDS_NORMAL || st != HK_PDS_NORMAL || (pd[j] & HK_PD_DEL_END) ||
            a1 == HK_PDS_INSIDE || a2 == HK_PDS_INSIDE)
            out[j] |= HK_PDC_SLOW;
        st = a2;
    }
    if (n) out[0] |= HK_PDC_FIRST;
}

/* ---- packing ---- */

size_t hk_pd_chunk_data_bytes(const hk_batch_t *b, size_t r0, size_t r1, size_t h0, size_t h1)
{
    const size_t rp = b->read_off[r1] - b->read_off[r0];
    const size_t hp = b->hap_off[h1] - b->hap_off[h0];
    return hk_align16((r1 - r0 + 1) * 4) + 2 * hk_align16((h1 - h0 + 1) * 4) + 5 * hk_align16(rp) +
           hk_align16(hp * 4) + hk_align16((hp + (h1 - h0)) * 4);
}

static std::atomic<int> pd_columns{0};    /* 0: not read yet */

int hk_pd_columns(void)
{
    int cols = pd_columns.load(std::memory_order_relaxed);
    if (cols == 0) {
        const char *v = getenv("HK_PD_COLUMNS");
        cols = v && !strcmp(v, "1") ? 1 : v && !strcmp(v, "2") ? 2 : HK_PD_COLUMNS_DEFAULT;
        pd_columns.store(cols, std::memory_order_relaxed);
    }
    return cols;
}

void hk_pd_set_columns(int cols) { pd_columns.store(cols == 1 ? 1 : 2, std::memory_order_relaxed); }

/* The configuration of a read of length m: the first of the kernel form's
 * entries whose tile holds it, or -1 (the multi-tile kernel). */
static int pd_pick(uint32_t m)
{
    const int mode = hk_pd_columns() == 1 ? HK_PD_ONE : HK_PD_TWO;
    for (int c = 0; c < HK_N_PDHMM_CONFIGS; c++)
        if ((pd_modes[c] & mode) && m <= (uint32_t)hk_pdhmm_rows(c)) return c;
    return -1;
}

/* Column buckets per bin, longest items first, PD_COLS_PER_BUCKET wide:
 * the items of a warp run as many steps as its longest, so the narrower the
 * buckets the less a warp idles (a model of the NA12878-like mix: 16 of 64
 * columns leave 1-2 % fewer idle steps than 64). */
enum { PD_COLS_PER_BUCKET = 16, PD_NB = HK_ITEM_COLS / PD_COLS_PER_BUCKET };
enum { PD_BIN_CG = HK_PD_BIN_CG, PD_BIN_MULTI = HK_PD_BIN_MULTI, PD_BIN_SAFE = HK_PD_BIN_SAFE, PD_BINS = HK_PD_BINS };
static_assert(PD_BINS <= HK_CHUNK_BINS, "a chunk has room for the PDHMM bins");

static double pd_err[256];
static std::once_flag pd_err_once;

/* Whether a read has a row whose gap-open error probabilities sum to 1 or
 * more (match-to-match clamped to 0: Q0 on one, or Q3 or less on both): the
 * kernels' usual form divides by match-to-match. */
static bool pd_needs_safe(const uint8_t *ins, const uint8_t *del, uint32_t m)
{
    for (uint32_t i = 0; i < m; i++)       /* a margin: the borderline go to the SAFE form */
        if (pd_err[ins[i]] + pd_err[del[i]] >= 1.0 - 1e-9) return true;
    return false;
}

/* The kernel form of read r (length m): the SAFE multi-tile form, the
 * constant-gap form (hk_pdhmm.cuh, CG: gap qualities constant but for the
 * last row, match-to-match at least 1/2 on both, Phred at most 93 so that
 * I / mi stays below C * 2^31), or the per-row form. */
enum pd_form { PD_ROWS, PD_CONST, PD_SAFE };
static pd_form pd_read_form(const hk_batch_t *b, size_t r, uint32_t m)
{
    std::call_once(pd_err_once, [] { for (int q = 0; q < 256; q++) pd_err[q] = std::pow(10.0, -q / 10.0); });
    const hk_read_gaps_t g = b->read_gaps[r];
    if (g.constant && hk_pd_cg()) {
        const uint8_t qmax = std::max(std::max(g.ins, g.del), std::max(g.ins_last, g.del_last));
        if (qmax <= 93 && pd_err[g.ins] + pd_err[g.del] <= 0.5 && pd_err[g.ins_last] + pd_err[g.del_last] <= 0.5)
            return PD_CONST;
    }
    const uint64_t ro = b->read_off[r];
    return pd_needs_safe(b->read_i + ro, b->read_d + ro, m) ? PD_SAFE : PD_ROWS;
}

/* The CG configuration of a read of length m, or -1 (none holds it). */
static int pd_pick_cg(uint32_t m)
{
    for (int c = 0; c < HK_N_PDHMM_CG_CONFIGS; c++)
        if (m <= (uint32_t)hk_pdhmm_cg_rows(c)) return c;
    return -1;
}

/* Call emit(item, key) for every work item of chunk ch (haplotypes grouped as
 * hk_chunk.cu does: up to HK_MAX_ITEM_HAPS and HK_ITEM_COLS columns, one per
 * item for the multi-tile kernel); pairs of an empty sequence to degen. */
/* Call emit(item, key) for every work item of reads [ra, rb) of chunk ch,
 * in read order (haplotypes grouped as hk_chunk.cu does: up to
 * HK_MAX_ITEM_HAPS and HK_ITEM_COLS columns, one per item for the multi-tile
 * kernel); the pairs of an empty sequence go to degen. */
template <typename F>
static void pd_walk(const hk_batch_t *b, const hk_chunk *ch, size_t ra, size_t rb, std::vector<uint64_t> *degen,
                    F &&emit)
{
    size_t lo = ch->reg0, hi = ch->reg1;               /* the region of read ra */
    while (hi - lo > 1) {
        const size_t mid = (lo + hi) / 2;
        if (b->regions[mid].read0 <= ra) lo = mid; else hi = mid;
    }
    size_t g = lo;
    for (size_t r = ra; r < rb; r++) {
        while (r >= (size_t)b->regions[g].read0 + b->regions[g].n_reads) g++;
        const hk_region_t *rg = &b->regions[g];
        const uint32_t m = hk_batch_read_len(b, r);
        const uint64_t out0 = rg->pair0 + (uint64_t)(r - rg->read0) * rg->n_haps - ch->pair0;
        if (m == 0) {
            for (uint32_t h = 0; h < rg->n_haps; h++) degen->push_back(out0 + h);
            continue;
        }
        const pd_form form = pd_read_form(b, r, m);
        const bool safe = form == PD_SAFE;
        const int cg = form == PD_CONST ? pd_pick_cg(m) : -1;
        const int cfg = safe || cg >= 0 ? -1 : pd_pick(m);
        const bool multi = safe || (cg < 0 && cfg < 0);   /* the multi-tile kernels: one haplotype per item */
        const uint32_t bin = safe ? (uint32_t)PD_BIN_SAFE : multi ? (uint32_t)PD_BIN_MULTI
                           : cg >= 0 ? (uint32_t)(PD_BIN_CG + cg) : (uint32_t)cfg;
        const uint64_t *hoff = b->hap_off + rg->hap0;
        for (uint32_t h = 0; h < rg->n_haps;) {
            uint32_t nhp = 0;
            uint64_t cols = 0;
            while (h + nhp < rg->n_haps && nhp < HK_MAX_ITEM_HAPS && (nhp == 0 || !multi)) {
                const uint64_t n = hoff[h + nhp + 1] - hoff[h + nhp];
                if (n == 0 || (nhp > 0 && cols + n > HK_ITEM_COLS)) break;
                cols += n;
                nhp++;
            }
            if (nhp == 0) {                            /* an empty haplotype */
                degen->push_back(out0 + h);
                h++;
                continue;
            }
            hk_item it;
            it.read = (uint32_t)(r - ch->r0);
            it.hap = (uint32_t)(rg->hap0 + h - ch->h0);
            it.out = (uint32_t)(out0 + h);
            it.n_haps = nhp;
            emit(it, bin * PD_NB + (PD_NB - 1 - (uint32_t)std::min<uint64_t>(cols / PD_COLS_PER_BUCKET, PD_NB - 1)));
            h += nhp;
        }
    }
}

/* The offsets of a chunk's blocks in its input block. */
static void pd_layout(hk_chunk *ch, size_t n_items, size_t nr, size_t nh, size_t rp, size_t hp)
{
    size_t o = hk_align16(n_items * sizeof(hk_item));
    ch->off_read_off = o;
    o += hk_align16((nr + 1) * 4);
    ch->off_hap_off = o;
    o += hk_align16((nh + 1) * 4);
    for (int k = 0; k < 5; k++) { ch->off_read[k] = o; o += hk_align16(rp); }
    ch->off_hbase = o;                                 /* the code words */
    o += hk_align16(hp * 4);
    ch->off_hap_off2 = o;
    o += hk_align16((nh + 1) * 4);
    ch->off_hbase2 = o;                                /* the padded copy: two-column kernels */
    o += hk_align16((hp + nh) * 4);
    ch->off_gaps = 0;
    ch->in_bytes = ch->h2d_bytes = o;
    ch->pad_haps = 0;                                  /* the host writes both copies */
}

/* As hk_chunk_pack: the reads split among a few of the pool's threads, which
 * count their items by key, then write them straight to their places; the
 * code words of the haplotypes split the same way. */
void hk_pd_chunk_pack(const hk_batch_t *b, hk_chunk *ch, unsigned char *in,
                      std::vector<uint64_t> *degenerate, hk_pool *pool)
{
    const int nbins = PD_BINS;
    const size_t nkeys = (size_t)nbins * PD_NB;
    const size_t nr = ch->r1 - ch->r0, nh = ch->h1 - ch->h0;
    const unsigned nt = pool ? (unsigned)std::min<size_t>(nr / 2048 + 1, pool->size()) : 1;
    struct part {
        std::vector<uint32_t> count;                   /* items per key, then where the next goes */
        std::vector<uint64_t> degen;
        size_t n_items;
    };
    static thread_local std::vector<part> parts_tl;   /* kept from chunk to chunk */
    std::vector<part> &parts = parts_tl;
    if (parts.size() < nt) parts.resize(nt);
    hk_par_run(pool, nt, [&](unsigned t) {             /* pass 1: items per key, per part */
        part &pt = parts[t];
        pt.count.assign(nkeys, 0);
        pt.degen.clear();
        pt.n_items = 0;
        pd_walk(b, ch, ch->r0 + nr * t / nt, ch->r0 + nr * (t + 1) / nt, &pt.degen,
                [&](const hk_item &, uint32_t k) { pt.count[k]++; pt.n_items++; });
    });
    size_t n_items = 0;
    for (unsigned t = 0; t < nt; t++) n_items += parts[t].n_items;
    std::vector<uint32_t> start(nkeys + 1, 0);
    for (size_t k = 0; k < nkeys; k++) {
        uint32_t next = start[k];
        for (unsigned t = 0; t < nt; t++) {            /* counts become positions */
            const uint32_t c = parts[t].count[k];
            parts[t].count[k] = next;
            next += c;
        }
        start[k + 1] = next;
    }
    for (int c = 0; c < nbins; c++) {
        ch->cfg_begin[c] = start[(size_t)c * PD_NB];
        ch->cfg_end[c] = start[(size_t)(c + 1) * PD_NB];
    }
    ch->n_single = HK_N_PDHMM_CONFIGS;
    ch->n_bins = nbins;
    ch->long_bin = -1;
    ch->n_long = 0;
    ch->n_items = (uint32_t)n_items;
    ch->has_gap_rows = true;
    degenerate->clear();
    for (unsigned t = 0; t < nt; t++) degenerate->insert(degenerate->end(), parts[t].degen.begin(), parts[t].degen.end());
    const uint64_t rbase0 = b->read_off[ch->r0], hbase0 = b->hap_off[ch->h0];
    const size_t rp = b->read_off[ch->r1] - rbase0, hp = b->hap_off[ch->h1] - hbase0;
    pd_layout(ch, n_items, nr, nh, rp, hp);

    hk_item *items = reinterpret_cast<hk_item *>(in);
    uint32_t *ro = reinterpret_cast<uint32_t *>(in + ch->off_read_off);
    uint32_t *ho = reinterpret_cast<uint32_t *>(in + ch->off_hap_off);
    uint32_t *code = reinterpret_cast<uint32_t *>(in + ch->off_hbase);
    uint32_t *ho2 = reinterpret_cast<uint32_t *>(in + ch->off_hap_off2);
    uint32_t *code2 = reinterpret_cast<uint32_t *>(in + ch->off_hbase2);
    for (size_t i = 0, x2 = 0; i <= nh; i++) {        /* the padded copy's offsets: a running sum */
        ho[i] = (uint32_t)(b->hap_off[ch->h0 + i] - hbase0);
        ho2[i] = (uint32_t)x2;
        if (i < nh) x2 += (b->hap_off[ch->h0 + i + 1] - b->hap_off[ch->h0 + i] + 1) & ~(uint64_t)1;
    }
    const uint8_t *src[5] = { b->read_base, b->read_q, b->read_i, b->read_d, b->read_g };
    const unsigned nth = pool ? (unsigned)std::min<size_t>(nh / 64 + 1, pool->size()) : 1;
    hk_par_run(pool, std::max(nt, nth), [&](unsigned t) {   /* pass 2 */
        if (t < nt) {                                  /* items, read offsets and rows */
            uint32_t *pos = parts[t].count.data();
            std::vector<uint64_t> unused;
            const size_t ra = nr * t / nt, rb = nr * (t + 1) / nt;
            pd_walk(b, ch, ch->r0 + ra, ch->r0 + rb, &unused,
                    [&](const hk_item &it, uint32_t k) { items[pos[k]++] = it; });
            for (size_t i = ra; i < rb + (t + 1 == nt); i++) ro[i] = (uint32_t)(b->read_off[ch->r0 + i] - rbase0);
            const size_t pa = b->read_off[ch->r0 + ra] - rbase0, pb = b->read_off[ch->r0 + rb] - rbase0;
            for (int k = 0; k < 5; k++) memcpy(in + ch->off_read[k] + pa, src[k] + rbase0 + pa, pb - pa);
        }
        if (t < nth)                                   /* the code words */
            for (size_t i = nh * t / nth; i < nh * (t + 1) / nth; i++) {
                const size_t x = b->hap_off[ch->h0 + i];
                const uint32_t n = (uint32_t)(b->hap_off[ch->h0 + i + 1] - x);
                hk_pd_codes(b->hap_base + x, b->hap_pd + x, n, code + (x - hbase0));
                memcpy(code2 + ho2[i], code + (x - hbase0), n * sizeof *code);
                if (n & 1) code2[ho2[i] + n] = HK_PDC_PAD;
            }
    });
}

hk_pd_dev hk_pd_chunk_view(const hk_chunk *ch, unsigned char *d_in, double *d_lk)
{
    hk_pd_dev c;
    c.rbase = d_in + ch->off_read[0];
    c.rq = d_in + ch->off_read[1];
    c.ri = d_in + ch->off_read[2];
    c.rd = d_in + ch->off_read[3];
    c.rg = d_in + ch->off_read[4];
    c.read_off = reinterpret_cast<const uint32_t *>(d_in + ch->off_read_off);
    c.hap_off = reinterpret_cast<const uint32_t *>(d_in + ch->off_hap_off);
    c.hcode = reinterpret_cast<const uint32_t *>(d_in + ch->off_hbase);
    c.hap_off2 = reinterpret_cast<const uint32_t *>(d_in + ch->off_hap_off2);
    c.hcode2 = reinterpret_cast<const uint32_t *>(d_in + ch->off_hbase2);
    c.lk = d_lk;
    return c;
}

cudaError_t hk_pd_chunk_launch(const hk_chunk *ch, const hk_pd_dev *c, const hk_item *d_items,
                               const hk_scratch *sc, cudaStream_t st, const hk_side *xs,
                               const char **what)
{
    cudaError_t e = cudaSuccess;
    cudaStream_t lane[1 + HK_SIDE_STREAMS];
    int nl = 0;
    if ((e = hk_side_fork(st, xs, lane, &nl, what)) != cudaSuccess) return e;
    int li = 0;
    *what = "hk_cuda PDHMM multi-tile kernel launch";
    for (int k = PD_BIN_MULTI; k <= PD_BIN_SAFE; k++) {   /* they share the scratch: on st */
        const uint32_t b0 = ch->cfg_begin[k], n = ch->cfg_end[k] - b0;
        if (n) {
            if ((e = hk_launch_pdhmm_multi(c, d_items + b0, n, sc, k == PD_BIN_SAFE, st)) != cudaSuccess) return e;
            li = 1;
        }
    }
    *what = "hk_cuda PDHMM kernel launch";
    const bool one_column = hk_pd_columns() == 1;
    for (int k = HK_N_PDHMM_CG_CONFIGS - 1; k >= 0; k--) {   /* longest tiles first */
        const uint32_t b0 = ch->cfg_begin[PD_BIN_CG + k], n = ch->cfg_end[PD_BIN_CG + k] - b0;
        if (n && (e = hk_launch_pdhmm_cg(k, c, d_items + b0, n, lane[li++ % nl])) != cudaSuccess) return e;
    }
    for (int k = HK_N_PDHMM_CONFIGS - 1; k >= 0; k--) {
        const uint32_t b0 = ch->cfg_begin[k], n = ch->cfg_end[k] - b0;
        if (!n) continue;
        e = one_column ? hk_launch_pdhmm(k, c, d_items + b0, n, lane[li++ % nl])
                       : hk_launch_pdhmm_pair(k, c, d_items + b0, n, lane[li++ % nl]);
        if (e != cudaSuccess) return e;
    }
    if ((e = hk_side_join(st, xs, what)) != cudaSuccess) return e;
    return e;
}
