/* hk_seq_fill.c - see hk_seq_fill.h. */
#include "hk_seq_fill.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The last span goes on, or a new one begins. */
hk_status_t hk_seq_fill_add_span(hk_entry_spans_t *q, size_t li, size_t count, size_t index0, uint64_t pos0, int field,
                              int offsets)
{
    if (q->n) {
        hk_entry_span_t *r = &q->v[q->n - 1];
        if (count == 1 && r->field == (uint32_t)field && r->offsets == (uint32_t)offsets &&
            r->index0 + r->count == index0 && li > r->entry) {
            if (r->count == 1 && li - r->entry <= UINT32_MAX) r->stride = (uint32_t)(li - r->entry);
            if (r->entry + (size_t)r->count * r->stride == li && r->count < UINT32_MAX) {
                r->count++;
                return HK_OK;
            }
        }
    }
    if (q->n == q->m) {
        const size_t m = q->m ? 2 * q->m : 1024;
        hk_entry_span_t *x = realloc(q->v, m * sizeof *x);
        if (!x) return HK_E_NOMEM;
        q->v = x;
        q->m = m;
    }
    q->v[q->n++] = (hk_entry_span_t){ .entry = li, .count = (uint32_t)count, .stride = 1, .field = (uint32_t)field,
                               .offsets = (uint32_t)offsets, .index0 = index0, .pos0 = pos0 };
    return HK_OK;
}

size_t hk_seq_fill_bytes(const hk_seq_fill_t *q)
{
    return (size_t)(5 * (q->read_end - q->read_pos0) + (q->hap_end - q->hap_pos0)) +
           8 * (q->pair_hi - q->pair_lo);
}

int hk_seq_fill_has_work(const hk_seq_fill_t *q) { return q->reads.n || q->haps.n || q->pair_hi > q->pair_lo; }

void hk_seq_fill_reset(hk_seq_fill_t *q, hk_batch_t *b)
{
    memset(q->err, 0, sizeof q->err);
    memset(q->max_len, 0, sizeof q->max_len);
    memset(q->max_hap, 0, sizeof q->max_hap);
    q->reads.n = q->haps.n = 0;
    q->batch = b;
    q->read_pos0 = b->n_read_pos;
    q->hap_pos0 = b->n_hap_pos;
    q->pair_lo = q->pair_hi = b->n_pairs;
}

void hk_seq_fill_ready(hk_seq_fill_t *q, const hk_lines_index_t *ix, int fill_expected)
{
    q->lines = ix->lines;
    q->line0 = ix->line0;
    q->read_end = q->batch->n_read_pos;
    q->hap_end = q->batch->n_hap_pos;
    q->fill_expected = fill_expected;
}

/* The spans part `part` of nparts sets: those starting in its share of the
 * positions [pos0, end) (the last part: from its share on). */
static void part_spans(const hk_entry_spans_t *q, uint64_t pos0, uint64_t end, int part, int nparts,
                      size_t *lo, size_t *hi)
{
    const uint64_t span = end - pos0;
    const uint64_t a = pos0 + span * (uint64_t)part / (uint64_t)nparts;
    const uint64_t z = pos0 + span * (uint64_t)(part + 1) / (uint64_t)nparts;
    size_t l = 0, h = q->n;   /* the first span with pos0 >= a */
    while (l < h) { const size_t m = (l + h) / 2; if (q->v[m].pos0 < a) l = m + 1; else h = m; }
    *lo = l;
    if (part + 1 == nparts) { *hi = q->n; return; }
    h = q->n;
    while (l < h) { const size_t m = (l + h) / 2; if (q->v[m].pos0 < z) l = m + 1; else h = m; }
    *hi = l;
}

static void keep_first(hk_batch_error_t *first, const hk_batch_error_t *e)
{
    if (!first->code || e->line < first->line) *first = *e;
}

/* The reads of spans [lo, hi): offsets, lines and sequences; the longest,
 * or UINT32_MAX when a format counted fewer bases than its lines hold
 * (nothing is written past its count). */
