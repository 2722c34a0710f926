/* hk_table_read_tsv.c - the tsv part of the table reader (hk_table_read.h):
 * every row checked against the columns' contract (README, "The likelihood table")
 * before merge copies it. */
#include "hk_table_read_check.h"
#include "hk_table_read_internal.h"
#include "hk_config.h"
#include "hk_json_scan.h"
#include "hk_log.h"
#include "hk_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS "input\tline\tregion_index\tregion_name\tread_index\thaplotype_index\tlog10_likelihood"
#define EXPECTED "\texpected\tdifference"
#define MAX_SIDECAR  (64u << 20)  /* a sidecar larger than this is not one of haplik's */

static hk_status_t errno_status(int e) { return hk_status_of_errno(e); }

/* Fields of a row, in order. */
enum { F_INPUT, F_LINE, F_REGION, F_NAME, F_READ, F_HAP, F_LK, F_EXPECTED, F_DIFFERENCE, N_FIELDS };

static const char *const field_names[N_FIELDS] = {
    "input", "line", "region_index", "region_name", "read_index", "haplotype_index",
    "log10_likelihood", "expected", "difference",
};

hk_status_t hk_tread_tsv_start(hk_tread_t *t)
{
    t->format = HK_OUT_TSV;
    if (!strcmp(t->s, COLUMNS)) t->expected = 0;
    else if (!strcmp(t->s, COLUMNS EXPECTED)) t->expected = 1;
    else {
        hk_log_error("%s:1: not the columns of a haplik tsv table (%s[%s])", t->path, COLUMNS,
                     EXPECTED);
        return HK_E_INPUT;
    }
    t->columns = t->expected ? N_FIELDS : F_EXPECTED;
    t->at = AT_REGIONS;
    return hk_tread_sidecar(t);
}

/* A count: digits, no leading zero, at most 2^53. */
static int count_field(const char *s, size_t n, uint64_t *v)
{
    if (!n || n > 16 || (s[0] == '0' && n > 1)) return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (x > (1ull << 53)) return -1;
    *v = x;
    return 0;
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Escaped text (input, region_name): UTF-8 without raw control bytes, each
 * backslash one of \t \n \r \\ \xNN. NULL, or what is wrong. */
static const char *text_fault(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        const unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            int valid;
            i += hk_text_utf8_next(s + i, n - i, &valid);
            if (!valid) return "text that is not UTF-8";
            continue;
        }
        if (c < 0x20) return "a raw control character";
        if (c != '\\') { i++; continue; }
        if (i + 1 < n && (s[i + 1] == 't' || s[i + 1] == 'n' || s[i + 1] == 'r' || s[i + 1] == '\\')) {
            i += 2;
            continue;
        }
        if (i + 3 < n && s[i + 1] == 'x' && is_hex(s[i + 2]) && is_hex(s[i + 3])) {
            i += 4;
            continue;
        }
        return "a backslash that starts no escape";
    }
    return NULL;
}

/* Keep a copy of s[0, n) in *buf. */
static hk_status_t keep(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (n + 1 > *cap) {
        char *b = realloc(*buf, n + 1);
        if (!b) { hk_log_error("out of memory"); return HK_E_NOMEM; }
        *buf = b;
        *cap = n + 1;
    }
    memcpy(*buf, s, n);
    *len = n;
    return HK_OK;
}

static hk_status_t row_fault(const hk_tread_t *t, const char *what, int field)
{
    if (field >= 0)
        hk_log_error("%s:%ld: not a haplik row: %s %s", t->path, t->line, field_names[field], what);
    else
        hk_log_error("%s:%ld: not a haplik row: %s", t->path, t->line, what);
    return HK_E_INPUT;
}

/* The region ends: its last read must have all its haplotypes. */
static hk_status_t region_end(const hk_tread_t *t)
{
    if (t->regions && t->n_haps && t->hap + 1 != t->n_haps) {
        hk_log_error("%s:%ld: region %llu ends with %llu of its %llu haplotypes in its last read",
                     t->path, t->line, (unsigned long long)(t->regions - 1),
                     (unsigned long long)(t->hap + 1), (unsigned long long)t->n_haps);
        return HK_E_INPUT;
    }
    return HK_OK;
}

/* Whether (read, hap) may follow the row before in the same region. */
static int in_order(hk_tread_t *t, uint64_t read, uint64_t hap)
{
    if (read == t->read) return hap == t->hap + 1 && (!t->n_haps || hap < t->n_haps);
    if (read != t->read + 1 || hap != 0) return 0;
    if (!t->n_haps) t->n_haps = t->hap + 1;   /* the first read gave the count */
    return t->hap + 1 == t->n_haps;
}

/* ---- the common row, checked in one pass ----
 *
 * Most rows continue the region of the row before, with its input and name:
 * fast_row checks such a row field by field as it walks it (the line is
 * NUL-terminated, so no digit run needs a bound) and accepts nothing that the
 * full check below refuses. Anything else (a region's first row, another
 * input, any fault) goes to the full check, which says what is wrong. */

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A count at p (as count_field) followed by a tab: where the next field
 * starts, or NULL. */
