/* hk_format_batch.c - the benchmark batch format (SPEC section 2).
 *
 *   READS HAPLOTYPES                      a header of two positive counts
 *   BASES QUALS INS DELS GCPS             READS read lines, five fields
 *   BASES                                 HAPLOTYPES haplotype lines
 *
 * One region per header; every read against every haplotype. Inside a region
 * every line must be a read or haplotype line (no comments, no blanks).
 */
#include "hk_format.h"

#include <stdint.h>

typedef struct {
    int    open;               /* a header has been read, its region not ended */
    size_t head;               /* the header's index entry */
    long   reads, haps;        /* its counts */
} batch_state_t;

/* Parse a strictly positive integer field; 0 when it is not one. */
static long parse_count(const char *s, size_t len, long max)
{
    if (len == 0 || len > 18) return len > 18 ? max + 1 : 0;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Digits of a count quoted in a message: as read, up to a sane length. */
static int count_shown(size_t len) { return len > 40 ? 40 : (int)len; }

static int batch_claims(const hk_line_t *L) { return hk_line_count(L, ' ') == 1; }

/* ---- the scan pass (one thread per piece) ----
 * Marks each line that batch_line would take as a read line, or as a
 * haplotype line, and the run of such lines from it on: so that the walk
 * checks a region's R + H lines with a look at a few, and stays off the
 * rest (on the NA12878-like file it touched 20 lines per region). */

enum { RUN_NONE, RUN_READ, RUN_HAP };

/* A line's run kind, in its flags' scan bits. */
#define RUN_SHIFT 2
_Static_assert(HK_LINE_SCAN_BIT == 1 << RUN_SHIFT, "the run kind is the scan's bits of a line's flags");
static uint8_t line_run_kind(const hk_line_t *L) { return (uint8_t)(L->flags >> RUN_SHIFT & 3); }

/* What batch_line would take line L for inside a region (RUN_NONE: an error). */
static uint8_t run_kind(const hk_line_t *L)
{
    const uint32_t *fe = L->field_end, n = fe[0];
    if (L->kind != HK_LINE_TEXT || n == 0 || n > HK_MAX_SEQ_LEN) return RUN_NONE;
    if (L->n_fields == 1) return RUN_HAP;
    /* fields 1 and 2 as long as field 0; regular: field 3 as long as field 2,
     * and field 4, the rest, then takes n + 1 bytes more after it */
    return L->n_fields == 5 && (L->flags & HK_LINE_REGULAR) && fe[1] - fe[0] - 1 == n &&
           fe[2] - fe[1] - 1 == n && L->len == fe[2] + 2 * (n + 1) ? RUN_READ : RUN_NONE;
}

static void batch_scan(hk_line_t *lines, size_t n, void **state)
{
    (void)state;
    uint8_t next = RUN_NONE;
    uint32_t run = 0, bases = 0;
    for (size_t i = n; i-- > 0;) {   /* backwards: a run's count and bases from each line on */
        hk_line_t *L = &lines[i];
        const uint8_t k = run_kind(L);
        const uint32_t len = k ? L->field_end[0] : 0;
        if (k && k == next && bases <= UINT32_MAX - len) {
            run++;
            bases += len;
        } else {
            run = 1;
            bases = len;
        }
        next = k;
        L->flags |= (uint8_t)(k << RUN_SHIFT);
        L->run = k ? run : 0;
        L->run_bases = bases;
    }
}

/* Whether entries i, i + 1, ... (count) are all lines of kind k in the index:
 * their bases in all, or -1. */
static int64_t run_of(const hk_walk_t *w, size_t i, size_t count, uint8_t k)
{
    uint64_t bases = 0;
    while (count) {
        if (i >= hk_walk_n_lines(w)) return -1;
        const hk_line_t *L = hk_walk_line(w, i);
        if (line_run_kind(L) != k) return -1;
        if (L->run <= count) {   /* the run ends (or its piece does) within */
            bases += L->run_bases;
            i += L->run;
            count -= L->run;
        } else {
            bases += L->run_bases - hk_walk_line(w, i + count)->run_bases;
            count = 0;
        }
    }
    return (int64_t)bases;
}

static int batch_inside(const void *st) { return ((const batch_state_t *)st)->open; }

HK_RESULT_USED static hk_status_t header(hk_walk_t *w, batch_state_t *s)
{
    const size_t i = hk_walk_pos(w);
    const hk_line_t *L = hk_walk_line(w, i);
    const char *t = L->text;
    const long line = hk_walk_line_no(w, i);
    const int two = L->n_fields == 2;
    const long R = two ? parse_count(t, L->field_end[0], HK_MAX_REGION_READS) : 0;
    const long H = two ? parse_count(t + hk_field_start(L, 1), hk_field_len(L, 1), HK_MAX_REGION_HAPS) : 0;
    if (!two || R <= 0 || H <= 0)
        return hk_walk_fail(w, line, "expected a batch header 'READS HAPLOTYPES' of two positive integers");
    if (R > HK_MAX_REGION_READS || H > HK_MAX_REGION_HAPS || R * H > HK_MAX_REGION_PAIRS)
        return hk_walk_fail(w, line, "batch of %.*s reads x %.*s haplotypes is larger than haplik "
                            "accepts (%ld reads, %ld haplotypes, %ld pairs)",
                            count_shown(L->field_end[0]), t, count_shown(hk_field_len(L, 1)),
                            t + hk_field_start(L, 1), HK_MAX_REGION_READS, HK_MAX_REGION_HAPS,
                            HK_MAX_REGION_PAIRS);
    s->open = 1;
    s->head = i;
    s->reads = R;
    s->haps = H;
    return HK_OK;
}

/* Place the open region's first n_reads reads and n_haps haplotypes: all of
 * them, or those before an error, to be checked only (then it is not ended). */
HK_RESULT_USED static hk_status_t place_region(hk_walk_t *w, batch_state_t *s, hk_batch_t *b, size_t n_reads,
                                                 size_t n_haps)
{
    hk_status_t rc;
    const size_t head = s->head;
    s->open = 0;
    if ((rc = hk_walk_begin_region(w, b, head))) return rc;
    for (size_t k = 0; k < n_reads; k++)
        if ((rc = hk_walk_place_read(w, b, head + 1 + k, 0))) return rc;
    for (size_t k = 0; k < n_haps; k++)
        if ((rc = hk_walk_place_hap(w, b, head + 1 + (size_t)s->reads + k))) return rc;
    return HK_OK;
}

/* The region whose header was just read, whole, if the index holds its lines
 * and the scan found them all valid: placed, and the walk goes on after it.
 * Otherwise (an error in it, or lines still to read) its lines are walked
 * one by one, which finds the error, as before the scan pass. */
HK_RESULT_USED static hk_status_t whole_region(hk_walk_t *w, batch_state_t *s, hk_batch_t *b)
{
    hk_status_t rc;
    const size_t head = s->head, R = (size_t)s->reads, H = (size_t)s->haps, last = head + R + H;
    if (last >= hk_walk_n_lines(w)) return HK_OK;
    /* the input's last line may have become an error since its scan (no BGZF end marker) */
    if (hk_walk_line(w, last)->kind != HK_LINE_TEXT) return HK_OK;
    const int64_t bases = run_of(w, head + 1, R, RUN_READ), hap_bases = run_of(w, head + 1 + R, H, RUN_HAP);
    if (bases < 0 || hap_bases < 0) return HK_OK;
    s->open = 0;
    if ((rc = hk_walk_begin_region(w, b, head)) || (rc = hk_walk_place_reads(w, b, head + 1, R, 0, (uint64_t)bases)) ||
        (rc = hk_walk_place_haps(w, b, head + 1 + R, H, (uint64_t)hap_bases)) ||
        (rc = hk_walk_end_region(w, b, head, last)))
        return rc;
    hk_walk_skip_to(w, last);
    return HK_OK;
}

HK_RESULT_USED static hk_status_t batch_line(hk_walk_t *w, void *st, hk_batch_t *b)
{
    hk_status_t rc;
    batch_state_t *s = st;
    if (!s->open) return (rc = header(w, s)) ? rc : whole_region(w, s, b);
    const size_t i = hk_walk_pos(w);
    const hk_line_t *L = hk_walk_line(w, i);
    const long line = hk_walk_line_no(w, i);
    const size_t k = i - s->head - 1;
    const uint32_t *fe = L->field_end;
    if (k < (size_t)s->reads) {
        const int nf = L->n_fields;
        if (nf != 5)
            return hk_walk_fail(w, line, "expected a read line 'BASES QUALS INS DELS GCPS' (5 fields), "
                                "found %s%d", nf > 5 ? "more than " : "", nf > 5 ? 5 : nf);
        for (int f = 1; f < 5; f++)
            if (hk_field_len(L, f) != fe[0])
                return hk_walk_fail(w, line, "field %d has %u characters but the read has %u bases",
                                    f + 1, hk_field_len(L, f), fe[0]);
        if (fe[0] == 0) return hk_walk_fail(w, line, "empty read");
        if (fe[0] > HK_MAX_SEQ_LEN)
            return hk_walk_fail(w, line, "read longer than %u bases", HK_MAX_SEQ_LEN);
    } else {
        if (L->n_fields != 1 || fe[0] == 0)
            return hk_walk_fail(w, line, "expected a haplotype line (one field of bases)");
        if (fe[0] > HK_MAX_SEQ_LEN)
            return hk_walk_fail(w, line, "haplotype longer than %u bases", HK_MAX_SEQ_LEN);
    }
    if (k + 1 < (size_t)(s->reads + s->haps)) return HK_OK;
    const size_t head = s->head;
    if ((rc = place_region(w, s, b, (size_t)s->reads, (size_t)s->haps))) return rc;
    return hk_walk_end_region(w, b, head, i);
}

HK_RESULT_USED static hk_status_t batch_end(hk_walk_t *w, void *st, hk_batch_t *b)
{
    (void)b;
    batch_state_t *s = st;
    if (!s->open) return HK_OK;
    const size_t last = hk_walk_pos(w) - 1;   /* the walk is past the last entry */
    return hk_walk_fail(w, hk_walk_line_no(w, last), "truncated input: the batch at line %ld "
                        "expects %ld reads and %ld haplotypes, the input ended after %zu lines of it",
                        hk_walk_line_no(w, s->head), s->reads, s->haps, last - s->head);
}

static void batch_place_open(hk_walk_t *w, void *st, hk_batch_t *b)
{
    batch_state_t *s = st;
    if (!s->open) return;
    const size_t k = hk_walk_pos(w) - s->head - 1, R = (size_t)s->reads;
    (void)!place_region(w, s, b, k < R ? k : R, k > R ? k - R : 0);   /* an error is recorded in w */
}

static size_t batch_first_needed(const void *st, size_t n)
{
    const batch_state_t *s = st;
    return s->open ? s->head : n;
}

static void batch_shift(void *st, size_t by)
{
    batch_state_t *s = st;
    if (s->open) s->head -= by;
}

const hk_format_t hk_format_batch = {
    .name = "batch",
    .separator = ' ',
    .state_size = sizeof(batch_state_t),
    .claims = batch_claims,
    .scan = batch_scan,
    .no_expected = 1,
    .inside = batch_inside,
    .line = batch_line,
    .end = batch_end,
    .place_open = batch_place_open,
    .first_needed = batch_first_needed,
    .shift = batch_shift,
};
