/* hk_table_read_check.c - see hk_table_read_check.h. */
#include "hk_table_read_check.h"
#include "hk_json_scan.h"
#include "hk_log.h"
#include "hk_numfmt.h"
#include "hk_config.h"
#include "hk_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON text ---- */

/* s with ill-formed UTF-8 repaired (into t->fixed, *n its length), told once. */
hk_status_t hk_tread_repaired(hk_tread_t *t, const char *s, size_t *n)
{
    free(t->fixed);
    if (!(t->fixed = hk_text_utf8_fix(s, *n, n))) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    if (!t->fixed_told++)
        hk_log_notice("%s:%ld: text that is not UTF-8 is written as U+FFFD", t->path, t->line);
    return HK_OK;
}

void hk_tread_json_fault(const hk_tread_t *t, const hk_scan_fault_t *f, size_t skip)
{
    const size_t at = f->at > skip ? f->at - skip : 0;
    if (f->shape) hk_log_error("%s:%ld: not a haplik region: %s", t->path, t->line, f->what);
    else hk_log_error("%s:%ld: not valid JSON: %s at byte %zu", t->path, t->line, f->what, at + 1);
}

hk_status_t hk_tread_parse(hk_tread_t *t, const char *prefix, const char *s, size_t n,
                           const char *suffix, cJSON **out)
{
    const size_t np = strlen(prefix), ns = strlen(suffix);
    char *text = malloc(np + n + ns + 1);
    hk_status_t st = HK_OK;
    *out = NULL;
    if (!text) { hk_log_error("out of memory"); return HK_E_NOMEM; }
    memcpy(text, prefix, np);
    memcpy(text + np, s, n);
    memcpy(text + np + n, suffix, ns + 1);
    size_t len = np + n + ns;
    hk_scan_fault_t f;
    int rc = hk_json_scan_value(text, len, &f);
    if (rc == HK_SCAN_UTF8) {
        st = hk_tread_repaired(t, text, &len);
        free(text);
        if (st) return st;
        if (!(text = malloc(len + 1))) { hk_log_error("out of memory"); return HK_E_NOMEM; }
        memcpy(text, t->fixed, len + 1);
        rc = hk_json_scan_value(text, len, &f);
    }
    if (rc != HK_SCAN_OK) {
        hk_tread_json_fault(t, &f, np);
        st = HK_E_INPUT;
    } else if (!(*out = cJSON_ParseWithLength(text, len))) {
        hk_log_error("out of memory");
        st = HK_E_NOMEM;
    }
    free(text);
    return st;
}

/* ---- header and summary ---- */

static int is_count(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 9007199254740992.0 &&
           v->valuedouble == floor(v->valuedouble);
}

hk_status_t hk_tread_check_header(const hk_tread_t *t, const cJSON *h)
{
    const char *where = t->sidecar ? t->sidecar : t->path;
    const long line = t->sidecar ? 1 : t->line;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(h, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(h, "format_version");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(h, "model");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "haplik-likelihoods") ||
        !cJSON_IsObject(model)) {
        hk_log_error("%s:%ld: not a haplik likelihood table", where, line);
        return HK_E_INPUT;
    }
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
        hk_log_error("%s:%ld: table format_version %g is not supported (1 is)", where, line,
                     cJSON_IsNumber(ver) ? ver->valuedouble : -1.0);
        return HK_E_INPUT;
    }
    /* the digits of output.decimals (a table of an earlier haplik may have none) */
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(h, "decimals");
    if (dec && !(is_count(dec) && dec->valuedouble <= HK_NUMFMT_MAX_DECIMALS)) {
        char *text = cJSON_PrintUnformatted(dec);
        hk_log_error("%s:%ld: decimals %.40s is not an integer from 0 to %d", where, line, text ? text : "",
                     HK_NUMFMT_MAX_DECIMALS);
        free(text);
        return HK_E_INPUT;
    }
    return HK_OK;
}

/* What is wrong with the summary s (written into buf), or NULL. */
static const char *summary_fault(const hk_tread_t *t, const cJSON *s, char *buf, size_t n)
{
    static const char *const counts[] = { "regions", "pairs", "cells", "double_recomputed" };
    if (!cJSON_IsObject(s)) return "summary is not an object";
    for (int i = 0; i < 4; i++)
        if (!is_count(cJSON_GetObjectItemCaseSensitive(s, counts[i]))) {
            snprintf(buf, n, "summary.%s is missing or not a count", counts[i]);
            return buf;
        }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "seconds");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return "summary.seconds is missing or not a number of seconds";
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s, "backend")))
        return "summary.backend is missing or not a name";
    const cJSON *d, *devs = cJSON_GetObjectItemCaseSensitive(s, "devices");
    int names = cJSON_IsArray(devs);
    cJSON_ArrayForEach(d, devs) names &= cJSON_IsString(d);
    if (!names) return "summary.devices is missing or not a list of names";
    /* GPU ordinals as engine.devices takes them (a table of an earlier haplik may have none) */
    const cJSON *ords = cJSON_GetObjectItemCaseSensitive(s, "device_ordinals");
    int ordinals = !ords || cJSON_IsArray(ords);
    cJSON_ArrayForEach(d, ords) ordinals &= is_count(d) && d->valuedouble <= HK_MAX_ORDINAL;
    if (!ordinals) {
        snprintf(buf, n, "summary.device_ordinals is not a list of GPU ordinals (0-%d)", HK_MAX_ORDINAL);
        return buf;
    }
    /* a table cut after a region, and the rest of another pasted on */
    const double regions = cJSON_GetObjectItemCaseSensitive(s, "regions")->valuedouble;
    const double pairs = cJSON_GetObjectItemCaseSensitive(s, "pairs")->valuedouble;
    if (regions != (double)t->regions) {
        snprintf(buf, n, "summary.regions is %.0f but the table holds %llu regions", regions,
                 (unsigned long long)t->regions);
        return buf;
    }
    if (pairs != (double)t->pairs) {
        snprintf(buf, n, "summary.pairs is %.0f but the table holds %llu pairs", pairs,
                 (unsigned long long)t->pairs);
        return buf;
    }
    return NULL;
}

hk_status_t hk_tread_check_summary(hk_tread_t *t, const cJSON *s, const char *where, long line)
{
    char buf[160];
    const char *fault = summary_fault(t, s, buf, sizeof buf);
    if (fault) {
        hk_log_error("%s:%ld: %s", where, line, fault);
        return HK_E_INPUT;
    }
    t->summary = s;
    t->summary_where = where;
    t->summary_line = line;
    return HK_OK;
}