static inline const char *count_tab(const char *p, uint64_t *v)
{
    const char *const p0 = p;
    uint64_t x = 0;
    while (is_digit(*p)) x = x * 10 + (uint64_t)(*p++ - '0');
    const size_t n = (size_t)(p - p0);
    if (*p != '\t' || !n || n > 16 || (*p0 == '0' && n > 1) || x > (1ull << 53)) return NULL;
    *v = x;
    return p + 1;
}

/* The end of a JSON number at p (hk_json_is_number's grammar), or NULL. */
static inline const char *number_end(const char *p)
{
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') do p++; while (is_digit(*p));
    else return NULL;
    if (*p == '.') {
        if (!is_digit(*++p)) return NULL;
        do p++; while (is_digit(*p));
    }
    if (*p == 'e' || *p == 'E') {
        if (*++p == '+' || *p == '-') p++;
        if (!is_digit(*p)) return NULL;
        do p++; while (is_digit(*p));
    }
    return p;
}

/* Whether p starts with the n bytes of kept and then a tab (kept holds no
 * tab). Short in practice (a file name, a region name): no call to memcmp. */
static inline int field_is(const char *p, const char *end, const char *kept, size_t n)
{
    if ((size_t)(end - p) <= n) return 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] != kept[i]) return 0;
    return p[n] == '\t';
}

/* 1: the row at t->s continues the current region and is fine (rec filled);
 * 0: let the full check decide. */
static int fast_row(hk_tread_t *t, hk_tread_rec_t *rec)
{
    const char *p = t->s, *const end = t->s + t->n;
    if (!t->regions || !t->input || !field_is(p, end, t->input, t->input_len)) return 0;
    uint64_t line, region, read, hap;
    if (!(p = count_tab(p + t->input_len + 1, &line)) || !line) return 0;
    const char *const at = p;   /* region_index */
    if (!(p = count_tab(p, &region)) || region != t->regions - 1) return 0;
    const char *const after = p - 1;
    if (!field_is(p, end, t->name, t->name_len)) return 0;
    if (!(p = count_tab(p + t->name_len + 1, &read)) || !(p = count_tab(p, &hap))) return 0;
    for (int i = F_LK; i < t->columns; i++) {
        const char *const at = p;
        if (*p != '\t' && p != end && !(p = number_end(p))) return 0;   /* empty, or a number */
        /* an exponent or many digits: is it within a double's range? */
        if (p - at > 24 || memchr(at, 'e', (size_t)(p - at)) || memchr(at, 'E', (size_t)(p - at))) return 0;
        if (i + 1 < t->columns ? *p != '\t' : p != end) return 0;
        p++;
    }
    if (read == t->read ? hap != t->hap + 1 || (t->n_haps && hap >= t->n_haps) : !in_order(t, read, hap))
        return 0;
    t->read = read;
    t->hap = hap;
    t->pairs++;
    *rec = (hk_tread_rec_t){ .index = region, .head = t->s, .head_len = (size_t)(at - t->s),
                             .rest = after, .rest_len = (size_t)(end - after), .pairs = 1 };
    return 1;
}

