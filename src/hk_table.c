/* hk_table.c - see hk_table.h. */
#include "hk_table.h"
#include "hk_log.h"
#include "hk_numfmt.h"
#include "hk_outfile.h"
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE (4u << 20)

struct hk_table {
    hk_outfile_t *out;
    FILE         *fp;
    char         *buf;
    size_t        len;
    int           format, decimals, sequences;
    uint64_t      index;      /* regions written */
    char          model[256];
    int           failed;
};

void hk_table_model_json(char *buf, size_t n, const hk_model_t *m)
{
    char gcp[16] = "null";
    if (m->gcp >= 0) snprintf(gcp, sizeof gcp, "%d", m->gcp);
    snprintf(buf, n, "{\"precision\": \"%s\", \"float_threshold\": %g, \"min_base_quality\": %d, "
             "\"gcp\": %s}", hk_config_precision_name(m->precision), m->float_threshold,
             m->min_base_quality, gcp);
}

static int flush_buf(hk_table_t *t)
{
    if (t->len && fwrite(t->buf, 1, t->len, t->fp) != t->len) {
        if (!t->failed) hk_log_error("%s: write failed: %s", hk_outfile_path(t->out), strerror(errno));
        t->failed = 1;
    }
    t->len = 0;
    return t->failed ? -1 : 0;
}

/* Room for n more bytes in the buffer (flushing as needed). Pieces larger than
 * the buffer never occur: callers reserve per sequence or per number. */
static char *room(hk_table_t *t, size_t n)
{
    if (t->len + n > BUF_SIZE && flush_buf(t) < 0) return NULL;
    if (n > BUF_SIZE) {
        char *p = realloc(t->buf, n);
        if (!p) return NULL;
        t->buf = p;
    }
    return t->buf + t->len;
}

static int put(hk_table_t *t, const char *s, size_t n)
{
    char *p = room(t, n);
    if (!p) return -1;
    memcpy(p, s, n);
    t->len += n;
    return 0;
}

static int puts_(hk_table_t *t, const char *s) { return put(t, s, strlen(s)); }

char *hk_table_put_string(char *p, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    *p++ = '"';
    size_t plain = 0;   /* sequences need no escaping: find the first byte that does */
    while (plain < len && (unsigned char)s[plain] >= 0x20 && s[plain] != '"' && s[plain] != '\\')
        plain++;
    memcpy(p, s, plain);
    p += plain;
    for (size_t i = plain; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') { *p++ = (char)c; continue; }
        *p++ = '\\';
        switch (c) {
        case '"': *p++ = '"'; break;
        case '\\': *p++ = '\\'; break;
        case '\n': *p++ = 'n'; break;
        case '\t': *p++ = 't'; break;
        default:
            *p++ = 'u'; *p++ = '0'; *p++ = '0'; *p++ = hex[c >> 4]; *p++ = hex[c & 15];
        }
    }
    *p++ = '"';
    return p;
}

static int put_string(hk_table_t *t, const char *s, size_t len)
{
    char *p = room(t, 6 * len + 2);
    if (!p) return -1;
    t->len = (size_t)(hk_table_put_string(p, s, len) - t->buf);
    return 0;
}

static int put_header(hk_table_t *t)
{
    char head[512];
    snprintf(head, sizeof head, "\"format\": \"haplik-likelihoods\", \"format_version\": 1, "
             "\"producer\": {\"name\": \"haplik\", \"version\": \"%s\"}, \"model\": %s",
             PACKAGE_VERSION, t->model);
    return puts_(t, head);
}

hk_table_t *hk_table_open(const char *path, const hk_config_t *c)
{
    hk_table_t *t = calloc(1, sizeof *t);
    if (!t || !(t->buf = malloc(BUF_SIZE))) {
        hk_log_error("out of memory");
        free(t);
        return NULL;
    }
    if (!(t->out = hk_outfile_open(path))) { free(t->buf); free(t); return NULL; }
    t->fp = hk_outfile_fp(t->out);
    t->format = c->output_format;
    t->decimals = c->decimals;
    t->sequences = c->sequences;
    hk_table_model_json(t->model, sizeof t->model, &c->model);
    if (t->format == HK_OUT_JSON &&
        (puts_(t, "{") || put_header(t) || puts_(t, ",\n\"regions\": [\n"))) {
        hk_table_abort(t);
        return NULL;
    }
    return t;
}

