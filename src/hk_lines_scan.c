/* hk_lines_scan.c - see hk_lines_scan.h. */
#include "hk_lines_scan.h"
#include "hk_mem.h"

#include <stdlib.h>
#include <string.h>

void hk_lines_split_fields(hk_line_t *L, const char *s, char sep)
{
    uint32_t from = 0;
    for (int n = 0;; n++) {
        if (n == HK_MAX_FIELDS) { L->n_fields = HK_MAX_FIELDS + 1; return; }
        const char *q = memchr(s + from, sep, L->len - from);
        L->field_end[n] = q ? (uint32_t)(q - s) : L->len;
        if (!q) { L->n_fields = (uint8_t)(n + 1); return; }
        from = L->field_end[n] + 1;
    }
}

void hk_lines_scan_piece(hk_lines_piece_t *p, hk_lines_scan_fn scan, char sep)
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
