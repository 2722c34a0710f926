/* hk_config.c - see hk_config.h. */
#include "hk_config.h"
#include "hk_log.h"
#include "hk_reader.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void hk_config_init(hk_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->input_format = HK_FMT_AUTO;
    c->output_format = HK_OUT_JSON;
    c->decimals = 6;
    c->sequences = 1;
    c->model.precision = HK_PREC_MIXED;
    c->model.float_threshold = 1e-28;
    c->model.min_base_quality = 6;
    c->model.gcp = -1;
    c->model.unknown_as_n = 0;
    c->backend = HK_BACKEND_AUTO;
    c->n_devices = -1;
    c->threads = 0;
    c->max_batch_pairs = 0;
    c->gpu_lock_dir = NULL;
    c->tolerance = 1e-4;
}

void hk_config_free(hk_config_t *c)
{
    free(c->gpu_lock_dir);
    c->gpu_lock_dir = NULL;
}

const char *hk_config_precision_name(int p)
{
    return p == HK_PREC_FLOAT ? "float" : p == HK_PREC_DOUBLE ? "double" : "mixed";
}

const char *hk_config_backend_name(int b)
{
    return b == HK_BACKEND_CUDA ? "cuda" : b == HK_BACKEND_CPU ? "cpu" : "auto";
}

/* ---- setters (shared by file keys and flags) ---- */

static int bad(const char *where, const char *what)
{
    hk_log_error("%s: %s", where, what);
    return -1;
}

int hk_config_set_precision(hk_config_t *c, const char *where, const char *v)
{
    if (!strcmp(v, "mixed")) c->model.precision = HK_PREC_MIXED;
    else if (!strcmp(v, "float")) c->model.precision = HK_PREC_FLOAT;
    else if (!strcmp(v, "double")) c->model.precision = HK_PREC_DOUBLE;
    else return bad(where, "expected \"mixed\", \"float\" or \"double\"");
    return 0;
}

int hk_config_set_backend(hk_config_t *c, const char *where, const char *v)
{
    if (!strcmp(v, "auto")) c->backend = HK_BACKEND_AUTO;
    else if (!strcmp(v, "cuda")) c->backend = HK_BACKEND_CUDA;
    else if (!strcmp(v, "cpu")) c->backend = HK_BACKEND_CPU;
    else return bad(where, "expected \"auto\", \"cuda\" or \"cpu\"");
    return 0;
}

int hk_config_set_input_format(hk_config_t *c, const char *where, const char *v)
{
    int f = hk_reader_parse_format(v);
    if (f < 0) return bad(where, "expected \"auto\", \"gatk\" or \"batch\"");
    c->input_format = f;
    return 0;
}

int hk_config_set_output_format(hk_config_t *c, const char *where, const char *v)
{
    if (!strcmp(v, "json")) c->output_format = HK_OUT_JSON;
    else if (!strcmp(v, "jsonl")) c->output_format = HK_OUT_JSONL;
    else return bad(where, "expected \"json\" or \"jsonl\"");
    return 0;
}

/* Whole-string integer in [lo, hi]. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int hk_config_set_threads(hk_config_t *c, const char *where, const char *v)
{
    long t;
    if (parse_long(v, 0, 1024, &t)) return bad(where, "expected an integer from 0 (all cores) to 1024");
    c->threads = (int)t;
    return 0;
}

int hk_config_set_tolerance(hk_config_t *c, const char *where, const char *v)
{
    char *end;
    errno = 0;
    double t = strtod(v, &end);
    if (errno || end == v || *end || !(t >= 0) || !isfinite(t))
        return bad(where, "expected a non-negative number");
    c->tolerance = t;
    return 0;
}

int hk_config_set_devices(hk_config_t *c, const char *where, const char *list)
{
    if (!strcmp(list, "all")) { c->n_devices = -1; return 0; }
    int n = 0;
    const char *p = list;
    for (;;) {
        char item[32];
        size_t len = strcspn(p, ",");
        long d;
        if (len == 0 || len >= sizeof item) return bad(where, "expected \"all\" or a comma-separated list of device ordinals");
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_long(item, 0, 1023, &d)) return bad(where, "expected \"all\" or a comma-separated list of device ordinals");
        if (n == HK_MAX_DEVICES) return bad(where, "too many devices");
        c->devices[n++] = (int)d;
        p += len;
        if (!*p) break;
        p++;
    }
    c->n_devices = n;
    return 0;
}

/* ---- the JSON file ---- */

typedef struct {
    const char *file;
    char        path[128];   /* key path being checked */
} ctx_t;

__attribute__((format(printf, 2, 3)))
static int key_error(const ctx_t *x, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hk_log_error("%s: %s: %s", x->file, x->path, msg);
    return -1;
}

static void set_path(ctx_t *x, const char *section, const char *key)
{
    snprintf(x->path, sizeof x->path, "%s%s%s", section, key ? "." : "", key ? key : "");
}

