/* hk_config.c - see hk_config.h; the keys are those of hk_config_keys.h. */
#include "hk_config.h"
#include "hk_log.h"
#include "hk_text.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { T_CHOICE, T_NAME, T_INT, T_INT_OR_NULL, T_NUMBER, T_BOOL, T_DEVICES, T_DIR_OR_NULL };

typedef struct {
    const char *path, *flag, *metavar, *help;
    int         type;
    size_t      offset;       /* of the field in hk_config_t */
    double      lo, hi;
    const char *choices;      /* '|'-separated names, or NULL */
    const char *deflt;        /* in the flag's syntax */
} hk_key_desc_t;

static const hk_key_desc_t keys[HK_N_KEYS] = {
#define HK_KEY_ROW(id, path, type, field, lo, hi, choices, deflt, flag, metavar, help) \
    [HK_KEY_##id] = { path, flag, metavar, help, T_##type, offsetof(hk_config_t, field), \
                      lo, hi, choices, deflt },
    HK_CONFIG_KEYS(HK_KEY_ROW)
#undef HK_KEY_ROW
};

const char *hk_config_key_path(int k) { return keys[k].path; }
const char *hk_config_key_flag(int k) { return keys[k].flag; }
const char *hk_config_key_metavar(int k) { return keys[k].metavar; }
const char *hk_config_key_help(int k) { return keys[k].help; }

static int *int_field(hk_config_t *c, const hk_key_desc_t *k) { return (int *)((char *)c + k->offset); }
static const int *int_field_c(const hk_config_t *c, const hk_key_desc_t *k)
{
    return (const int *)((const char *)c + k->offset);
}

/* The index of name in k's choices, or -1. */
static int choice_index(const hk_key_desc_t *k, const char *name)
{
    const size_t len = strlen(name);
    int i = 0;
    for (const char *p = k->choices; *p; i++) {
        const size_t n = strcspn(p, "|");
        if (n == len && !strncmp(p, name, n)) return i;
        p += n + (p[n] == '|');
    }
    return -1;
}

const char *hk_config_choice_name(int key, int value)
{
    /* names are short: one static buffer per key is enough for messages */
    static char names[HK_N_KEYS][16];
    const char *p = keys[key].choices;
    for (int i = 0; p && *p; i++) {
        const size_t n = strcspn(p, "|");
        if (i == value && n < sizeof names[key]) {
            memcpy(names[key], p, n);
            names[key][n] = '\0';
            return names[key];
        }
        p += n + (p[n] == '|');
    }
    return "?";
}

/* What a key accepts: the one message of its validator. */
static void expectation(const hk_key_desc_t *k, char *buf, size_t n)
{
    switch (k->type) {
    case T_CHOICE: case T_NAME: {
        size_t len = (size_t)snprintf(buf, n, "expected");
        int count = 0;
        for (const char *p = k->choices; *p; count++) p += strcspn(p, "|") + (p[strcspn(p, "|")] == '|');
        int i = 0;
        for (const char *p = k->choices; *p && len < n; i++) {
            const size_t w = strcspn(p, "|");
            len += (size_t)snprintf(buf + len, n - len, "%s\"%.*s\"",
                                    i == 0 ? " " : i == count - 1 ? " or " : ", ", (int)w, p);
            p += w + (p[w] == '|');
        }
        break;
    }
    case T_INT: snprintf(buf, n, "expected an integer from %.0f to %.0f", k->lo, k->hi); break;
    case T_INT_OR_NULL:
        snprintf(buf, n, "expected null or an integer from %.0f to %.0f", k->lo, k->hi); break;
    case T_NUMBER: snprintf(buf, n, "expected a non-negative number"); break;
    case T_BOOL: snprintf(buf, n, "expected true or false"); break;
    case T_DEVICES:
        snprintf(buf, n, "expected \"all\" or a list of 1 to %d device ordinals from %.0f to %.0f",
                 HK_MAX_DEVICES, k->lo, k->hi);
        break;
    default: snprintf(buf, n, "expected a folder or null"); break;
    }
}

