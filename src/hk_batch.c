/* hk_batch.c - see hk_batch.h. */
#include "hk_batch.h"
#include "hk_mem.h"
#include "hk_threads.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void hk_batch_init(hk_batch_t *b) { memset(b, 0, sizeof *b); }

/* Array p is about to move or go: tell the backend that holds it. */
static void release(const hk_batch_t *b, const void *p)
{
    if (p && b->on_release) b->on_release(b->release_ctx, p);
}

static void free_array(const hk_batch_t *b, void *p)
{
    release(b, p);
    free(p);
}

void hk_batch_set_no_text(hk_batch_t *b, int no_text)
{
    b->no_text = no_text;
    if (!no_text) return;
    free_array(b, b->read_text);
    free_array(b, b->hap_text);
    b->read_text = b->hap_text = NULL;
}

void hk_batch_clear(hk_batch_t *b)
{
    for (size_t i = 0; i < b->n_regions; i++) free(b->regions[i].name);
    b->n_regions = b->n_reads = b->n_haps = b->n_pairs = 0;
    b->n_read_pos = b->n_hap_pos = 0;
    b->cells = b->n_recomputed = 0;
    b->max_read_len = b->max_hap_len = b->max_region_haps = 0;
    b->max_region_hap_cols = 0;
    b->pdhmm = 0;
}

void hk_batch_free(hk_batch_t *b)
{
    if (!b) return;
    hk_batch_clear(b);
    void *arrays[] = { b->regions, b->read_off, b->read_line, b->read_gaps, b->hap_line, b->read_text,
                       b->read_base, b->read_q, b->read_i, b->read_d, b->read_g, b->hap_off, b->hap_text,
                       b->hap_base, b->hap_pd, b->lk, b->expected, b->pair_line };
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free_array(b, arrays[i]);
    const int no_text = b->no_text;
    void (*on_release)(void *, const void *) = b->on_release;
    void *release_ctx = b->release_ctx;
    hk_batch_init(b);
    b->no_text = no_text;
    b->on_release = on_release;
    b->release_ctx = release_ctx;
}

/* Grow each array of a group to hold need elements; capacities double. */
HK_RESULT_USED static hk_status_t grow(const hk_batch_t *b, void **p, size_t elem, size_t need, size_t cap)
{
    release(b, *p);
    void *q = hk_mem_realloc(*p, need > cap ? need * elem : cap * elem);
    if (!q) return HK_E_NOMEM;
    *p = q;
    return HK_OK;
}

static size_t next_cap(size_t need, size_t cap)
{
    if (need <= cap) return cap;
    size_t c = cap ? cap : 64;
    while (c < need) c *= 2;
    return c;
}

HK_RESULT_USED static hk_status_t reserve_read_pos(hk_batch_t *b, size_t add)
{
    size_t need = b->n_read_pos + add, cap = next_cap(need, b->m_read_pos);
    if (cap == b->m_read_pos) return HK_OK;
    if ((!b->no_text && grow(b, (void **)&b->read_text, 1, cap, cap)) || grow(b, (void **)&b->read_base, 1, cap, cap) ||
        grow(b, (void **)&b->read_q, 1, cap, cap) || grow(b, (void **)&b->read_i, 1, cap, cap) ||
        grow(b, (void **)&b->read_d, 1, cap, cap) || grow(b, (void **)&b->read_g, 1, cap, cap))
        return HK_E_NOMEM;
    b->m_read_pos = cap;
    return HK_OK;
}

HK_RESULT_USED static hk_status_t reserve_hap_pos(hk_batch_t *b, size_t add)
{
    size_t need = b->n_hap_pos + add, cap = next_cap(need, b->m_hap_pos);
    if (cap == b->m_hap_pos) return HK_OK;
    if ((!b->no_text && grow(b, (void **)&b->hap_text, 1, cap, cap)) || grow(b, (void **)&b->hap_base, 1, cap, cap) ||
        grow(b, (void **)&b->hap_pd, 1, cap, cap))
        return HK_E_NOMEM;
    b->m_hap_pos = cap;
    return HK_OK;
}

/* Room for n regions; for n pairs' results, expected values and lines. */
HK_RESULT_USED static hk_status_t reserve_regions(hk_batch_t *b, size_t n)
{
    const size_t cap = next_cap(n, b->m_regions);
    if (cap == b->m_regions) return HK_OK;
    if (grow(b, (void **)&b->regions, sizeof *b->regions, cap, cap)) return HK_E_NOMEM;
    b->m_regions = cap;
    return HK_OK;
}

HK_RESULT_USED static hk_status_t reserve_pairs(hk_batch_t *b, size_t n)
{
    const size_t cap = next_cap(n, b->m_pairs);
    if (cap == b->m_pairs) return HK_OK;
    if (grow(b, (void **)&b->lk, sizeof *b->lk, cap, cap) ||
        grow(b, (void **)&b->expected, sizeof *b->expected, cap, cap) ||
        grow(b, (void **)&b->pair_line, sizeof *b->pair_line, cap, cap))
        return HK_E_NOMEM;
    b->m_pairs = cap;
    return HK_OK;
}

