/* hk_walk.c - see hk_walk.h: the walk's services to the formats. */
#include "hk_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- errors ---- */

__attribute__((format(printf, 4, 0)))
static void record_error(hk_walk_t *w, hk_status_t kind, long line, const char *fmt, va_list ap)
{
    if (w->failed) return;
    vsnprintf(w->err_msg, sizeof w->err_msg, fmt, ap);
    w->err_line = line;
    w->err_kind = kind;
    w->failed = 1;
}

hk_status_t hk_walk_fail(hk_walk_t *w, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record_error(w, HK_E_INPUT, line, fmt, ap);
    va_end(ap);
    return HK_E_INPUT;
}

__attribute__((format(printf, 4, 5)))
hk_status_t hk_walk_error(hk_walk_t *w, hk_status_t kind, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record_error(w, kind, line, fmt, ap);
    va_end(ap);
    return kind;
}

hk_status_t hk_walk_oom(hk_walk_t *w, long line) { return hk_walk_error(w, HK_E_NOMEM, line, "out of memory"); }

/* ---- the walk's services to formats ---- */


hk_status_t hk_walk_begin_region(hk_walk_t *w, hk_batch_t *b, size_t first)
{
    const long line = hk_walk_line_no(w, first);
    const long reported = w->source_line ? w->source_line : line;
    w->source_line = 0;
    w->region_pos = b->n_read_pos;
    w->region_hap_pos = b->n_hap_pos;
    const int pd = w->fmt_pdhmm;
    if ((w->want_pdhmm >= 0 && pd != w->want_pdhmm) || (b->n_regions && pd != b->pdhmm))
        return hk_walk_fail(w, line, "a %s dump cannot be scored in one run with %s dumps: score "
                            "them in separate runs", pd ? "PDHMM" : w->fmt_name,
                            pd ? "other" : "PDHMM");
    b->pdhmm = pd;
    if (hk_batch_begin_region(b, w->name, reported)) return hk_walk_oom(w, line);
    return HK_OK;
}

hk_status_t hk_walk_end_region(hk_walk_t *w, hk_batch_t *b, size_t first, size_t last)
{
    hk_region_t *rg = hk_batch_last_region(b);
    /* the step in flight fills results with NaN: before they move */
    if (b->n_pairs + (size_t)rg->n_reads * rg->n_haps > b->m_pairs) hk_lines_wait(w->lines);
    if (hk_batch_end_region_sized(b, b->n_read_pos - w->region_pos, b->n_hap_pos - w->region_hap_pos,
                                  !w->fmt_no_expected))
        return hk_walk_oom(w, hk_walk_line_no(w, first));
    rg->first_line = hk_walk_line_no(w, first);
    rg->last_line = hk_walk_line_no(w, last);
    w->placed->pair_hi = b->n_pairs;
    return HK_OK;
}

void hk_walk_skip_to(hk_walk_t *w, size_t i) { w->at.pos = i; }

/* Report an error of the append functions (length, memory). */
HK_RESULT_USED static hk_status_t append_error(hk_walk_t *w, long line, hk_status_t rc, const char *what)
{
    if (rc == HK_E_INPUT)
        return hk_walk_fail(w, line, "%s longer than %u bases", what, HK_MAX_SEQ_LEN);
    return hk_walk_oom(w, line);
}

/* Count count reads of bases positions in all into b and its open region
 * (their offsets and sequences are written later, on all threads). */
HK_RESULT_USED static hk_status_t add_reads(hk_walk_t *w, hk_batch_t *b, size_t li, size_t count, int field,
                                              uint64_t bases)
{
    if (b->n_reads + count + 1 > b->m_reads || b->n_read_pos + bases > b->m_read_pos) {
        hk_lines_wait(w->lines);   /* the step in flight sets reads into b's arrays */
        if (hk_batch_reserve_reads(b, b->n_reads + count + 1, b->n_read_pos + bases))
            return hk_walk_oom(w, hk_walk_line_no(w, li));
    }
    if (b->n_reads == 0) b->read_off[0] = 0;
    if (hk_seq_fill_add_span(&w->placed->reads, li, count, b->n_reads, b->n_read_pos, field, 1) )
        return hk_walk_oom(w, hk_walk_line_no(w, li));
    b->n_reads += count;
    b->n_read_pos += bases;
    hk_batch_last_region(b)->n_reads += (uint32_t)count;
    return HK_OK;
}