HK_RESULT_USED static hk_status_t refuse(const hk_key_desc_t *k, const char *where)
{
    char msg[200];
    expectation(k, msg, sizeof msg);
    hk_log_error("%s: %s", where, msg);
    return HK_E_INPUT;
}

/* A whole-string number in [lo, hi], integral when asked: leading or
 * trailing space is refused, as in a file value. */
HK_RESULT_USED static hk_status_t parse_number(const char *s, double lo, double hi, int integral, double *out)
{
    char *end;
    if (!*s || strchr(" \t\n\r\f\v", *s)) return HK_E_INPUT;
    errno = 0;
    double v = integral ? (double)strtoll(s, &end, 10) : strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) return HK_E_INPUT;
    *out = v;
    return HK_OK;
}

HK_RESULT_USED static hk_status_t set_devices(hk_config_t *c, const hk_key_desc_t *k, const char *where, const char *list)
{
    if (!strcmp(list, "all")) { c->n_devices = -1; return HK_OK; }
    int n = 0;
    for (const char *p = list;; p++) {
        char item[32];
        const size_t len = strcspn(p, ",");
        double d;
        if (len == 0 || len >= sizeof item || n == HK_MAX_DEVICES) return refuse(k, where);
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_number(item, k->lo, k->hi, 1, &d)) return refuse(k, where);
        c->devices[n++] = (int)d;
        p += len;
        if (!*p) break;
    }
    c->n_devices = n;
    return HK_OK;
}

hk_status_t hk_config_set(hk_config_t *c, int key, const char *where, const char *text)
{
    const hk_key_desc_t *k = &keys[key];
    const int is_null = !strcmp(text, "null");
    double v;
    int i;
    switch (k->type) {
    case T_CHOICE:
        if ((i = choice_index(k, text)) < 0) return refuse(k, where);
        *int_field(c, k) = i;
        return HK_OK;
    case T_NAME: {
        char *name = (char *)c + k->offset;
        if (choice_index(k, text) < 0 || strlen(text) >= sizeof c->input_format)
            return refuse(k, where);
        strcpy(name, text);
        return HK_OK;
    }
    case T_INT_OR_NULL:
        if (is_null) { *int_field(c, k) = -1; return HK_OK; }
        /* fall through */
    case T_INT:
        if (parse_number(text, k->lo, k->hi, 1, &v)) return refuse(k, where);
        *int_field(c, k) = (int)v;
        return HK_OK;
    case T_NUMBER:
        if (parse_number(text, k->lo, k->hi, 0, &v)) return refuse(k, where);
        *(double *)((char *)c + k->offset) = v;
        return HK_OK;
    case T_BOOL:
        if (strcmp(text, "true") && strcmp(text, "false")) return refuse(k, where);
        *int_field(c, k) = !strcmp(text, "true");
        return HK_OK;
    case T_DEVICES:
        return set_devices(c, k, where, text);
    default: {   /* T_DIR_OR_NULL */
        char **dir = (char **)((char *)c + k->offset), *copy = NULL;
        if (!*text) return refuse(k, where);
        if (!is_null && !(copy = strdup(text))) { hk_log_error("out of memory"); return HK_E_NOMEM; }
        free(*dir);
        *dir = copy;
        return HK_OK;
    }
    }
}

void hk_config_init(hk_config_t *c)
{
    memset(c, 0, sizeof *c);
    for (int k = 0; k < HK_N_KEYS; k++)
        if (hk_config_set(c, k, "built-in default", keys[k].deflt)) abort();   /* a bad list */
    hk_options_init(&c->opt);
}

void hk_config_free(hk_config_t *c)
{
    free(c->gpu_lock_dir);
    c->gpu_lock_dir = NULL;
}

/* ---- the JSON file: each value becomes the text a flag would give ---- */

/* The text of a JSON value for key k, or NULL when its JSON type is not one
 * the key takes (then the key's own message is given). */