hk_batch_caps_t hk_batch_caps(const hk_batch_t *b)
{
    return (hk_batch_caps_t){ .regions = b->m_regions, .reads = b->m_reads,
                              .read_pos = b->m_read_pos, .haps = b->m_haps,
                              .hap_pos = b->m_hap_pos, .pairs = b->m_pairs };
}

size_t hk_batch_bytes(const hk_batch_t *b)
{
    const size_t text = b->no_text ? 0 : 1;
    return b->m_read_pos * (5 + text) + b->m_hap_pos * (2 + text) +
           b->m_reads * (sizeof *b->read_off + sizeof *b->read_line + sizeof *b->read_gaps) +
           b->m_haps * (sizeof *b->hap_off + sizeof *b->hap_line) +
           b->m_pairs * (sizeof *b->lk + sizeof *b->expected + sizeof *b->pair_line) +
           b->m_regions * sizeof *b->regions;
}

#define TOUCH_MAX_ARRAYS 24   /* more than the batch's arrays */

typedef struct {
    char  *p[TOUCH_MAX_ARRAYS];
    size_t len[TOUCH_MAX_ARRAYS];
    int    n;
    size_t total;
    int    part, nparts;
} touch_job_t;

/* Write zeros over this part's share of the arrays' bytes. */
static void *touch_part(void *arg)
{
    const touch_job_t *j = arg;
    const size_t lo = j->total * (size_t)j->part / (size_t)j->nparts;
    const size_t hi = j->total * (size_t)(j->part + 1) / (size_t)j->nparts;
    size_t at = 0;
    for (int k = 0; k < j->n; at += j->len[k], k++) {
        const size_t a = lo > at ? lo - at : 0, e = hi - at < j->len[k] ? hi - at : j->len[k];
        if (hi <= at) break;
        if (a < e) memset(j->p[k] + a, 0, e - a);
    }
    return NULL;
}

hk_status_t hk_batch_prefault(hk_batch_t *b, const hk_batch_caps_t *caps, int nthreads)
{
    const hk_batch_caps_t had = hk_batch_caps(b);
    size_t cap;
    if (caps->read_pos > b->m_read_pos && reserve_read_pos(b, caps->read_pos - b->n_read_pos))
        return HK_E_NOMEM;
    if (caps->hap_pos > b->m_hap_pos && reserve_hap_pos(b, caps->hap_pos - b->n_hap_pos))
        return HK_E_NOMEM;
    if ((cap = caps->reads) > b->m_reads) {
        if (grow(b, (void **)&b->read_off, sizeof *b->read_off, b->m_reads, cap) ||
            grow(b, (void **)&b->read_line, sizeof *b->read_line, b->m_reads, cap) ||
            grow(b, (void **)&b->read_gaps, sizeof *b->read_gaps, b->m_reads, cap))
            return HK_E_NOMEM;
        b->m_reads = cap;
    }
    if ((cap = caps->haps) > b->m_haps) {
        if (grow(b, (void **)&b->hap_off, sizeof *b->hap_off, b->m_haps, cap) ||
            grow(b, (void **)&b->hap_line, sizeof *b->hap_line, b->m_haps, cap))
            return HK_E_NOMEM;
        b->m_haps = cap;
    }
    if ((cap = caps->pairs) > b->m_pairs) {
        if (grow(b, (void **)&b->lk, sizeof *b->lk, b->m_pairs, cap) ||
            grow(b, (void **)&b->expected, sizeof *b->expected, b->m_pairs, cap) ||
            grow(b, (void **)&b->pair_line, sizeof *b->pair_line, b->m_pairs, cap))
            return HK_E_NOMEM;
        b->m_pairs = cap;
    }
    if ((cap = caps->regions) > b->m_regions) {
        if (grow(b, (void **)&b->regions, sizeof *b->regions, b->m_regions, cap)) return HK_E_NOMEM;
        b->m_regions = cap;
    }
    /* the grown parts, which no one has written yet */
    touch_job_t job = { .n = 0 };
#define TOUCH(ptr, from, to, elem) do { if ((to) > (from)) { \
        job.p[job.n] = (char *)(ptr) + (from) * (elem); job.len[job.n] = ((to) - (from)) * (elem); \
        job.total += job.len[job.n++]; } } while (0)
    if (b->read_text) TOUCH(b->read_text, had.read_pos, b->m_read_pos, 1);
    TOUCH(b->read_base, had.read_pos, b->m_read_pos, 1);
    TOUCH(b->read_q, had.read_pos, b->m_read_pos, 1);
    TOUCH(b->read_i, had.read_pos, b->m_read_pos, 1);
    TOUCH(b->read_d, had.read_pos, b->m_read_pos, 1);
    TOUCH(b->read_g, had.read_pos, b->m_read_pos, 1);
    if (b->hap_text) TOUCH(b->hap_text, had.hap_pos, b->m_hap_pos, 1);
    TOUCH(b->hap_base, had.hap_pos, b->m_hap_pos, 1);
    TOUCH(b->hap_pd, had.hap_pos, b->m_hap_pos, 1);
    TOUCH(b->read_off, had.reads, b->m_reads, sizeof *b->read_off);
    TOUCH(b->read_line, had.reads, b->m_reads, sizeof *b->read_line);
    TOUCH(b->read_gaps, had.reads, b->m_reads, sizeof *b->read_gaps);
    TOUCH(b->hap_off, had.haps, b->m_haps, sizeof *b->hap_off);
    TOUCH(b->hap_line, had.haps, b->m_haps, sizeof *b->hap_line);
    TOUCH(b->lk, had.pairs, b->m_pairs, sizeof *b->lk);
    TOUCH(b->expected, had.pairs, b->m_pairs, sizeof *b->expected);
    TOUCH(b->pair_line, had.pairs, b->m_pairs, sizeof *b->pair_line);