hk_status_t hk_walk_place_read(hk_walk_t *w, hk_batch_t *b, size_t li, int field)
{
    const uint32_t len = hk_field_len(hk_walk_line(w, li), field);
    if (len > HK_MAX_SEQ_LEN) return append_error(w, hk_walk_line_no(w, li), HK_E_INPUT, "read");
    return add_reads(w, b, li, 1, field, len);
}

hk_status_t hk_walk_place_reads(hk_walk_t *w, hk_batch_t *b, size_t first, size_t count, int field,
                                uint64_t bases)
{
    if (count > HK_MAX_REGION_READS)   /* a span counts in 32 bits; formats refuse such regions */
        return hk_walk_fail(w, hk_walk_line_no(w, first), "region of more than %ld reads", HK_MAX_REGION_READS);
    return count ? add_reads(w, b, first, count, field, bases) : 0;
}

/* A haplotype is appended at once (its offset known on return: a format
 * may write per-position data beside it); its sequence is set later. */
hk_status_t hk_walk_place_hap(hk_walk_t *w, hk_batch_t *b, size_t li)
{
    return hk_walk_place_hap_len(w, b, li, hk_walk_line(w, li)->field_end[0]);
}

hk_status_t hk_walk_place_hap_len(hk_walk_t *w, hk_batch_t *b, size_t li, uint32_t len)
{
    if (!hk_batch_hap_fits(b, len)) hk_lines_wait(w->lines);
    const uint64_t pos0 = b->n_hap_pos;   /* hap_off[n_haps] may be the side job's to write */
    const hk_status_t rc = hk_batch_append_hap(b, len, hk_walk_line_no(w, li));
    if (rc) return append_error(w, hk_walk_line_no(w, li), rc, "haplotype");
    if (hk_seq_fill_add_span(&w->placed->haps, li, 1, b->n_haps - 1, pos0, 0, 0) )
        return hk_walk_oom(w, hk_walk_line_no(w, li));
    return HK_OK;
}

hk_status_t hk_walk_place_haps(hk_walk_t *w, hk_batch_t *b, size_t first, size_t count, uint64_t bases)
{
    if (!count) return HK_OK;
    if (count > HK_MAX_REGION_HAPS)   /* a span counts in 32 bits; formats refuse such regions */
        return hk_walk_fail(w, hk_walk_line_no(w, first), "region of more than %ld haplotypes", HK_MAX_REGION_HAPS);
    if (b->n_haps + count + 1 > b->m_haps || b->n_hap_pos + bases > b->m_hap_pos) {
        hk_lines_wait(w->lines);   /* the step in flight sets haplotypes into b's arrays */
        if (hk_batch_reserve_haps(b, b->n_haps + count + 1, b->n_hap_pos + bases))
            return hk_walk_oom(w, hk_walk_line_no(w, first));
    }
    if (b->n_haps == 0) b->hap_off[0] = 0;
    if (hk_seq_fill_add_span(&w->placed->haps, first, count, b->n_haps, b->n_hap_pos, 0, 1) )
        return hk_walk_oom(w, hk_walk_line_no(w, first));
    b->n_haps += count;
    b->n_hap_pos += bases;
    hk_batch_last_region(b)->n_haps += (uint32_t)count;
    return HK_OK;
}

int hk_line_count(const hk_line_t *L, char c)
{
    int n = 0;
    for (const char *s = L->text, *e = s + L->len; (s = memchr(s, c, (size_t)(e - s))); s++) n++;
    return n;
}