static const char *json_text(const hk_key_desc_t *k, const cJSON *v, char *buf, size_t n)
{
    const int nullable = k->type == T_INT_OR_NULL || k->type == T_DIR_OR_NULL;
    if (cJSON_IsNull(v)) return nullable ? "null" : NULL;
    switch (k->type) {
    case T_INT: case T_INT_OR_NULL: case T_NUMBER:
        if (!cJSON_IsNumber(v)) return NULL;
        /* %.17g reads back to the same double; an integer key sees "6" for 6.0 */
        snprintf(buf, n, "%.17g", v->valuedouble);
        return buf;
    case T_BOOL:
        return cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? "true" : "false") : NULL;
    case T_DIR_OR_NULL:
        /* "null" as a string is a folder's name here, not null */
        return cJSON_IsString(v) && strcmp(v->valuestring, "null") ? v->valuestring : NULL;
    default:
        return cJSON_IsString(v) ? v->valuestring : NULL;
    }
}

/* engine.devices as a list: each element is checked with its index in the
 * key path, then the list goes through the flag's validator as "0,1". */
HK_RESULT_USED static hk_status_t load_devices(hk_config_t *c, const hk_key_desc_t *k, const char *where, const cJSON *v)
{
    char list[HK_MAX_DEVICES * 8 + 8] = "", at[320];
    size_t len = 0;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
        snprintf(at, sizeof at, "%s[%d]", where, i);
        if (!cJSON_IsNumber(e) || i == HK_MAX_DEVICES || e->valuedouble != floor(e->valuedouble) ||
            e->valuedouble < k->lo || e->valuedouble > k->hi)
            return refuse(k, at);
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%.0f", i++ ? "," : "", e->valuedouble);
    }
    return hk_config_set(c, HK_KEY_ENGINE_DEVICES, where, list);   /* [] is refused there */
}

HK_RESULT_USED static hk_status_t load_key(hk_config_t *c, const char *file, const char *path, const cJSON *v)
{
    char where[300], buf[64];
    snprintf(where, sizeof where, "%s: %s", file, path);
    for (int k = 0; k < HK_N_KEYS; k++) {
        if (strcmp(keys[k].path, path)) continue;
        if (keys[k].type == T_DEVICES && cJSON_IsArray(v)) return load_devices(c, &keys[k], where, v);
        const char *text = json_text(&keys[k], v, buf, sizeof buf);
        return text ? hk_config_set(c, k, where, text) : refuse(&keys[k], where);
    }
    const char *names[HK_N_KEYS];
    for (int k = 0; k < HK_N_KEYS; k++) names[k] = keys[k].path;
    const char *near = hk_text_nearest(path, names, HK_N_KEYS);
    if (near) hk_log_error("%s: unknown key (did you mean %s?)", where, near);
    else hk_log_error("%s: unknown key", where);
    return HK_E_INPUT;
}

static int is_section(const char *name)
{
    const size_t n = strlen(name);
    for (int k = 0; k < HK_N_KEYS; k++)
        if (!strncmp(keys[k].path, name, n) && keys[k].path[n] == '.') return 1;
    return 0;
}

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

static long line_at(const char *text, const char *at)
{
    long line = 1;
    for (const char *p = text; at && p < at; p++) line += *p == '\n';
    return line;
}

/* The first string of the JSON text s[0, n) (counting keys and values in
 * the order they are written, from 0) that holds the escape \u0000, which
 * cJSON's strings end at; -1 when there is none, else its offset in *at. */
static long nul_string(const char *s, size_t n, size_t *at)
{
    long index = -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '"') continue;
        index++;
        for (i++; i < n && s[i] != '"'; i++) {
            if (s[i] != '\\') continue;
            if (i + 5 < n && s[i + 1] == 'u' && !memcmp(s + i + 2, "0000", 4)) { *at = i; return index; }
            i++;
        }
    }
    return -1;
}