#undef TOUCH
    if (nthreads > 16) nthreads = 16;
    if (nthreads < 1 || job.total < ((size_t)1 << 22)) nthreads = 1;
    touch_job_t jobs[16];
    for (int t = 0; t < nthreads; t++) { jobs[t] = job; jobs[t].part = t; jobs[t].nparts = nthreads; }
    hk_threads_run(touch_part, jobs, sizeof *jobs, nthreads);
    return HK_OK;
}

hk_status_t hk_batch_begin_region(hk_batch_t *b, const char *name, long line)
{
    if (reserve_regions(b, b->n_regions + 1)) return HK_E_NOMEM;
    hk_region_t *r = &b->regions[b->n_regions];
    memset(r, 0, sizeof *r);
    if (name && !(r->name = strdup(name))) return HK_E_NOMEM;
    r->line = line;
    r->input = b->input;
    r->read0 = (uint32_t)b->n_reads;
    r->hap0 = (uint32_t)b->n_haps;
    r->pair0 = b->n_pairs;
    b->n_regions++;
    return HK_OK;
}

/* Base codes by letter; -1 for bytes that are not bases. */
static int8_t base_code[256];
static pthread_once_t base_once = PTHREAD_ONCE_INIT;

static void gap_init(void);

static void base_init(void)
{
    gap_init();
    memset(base_code, -1, sizeof base_code);
    static const char letters[] = "ACGTN";
    for (int k = 0; k < 5; k++) {
        base_code[(unsigned char)letters[k]] = (int8_t)k;
        base_code[(unsigned char)letters[k] | 0x20] = (int8_t)k;   /* lower case */
    }
}

/* Letters to base codes (one branch-free pass; the error located after).
 * Returns the position of the first letter that is no base, or -1. */
static long encode_bases(const hk_seq_rules_t *rules, const char *in, uint8_t *code, uint32_t len)
{
    int8_t all = 0;
    for (uint32_t i = 0; i < len; i++) {
        int8_t c = base_code[(unsigned char)in[i]];
        all |= c;
        code[i] = (uint8_t)c;
    }
    if (all >= 0) return -1;
    for (uint32_t i = 0; i < len; i++) {
        if ((int8_t)code[i] >= 0) continue;
        if (!rules->unknown_as_n) return (long)i;
        code[i] = HK_BASE_N;
    }
    return -1;
}

/* A PDHMM batch's codes keep the case (HK_BASE_LOWER): its model compares
 * letters case-sensitively (SPEC 1b). Letters read as N stay N. */
static void keep_case(const char *text, uint8_t *code, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)text[i];
        if (c >= 'a' && base_code[c] >= 0) code[i] = (uint8_t)(base_code[c] + HK_BASE_LOWER);
    }
}

/* Phred+off characters (off 33: '!'..'~'; 0: raw values 0..93) to Phred
 * values raised to at least floor;
 * in and out may be the same array. Returns the position of the first bad
 * character, or -1. A bad character leaves out[i] = its value - off (mod 256),
 * above 93, which is how it is found after an in-place pass. */
static long decode_qual(const char *in, uint8_t *out, uint32_t len, int floor, uint8_t off)
{
    uint8_t worst = 0;
    for (uint32_t i = 0; i < len; i++) {
        uint8_t q = (uint8_t)((unsigned char)in[i] - off);
        worst = q > worst ? q : worst;
        out[i] = q < floor ? (uint8_t)floor : q;
    }
    if (worst <= 93) return -1;
    for (uint32_t i = 0; i < len; i++)
        if (out[i] > 93) return (long)i;
    return -1;
}

/* ---- the fast path: 16 positions at a time ----
 * GCC's vector extensions (SSE2 on x86-64, NEON on Arm; no -O3 needed).
 * Every read and haplotype of a run goes through here, once per byte of
 * sequence text, so it is the reader's largest cost per byte: the scalar
 * passes above cost about a cycle per byte and field, these a few cycles per
 * 16. The fast path only says "valid" or "look closer": on any doubt the
 * scalar passes run and find (and word) the error, so both paths give the
 * same batch and the same messages. */
typedef uint8_t v16u8 __attribute__((vector_size(16)));
typedef int8_t  v16s8 __attribute__((vector_size(16)));