static int want_string(const ctx_t *x, const cJSON *v, const char **out)
{
    if (!cJSON_IsString(v)) return key_error(x, "expected a string");
    *out = v->valuestring;
    return 0;
}

static int want_int(const ctx_t *x, const cJSON *v, long lo, long hi, long *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < lo || v->valuedouble > hi)
        return key_error(x, "expected an integer from %ld to %ld", lo, hi);
    *out = (long)v->valuedouble;
    return 0;
}

/* Run a string setter with the key path as `where`. */
#define SET_STRING(setter)                                                  \
    do {                                                                    \
        const char *s_ = NULL;                                                     \
        char where_[200];                                                   \
        if (want_string(x, v, &s_)) return -1;                              \
        snprintf(where_, sizeof where_, "%s: %s", x->file, x->path);        \
        if (setter(c, where_, s_)) return -1;                               \
    } while (0)

static int load_input(hk_config_t *c, ctx_t *x, const char *key, const cJSON *v)
{
    if (!strcmp(key, "format")) { SET_STRING(hk_config_set_input_format); return 0; }
    return key_error(x, "unknown key");
}

static int load_output(hk_config_t *c, ctx_t *x, const char *key, const cJSON *v)
{
    long n;
    if (!strcmp(key, "format")) { SET_STRING(hk_config_set_output_format); return 0; }
    if (!strcmp(key, "decimals")) {
        if (want_int(x, v, 0, 12, &n)) return -1;
        c->decimals = (int)n;
        return 0;
    }
    if (!strcmp(key, "sequences")) {
        if (!cJSON_IsBool(v)) return key_error(x, "expected true or false");
        c->sequences = cJSON_IsTrue(v);
        return 0;
    }
    return key_error(x, "unknown key");
}

static int load_model(hk_config_t *c, ctx_t *x, const char *key, const cJSON *v)
{
    long n;
    if (!strcmp(key, "precision")) { SET_STRING(hk_config_set_precision); return 0; }
    if (!strcmp(key, "float_threshold")) {
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble))
            return key_error(x, "expected a non-negative number");
        c->model.float_threshold = v->valuedouble;
        return 0;
    }
    if (!strcmp(key, "min_base_quality")) {
        if (want_int(x, v, 0, 93, &n)) return -1;
        c->model.min_base_quality = (int)n;
        return 0;
    }
    if (!strcmp(key, "gcp")) {
        if (cJSON_IsNull(v)) { c->model.gcp = -1; return 0; }
        if (want_int(x, v, 1, 93, &n)) return -1;   /* Q0: every likelihood 0 (SPEC 1) */
        c->model.gcp = (int)n;
        return 0;
    }
    if (!strcmp(key, "unknown_bases")) {
        const char *s = NULL;
        if (want_string(x, v, &s)) return -1;
        if (!strcmp(s, "error")) c->model.unknown_as_n = 0;
        else if (!strcmp(s, "as_n")) c->model.unknown_as_n = 1;
        else return key_error(x, "expected \"error\" or \"as_n\"");
        return 0;
    }
    return key_error(x, "unknown key");
}

static int load_engine(hk_config_t *c, ctx_t *x, const char *key, const cJSON *v)
{
    long n;
    if (!strcmp(key, "backend")) { SET_STRING(hk_config_set_backend); return 0; }
    if (!strcmp(key, "devices")) {
        if (cJSON_IsString(v)) {
            if (strcmp(v->valuestring, "all")) return key_error(x, "expected \"all\" or a list of device ordinals");
            c->n_devices = -1;
            return 0;
        }
        if (!cJSON_IsArray(v)) return key_error(x, "expected \"all\" or a list of device ordinals");
        int k = 0;
        const cJSON *e;
        const size_t plen = strlen(x->path);
        cJSON_ArrayForEach(e, v) {
            snprintf(x->path + plen, sizeof x->path - plen, "[%d]", k);
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) ||
                e->valuedouble < 0 || e->valuedouble > 1023)
                return key_error(x, "expected a non-negative integer");
            if (k == HK_MAX_DEVICES) return key_error(x, "too many devices");
            c->devices[k++] = (int)e->valuedouble;
        }
        x->path[plen] = '\0';
        if (k == 0) return key_error(x, "expected at least one device ordinal");
        c->n_devices = k;
        return 0;
    }
    if (!strcmp(key, "threads")) {
        if (want_int(x, v, 0, 1024, &n)) return -1;
        c->threads = (int)n;
        return 0;
    }
    if (!strcmp(key, "max_batch_pairs")) {
        if (want_int(x, v, 0, 1000000000L, &n)) return -1;
        c->max_batch_pairs = n;
        return 0;
    }
    if (!strcmp(key, "gpu_lock_dir")) {
        free(c->gpu_lock_dir);
        c->gpu_lock_dir = NULL;
        if (cJSON_IsNull(v)) return 0;
        const char *s = NULL;
        if (want_string(x, v, &s)) return -1;
        if (!*s) return key_error(x, "expected a directory or null");
        if (!(c->gpu_lock_dir = strdup(s))) return key_error(x, "out of memory");
        return 0;
    }
    return key_error(x, "unknown key");
}