/* The path of the member whose key or string value is string number
 * *left of node (counted down in document order), into path[0, n). */
static int string_path(const cJSON *node, long *left, const char *prefix, char *path, size_t n)
{
    int i = 0;
    for (const cJSON *c = node->child; c; c = c->next, i++) {
        char p[300];
        if (c->string) snprintf(p, sizeof p, "%s%s%s", prefix, *prefix ? "." : "", c->string);
        else snprintf(p, sizeof p, "%s[%d]", prefix, i);
        if ((c->string && (*left)-- == 0) || (cJSON_IsString(c) && (*left)-- == 0)) {
            snprintf(path, n, "%s", p);
            return 1;
        }
        if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && string_path(c, left, p, path, n)) return 1;
    }
    return 0;
}

/* Parse text as one JSON document: after it, JSON's whitespace only (cJSON's
 * own require_null_terminated would also take control characters and stop
 * at a NUL byte); nothing RFC 8259 refuses (raw control characters in a
 * string, numbers such as 01 or .5: hk_text_json_strict); no string with
 * \u0000, which cJSON would silently cut there; text that is not UTF-8. NULL
 * when it is not (logged with the line). */
static cJSON *parse_document(const char *path, const char *text, size_t len)
{
    /* JSON text is UTF-8 (RFC 8259 section 8.1): what is not would be
     * printed back raw by --print-config, which must write JSON */
    const size_t utf8 = hk_text_utf8_valid_len(text, len);
    if (utf8 < len) {
        hk_log_error("%s:%ld: not valid JSON: text that is not UTF-8", path, line_at(text, text + utf8));
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    const char *rest = root ? end : NULL;
    while (rest && rest < text + len && strchr(" \t\r\n", *rest) && *rest) rest++;
    if (!root || rest < text + len) {
        hk_log_error("%s:%ld: %s", path, line_at(text, root ? rest : cJSON_GetErrorPtr()),
                     root ? "content after the JSON object (one object per file)" : "not valid JSON");
        cJSON_Delete(root);
        return NULL;
    }
    size_t at;
    const char *what = hk_text_json_strict(text, len, &at);
    if (what) {
        hk_log_error("%s:%ld: not valid JSON: %s", path, line_at(text, text + at), what);
        cJSON_Delete(root);
        return NULL;
    }
    long nul = nul_string(text, len, &at);
    if (nul >= 0) {
        char key[300] = "";
        const long line = line_at(text, text + at);
        if (string_path(root, &nul, "", key, sizeof key) && *key)
            hk_log_error("%s:%ld: %s: a string holds \\u0000 (a NUL character), which no setting takes",
                         path, line, key);
        else
            hk_log_error("%s:%ld: a string holds \\u0000 (a NUL character), which no setting takes", path, line);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* Whether a member before v, from first on, has v's name. */
static int repeated(const cJSON *first, const cJSON *v)
{
    for (const cJSON *p = first; p && p != v; p = p->next)
        if (!strcmp(p->string, v->string)) return 1;
    return 0;
}

hk_status_t hk_config_load(hk_config_t *c, const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    if (!text) { hk_log_error("%s: cannot read: %s", path, strerror(errno)); return hk_status_of_errno(errno); }
    cJSON *root = parse_document(path, text, len);
    free(text);
    if (!root) return HK_E_INPUT;
    hk_status_t rc = HK_OK;
    const cJSON *sec, *v;
    if (!cJSON_IsObject(root)) {
        hk_log_error("%s: the configuration must be a JSON object", path);
        rc = HK_E_INPUT;
    }
    for (sec = cJSON_IsObject(root) ? root->child : NULL; sec && !rc; sec = sec->next) {
        static const char *const sections[] = { "input", "output", "model", "engine", "check" };
        const char *near = hk_text_nearest(sec->string, sections, sizeof sections / sizeof *sections);
        if (!is_section(sec->string)) {
            hk_log_error("%s: %s: unknown key (%s%s%sexpected input, output, model, engine or check)",
                         path, sec->string, near ? "did you mean " : "", near ? near : "", near ? "? " : "");
            rc = HK_E_INPUT;
        } else if (repeated(root->child, sec)) {
            hk_log_error("%s: %s: given more than once (one object per section)", path, sec->string);
            rc = HK_E_INPUT;
        } else if (!cJSON_IsObject(sec)) {
            hk_log_error("%s: %s: expected an object", path, sec->string);
            rc = HK_E_INPUT;
        }
        for (v = rc ? NULL : sec->child; v && !rc; v = v->next) {
            char key[200];
            snprintf(key, sizeof key, "%s.%s", sec->string, v->string);
            if (repeated(sec->child, v)) {
                hk_log_error("%s: %s: given more than once", path, key);
                rc = HK_E_INPUT;
            } else {
                rc = load_key(c, path, key, v);
            }
        }
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- printing ---- */

void hk_config_value_json(const hk_config_t *c, int key, char *buf, size_t n)
{
    const hk_key_desc_t *k = &keys[key];
    const int *i = int_field_c(c, k);
    switch (k->type) {
    case T_CHOICE: snprintf(buf, n, "\"%s\"", hk_config_choice_name(key, *i)); break;
    case T_NAME: snprintf(buf, n, "\"%s\"", (const char *)c + k->offset); break;
    case T_INT_OR_NULL: if (*i < 0) { snprintf(buf, n, "null"); break; } /* fall through */
    case T_INT: snprintf(buf, n, "%d", *i); break;
    case T_NUMBER: {   /* the shortest text that reads back the same */
        const double v = *(const double *)((const char *)c + k->offset);
        snprintf(buf, n, "%.15g", v);
        if (strtod(buf, NULL) != v) snprintf(buf, n, "%.17g", v);
        break;
    }
    case T_BOOL: snprintf(buf, n, "%s", *i ? "true" : "false"); break;
    case T_DEVICES: {
        if (c->n_devices < 0) { snprintf(buf, n, "\"all\""); break; }
        size_t len = (size_t)snprintf(buf, n, "[");
        for (int d = 0; d < c->n_devices && len < n; d++)
            len += (size_t)snprintf(buf + len, n - len, "%s%d", d ? ", " : "", c->devices[d]);
        if (len < n) snprintf(buf + len, n - len, "]");
        break;
    }
    default: {
        const char *dir = *(char *const *)((const char *)c + k->offset);
        if (!dir) { snprintf(buf, n, "null"); break; }
        cJSON *s = cJSON_CreateString(dir);   /* quoted and escaped */
        char *q = s ? cJSON_PrintUnformatted(s) : NULL;
        snprintf(buf, n, "%s", q ? q : "null");
        free(q);
        cJSON_Delete(s);
    }
    }
}

void hk_config_print(FILE *fp, const hk_config_t *c)
{
    char value[1024];
    for (int k = 0; k < HK_N_KEYS; k++) {
        const char *dot = strchr(keys[k].path, '.');
        const int section_len = (int)(dot - keys[k].path);
        const int first = k == 0 || strncmp(keys[k - 1].path, keys[k].path, (size_t)section_len + 1);
        hk_config_value_json(c, k, value, sizeof value);
        if (first)
            fprintf(fp, "%s\"%.*s\": {", k ? "},\n " : "{", section_len, keys[k].path);
        fprintf(fp, "%s\"%s\": %s", first ? "" : ", ", dot + 1, value);
    }
    fputs("}}\n", fp);
}

void hk_config_print_flags(FILE *fp, const hk_config_t *c)
{
    char value[1024], flag[64];
    for (int k = 0; k < HK_N_KEYS; k++) {
        hk_config_value_json(c, k, value, sizeof value);
        snprintf(flag, sizeof flag, "--%s %s", keys[k].flag, keys[k].metavar);
        fprintf(fp, "      %-24s %s [%s] (%s)\n", flag, keys[k].help, value, keys[k].path);
    }
}