static inline v16u8 load16(const void *p) { v16u8 v; memcpy(&v, p, sizeof v); return v; }
static inline void store16(void *p, v16u8 v) { memcpy(p, &v, sizeof v); }
static inline v16u8 splat16(uint8_t x) { return (v16u8){ 0 } + x; }
static inline v16u8 max16(v16u8 a, v16u8 b)
{
    const v16u8 gt = (v16u8)(a > b);
    return (a & gt) | (b & ~gt);
}
static inline int any16(v16u8 v)
{
    uint64_t w[2];
    memcpy(w, &v, sizeof w);
    return (w[0] | w[1]) != 0;
}

/* Codes of 16 letters; *bad gets 0xff where a byte is no base. */
static inline v16u8 encode16(v16u8 c, v16u8 *bad)
{
    const v16u8 lc = c | 0x20;   /* x | 0x20 == 'a' only for 'A' and 'a'; likewise c, g, t, n */
    const v16u8 a = (v16u8)(lc == 'a'), cc = (v16u8)(lc == 'c'), g = (v16u8)(lc == 'g'),
                t = (v16u8)(lc == 't'), n = (v16u8)(lc == 'n');
    *bad |= ~(a | cc | g | t | n);
    return (cc & 1) | (g & 2) | (t & 3) | (n & HK_BASE_N);
}

/* The next 16 (or, at the end, fewer) bytes of a field: the rest of a short
 * tail is filled with `fill`, a valid character, so that it raises no doubt. */
static inline v16u8 field16(const char *s, uint32_t at, uint32_t len, char fill)
{
    if (at + 16 <= len) return load16(s + at);
    uint8_t tmp[16];
    memset(tmp, fill, sizeof tmp);
    memcpy(tmp, s + at, len - at);
    return load16(tmp);
}

/* Where the 16 positions from `at` start: a last group that would run past
 * len is moved back to end there. It overlaps the group before, whose bytes
 * it computes and stores again, the same, so only a field under 16 bytes
 * goes through the byte copies of field16 and out16. Those copies (11 per
 * read) had cost a 36-base read half its time, a 101-base one a fifth. */
static inline uint32_t last16(uint32_t at, uint32_t len)
{
    return at + 16 > len && len >= 16 ? len - 16 : at;
}

static inline void out16(uint8_t *p, uint32_t at, uint32_t len, v16u8 v)
{
    if (at + 16 <= len) { store16(p + at, v); return; }
    uint8_t tmp[16];
    store16(tmp, v);
    memcpy(p + at, tmp, len - at);
}

/* The whole read in one pass: its bases copied and encoded, its qualities
 * decoded (base qualities raised to the floor). Returns 0 when every byte
 * is valid and no rule needs a closer look (a gap-open quality at or below
 * Q3, where match-to-match may be undefined; a gap-continuation quality of
 * Q0 that model.gcp does not replace), 1 otherwise. */
static int read_fast(const hk_seq_rules_t *rules, const char *const text[5], uint8_t *const out[6],
                     uint32_t len, int gap_rows, uint8_t off)
{
    const v16u8 floor = splat16((uint8_t)rules->min_base_quality), q33 = splat16(off);
    const char fill = (char)(off + 40);   /* Q40: raises no doubt */
    v16u8 bad = { 0 }, worst = { 0 }, gap_low = { 0 }, gcp_zero = { 0 };
    for (uint32_t at = 0; at < len; at += 16) {
        at = last16(at, len);
        const v16u8 bases = field16(text[0], at, len, 'A');
        if (out[0]) out16(out[0], at, len, bases);           /* read_text */
        out16(out[1], at, len, encode16(bases, &bad));       /* read_base */
        const v16u8 q = field16(text[1], at, len, fill) - q33;
        const v16u8 ins = field16(text[2], at, len, fill) - q33;
        const v16u8 del = field16(text[3], at, len, fill) - q33;
        const v16u8 gcp = field16(text[4], at, len, fill) - q33;
        worst = max16(max16(worst, q), max16(max16(ins, del), gcp));
        gap_low |= (v16u8)(ins <= 3) | (v16u8)(del <= 3);
        gcp_zero |= (v16u8)(gcp == 0);
        out16(out[2], at, len, max16(q, floor));
        if (!gap_rows) continue;
        out16(out[3], at, len, ins);
        out16(out[4], at, len, del);
        out16(out[5], at, len, gcp);
    }
    bad |= (v16u8)(worst > 93);
    if (!rules->pdhmm) bad |= gap_low;
    if (rules->gcp < 0 && !rules->pdhmm) bad |= gcp_zero;
    return any16(bad);
}

/* Whether a gap field's text holds one character at positions 0 .. len - 2
 * (the last may differ): the read's gap rows are then its summary alone. */
static int text_constant(const char *s, uint32_t len)
{
    if (len <= 2) return 1;
    const uint32_t n = len - 1;
    const v16u8 first = splat16((uint8_t)s[0]);
    v16u8 diff = { 0 };
    for (uint32_t at = 0; at < n; at += 16) {
        at = last16(at, n);
        diff |= field16(s, at, n, s[0]) ^ first;
    }
    return !any16(diff);
}

/* Whether p[0, n) all equal v. */
static int all_equal(const uint8_t *p, uint32_t n, uint8_t v)
{
    v16u8 diff = { 0 };
    const v16u8 vv = splat16(v);
    uint32_t at = 0;
    for (; at + 16 <= n; at += 16) diff |= load16(p + at) ^ vv;
    for (; at < n; at++) if (p[at] != v) return 0;
    return !any16(diff);
}

