/* hk_results_regions.c - what HaplotypeCaller's results files have in common
 * (the `gatk` and `pdhmm` formats, SPEC section 2): one record per pair,
 *
 *   HAP READ QUALS INS DELS GCPS EXPECTED
 *
 * (a PDHMM record's haplotype is its bases and PD bytes, which its format's
 * scan joins into field 0), with no region marker: a region is the run of
 * consecutive records that share one list of haplotypes. The formats check
 * each record (hk_format_gatk.c, hk_format_pdhmm.c) and hand it here. The
 * walk keeps the entries of the open region's records in `recs`:
 *   recs[0, n_done)   whole reads of the current region (n_haps records each);
 *   recs[n_done, n)   the read being collected.
 * While n_haps is 0 the first read is being collected and its distinct
 * haplotypes define the region's list. A record that does not continue the
 * pattern closes the region; the partial read then starts the next one.
 *
 * The comparisons this needs (is this record's read the previous record's?
 * where was this haplotype last?) are made by the scan pass, on all threads,
 * within each piece; the walk compares texts itself only across pieces.
 */
#include "hk_results_regions.h"

#include <stdlib.h>
#include <string.h>

/* ---- the scan pass (one thread per piece) ---- */

/* The scan's bits in a record's flags. */
enum { EXPECTED_OK = HK_LINE_SCAN_BIT,      /* its expected value parsed */
       SAME_READ = HK_LINE_SCAN_BIT << 1 }; /* the record read_back lines back has its read */

/* The piece's most recent record by haplotype hash (open addressing). */
typedef struct {
    uint64_t hash;
    uint32_t line;           /* index in the piece */
    uint32_t stamp;          /* the entry belongs to the piece scanned with this stamp */
} hap_slot_t;

typedef struct {
    hap_slot_t *map;
    size_t      cap, used;
    uint32_t    stamp;
} hap_map_t;

/* A record: 7 fields, sequences not empty, qualities as long as the read
 * (what the walk checks before it takes a line as a record). */
static int is_record(const hk_line_t *L)
{
    const uint32_t *fe = L->field_end;
    /* regular: fields 3, 4 and 5 are as long as field 2 */
    return L->kind == HK_LINE_TEXT && L->n_fields == 7 && (L->flags & HK_LINE_REGULAR) && fe[0] != 0 &&
           fe[1] != fe[0] + 1 && fe[2] - fe[1] == fe[1] - fe[0];
}

/* Bytes of a record's read fields with the spaces between them. */
static uint32_t read_span(const hk_line_t *L) { return hk_field_end(L, 5) - L->field_end[0] - 1; }

/* A hash of n bytes for the haplotype map. Four lanes keep four multipliers
 * busy; each lane's state is a bijection of its words, so only the final
 * mix can make two texts of one length collide. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    const uint64_t K = 0x9E3779B97F4A7C15u, M = 0xBF58476D1CE4E5B9u;
    uint64_t a = n, b = n ^ 0x243F6A8885A308D3u, c = n ^ 0x13198A2E03707344u,
             d = n ^ 0xA4093822299F31D0u, w[4];
    for (; n >= 32; s += 32, n -= 32) {
        memcpy(w, s, 32);
        a = (a ^ w[0]) * K;
        b = (b ^ w[1]) * K;
        c = (c ^ w[2]) * K;
        d = (d ^ w[3]) * K;
    }
    if (n) {
        memset(w, 0, sizeof w);
        memcpy(w, s, n);
        a = (a ^ w[0]) * K;
        b = (b ^ w[1]) * K;
        c = (c ^ w[2]) * K;
        d = (d ^ w[3]) * K;
    }
    uint64_t x = a;
    x = (x ^ (x >> 31) ^ b) * M;
    x = (x ^ (x >> 31) ^ c) * M;
    x = (x ^ (x >> 31) ^ d) * M;
    return x ^ (x >> 29);
}

/* Double the map (or make it), keeping this piece's entries. */
HK_RESULT_USED static hk_status_t map_grow(hap_map_t *m)
{
    const size_t cap = m->cap ? 2 * m->cap : 1024;
    hap_slot_t *x = calloc(cap, sizeof *x);   /* stamp 0: empty (stamps start at 1) */
    if (!x) return HK_E_NOMEM;
    for (size_t k = 0; k < m->cap; k++) {
        if (m->map[k].stamp != m->stamp) continue;
        size_t j = m->map[k].hash & (cap - 1);
        while (x[j].stamp == m->stamp) j = (j + 1) & (cap - 1);
        x[j] = m->map[k];
    }
    free(m->map);
    m->map = x;
    m->cap = cap;
    return HK_OK;
}

