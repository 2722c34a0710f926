/* hk_pd_pack.cu - a PDHMM chunk on the host: the haplotypes' code words,
 * the reads' kernel forms and bins, packing the chunk's input block and
 * launching its bins' kernels (device/hk_kernel_pdhmm.cu). See
 * hk_pdhmm_internal.h. */
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "hk_pdhmm_internal.h"
#include "hk_pdhmm.h"           /* hk_pdhmm_matches: the emission rule, written once */

/* Whether reads of constant gap qualities go to the CG form; HK_PD_CG=0 (a
 * tuning knob) sends them to the per-row kernels. */

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
    return hk_align16((r1 - r0 + 1) * 4) + hk_align16((h1 - h0 + 1) * 4) + 5 * hk_align16(rp) + hk_align16(hp * 4);
}

/* The configuration of a read of length m: the first entry whose tile
 * holds it, or -1 (the multi-tile kernel). */
static int pd_pick(uint32_t m)
{
    for (int c = 0; c < HK_N_PDHMM_CONFIGS; c++)
        if (m <= (uint32_t)hk_pdhmm_rows(c)) return c;
    return -1;
}

/* Column buckets per bin, longest items first, PD_COLS_PER_BUCKET wide:
 * the items of a warp run as many steps as its longest, so the narrower the
 * buckets the less a warp idles (a model of the NA12878-like mix: 16 of 64
 * columns leave 1-2 % fewer idle steps than 64). */
enum { PD_COLS_PER_BUCKET = 16, PD_NB = HK_ITEM_COLS / PD_COLS_PER_BUCKET };
enum { PD_BIN_CG = HK_PD_BIN_CG, PD_BIN_MULTI = HK_PD_BIN_MULTI, PD_BIN_SAFE = HK_PD_BIN_SAFE, PD_BINS = HK_PD_BINS };
static_assert(PD_BINS <= HK_CHUNK_BINS, "a chunk has room for the PDHMM bins");

static const double pd_err[256] = {   /* err(q): the kernels' values */
#include "hk_err_values.inc"
};

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
static pd_form pd_read_form(const hk_batch_t *b, size_t r, uint32_t m, bool cg)
{
    const hk_read_gaps_t g = b->read_gaps[r];
    if (g.constant && cg) {
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
        const pd_form form = pd_read_form(b, r, m, ch->pd_cg);
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
    ch->off_hap_off2 = ch->off_hbase2 = 0;             /* no padded copy */
    ch->off_gaps = 0;
    ch->in_bytes = ch->h2d_bytes = o;
    ch->pad_haps = 0;
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
    for (size_t i = 0; i <= nh; i++) ho[i] = (uint32_t)(b->hap_off[ch->h0 + i] - hbase0);
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
    for (int k = HK_N_PDHMM_CG_CONFIGS - 1; k >= 0; k--) {   /* longest tiles first */
        const uint32_t b0 = ch->cfg_begin[PD_BIN_CG + k], n = ch->cfg_end[PD_BIN_CG + k] - b0;
        if (n && (e = hk_launch_pdhmm_cg(k, c, d_items + b0, n, lane[li++ % nl])) != cudaSuccess) return e;
    }
    for (int k = HK_N_PDHMM_CONFIGS - 1; k >= 0; k--) {
        const uint32_t b0 = ch->cfg_begin[k], n = ch->cfg_end[k] - b0;
        if (!n) continue;
        if ((e = hk_launch_pdhmm(k, c, d_items + b0, n, lane[li++ % nl])) != cudaSuccess) return e;
    }
    if ((e = hk_side_join(st, xs, what)) != cudaSuccess) return e;
    return e;
}