hk_status_t hk_batch_reserve_reads(hk_batch_t *b, size_t reads, size_t read_pos)
{
    size_t cap = next_cap(reads, b->m_reads);
    if (cap != b->m_reads) {
        if (grow(b, (void **)&b->read_off, sizeof *b->read_off, cap, cap) ||
            grow(b, (void **)&b->read_line, sizeof *b->read_line, cap, cap) ||
            grow(b, (void **)&b->read_gaps, sizeof *b->read_gaps, cap, cap))
            return HK_E_NOMEM;
        b->m_reads = cap;
    }
    return read_pos > b->n_read_pos && reserve_read_pos(b, read_pos - b->n_read_pos) ? HK_E_NOMEM : HK_OK;
}

hk_status_t hk_batch_append_read(hk_batch_t *b, uint32_t len, long line)
{
    if (len > HK_MAX_SEQ_LEN) return HK_E_INPUT;
    if (hk_batch_reserve_reads(b, b->n_reads + 2, b->n_read_pos + len)) return HK_E_NOMEM;
    if (b->n_reads == 0) b->read_off[0] = 0;
    b->read_line[b->n_reads] = line;
    b->n_read_pos += len;
    b->read_off[++b->n_reads] = b->n_read_pos;
    if (len > b->max_read_len) b->max_read_len = len;
    hk_batch_last_region(b)->n_reads++;
    return HK_OK;
}

hk_status_t hk_batch_reserve_haps(hk_batch_t *b, size_t haps, size_t hap_pos)
{
    size_t cap = next_cap(haps, b->m_haps);
    if (cap != b->m_haps) {
        if (grow(b, (void **)&b->hap_off, sizeof *b->hap_off, cap, cap) ||
            grow(b, (void **)&b->hap_line, sizeof *b->hap_line, cap, cap))
            return HK_E_NOMEM;
        b->m_haps = cap;
    }
    return hap_pos > b->n_hap_pos && reserve_hap_pos(b, hap_pos - b->n_hap_pos) ? HK_E_NOMEM : HK_OK;
}

hk_status_t hk_batch_append_hap(hk_batch_t *b, uint32_t len, long line)
{
    if (len > HK_MAX_SEQ_LEN) return HK_E_INPUT;
    if (hk_batch_reserve_haps(b, b->n_haps + 2, b->n_hap_pos + len)) return HK_E_NOMEM;
    if (b->n_haps == 0) b->hap_off[0] = 0;
    b->hap_line[b->n_haps] = line;
    b->n_hap_pos += len;
    b->hap_off[++b->n_haps] = b->n_hap_pos;
    if (len > b->max_hap_len) b->max_hap_len = len;
    hk_batch_last_region(b)->n_haps++;
    return HK_OK;
}

/* memcpy that accepts an empty array's NULL */
static void copy_n(void *to, const void *from, size_t n)
{
    if (n) memcpy(to, from, n);
}

hk_status_t hk_batch_append_batch(hk_batch_t *dst, const hk_batch_t *src)
{
    if (!src->n_regions) return HK_OK;
    if (!dst->no_text || (dst->n_regions && dst->pdhmm != src->pdhmm)) return HK_E_INVAL;
    const size_t r0 = dst->n_reads, h0 = dst->n_haps, p0 = dst->n_pairs, g0 = dst->n_regions;
    const uint64_t rp0 = dst->n_read_pos, hp0 = dst->n_hap_pos;
    /* room first, so that a failure leaves dst as it was */
    if (reserve_regions(dst, g0 + src->n_regions) || reserve_pairs(dst, p0 + src->n_pairs) ||
        hk_batch_reserve_reads(dst, r0 + src->n_reads + 1, rp0 + src->n_read_pos) ||
        hk_batch_reserve_haps(dst, h0 + src->n_haps + 1, hp0 + src->n_hap_pos))
        return HK_E_NOMEM;
    uint8_t *const rows_to[] = { dst->read_base, dst->read_q, dst->read_i, dst->read_d, dst->read_g };
    const uint8_t *const rows_from[] = { src->read_base, src->read_q, src->read_i, src->read_d, src->read_g };
    for (int f = 0; f < 5; f++) copy_n(rows_to[f] + rp0, rows_from[f], src->n_read_pos);
    copy_n(dst->read_gaps + r0, src->read_gaps, src->n_reads * sizeof *src->read_gaps);
    copy_n(dst->read_line + r0, src->read_line, src->n_reads * sizeof *src->read_line);
    dst->read_off[r0] = rp0;
    for (size_t k = 1; k <= src->n_reads; k++) dst->read_off[r0 + k] = rp0 + src->read_off[k];
    copy_n(dst->hap_base + hp0, src->hap_base, src->n_hap_pos);
    if (src->pdhmm) copy_n(dst->hap_pd + hp0, src->hap_pd, src->n_hap_pos);
    copy_n(dst->hap_line + h0, src->hap_line, src->n_haps * sizeof *src->hap_line);
    dst->hap_off[h0] = hp0;
    for (size_t k = 1; k <= src->n_haps; k++) dst->hap_off[h0 + k] = hp0 + src->hap_off[k];
    for (size_t g = 0; g < src->n_regions; g++) {
        hk_region_t *r = &dst->regions[g0 + g];
        *r = src->regions[g];
        r->name = NULL;   /* the names stay src's: a scorer does not read them */
        r->read0 += (uint32_t)r0;
        r->hap0 += (uint32_t)h0;
        r->pair0 += p0;
    }
    for (size_t i = 0; i < src->n_pairs; i++) dst->lk[p0 + i] = NAN;
    copy_n(dst->expected + p0, src->expected, src->n_pairs * sizeof *src->expected);
    copy_n(dst->pair_line + p0, src->pair_line, src->n_pairs * sizeof *src->pair_line);
    dst->n_regions += src->n_regions;
    dst->n_reads += src->n_reads;
    dst->n_read_pos += src->n_read_pos;
    dst->n_haps += src->n_haps;
    dst->n_hap_pos += src->n_hap_pos;
    dst->n_pairs += src->n_pairs;
    dst->cells += src->cells;
    dst->pdhmm = src->pdhmm;
    if (src->max_read_len > dst->max_read_len) dst->max_read_len = src->max_read_len;
    if (src->max_hap_len > dst->max_hap_len) dst->max_hap_len = src->max_hap_len;
    if (src->max_region_haps > dst->max_region_haps) dst->max_region_haps = src->max_region_haps;
    if (src->max_region_hap_cols > dst->max_region_hap_cols) dst->max_region_hap_cols = src->max_region_hap_cols;
    return HK_OK;
}