hk_status_t hk_tread_tsv_row(hk_tread_t *t, hk_tread_rec_t *rec)
{
    if (fast_row(t, rec)) return HK_OK;
    const char *f[N_FIELDS + 1];
    size_t len[N_FIELDS];
    const char *const end = t->s + t->n;
    int k = 0;
    /* the fields: short, so a plain loop beats a memchr per field */
    f[0] = t->s;
    for (const char *p = t->s; p < end; p++)
        if (*p == '\t') {
            if (k + 1 == t->columns) return row_fault(t, "more fields than the table's columns", -1);
            len[k] = (size_t)(p - f[k]);
            f[++k] = p + 1;
        }
    len[k] = (size_t)(end - f[k]);
    if (++k < t->columns) return row_fault(t, "fewer fields than the table's columns", -1);
    uint64_t line, region, read, hap;
    const char *why;
    hk_status_t st;
    /* a table's rows repeat their input's name: checked when it changes */
    if (!t->input || len[F_INPUT] != t->input_len || memcmp(f[F_INPUT], t->input, t->input_len)) {
        if ((why = text_fault(f[F_INPUT], len[F_INPUT]))) return row_fault(t, why, F_INPUT);
        if ((st = keep(&t->input, &t->input_len, &t->input_cap, f[F_INPUT], len[F_INPUT])))
            return st;
    }
    if (count_field(f[F_LINE], len[F_LINE], &line) || line == 0)
        return row_fault(t, "is not a line number", F_LINE);
    if (count_field(f[F_REGION], len[F_REGION], &region)) return row_fault(t, "is not a count", F_REGION);
    if (count_field(f[F_READ], len[F_READ], &read)) return row_fault(t, "is not a count", F_READ);
    if (count_field(f[F_HAP], len[F_HAP], &hap)) return row_fault(t, "is not a count", F_HAP);
    for (int i = F_LK; i < t->columns; i++)
        if (len[i] && !hk_json_is_number(f[i], len[i]))
            return row_fault(t, "is not a number or empty", i);
        else if (len[i] && !hk_json_number_finite(f[i], len[i]))
            return row_fault(t, "is beyond a double's range", i);
    if (t->regions && region == t->regions - 1) {
        if (len[F_NAME] != t->name_len || memcmp(f[F_NAME], t->name, t->name_len))
            return row_fault(t, "region_name differs from the region's first row's", -1);
        if (!in_order(t, read, hap)) {
            hk_log_error("%s:%ld: not a haplik row: read %llu haplotype %llu cannot follow read %llu "
                         "haplotype %llu", t->path, t->line, (unsigned long long)read,
                         (unsigned long long)hap, (unsigned long long)t->read,
                         (unsigned long long)t->hap);
            return HK_E_INPUT;
        }
    } else if (region == t->regions) {
        if ((st = region_end(t))) return st;
        if (read || hap)
            return row_fault(t, "a region's first row is not read 0, haplotype 0", -1);
        /* the name: checked in a region's first row, the others must repeat it */
        if ((why = text_fault(f[F_NAME], len[F_NAME]))) return row_fault(t, why, F_NAME);
        if ((st = keep(&t->name, &t->name_len, &t->name_cap, f[F_NAME], len[F_NAME]))) return st;
        t->regions++;
        t->n_haps = 0;
    } else {
        hk_log_error("%s:%ld: not a haplik row: region_index %llu is not %llu or %llu", t->path,
                     t->line, (unsigned long long)region,
                     (unsigned long long)(t->regions ? t->regions - 1 : 0),
                     (unsigned long long)t->regions);
        return HK_E_INPUT;
    }
    t->read = read;
    t->hap = hap;
    t->pairs++;
    const char *after = f[F_REGION] + len[F_REGION];
    *rec = (hk_tread_rec_t){ .index = region, .head = t->s, .head_len = (size_t)(f[F_REGION] - t->s),
                             .rest = after, .rest_len = (size_t)(end - after), .pairs = 1 };
    return HK_OK;
}

hk_status_t hk_tread_tsv_end(hk_tread_t *t)
{
    const hk_status_t st = region_end(t);
    if (st) return st;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(t->header_doc, "summary");
    if (!s) {
        hk_log_error("%s:1: not a haplik table's sidecar (no summary)", t->sidecar);
        return HK_E_INPUT;
    }
    return hk_tread_check_summary(t, s, t->sidecar, 1);
}

/* ---- the sidecar of a tsv table ---- */

hk_status_t hk_tread_sidecar(hk_tread_t *t)
{
    const size_t n = strlen(t->path);
    if (!(t->sidecar = malloc(n + sizeof ".meta.json"))) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    memcpy(t->sidecar, t->path, n);
    memcpy(t->sidecar + n, ".meta.json", sizeof ".meta.json");
    FILE *fp = strcmp(t->path, "-") ? fopen(t->sidecar, "rb") : NULL;
    if (!fp) {
        const int e = errno;
        if (strcmp(t->path, "-") && e != ENOENT) {   /* there, and not to be read (or no files left) */
            hk_log_error("%s: a tsv table's model and summary are in its sidecar %s, which cannot be "
                         "opened: %s", t->path, t->sidecar, strerror(e));
            return errno_status(e);
        }
        hk_log_error("%s: a tsv table's model and summary are in its sidecar %s, which is missing%s%s",
                     t->path, t->sidecar, strcmp(t->path, "-") ? ": " : " (a table streamed "
                     "to standard output has none)", strcmp(t->path, "-") ? strerror(e) : "");
        return HK_E_INPUT;
    }
    char *text = malloc(MAX_SIDECAR + 1);
    const size_t got = text ? fread(text, 1, MAX_SIDECAR + 1, fp) : 0;
    const int err = ferror(fp);
    fclose(fp);
    if (!text || err || got > MAX_SIDECAR) {
        hk_log_error("%s: %s", t->sidecar, !text ? "out of memory" : err ? "read error"
                                                                       : "too large for a sidecar");
        free(text);
        return !text ? HK_E_NOMEM : HK_E_INPUT;
    }
    size_t len = got;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r')) len--;
    hk_tread_t probe = *t;   /* messages name the sidecar */
    probe.path = t->sidecar;
    probe.line = 1;
    probe.fixed = NULL;
    cJSON *j;
    hk_status_t st = hk_tread_parse(&probe, "", text, len, "", &j);
    free(text);
    free(probe.fixed);
    if (st) return st;
    t->header_doc = j;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "haplik-likelihoods");
    if (!cJSON_IsObject(h)) {
        hk_log_error("%s:1: not a haplik table's sidecar (no \"haplik-likelihoods\" object)",
                     t->sidecar);
        return HK_E_INPUT;
    }
    if ((st = hk_tread_check_header(t, h))) return st;
    t->header = h;
    t->header_where = t->sidecar;
    t->header_line = 1;
    return HK_OK;
}