/* hap_back of record i: the piece's most recent record with the same
 * haplotype hash is the nearest with the same haplotype, if the texts agree.
 * Without memory the answer is "unknown", which the walk works out itself. */
static void scan_hap(hap_map_t *m, hk_line_t *lines, size_t i)
{
    hk_line_t *L = &lines[i];
    const uint32_t len = L->field_end[0];
    const uint64_t h = hash_bytes(L->text, len);
    L->hap_back = HK_HAP_UNKNOWN;
    if (!m->map) return;
    const size_t mask = m->cap - 1;
    size_t k = h & mask;
    for (; m->map[k].stamp == m->stamp; k = (k + 1) & mask) {
        if (m->map[k].hash != h) continue;
        const hk_line_t *J = &lines[m->map[k].line];
        L->hap_back = J->field_end[0] == len && !memcmp(J->text, L->text, len)
                      ? (uint32_t)(i - m->map[k].line) : HK_HAP_UNKNOWN;
        m->map[k].line = (uint32_t)i;
        return;
    }
    L->hap_back = 0;
    m->map[k] = (hap_slot_t){ .hash = h, .line = (uint32_t)i, .stamp = m->stamp };
    if (++m->used * 2 > m->cap && map_grow(m)) {   /* no memory: forget the map */
        free(m->map);
        m->map = NULL;
        m->cap = 0;
    }
}

void hk_results_scan(hk_line_t *lines, size_t n, void **state)
{
    hap_map_t *m = *state;
    if (!m && (m = *state = calloc(1, sizeof *m)) == NULL) return;   /* the walk compares */
    m->used = 0;
    if (++m->stamp == 0) {   /* wrapped: no entry may look current */
        if (m->map) memset(m->map, 0, m->cap * sizeof *m->map);
        m->stamp = 1;
    }
    if (!m->map && map_grow(m)) m->cap = 0;   /* no memory: the scan goes on without the map */
    size_t prev = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        hk_line_t *L = &lines[i];
        if (!is_record(L)) continue;
        const char *s = L->text, *value = s + hk_field_end(L, 5) + 1;
        char *end;
        L->expected = strtod(value, &end);
        if (end != value && *end == '\0') L->flags |= EXPECTED_OK;
        if (prev != SIZE_MAX) {
            const hk_line_t *P = &lines[prev];
            L->read_back = (uint32_t)(i - prev);
            if (read_span(P) == read_span(L) &&
                !memcmp(P->text + P->field_end[0] + 1, s + L->field_end[0] + 1, read_span(L)))
                L->flags |= SAME_READ;
        }
        prev = i;
        scan_hap(m, lines, i);
    }
}

void hk_results_scan_free(void *state)
{
    hap_map_t *m = state;
    if (m) free(m->map);
    free(m);
}

/* ---- the walk ---- */

static const char *text(const hk_walk_t *w, size_t i) { return hk_walk_line(w, i)->text; }

static int same_hap_text(const hk_walk_t *w, size_t a, size_t c)
{
    const uint32_t len = hk_walk_line(w, a)->field_end[0];
    return hk_walk_line(w, c)->field_end[0] == len && !memcmp(text(w, a), text(w, c), len);
}

static int same_read_text(const hk_walk_t *w, size_t a, size_t c)
{
    const hk_line_t *A = hk_walk_line(w, a), *C = hk_walk_line(w, c);
    return read_span(A) == read_span(C) &&
           !memcmp(A->text + A->field_end[0] + 1, C->text + C->field_end[0] + 1, read_span(C));
}

/* Has record c the read of record p, the record before it? The scan has
 * compared them unless p lies in another piece. */