/* Gap-open pairs (insertion Q, deletion Q) whose error probabilities sum to 1
 * or more leave match-to-match at or below 0: the model is undefined there.
 * Both are then at most Q3 on one side, which a first pass tests cheaply. */
static uint8_t gap_undefined[94][94];

static void gap_init(void)
{
    for (int i = 0; i < 94; i++)
        for (int d = 0; d < 94; d++)
            gap_undefined[i][d] = pow(10.0, -i / 10.0) + pow(10.0, -d / 10.0) >= 1.0;
}

/* Position of the first undefined gap-open pair, or -1. */
static long gap_open_undefined(const uint8_t *ins, const uint8_t *del, uint32_t len)
{
    uint8_t lo = 255;
    for (uint32_t i = 0; i < len; i++) {
        uint8_t m = ins[i] < del[i] ? ins[i] : del[i];
        lo = m < lo ? m : lo;
    }
    if (lo > 3) return -1;
    for (uint32_t i = 0; i < len; i++)
        if (gap_undefined[ins[i]][del[i]]) return (long)i;
    return -1;
}

/* The summary of a read's gap rows (len >= 1). */
static hk_read_gaps_t summarize_gaps(const uint8_t *ins, const uint8_t *del, const uint8_t *gcp,
                                     uint32_t len)
{
    hk_read_gaps_t g = { .ins = ins[0], .del = del[0], .gcp = gcp[0], .ins_last = ins[len - 1],
                         .del_last = del[len - 1], .gcp_last = gcp[len - 1], .rows = 1 };
    const uint32_t mid = len > 2 ? len - 2 : 0;   /* positions 1 .. len - 2 */
    g.constant = (uint8_t)(all_equal(ins + 1, mid, g.ins) && all_equal(del + 1, mid, g.del) &&
                           all_equal(gcp + 1, mid, g.gcp));
    return g;
}

hk_status_t hk_batch_set_read(hk_batch_t *b, const hk_seq_rules_t *rules, size_t k, const char *bases,
                      const char *qual, const char *ins, const char *del, const char *gcp,
                      hk_batch_error_t *e)
{
    return hk_batch_set_read_at(b, rules, k, b->read_off[k], hk_batch_read_len(b, k), bases, qual,
                                ins, del, gcp, e);
}

