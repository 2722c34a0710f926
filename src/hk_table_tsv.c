/* hk_table_tsv.c - the `tsv` format of the table: a long table, one row per
 * pair, that pandas, polars, R's data.table and DuckDB load as it is: one
 * header row, then the rows, nothing else (no comment lines):
 *
 *   input  line  region_index  region_name  read_index  haplotype_index  log10_likelihood  [expected  difference]
 *   a.txt  2     0             chr20:1-300  0           0                -1.664814         [-1.664814  2.1e-07]
 *
 * `input` is the input's name as given on the command line ("-": standard
 * input); `line` the 1-based line of the pair's own record in it (gatk and
 * pdhmm dumps), or of its read (batch dumps), counted as the region's `line`
 * is: in a shard that `haplik split` cut, in the original dump (its
 * "# source-line" tags). `expected` and `difference`
 * (log10_likelihood - expected) are there when the input carries GATK's
 * values (decided by the first pair); a missing or non-finite value is an
 * empty field (NA to every reader), never null, inf or nan. An empty region
 * name is a region without a tag. Reads and haplotypes are not written: a
 * long table would repeat them once per pair.
 *
 * Text from the input (names) is escaped so that no byte can break a row:
 * tab, newline, carriage return and backslash as \t \n \r \\, other control
 * bytes and bytes that are not well-formed UTF-8 as \xNN; the table is valid
 * UTF-8. The header and summary (provenance) go into a sidecar JSON file
 * beside the table (hk_table.h), which the core writes.
 */
#include "hk_table_internal.h"
#include "hk_numfmt.h"
#include "hk_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char COLUMNS[] = "input\tline\tregion_index\tregion_name\tread_index\thaplotype_index\t"
                              "log10_likelihood";

char *hk_table_put_tsv_field(char *p, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len;) {
        const unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            int valid;
            const size_t k = hk_text_utf8_next(s + i, len - i, &valid);
            if (valid) {
                memcpy(p, s + i, k);
                p += k;
            } else {
                for (size_t j = 0; j < k; j++) {
                    const unsigned char x = (unsigned char)s[i + j];
                    *p++ = '\\'; *p++ = 'x'; *p++ = hex[x >> 4]; *p++ = hex[x & 15];
                }
            }
            i += k;
            continue;
        }
        i++;
        if (c >= 0x20 && c != '\\' && c != 0x7f) { *p++ = (char)c; continue; }
        *p++ = '\\';
        switch (c) {
        case '\\': *p++ = '\\'; break;
        case '\t': *p++ = 't'; break;
        case '\n': *p++ = 'n'; break;
        case '\r': *p++ = 'r'; break;
        default: *p++ = 'x'; *p++ = hex[c >> 4]; *p++ = hex[c & 15];
        }
    }
    return p;
}

/* s as one escaped field. */
static int put_field(hk_textbuf_t *buf, const char *s, size_t len)
{
    char *p = hk_textbuf_room(buf, 4 * len);
    if (!p) return -1;
    buf->len = (size_t)(hk_table_put_tsv_field(p, s, len) - buf->p);
    return 0;
}

static int tsv_open(const hk_table_info_t *t, hk_textbuf_t *buf)
{
    return hk_textbuf_puts(buf, COLUMNS) ||
           hk_textbuf_puts(buf, t->expected ? "\texpected\tdifference\n" : "\n");
}

/* A number, or an empty field when it is not finite. */
static char *put_number(char *p, double v, int decimals)
{
    return isfinite(v) ? hk_numfmt_fixed(p, v, decimals) : p;
}