static int read_is(const hk_walk_t *w, size_t c, size_t p)
{
    const hk_line_t *L = hk_walk_line(w, c);
    if (L->read_back && c - L->read_back == p) return (L->flags & SAME_READ) != 0;
    return same_read_text(w, p, c);
}

/* Has record c the haplotype of record w0, an earlier record of the region
 * such that no record between them has that haplotype? Then w0 is the
 * nearest record with c's haplotype, if any is, which the scan has found
 * unless w0 lies in another piece. */
static int hap_is(const hk_walk_t *w, size_t c, size_t w0)
{
    const hk_line_t *L = hk_walk_line(w, c);
    if (L->hap_back != HK_HAP_UNKNOWN && c - w0 <= L->piece_back) return L->hap_back == c - w0;
    return same_hap_text(w, w0, c);
}

/* Has record c the haplotype of one of the records recs[0, k)? The nearest
 * record with its haplotype tells, unless none is in the piece and the
 * region starts before it. */
static int hap_repeats(const hk_walk_t *w, const hk_results_state_t *s, size_t c, size_t k)
{
    const hk_line_t *L = hk_walk_line(w, c);
    const size_t first = s->recs[0];
    if (L->hap_back != HK_HAP_UNKNOWN) {
        if (L->hap_back) return c - L->hap_back >= first;
        if (c - first <= L->piece_back) return 0;
    }
    for (size_t q = 0; q < k; q++)
        if (same_hap_text(w, s->recs[q], c)) return 1;
    return 0;
}

/* Place the region recs[0, n_done) (n_haps records per read) into the batch,
 * and keep recs[n_done, n), moved to the front, for the next region. */
HK_RESULT_USED static hk_status_t emit_region(hk_walk_t *w, hk_results_state_t *s, hk_batch_t *b)
{
    hk_status_t rc;
    const size_t H = s->n_haps, R = s->n_done / H;
    const long line = hk_walk_line_no(w, s->recs[0]);
    if ((long)R > HK_MAX_REGION_READS || (long)H > HK_MAX_REGION_HAPS)
        return hk_walk_fail(w, line, "region of %zu reads x %zu haplotypes is larger than haplik accepts", R, H);
    if ((rc = hk_walk_begin_region(w, b, s->recs[0]))) return rc;
    for (size_t h = 0; h < H; h++)
        if ((rc = s->place_hap ? s->place_hap(w, b, s->recs[h]) : hk_walk_place_hap(w, b, s->recs[h])))
            return rc;
    for (size_t k = 0; k < R; k++)
        if ((rc = hk_walk_place_read(w, b, s->recs[k * H], 1))) return rc;
    if ((rc = hk_walk_end_region(w, b, s->recs[0], s->recs[s->n_done - 1]))) return rc;
    const hk_region_t *rg = hk_batch_last_region(b);
    for (size_t i = 0; i < s->n_done; i++) {
        b->expected[rg->pair0 + i] = hk_walk_line(w, s->recs[i])->expected;
        b->pair_line[rg->pair0 + i] = hk_walk_line_no(w, s->recs[i]);
    }
    memmove(s->recs, s->recs + s->n_done, (s->n - s->n_done) * sizeof *s->recs);
    s->n -= s->n_done;
    s->n_done = 0;
    s->n_haps = 0;
    return HK_OK;
}

/* Does the last record, recs[n-1], continue the pattern of recs[0, n-1)? */
static int continues(const hk_walk_t *w, const hk_results_state_t *s)
{
    const size_t prior = s->n - 1, c = s->recs[prior];
    if (s->n_haps == 0)                 /* collecting the first read */
        return prior == 0 || (read_is(w, c, s->recs[prior - 1]) && !hap_repeats(w, s, c, prior));
    /* the haplotype of the previous read's record at this position */
    if (!hap_is(w, c, s->recs[prior - s->n_haps])) return 0;
    return prior == s->n_done || read_is(w, c, s->recs[prior - 1]);
}

/* Place the record just pushed: it continues the region, or it closes the
 * region (placed in b) and starts the next one. */