/* hk_batch_set_read_at with qualities as Phred+off (33: text; 0: raw values). */
static hk_status_t set_read_at(hk_batch_t *b, const hk_seq_rules_t *rules, size_t k, uint64_t o,
                               uint32_t len, const char *bases, const char *qual, const char *ins,
                               const char *del, const char *gcp, hk_batch_error_t *e, uint8_t off)
{
    pthread_once(&base_once, base_init);
    const char *text[4] = { qual, ins, del, gcp };
    uint8_t *q[4] = { b->read_q + o, b->read_i + o, b->read_d + o, b->read_g + o };
    const char *const fields[5] = { bases, qual, ins, del, gcp };
    uint8_t *const out[6] = { b->read_text ? (uint8_t *)b->read_text + o : NULL, b->read_base + o,
                              q[0], q[1], q[2], q[3] };
    /* Constant gap qualities (HaplotypeCaller's usual) are kept as the summary
     * alone: their three rows are not written (hk_batch_gap_rows). */
    const int summary_only = !rules->pdhmm && len > 0 && text_constant(ins, len) && text_constant(del, len) &&
                             (rules->gcp >= 0 || text_constant(gcp, len));
    if (!read_fast(rules, fields, out, len, !summary_only, off)) {
        if (summary_only) {
            const uint8_t g = (uint8_t)(rules->gcp >= 0 ? rules->gcp : gcp[0] - off),
                          g_last = (uint8_t)(rules->gcp >= 0 ? rules->gcp : gcp[len - 1] - off);
            b->read_gaps[k] = (hk_read_gaps_t){ .constant = 1, .rows = 0,
                .ins = (uint8_t)(ins[0] - off), .del = (uint8_t)(del[0] - off), .gcp = g,
                .ins_last = (uint8_t)(ins[len - 1] - off), .del_last = (uint8_t)(del[len - 1] - off),
                .gcp_last = g_last };
            return HK_OK;
        }
        if (rules->gcp >= 0) memset(b->read_g + o, rules->gcp, len);
        if (rules->pdhmm) keep_case(bases, b->read_base + o, len);
        b->read_gaps[k] = len ? summarize_gaps(q[1], q[2], q[3], len)
                              : (hk_read_gaps_t){ .constant = 1, .rows = 1 };
        return HK_OK;
    }
    /* a doubt: the scalar passes decide, and find the first error */
    /* copied first, then converted in place: one byte at a time, the
     * conversion would store into memory not yet in cache */
    if (b->read_text) memcpy(b->read_text + o, bases, len);
    memcpy(b->read_base + o, bases, len);
    long pos = encode_bases(rules, (const char *)b->read_base + o, b->read_base + o, len);
    int field = 0;
    for (int f = 0; pos < 0 && f < 4; f++) {
        memcpy(q[f], text[f], len);
        pos = decode_qual((const char *)q[f], q[f], len, f == 0 ? rules->min_base_quality : 0, off);
        field = f + 1;
    }
    if (pos < 0 && !rules->pdhmm && (pos = gap_open_undefined(q[1], q[2], len)) >= 0) {
        *e = (hk_batch_error_t){ .code = HK_BATCH_BAD_GAP, .is_read = 1, .index = k,
                                 .line = b->read_line[k], .field = 2, .pos = (uint32_t)pos,
                                 .bad = (unsigned char)ins[pos] };
        return HK_E_INPUT;
    }
    /* gap-to-match = 1 - err(Q0) = 0 makes every likelihood 0 (unless
     * model.gcp replaces these qualities) */
    const uint8_t *g0 = pos < 0 && rules->gcp < 0 && !rules->pdhmm ? memchr(q[3], 0, len) : NULL;
    if (g0) {
        pos = g0 - q[3];
        *e = (hk_batch_error_t){ .code = HK_BATCH_BAD_GCP, .is_read = 1, .index = k,
                                 .line = b->read_line[k], .field = 4, .pos = (uint32_t)pos,
                                 .bad = (unsigned char)gcp[pos] };
        return HK_E_INPUT;
    }
    if (pos >= 0) {
        *e = (hk_batch_error_t){
            .code = field ? HK_BATCH_BAD_QUAL : HK_BATCH_BAD_BASE, .is_read = 1, .index = k,
            .line = b->read_line[k], .field = field, .pos = (uint32_t)pos,
            .bad = (unsigned char)(field ? text[field - 1] : bases)[pos],
        };
        return HK_E_INPUT;
    }
    if (rules->gcp >= 0) memset(b->read_g + o, rules->gcp, len);
    if (rules->pdhmm) keep_case(bases, b->read_base + o, len);
    b->read_gaps[k] = len ? summarize_gaps(q[1], q[2], q[3], len) : (hk_read_gaps_t){ .constant = 1, .rows = 1 };
    return HK_OK;
}

hk_status_t hk_batch_set_read_at(hk_batch_t *b, const hk_seq_rules_t *rules, size_t k, uint64_t o,
                                 uint32_t len, const char *bases, const char *qual, const char *ins,
                                 const char *del, const char *gcp, hk_batch_error_t *e)
{
    return set_read_at(b, rules, k, o, len, bases, qual, ins, del, gcp, e, 33);
}

void hk_batch_gap_rows(const hk_batch_t *b, size_t k, uint8_t *scratch, const uint8_t *rows[3])
{
    const uint64_t o = b->read_off[k];
    const hk_read_gaps_t g = b->read_gaps[k];
    if (g.rows) {
        rows[0] = b->read_i + o;
        rows[1] = b->read_d + o;
        rows[2] = b->read_g + o;
        return;
    }
    const uint32_t len = hk_batch_read_len(b, k);
    const uint8_t mid[3] = { g.ins, g.del, g.gcp }, last[3] = { g.ins_last, g.del_last, g.gcp_last };
    for (int f = 0; f < 3; f++) {
        uint8_t *row = scratch + (size_t)f * len;
        memset(row, mid[f], len);
        if (len) row[len - 1] = last[f];
        rows[f] = row;
    }
}

hk_status_t hk_batch_set_hap(hk_batch_t *b, const hk_seq_rules_t *rules, size_t k, const char *bases,
                     hk_batch_error_t *e)
{
    return hk_batch_set_hap_at(b, rules, k, b->hap_off[k], hk_batch_hap_len(b, k), bases, e);
}

