/* hk_table_json.c - the `json` and `jsonl` formats of the table (layouts in
 * hk_table.h). */
#include "hk_table_internal.h"
#include "hk_numfmt.h"
#include "hk_text.h"

#include <stdio.h>
#include <string.h>

char *hk_table_put_string(char *p, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    *p++ = '"';
    size_t plain = 0;   /* sequences need no escaping: find the first byte that does */
    while (plain < len && (unsigned char)s[plain] >= 0x20 && (unsigned char)s[plain] < 0x7f &&
           s[plain] != '"' && s[plain] != '\\')
        plain++;
    memcpy(p, s, plain);
    p += plain;
    for (size_t i = plain; i < len;) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            /* text from the input (region names) need not be UTF-8: the table must */
            int valid;
            const size_t k = hk_text_utf8_next(s + i, len - i, &valid);
            if (valid) {
                memcpy(p, s + i, k);
                p += k;
            } else {
                memcpy(p, "\\ufffd", 6);
                p += 6;
            }
            i += k;
            continue;
        }
        i++;
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) { *p++ = (char)c; continue; }
        *p++ = '\\';
        switch (c) {
        case '"': *p++ = '"'; break;
        case '\\': *p++ = '\\'; break;
        case '\n': *p++ = 'n'; break;
        case '\t': *p++ = 't'; break;
        default:   /* other controls, DEL included: nothing raw that a terminal obeys */
            *p++ = 'u'; *p++ = '0'; *p++ = '0'; *p++ = hex[c >> 4]; *p++ = hex[c & 15];
        }
    }
    *p++ = '"';
    return p;
}

int hk_textbuf_put_json_string(hk_textbuf_t *buf, const char *s, size_t len)
{
    char *p = hk_textbuf_room(buf, 6 * len + 2);
    if (!p) return -1;
    buf->len = (size_t)(hk_table_put_string(p, s, len) - buf->p);
    return 0;
}

static int json_open(const hk_table_info_t *t, hk_textbuf_t *buf)
{
    return hk_textbuf_puts(buf, "{") || hk_textbuf_puts(buf, t->header) ||
           hk_textbuf_puts(buf, ",\n\"regions\": [\n");
}

static int jsonl_open(const hk_table_info_t *t, hk_textbuf_t *buf)
{
    (void)t; (void)buf;
    return 0;
}

static int put_seq_array(hk_textbuf_t *buf, const char *text, const uint64_t *off, uint32_t first,
                         uint32_t n)
{
    if (hk_textbuf_puts(buf, "[")) return -1;
    for (uint32_t k = 0; k < n; k++) {
        if (k && hk_textbuf_puts(buf, ", ")) return -1;
        if (hk_textbuf_put_json_string(buf, text + off[first + k], off[first + k + 1] - off[first + k]))
            return -1;
    }
    return hk_textbuf_puts(buf, "]");
}

/* A PDHMM region's haplotypes' PD bytes, as signed values (SPEC 3). */
static int put_pd_array(hk_textbuf_t *buf, const hk_batch_t *b, const hk_region_t *rg)
{
    if (hk_textbuf_puts(buf, ", \"haplotype_pd\": [")) return -1;
    for (uint32_t h = 0; h < rg->n_haps; h++) {
        const size_t k = rg->hap0 + h, len = hk_batch_hap_len(b, k);
        char *p = hk_textbuf_room(buf, len * 6 + 4), *p0 = p;
        if (!p) return -1;
        if (h) { *p++ = ','; *p++ = ' '; }
        *p++ = '[';
        for (size_t x = 0; x < len; x++)
            p += sprintf(p, x ? ", %d" : "%d", (int)(int8_t)b->hap_pd[b->hap_off[k] + x]);
        *p++ = ']';
        buf->len += (size_t)(p - p0);
    }
    return hk_textbuf_puts(buf, "]");
}