static uint32_t set_reads(hk_seq_fill_t *q, size_t lo, size_t hi, hk_batch_error_t *first)
{
    hk_batch_t *b = q->batch;
    hk_batch_error_t e;
    uint32_t longest = 0;
    for (size_t k = lo; k < hi; k++) {
        const hk_entry_span_t *r = &q->reads.v[k];
        const uint64_t end = k + 1 < q->reads.n ? q->reads.v[k + 1].pos0 : q->read_end;
        uint64_t pos = r->pos0;
        for (uint32_t j = 0; j < r->count; j++) {
            const size_t li = r->entry + (size_t)j * r->stride, idx = r->index0 + j;
            const hk_line_t *L = &q->lines[li];
            const uint32_t len = hk_field_len(L, (int)r->field);
            const char *s = L->text + hk_field_start(L, (int)r->field);
            const size_t step = (size_t)len + 1;   /* the read's fields, one space apart */
            if (pos + len > end) return UINT32_MAX;
            b->read_line[idx] = q->line0 + (long)li;
            b->read_off[idx + 1] = pos + len;
            if (hk_batch_set_read_at(b, q->rules, idx, pos, len, s, s + step, s + 2 * step,
                                     s + 3 * step, s + 4 * step, &e))
                keep_first(first, &e);
            longest = len > longest ? len : longest;
            pos += len;
        }
    }
    return longest;
}

/* The haplotypes of spans [lo, hi), as set_reads; those placed one by one
 * already have their offsets and lines (the longest is then the batch's). */
static uint32_t set_haps(hk_seq_fill_t *q, size_t lo, size_t hi, hk_batch_error_t *first)
{
    hk_batch_t *b = q->batch;
    hk_batch_error_t e;
    uint32_t longest = 0;
    for (size_t k = lo; k < hi; k++) {
        const hk_entry_span_t *r = &q->haps.v[k];
        const uint64_t end = k + 1 < q->haps.n ? q->haps.v[k + 1].pos0 : q->hap_end;
        uint64_t pos = r->pos0;
        for (uint32_t j = 0; j < r->count; j++) {
            const size_t li = r->entry + (size_t)j * r->stride, idx = r->index0 + j;
            const hk_line_t *L = &q->lines[li];
            if (!r->offsets) {
                if (hk_batch_set_hap(b, q->rules, idx, L->text, &e)) keep_first(first, &e);
                continue;
            }
            const uint32_t len = L->field_end[0];
            if (pos + len > end) return UINT32_MAX;
            b->hap_line[idx] = q->line0 + (long)li;
            b->hap_off[idx + 1] = pos + len;
            if (hk_batch_set_hap_at(b, q->rules, idx, pos, len, L->text, &e)) keep_first(first, &e);
            longest = len > longest ? len : longest;
            pos += len;
        }
    }
    return longest;
}

void hk_seq_fill_set(hk_seq_fill_t *q, int part, int nparts)
{
    hk_batch_t *b = q->batch;
    hk_batch_error_t *first = &q->err[part];
    size_t lo, hi;
    first->code = 0;
    part_spans(&q->reads, q->read_pos0, q->read_end, part, nparts, &lo, &hi);
    q->max_len[part] = set_reads(q, lo, hi, first);
    part_spans(&q->haps, q->hap_pos0, q->hap_end, part, nparts, &lo, &hi);
    q->max_hap[part] = set_haps(q, lo, hi, first);
    /* results: NaN until scored (expected: unless the format writes it) */
    const size_t np = q->pair_hi - q->pair_lo;
    const size_t a = q->pair_lo + np * (size_t)part / (size_t)nparts;
    const size_t z = q->pair_lo + np * (size_t)(part + 1) / (size_t)nparts;
    for (size_t i = a; i < z; i++) b->lk[i] = NAN;
    if (q->fill_expected)
        for (size_t i = a; i < z; i++) {
            b->expected[i] = NAN;
            b->pair_line[i] = 0;   /* no record of its own: the read's line */
        }
}