HK_RESULT_USED static hk_status_t place_record(hk_walk_t *w, hk_results_state_t *s, hk_batch_t *b, long line)
{
    hk_status_t rc;
    for (;;) {
        if (continues(w, s)) {
            /* refuse an oversized region now, not after holding all of it
             * (and checking each new haplotype against all before it) */
            if (s->n_haps == 0 && (long)s->n > HK_MAX_REGION_HAPS)
                return hk_walk_fail(w, line, "region with more than %ld haplotypes (the first read's "
                                    "records, from line %ld, have as many distinct haplotypes)",
                                    HK_MAX_REGION_HAPS, hk_walk_line_no(w, s->recs[0]));
            if (s->n_haps && s->n - s->n_done == s->n_haps) s->n_done = s->n;
            if (s->n_haps && (long)(s->n_done / s->n_haps) > HK_MAX_REGION_READS)
                return hk_walk_fail(w, line, "region with more than %ld reads (from line %ld)",
                                    HK_MAX_REGION_READS, hk_walk_line_no(w, s->recs[0]));
            return HK_OK;
        }
        if (s->n_haps == 0) {           /* the first read ended: its haplotypes are the list */
            s->n_haps = s->n_done = s->n - 1;
            continue;
        }
        if ((rc = emit_region(w, s, b))) return rc;
    }
}

hk_status_t hk_results_check(hk_walk_t *w, const hk_line_t *L, long line, uint32_t hap_len, int first_field)
{
    const uint32_t read_len = hk_field_len(L, 1);
    if (hap_len == 0) return hk_walk_fail(w, line, "empty haplotype");
    if (read_len == 0) return hk_walk_fail(w, line, "empty read");
    /* regular: fields 3..5 are as long as field 2 (the walk's usual case) */
    if (!(L->flags & HK_LINE_REGULAR) || hk_field_len(L, 2) != read_len)
        for (int f = 2; f < 6; f++)
            if (hk_field_len(L, f) != read_len)
                return hk_walk_fail(w, line, "field %d has %u characters but the read has %u bases",
                                    f + first_field, hk_field_len(L, f), read_len);
    if (!(L->flags & EXPECTED_OK))
        return hk_walk_fail(w, line, "expected-result '%s' is not a number",
                            L->text + hk_field_end(L, 5) + 1);
    if (hap_len > HK_MAX_SEQ_LEN) return hk_walk_fail(w, line, "haplotype longer than %u bases", HK_MAX_SEQ_LEN);
    if (read_len > HK_MAX_SEQ_LEN) return hk_walk_fail(w, line, "read longer than %u bases", HK_MAX_SEQ_LEN);
    return HK_OK;
}

hk_status_t hk_results_push(hk_walk_t *w, hk_results_state_t *s, hk_batch_t *b, size_t i, long line)
{
    if ((long)(s->n + 1) > HK_MAX_REGION_PAIRS)
        return hk_walk_fail(w, line, "region longer than %ld records", HK_MAX_REGION_PAIRS);
    if (s->n == s->m) {
        const size_t cap = s->m ? 2 * s->m : 1024;
        size_t *x = realloc(s->recs, cap * sizeof *x);
        if (!x) return hk_walk_oom(w, line);
        s->recs = x;
        s->m = cap;
    }
    s->recs[s->n++] = i;
    return place_record(w, s, b, line);
}

/* Close the current region at a boundary (tag, end of input): place the
 * whole reads, then the partial read, if any, as a region of its own. */
hk_status_t hk_results_close(hk_walk_t *w, void *st, hk_batch_t *b)
{
    hk_status_t rc;
    hk_results_state_t *s = st;
    while (s->n > 0) {
        if (s->n_haps == 0) s->n_haps = s->n_done = s->n;
        if ((rc = emit_region(w, s, b))) return rc;
    }
    return HK_OK;
}

void hk_results_place_open(hk_walk_t *w, void *st, hk_batch_t *b)
{
    (void)!hk_results_close(w, st, b);   /* an error is recorded in w */
}

size_t hk_results_first_needed(const void *st, size_t n)
{
    const hk_results_state_t *s = st;
    return s->n ? s->recs[0] : n;
}

void hk_results_shift(void *st, size_t by)
{
    hk_results_state_t *s = st;
    for (size_t i = 0; i < s->n; i++) s->recs[i] -= by;
}

void hk_results_free(void *st) { free(((hk_results_state_t *)st)->recs); }