static int tsv_region(const hk_table_info_t *t, hk_textbuf_t *buf, const hk_batch_t *b, size_t ri,
                      uint64_t index)
{
    const hk_region_t *rg = &b->regions[ri];
    /* what every row of the region starts with, once: input, then (after
     * the line) region index and name */
    hk_textbuf_t head = { 0 };
    const char *input = rg->input < (uint32_t)t->n_inputs ? t->inputs[rg->input] : "";
    char num[32];
    const int nlen = snprintf(num, sizeof num, "\t%llu\t", (unsigned long long)index);
    if (put_field(&head, input, strlen(input)) || hk_textbuf_put(&head, "\t", 1)) {
        free(head.p);
        return -1;
    }
    const size_t input_len = head.len;
    if (hk_textbuf_put(&head, num, (size_t)nlen) ||
        (rg->name && put_field(&head, rg->name, strlen(rg->name))) || hk_textbuf_put(&head, "\t", 1)) {
        free(head.p);
        return -1;
    }
    /* a "# source-line" tag (a shard of `haplik split`) moved the region's
     * line to the original dump's; its records move with it */
    const long shift = rg->first_line > 0 ? rg->line - rg->first_line : 0;
    const size_t row_max = head.len + 24 + 2 * 12 + 3 * (HK_NUMFMT_MAX_LEN + 2) + 8;
    int rc = 0;
    for (uint32_t r = 0; r < rg->n_reads && !rc; r++)
        for (uint32_t h = 0; h < rg->n_haps; h++) {
            const size_t pair = rg->pair0 + (size_t)r * rg->n_haps + h;
            char *p = hk_textbuf_room(buf, row_max), *p0 = p;
            if (!p) { rc = -1; break; }
            const long own = b->pair_line && b->pair_line[pair] ? b->pair_line[pair]
                             : b->read_line ? b->read_line[rg->read0 + r] : 0;
            const long line = own ? own + shift : 0;
            memcpy(p, head.p, input_len);
            p += input_len;
            p += sprintf(p, "%ld", line);
            memcpy(p, head.p + input_len, head.len - input_len);
            p += head.len - input_len;
            p += sprintf(p, "%u\t%u\t", r, h);
            const double lk = b->lk[pair];
            p = put_number(p, lk, t->decimals);
            if (t->expected) {
                const double want = b->expected ? b->expected[pair] : NAN;
                *p++ = '\t';
                p = put_number(p, want, t->decimals);
                *p++ = '\t';
                if (isfinite(want) && isfinite(lk)) p += sprintf(p, "%.3g", lk - want);
            }
            *p++ = '\n';
            buf->len += (size_t)(p - p0);
        }
    free(head.p);
    return rc;
}

/* A row copied by merge: the whole row, its third field (region_index)
 * replaced by index. The fields before it (input, line) are short: a plain
 * loop finds them sooner than memchr, and the number is formatted by hand
 * (snprintf per row dominated merging). */
static int tsv_copy(const hk_table_info_t *t, hk_textbuf_t *buf, uint64_t index, const char *row,
                    size_t len)
{
    (void)t;
    const char *const end = row + len;
    const char *b = row, *c;
    int tabs = 0;
    while (b < end && (*b != '\t' || ++tabs < 2)) b++;
    for (c = b < end ? b + 1 : end; c < end && *c != '\t'; c++) continue;
    if (c >= end) return hk_textbuf_put(buf, row, len) || hk_textbuf_puts(buf, "\n");
    char *const p0 = hk_textbuf_room(buf, len + HK_NUMFMT_U64_LEN + 1);
    if (!p0) return -1;
    const size_t head = (size_t)(b + 1 - row), tail = (size_t)(end - c);
    memcpy(p0, row, head);
    char *p = hk_numfmt_u64(p0 + head, index);
    memcpy(p, c, tail);
    p += tail;
    *p++ = '\n';
    buf->len += (size_t)(p - p0);
    return 0;
}

/* Nothing after the rows: the summary goes into the sidecar. */
static int tsv_summary(const hk_table_info_t *t, hk_textbuf_t *buf, const char *summary,
                       uint64_t regions)
{
    (void)t; (void)buf; (void)summary; (void)regions;
    return 0;
}

static int tsv_sidecar(const hk_table_info_t *t, hk_textbuf_t *buf, const char *summary)
{
    return hk_textbuf_puts(buf, "{\"haplik-likelihoods\": {") || hk_textbuf_puts(buf, t->header) ||
           hk_textbuf_puts(buf, "},\n\"summary\": ") || hk_textbuf_puts(buf, summary) ||
           hk_textbuf_puts(buf, "}\n");
}

int hk_table_tsv_expected_row(const char *row, size_t len)
{
    size_t tabs = 0;
    for (size_t i = 0; i < len; i++) tabs += row[i] == '\t';
    return tabs > 6;
}

const hk_table_format_t hk_table_tsv = { "tsv", tsv_open, tsv_region, tsv_copy, tsv_summary,
                                         tsv_sidecar };