static int put_seq_array(hk_table_t *t, const char *text, const uint64_t *off, uint32_t first,
                         uint32_t n)
{
    if (puts_(t, "[")) return -1;
    for (uint32_t k = 0; k < n; k++) {
        if (k && puts_(t, ", ")) return -1;
        if (put_string(t, text + off[first + k], off[first + k + 1] - off[first + k])) return -1;
    }
    return puts_(t, "]");
}

int hk_table_write(hk_table_t *t, const hk_batch_t *b)
{
    char head[64];
    for (size_t ri = 0; ri < b->n_regions; ri++) {
        const hk_region_t *rg = &b->regions[ri];
        if (t->format == HK_OUT_JSON && t->index > 0 && puts_(t, ",\n")) return -1;
        snprintf(head, sizeof head, "{\"index\": %llu, \"name\": ", (unsigned long long)t->index++);
        if (puts_(t, head)) return -1;
        if (rg->name ? put_string(t, rg->name, strlen(rg->name)) : puts_(t, "null")) return -1;
        snprintf(head, sizeof head, ", \"line\": %ld", rg->line);
        if (puts_(t, head)) return -1;
        if (t->sequences) {
            if (puts_(t, ", \"haplotypes\": ") ||
                put_seq_array(t, b->hap_text, b->hap_off, rg->hap0, rg->n_haps) ||
                puts_(t, ", \"reads\": ") ||
                put_seq_array(t, b->read_text, b->read_off, rg->read0, rg->n_reads))
                return -1;
        }
        if (puts_(t, ", \"log10_likelihoods\": [")) return -1;
        const double *lk = b->lk + rg->pair0;
        const size_t per_row = (size_t)rg->n_haps * (HK_NUMFMT_MAX_LEN + 2) + 8;
        for (uint32_t r = 0; r < rg->n_reads; r++) {
            char *p = room(t, per_row), *p0 = p;
            if (!p) return -1;
            if (r) { *p++ = ','; *p++ = ' '; }
            *p++ = '[';
            for (uint32_t h = 0; h < rg->n_haps; h++) {
                if (h) { *p++ = ','; *p++ = ' '; }
                p = hk_numfmt_fixed(p, lk[(size_t)r * rg->n_haps + h], t->decimals);
            }
            *p++ = ']';
            t->len += (size_t)(p - p0);
        }
        if (puts_(t, t->format == HK_OUT_JSON ? "]}" : "]}\n")) return -1;
    }
    return flush_buf(t);
}

int hk_table_finish(hk_table_t *t, const hk_summary_t *s)
{
    char line[512];
    int rc = 0;
    if (t->format == HK_OUT_JSON) rc |= puts_(t, t->index ? "\n],\n\"summary\": " : "],\n\"summary\": ");
    else rc |= puts_(t, "{\"summary\": ");
    snprintf(line, sizeof line, "{\"regions\": %llu, \"pairs\": %llu, \"cells\": %llu, "
             "\"double_recomputed\": %llu, \"backend\": \"%s\", \"devices\": [",
             (unsigned long long)s->regions, (unsigned long long)s->pairs,
             (unsigned long long)s->cells, (unsigned long long)s->double_recomputed, s->backend);
    rc |= puts_(t, line);
    for (int i = 0; i < s->n_devices; i++) {
        if (i) rc |= puts_(t, ", ");
        rc |= put_string(t, s->devices[i], strlen(s->devices[i]));
    }
    snprintf(line, sizeof line, "], \"seconds\": %.3f}", s->seconds);
    rc |= puts_(t, line);
    if (t->format == HK_OUT_JSONL) rc |= puts_(t, ", ") || put_header(t);
    rc |= puts_(t, "}\n");
    if (rc || flush_buf(t) < 0) { hk_table_abort(t); return -1; }
    rc = hk_outfile_commit(t->out);
    free(t->buf);
    free(t);
    return rc;
}

void hk_table_abort(hk_table_t *t)
{
    if (!t) return;
    hk_outfile_abort(t->out);
    free(t->buf);
    free(t);
}