hk_status_t hk_batch_set_hap_at(hk_batch_t *b, const hk_seq_rules_t *rules, size_t k, uint64_t o,
                        uint32_t len, const char *bases, hk_batch_error_t *e)
{
    pthread_once(&base_once, base_init);
    v16u8 bad = { 0 };
    for (uint32_t at = 0; at < len; at += 16) {
        at = last16(at, len);
        const v16u8 c = field16(bases, at, len, 'A');
        if (b->hap_text) out16((uint8_t *)b->hap_text + o, at, len, c);
        out16(b->hap_base + o, at, len, encode16(c, &bad));
    }
    long pos = -1;
    /* a letter that is no base: the scalar pass decides (model.unknown_bases) */
    if (any16(bad)) pos = encode_bases(rules, bases, b->hap_base + o, len);
    if (pos < 0) {
        if (rules->pdhmm) keep_case(bases, b->hap_base + o, len);
        return HK_OK;
    }
    *e = (hk_batch_error_t){ .code = HK_BATCH_BAD_BASE, .is_read = 0, .index = k,
                             .line = b->hap_line[k], .field = 0, .pos = (uint32_t)pos,
                             .bad = (unsigned char)bases[pos] };
    return HK_E_INPUT;
}

/* hk_batch_add_read with qualities as Phred+off (see set_read_at). */
static hk_status_t add_read(hk_batch_t *b, const hk_seq_rules_t *rules, const char *bases, const char *qual,
                            const char *ins, const char *del, const char *gcp, uint32_t len,
                            hk_batch_error_t *e, uint8_t off)
{
    hk_status_t rc = hk_batch_append_read(b, len, 0);
    if (rc) {
        *e = (hk_batch_error_t){ .is_read = 1, .index = b->n_reads };
        return rc;
    }
    const size_t k = b->n_reads - 1;
    if ((rc = set_read_at(b, rules, k, b->read_off[k], len, bases, qual, ins, del, gcp, e, off))) {
        hk_batch_last_region(b)->n_reads--;   /* take the read back */
        b->n_reads--;
        b->n_read_pos = b->read_off[b->n_reads];
    }
    return rc;
}

hk_status_t hk_batch_add_read(hk_batch_t *b, const hk_seq_rules_t *rules, const char *bases,
                              const char *qual, const char *ins, const char *del,
                              const char *gcp, uint32_t len, hk_batch_error_t *e)
{
    return add_read(b, rules, bases, qual, ins, del, gcp, len, e, 33);
}

hk_status_t hk_batch_add_read_phred(hk_batch_t *b, const hk_seq_rules_t *rules, const char *bases,
                                    const uint8_t *qual, const uint8_t *ins, const uint8_t *del,
                                    const uint8_t *gcp, uint32_t len, hk_batch_error_t *e)
{
    return add_read(b, rules, bases, (const char *)qual, (const char *)ins, (const char *)del,
                    (const char *)gcp, len, e, 0);
}

hk_status_t hk_batch_add_hap(hk_batch_t *b, const hk_seq_rules_t *rules, const char *bases, uint32_t len,
                             hk_batch_error_t *e)
{
    hk_status_t rc = hk_batch_append_hap(b, len, 0);
    if (rc) {
        *e = (hk_batch_error_t){ .is_read = 0, .index = b->n_haps };
        return rc;
    }
    if ((rc = hk_batch_set_hap(b, rules, b->n_haps - 1, bases, e))) {
        hk_batch_last_region(b)->n_haps--;
        b->n_haps--;
        b->n_hap_pos = b->hap_off[b->n_haps];
    }
    return rc;
}

hk_status_t hk_batch_end_region(hk_batch_t *b)
{
    const hk_region_t *r = hk_batch_last_region(b);
    const size_t np = (size_t)r->n_reads * r->n_haps;
    /* a region without reads (haplotypes) in a batch that has none yet has no offsets to read */
    const uint64_t rsum = r->n_reads ? b->read_off[r->read0 + r->n_reads] - b->read_off[r->read0] : 0;
    const uint64_t hsum = r->n_haps ? b->hap_off[r->hap0 + r->n_haps] - b->hap_off[r->hap0] : 0;
    if (hk_batch_end_region_sized(b, rsum, hsum, 1)) return HK_E_NOMEM;
    for (size_t i = b->n_pairs - np; i < b->n_pairs; i++) b->lk[i] = NAN;
    return HK_OK;
}

hk_status_t hk_batch_end_region_sized(hk_batch_t *b, uint64_t rsum, uint64_t hsum, int fill_expected)
{
    hk_region_t *r = hk_batch_last_region(b);
    const size_t np = (size_t)r->n_reads * r->n_haps;
    if (reserve_pairs(b, b->n_pairs + np)) return HK_E_NOMEM;
    if (fill_expected)
        for (size_t i = 0; i < np; i++) {
            b->expected[b->n_pairs + i] = NAN;
            b->pair_line[b->n_pairs + i] = 0;
        }
    b->n_pairs += np;
    r->cells = rsum * hsum;
    b->cells += r->cells;
    if (r->n_haps > b->max_region_haps) b->max_region_haps = r->n_haps;
    if (hsum > b->max_region_hap_cols) b->max_region_hap_cols = hsum;
    return HK_OK;
}
