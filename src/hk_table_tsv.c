/* hk_table_tsv.c - the `tsv` format of the table: a long table, one row per
 * pair, that pandas, polars, R's data.table and DuckDB load as it is:
 *
 *   #haplik-likelihoods {"format": ..., "model": ..., "decimals": 6}
 *   region_index  region_name  read_index  haplotype_index  log10_likelihood  [expected  difference]
 *   0             chr20:1-300  0           0                -1.664814         [-1.664814  2.1e-07]
 *   ...
 *   #summary {"regions": ..., ...}
 *
 * The header and summary are comment lines (comment="#" in pandas and
 * DuckDB, comment_prefix="#" in polars) holding the same JSON as the json
 * table's, so that merge checks and sums tsv tables as it does json ones.
 * `expected` and `difference` (log10_likelihood - expected) are there when
 * the input carries GATK's values (decided by its first pair); a pair
 * without one has them empty (NA to every reader). An empty region name is a
 * region without a tag. Reads and haplotypes are not written: a long table
 * would repeat them once per pair.
 */
#include "hk_table_internal.h"
#include "hk_numfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int columns(hk_textbuf_t *buf, int expected)
{
    return hk_textbuf_puts(buf, "region_index\tregion_name\tread_index\thaplotype_index\t"
                                "log10_likelihood") ||
           hk_textbuf_puts(buf, expected ? "\texpected\tdifference\n" : "\n");
}

static int tsv_open(const hk_table_info_t *t, hk_textbuf_t *buf)
{
    return hk_textbuf_puts(buf, "#haplik-likelihoods {") || hk_textbuf_puts(buf, t->header) ||
           hk_textbuf_puts(buf, "}\n");
}

/* A region name as one field: tabs, line ends and other controls become
 * spaces. */
static int put_name(hk_textbuf_t *buf, const char *name)
{
    const size_t n = name ? strlen(name) : 0;
    if (n == 0) return 0;
    char *p = hk_textbuf_room(buf, n);
    if (!p) return -1;
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)name[i];
        p[i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    buf->len += n;
    return 0;
}

static int tsv_region(const hk_table_info_t *t, hk_textbuf_t *buf, const hk_batch_t *b, size_t ri,
                      uint64_t index)
{
    const hk_region_t *rg = &b->regions[ri];
    if (index == 0 && columns(buf, t->expected)) return -1;
    char prefix[48];
    const int plen = snprintf(prefix, sizeof prefix, "%llu\t", (unsigned long long)index);
    /* the name, once, to copy into each row */
    hk_textbuf_t name = { 0 };
    if (put_name(&name, rg->name) || hk_textbuf_put(&name, "\t", 1)) return -1;
    const size_t row_max = (size_t)plen + name.len + 2 * 12 + 3 * (HK_NUMFMT_MAX_LEN + 2) + 8;
    int rc = 0;
    for (uint32_t r = 0; r < rg->n_reads && !rc; r++)
        for (uint32_t h = 0; h < rg->n_haps; h++) {
            const size_t pair = rg->pair0 + (size_t)r * rg->n_haps + h;
            char *p = hk_textbuf_room(buf, row_max), *p0 = p;
            if (!p) { rc = -1; break; }
            memcpy(p, prefix, (size_t)plen);
            p += plen;
            memcpy(p, name.p, name.len);
            p += name.len;
            p += sprintf(p, "%u\t%u\t", r, h);
            p = hk_numfmt_fixed(p, b->lk[pair], t->decimals);
            if (t->expected) {
                const double want = b->expected ? b->expected[pair] : NAN;
                if (isnan(want)) p += sprintf(p, "\t\t");
                else {
                    *p++ = '\t';
                    p = hk_numfmt_fixed(p, want, t->decimals);
                    p += sprintf(p, "\t%.3g", b->lk[pair] - want);
                }
            }
            *p++ = '\n';
            buf->len += (size_t)(p - p0);
        }
    free(name.p);
    return rc;
}

/* A row copied by merge: its first row (region 0, read 0, haplotype 0) is
 * preceded by the column names, with the expected columns when it has them. */
static int tsv_copy(const hk_table_info_t *t, hk_textbuf_t *buf, uint64_t index, const char *rest,
                    size_t len)
{
    (void)t;
    if (index == 0) {
        const char *name_end = memchr(rest + 1, '\t', len ? len - 1 : 0);
        if (name_end && (size_t)(rest + len - name_end) > 5 && !strncmp(name_end, "\t0\t0\t", 5)) {
            int tabs = 0;
            for (size_t i = 0; i < len; i++) tabs += rest[i] == '\t';
            if (columns(buf, tabs > 4)) return -1;
        }
    }
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%llu", (unsigned long long)index);
    return hk_textbuf_puts(buf, prefix) || hk_textbuf_put(buf, rest, len) ||
           hk_textbuf_puts(buf, "\n");
}

static int tsv_summary(const hk_table_info_t *t, hk_textbuf_t *buf, const char *summary,
                       uint64_t regions)
{
    return (!regions && columns(buf, t->expected)) || hk_textbuf_puts(buf, "#summary ") ||
           hk_textbuf_puts(buf, summary) || hk_textbuf_puts(buf, "\n");
}

const hk_table_format_t hk_table_tsv = { "tsv", tsv_open, tsv_region, tsv_copy, tsv_summary };