static int load_check(hk_config_t *c, ctx_t *x, const char *key, const cJSON *v)
{
    if (!strcmp(key, "tolerance")) {
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble))
            return key_error(x, "expected a non-negative number");
        c->tolerance = v->valuedouble;
        return 0;
    }
    return key_error(x, "unknown key");
}

static const struct {
    const char *name;
    int (*load)(hk_config_t *, ctx_t *, const char *, const cJSON *);
} sections[] = {
    { "input", load_input }, { "output", load_output }, { "model", load_model },
    { "engine", load_engine }, { "check", load_check },
};

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 4096) {
            cap = cap ? 2 * cap : 8192;
            if (cap > (64u << 20)) { errno = EFBIG; break; }   /* configs are small */
            char *p = realloc(buf, cap + 1);
            if (!p) break;
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (got == 0) {
            if (ferror(fp)) break;
            fclose(fp);
            buf[n] = '\0';
            *len = n;
            return buf;
        }
    }
    int e = errno;
    fclose(fp);
    free(buf);
    errno = e;
    return NULL;
}

int hk_config_load(hk_config_t *c, const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    if (!text) { hk_log_error("%s: cannot read: %s", path, strerror(errno)); return -1; }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    /* one document: after it, JSON's whitespace only (cJSON's own
     * require_null_terminated would also take control characters and stop
     * at a NUL byte) */
    const char *rest = root ? end : NULL;
    while (rest && rest < text + len && strchr(" \t\r\n", *rest) && *rest) rest++;
    if (!root || rest < text + len) {
        const char *at = root ? rest : cJSON_GetErrorPtr();
        long line = 1;
        for (const char *p = text; at && p < at; p++) line += *p == '\n';
        hk_log_error("%s:%ld: %s", path, line,
                     root ? "content after the JSON object (one object per file)" : "not valid JSON");
        cJSON_Delete(root);
        free(text);
        return -1;
    }
    free(text);
    ctx_t x = { .file = path };
    int rc = 0;
    if (!cJSON_IsObject(root)) {
        hk_log_error("%s: the configuration must be a JSON object", path);
        rc = -1;
        goto done;
    }
    const cJSON *sec;
    cJSON_ArrayForEach(sec, root) {
        size_t s;
        for (s = 0; s < sizeof sections / sizeof *sections; s++)
            if (!strcmp(sec->string, sections[s].name)) break;
        set_path(&x, sec->string, NULL);
        if (s == sizeof sections / sizeof *sections) {
            rc = key_error(&x, "unknown key (expected input, output, model, engine or check)");
            goto done;
        }
        if (!cJSON_IsObject(sec)) { rc = key_error(&x, "expected an object"); goto done; }
        const cJSON *v;
        cJSON_ArrayForEach(v, sec) {
            set_path(&x, sec->string, v->string);
            if ((rc = sections[s].load(c, &x, v->string, v)) < 0) goto done;
        }
    }
done:
    cJSON_Delete(root);
    return rc;
}

void hk_config_print(FILE *fp, const hk_config_t *c)
{
    fprintf(fp, "{\"input\":  {\"format\": \"%s\"},\n", hk_reader_format_name(c->input_format));
    fprintf(fp, " \"output\": {\"format\": \"%s\", \"decimals\": %d, \"sequences\": %s},\n",
            c->output_format == HK_OUT_JSONL ? "jsonl" : "json", c->decimals,
            c->sequences ? "true" : "false");
    fprintf(fp, " \"model\":  {\"precision\": \"%s\", \"float_threshold\": %g, "
            "\"min_base_quality\": %d,\n            \"gcp\": ",
            hk_config_precision_name(c->model.precision), c->model.float_threshold,
            c->model.min_base_quality);
    if (c->model.gcp < 0) fputs("null", fp); else fprintf(fp, "%d", c->model.gcp);
    fprintf(fp, ", \"unknown_bases\": \"%s\"},\n", c->model.unknown_as_n ? "as_n" : "error");
    fprintf(fp, " \"engine\": {\"backend\": \"%s\", \"devices\": ", hk_config_backend_name(c->backend));
    if (c->n_devices < 0) fputs("\"all\"", fp);
    else {
        fputc('[', fp);
        for (int i = 0; i < c->n_devices; i++) fprintf(fp, "%s%d", i ? ", " : "", c->devices[i]);
        fputc(']', fp);
    }
    fprintf(fp, ", \"threads\": %d,\n            \"max_batch_pairs\": %ld, \"gpu_lock_dir\": ",
            c->threads, c->max_batch_pairs);
    if (c->gpu_lock_dir) fprintf(fp, "\"%s\"", c->gpu_lock_dir); else fputs("null", fp);
    fprintf(fp, "},\n \"check\":  {\"tolerance\": %g}}\n", c->tolerance);
}
