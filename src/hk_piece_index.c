/* hk_piece_index.c - see hk_piece_index.h. */
#include "hk_piece_index.h"
#include "hk_mem.h"

#include <stdlib.h>
#include <string.h>

void hk_lines_split_fields(hk_line_t *L, const char *s, char sep)
{
    uint32_t from = 0, width = 0;   /* width: field 2's, and its separator */
    int regular = 1;
    L->flags = sep == '\t' ? HK_LINE_TAB : 0;
    for (int n = 0;; n++) {
        if (n == HK_MAX_FIELDS) { L->n_fields = HK_MAX_FIELDS + 1; return; }
        const char *q = memchr(s + from, sep, L->len - from);
        const uint32_t end = q ? (uint32_t)(q - s) : L->len;
        if (!q) {   /* the last field */
            if (n < HK_LINE_KEPT_FIELDS) L->field_end[n] = end;
            L->n_fields = (uint8_t)(n + 1);
            if (regular) L->flags |= HK_LINE_REGULAR;
            return;
        }
        if (n < HK_LINE_KEPT_FIELDS) L->field_end[n] = end;
        if (n == 2) width = end + 1 - from;
        else if (n > 2 && end + 1 - from != width) regular = 0;
        from = end + 1;
    }
}

uint32_t hk_lines_field_end_split(const hk_line_t *L, int k)
{
    const char sep = L->flags & HK_LINE_TAB ? '\t' : ' ';
    uint32_t end = L->field_end[HK_LINE_KEPT_FIELDS - 1];
    for (int f = HK_LINE_KEPT_FIELDS; f <= k && end < L->len; f++) {
        const char *q = memchr(L->text + end + 1, sep, L->len - end - 1);
        end = q ? (uint32_t)(q - L->text) : L->len;
    }
    return end;
}

void hk_piece_index_lines(hk_lines_piece_t *p, hk_piece_scan_fn scan, char sep)
{
    char *s = p->buf + p->lo, *const end = p->buf + p->hi;
    char *nul = memchr(s, '\0', (size_t)(end - s));   /* the next NUL byte at or after s */
    if (!nul) nul = end;
    p->n = 0;
    p->oom = 0;
    while (s < end) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl) nl = end;    /* the last line, without a line end */
        if (nul < s && !(nul = memchr(s, '\0', (size_t)(end - s)))) nul = end;
        if (p->n == p->m) {
            const size_t m = p->m ? 2 * p->m : 4096;
            hk_line_t *x = hk_mem_realloc(p->lines, m * sizeof *x);
            if (!x) { p->oom = 1; return; }
            p->lines = x;
            p->m = m;
        }
        const size_t i = p->n++;
        hk_line_t *L = &p->lines[i];
        size_t len = (size_t)(nl - s);
        memset(L, 0, sizeof *L);
        L->text = s;
        L->piece_back = (uint32_t)i;
        if (len > HK_MAX_LINE_LEN) {
            L->kind = HK_LINE_TOO_LONG;
        } else if (nul < nl) {
            L->kind = HK_LINE_NUL;
        } else {
            if (len && s[len - 1] == '\r') len--;   /* CRLF, also on a last line */
            s[len] = '\0';
            L->len = (uint32_t)len;
            L->first = s[0];
            hk_lines_split_fields(L, s, sep);
        }
        s = nl + 1;
    }
    if (scan) scan(p->lines, p->n, &p->state);
}