/* A region line; json separates lines with ",\n", jsonl ends each with "\n". */
static int region(const hk_table_info_t *t, hk_textbuf_t *buf, const hk_batch_t *b, size_t ri,
                  uint64_t index, int jsonl)
{
    const hk_region_t *rg = &b->regions[ri];
    char head[96];
    snprintf(head, sizeof head, "%s{\"index\": %llu, \"name\": ", !jsonl && index > 0 ? ",\n" : "",
             (unsigned long long)index);
    if (hk_textbuf_puts(buf, head)) return -1;
    if (rg->name ? hk_textbuf_put_json_string(buf, rg->name, strlen(rg->name))
                 : hk_textbuf_puts(buf, "null"))
        return -1;
    snprintf(head, sizeof head, ", \"line\": %ld", rg->line);
    if (hk_textbuf_puts(buf, head)) return -1;
    if (t->sequences) {
        if (hk_textbuf_puts(buf, ", \"haplotypes\": ") ||
            put_seq_array(buf, b->hap_text, b->hap_off, rg->hap0, rg->n_haps) ||
            (b->pdhmm && put_pd_array(buf, b, rg)) ||
            hk_textbuf_puts(buf, ", \"reads\": ") ||
            put_seq_array(buf, b->read_text, b->read_off, rg->read0, rg->n_reads))
            return -1;
    }
    else if (b->pdhmm && put_pd_array(buf, b, rg)) {
        return -1;
    }
    if (hk_textbuf_puts(buf, ", \"log10_likelihoods\": [")) return -1;
    const double *lk = b->lk + rg->pair0;
    const size_t per_row = (size_t)rg->n_haps * (HK_NUMFMT_MAX_LEN + 2) + 8;
    for (uint32_t r = 0; r < rg->n_reads; r++) {
        char *p = hk_textbuf_room(buf, per_row), *p0 = p;
        if (!p) return -1;
        if (r) { *p++ = ','; *p++ = ' '; }
        *p++ = '[';
        for (uint32_t h = 0; h < rg->n_haps; h++) {
            if (h) { *p++ = ','; *p++ = ' '; }
            p = hk_numfmt_fixed(p, lk[(size_t)r * rg->n_haps + h], t->decimals);
        }
        *p++ = ']';
        buf->len += (size_t)(p - p0);
    }
    return hk_textbuf_puts(buf, jsonl ? "]}\n" : "]}");
}

static int json_region(const hk_table_info_t *t, hk_textbuf_t *buf, const hk_batch_t *b, size_t ri,
                       uint64_t index)
{
    return region(t, buf, b, ri, index, 0);
}

static int jsonl_region(const hk_table_info_t *t, hk_textbuf_t *buf, const hk_batch_t *b,
                        size_t ri, uint64_t index)
{
    return region(t, buf, b, ri, index, 1);
}

static int copy(hk_textbuf_t *buf, uint64_t index, const char *rest, size_t len, int jsonl)
{
    static const char open[] = ",\n{\"index\": ";
    char *const p0 = hk_textbuf_room(buf, sizeof open + HK_NUMFMT_U64_LEN + len + 1);
    if (!p0) return -1;
    /* the index by hand: snprintf per region dominated merging small regions */
    const size_t skip = !jsonl && index > 0 ? 0 : 2;   /* no ",\n" before the first */
    memcpy(p0, open + skip, sizeof open - 1 - skip);
    char *p = hk_numfmt_u64(p0 + sizeof open - 1 - skip, index);
    memcpy(p, rest, len);
    p += len;
    if (jsonl) *p++ = '\n';
    buf->len += (size_t)(p - p0);
    return 0;
}

static int json_copy(const hk_table_info_t *t, hk_textbuf_t *buf, uint64_t index, const char *rest,
                     size_t len)
{
    (void)t;
    return copy(buf, index, rest, len, 0);
}

static int jsonl_copy(const hk_table_info_t *t, hk_textbuf_t *buf, uint64_t index,
                      const char *rest, size_t len)
{
    (void)t;
    return copy(buf, index, rest, len, 1);
}

static int json_summary(const hk_table_info_t *t, hk_textbuf_t *buf, const char *summary,
                        uint64_t regions)
{
    (void)t;
    return hk_textbuf_puts(buf, regions ? "\n],\n\"summary\": " : "],\n\"summary\": ") ||
           hk_textbuf_puts(buf, summary) || hk_textbuf_puts(buf, "}\n");
}

static int jsonl_summary(const hk_table_info_t *t, hk_textbuf_t *buf, const char *summary,
                         uint64_t regions)
{
    (void)regions;
    return hk_textbuf_puts(buf, "{\"summary\": ") || hk_textbuf_puts(buf, summary) ||
           hk_textbuf_puts(buf, ", ") || hk_textbuf_puts(buf, t->header) ||
           hk_textbuf_puts(buf, "}\n");
}

const hk_table_format_t hk_table_json = { "json", json_open, json_region, json_copy, json_summary,
                                         NULL };
const hk_table_format_t hk_table_jsonl = { "jsonl", jsonl_open, jsonl_region, jsonl_copy,
                                           jsonl_summary, NULL };
