/* hk_json_scan.c - see hk_json_scan.h. A recursive descent over the bytes:
 * each function takes the position of a value and returns the position after
 * it, or NULL with the fault recorded. */
#include "hk_json_scan.h"
#include "hk_text.h"
#include <math.h>

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char      *s, *end;
    hk_scan_fault_t *fault;
    int              utf8;     /* the fault is ill-formed UTF-8 */
} scan_t;

/* Value kinds, for the region's members. */
enum { K_NONE, K_STRING, K_NUMBER, K_NULL, K_BOOL, K_ARRAY, K_OBJECT };

static const char *fail(scan_t *sc, const char *p, const char *what)
{
    if (!sc->fault->what) {
        sc->fault->what = what;
        sc->fault->at = (size_t)(p - sc->s);
    }
    return NULL;
}

/* A fault of the region's shape rather than of JSON. */
static const char *fail_shape(scan_t *sc, const char *p, const char *what)
{
    if (!sc->fault->what) sc->fault->shape = 1;
    return fail(sc, p, what);
}

static inline const char *ws(const scan_t *sc, const char *p)
{
    while (p < sc->end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    return p;
}

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        const char c = p[i];
        *v <<= 4;
        if (is_digit(c)) *v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') *v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') *v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    return 0;
}

/* Whether none of the 8 bytes at p ends a string's plain run: none is a
 * control character, '"', '\\' or past ASCII. Each test is the "has a zero
 * byte" trick ((x - 0x01..) & ~x & 0x80..), exact for "any". */
static inline int plain8(const char *p)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t w, q, b;
    memcpy(&w, p, 8);
    q = w ^ (ones * '"');
    b = w ^ (ones * '\\');
    return !((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) | w) & high);
}

/* A string at p (the opening quote). */
static const char *string(scan_t *sc, const char *p)
{
    const char *const end = sc->end;
    p++;
    for (;;) {
        /* the common case, sequences above all: printable ASCII, 8 bytes at a time */
        while (end - p >= 8 && plain8(p)) p += 8;
        while (p < end && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80 && *p != '"' &&
               *p != '\\')
            p++;
        if (p >= end) return fail(sc, p, "an unterminated string");
        const unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return fail(sc, p, "a raw control character in a string");
        if (c >= 0x80) {
            int valid;
            const size_t k = hk_text_utf8_next(p, (size_t)(end - p), &valid);
            if (!valid) {
                sc->utf8 = 1;
                return fail(sc, p, "text that is not UTF-8");
            }
            p += k;
            continue;
        }
        /* an escape */
        if (end - p < 2) return fail(sc, p, "an unterminated string");
        switch (p[1]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            p += 2;
            continue;
        case 'u': break;
        default: return fail(sc, p, "a bad escape in a string");
        }
        unsigned u, lo;
        if (end - p < 6 || hex4(p + 2, &u)) return fail(sc, p, "a bad \\u escape in a string");
        if (u >= 0xdc00 && u <= 0xdfff) return fail(sc, p, "a lone UTF-16 surrogate in a string");
        if (u >= 0xd800 && u <= 0xdbff) {
            if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &lo) ||
                lo < 0xdc00 || lo > 0xdfff)
                return fail(sc, p, "a lone UTF-16 surrogate in a string");
            p += 6;
        }
        p += 6;
    }
}

/* The end of the run of digits at p (before end). A table is mostly numbers
 * of a few digits each (a likelihood's fraction): 8 bytes at a time, a byte
 * being a digit when its high nibble is 3 both as it is and plus 6. */
static inline const char *digits(const char *p, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t high = 0xf0f0f0f0f0f0f0f0u, three = 0x3030303030303030u;
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        /* a carry out of a byte only comes from a byte that is no digit, and
         * only the first byte that is none counts */
        const uint64_t other = ((w & high) ^ three) | (((w + 0x0606060606060606u) & high) ^ three);
        if (other) return p + (__builtin_ctzll(other) >> 3);
        p += 8;
    }
#endif
    while (p < end && is_digit(*p)) p++;
    return p;
}

static const char *number(scan_t *sc, const char *p)
{
    const char *const end = sc->end, *p0 = p;
    if (p < end && *p == '-') p++;
    if (p < end && *p == '0') p++;
    else if (p < end && is_digit(*p)) p = digits(p + 1, end);
    else return fail(sc, p0, "a malformed number");
    if (p < end && *p == '.') {
        if (++p >= end || !is_digit(*p)) return fail(sc, p0, "a malformed number");
        p = digits(p + 1, end);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        if (++p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !is_digit(*p)) return fail(sc, p0, "a malformed number");
        p = digits(p + 1, end);
    }
    /* 01, 1.2.3, 1e5e5: a number must end where a value may */
    if (p < end && (is_digit(*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-'))
        return fail(sc, p0, "a malformed number");
    return p;
}

/* A likelihood, as number() takes it, mostly in one go: the tables write
 * -D.DDDDDD, whose parts each fit 8 bytes; anything else (or near the end)
 * goes to number(). */
static inline const char *lk_number(scan_t *sc, const char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (sc->end - p >= 32) {   /* every byte read below lies within p + 20 */
        const uint64_t high = 0xf0f0f0f0f0f0f0f0u, three = 0x3030303030303030u;
        const char *q = p + (*p == '-');
        uint64_t w, other;
        if (*q < '1' || *q > '9') return number(sc, p);
        memcpy(&w, q + 1, 8);
        other = ((w & high) ^ three) | (((w + 0x0606060606060606u) & high) ^ three);
        if (!other) return number(sc, p);
        q += 1 + (__builtin_ctzll(other) >> 3);
        if (*q != '.') return number(sc, p);
        memcpy(&w, q + 1, 8);
        other = ((w & high) ^ three) | (((w + 0x0606060606060606u) & high) ^ three);
        const int n = other ? __builtin_ctzll(other) >> 3 : 8;
        if (n == 0 || n == 8) return number(sc, p);
        q += 1 + n;
        /* what number() refuses after it, or an exponent: let it decide */
        if (*q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-') return number(sc, p);
        return q;
    }
#endif
    return number(sc, p);
}

static const char *literal(scan_t *sc, const char *p, const char *word, size_t n)
{
    if ((size_t)(sc->end - p) < n || memcmp(p, word, n)) return fail(sc, p, "an unexpected character");
    return p + n;
}

static const char *value(scan_t *sc, const char *p, int depth, int *kind);

/* An array or object at p, its elements any values; *count its elements. */
static const char *container(scan_t *sc, const char *p, int depth, uint64_t *count)
{
    const char close = *p == '[' ? ']' : '}';
    const int object = close == '}';
    if (depth >= HK_SCAN_MAX_DEPTH) return fail(sc, p, "nesting too deep");
    *count = 0;
    p = ws(sc, p + 1);
    if (p < sc->end && *p == close) return p + 1;
    for (;;) {
        int kind;
        if (object) {
            if (p >= sc->end || *p != '"') return fail(sc, p, "expected a member's name");
            if (!(p = string(sc, p))) return NULL;
            p = ws(sc, p);
            if (p >= sc->end || *p != ':') return fail(sc, p, "expected ':'");
            p = ws(sc, p + 1);
        }
        if (!(p = value(sc, p, depth + 1, &kind))) return NULL;
        ++*count;
        p = ws(sc, p);
        if (p >= sc->end) return fail(sc, p, object ? "an unterminated object" : "an unterminated array");
        if (*p == close) return p + 1;
        if (*p != ',') return fail(sc, p, object ? "expected ',' or '}'" : "expected ',' or ']'");
        p = ws(sc, p + 1);
    }
}

static const char *value(scan_t *sc, const char *p, int depth, int *kind)
{
    uint64_t count;
    if (p >= sc->end) return fail(sc, p, "expected a value");
    switch (*p) {
    case '"': *kind = K_STRING; return string(sc, p);
    case '{': *kind = K_OBJECT; return container(sc, p, depth, &count);
    case '[': *kind = K_ARRAY; return container(sc, p, depth, &count);
    case 't': *kind = K_BOOL; return literal(sc, p, "true", 4);
    case 'f': *kind = K_BOOL; return literal(sc, p, "false", 5);
    case 'n': *kind = K_NULL; return literal(sc, p, "null", 4);
    default:
        *kind = K_NUMBER;
        if (*p == '-' || is_digit(*p)) return number(sc, p);
        if ((unsigned char)*p < 0x20) return fail(sc, p, "a raw control character");
        return fail(sc, p, "an unexpected character");
    }
}

static int result(const scan_t *sc, const char *p)
{
    if (p) {
        p = ws(sc, p);
        if (p == sc->end) return HK_SCAN_OK;
        fail((scan_t *)sc, p, "text after the value");
    }
    return sc->utf8 ? HK_SCAN_UTF8 : HK_SCAN_BAD;
}

int hk_json_scan_value(const char *s, size_t n, hk_scan_fault_t *fault)
{
    scan_t sc = { s, s + n, fault, 0 };
    int kind;
    fault->what = NULL;
    fault->at = 0;
    fault->shape = 0;
    return result(&sc, value(&sc, ws(&sc, s), 0, &kind));
}

int hk_json_is_number(const char *s, size_t n)
{
    hk_scan_fault_t f = { NULL, 0, 0 };
    scan_t sc = { s, s + n, &f, 0 };
    return n && number(&sc, s) == s + n;
}

int hk_json_number_finite(const char *s, size_t n)
{
    /* digits alone, up to 300 of them, are below DBL_MAX (about 1.8e308) */
    if (n <= 300 && !memchr(s, 'e', n) && !memchr(s, 'E', n)) return 1;
    char buf[512], *copy = n < sizeof buf ? buf : malloc(n + 1);
    if (!copy) return 0;
    memcpy(copy, s, n);
    copy[n] = '\0';
    const double v = strtod(copy, NULL);
    if (copy != buf) free(copy);
    return isfinite(v);
}

/* ---- a region line ---- */

/* Whether s[0, n), a JSON number, is a line number as a tsv table's line
 * column takes it: digits alone, 1 to 2^53. */
static int is_line_number(const char *s, size_t n)
{
    if (n == 0 || n > 16 || s[0] == '0') return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i])) return 0;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    return v <= (1ull << 53);
}

/* An array at p of strings; *count of them. */
static const char *strings(scan_t *sc, const char *p, uint64_t *count, const char *what)
{
    if (p >= sc->end || *p != '[') return fail_shape(sc, p, what);
    *count = 0;
    p = ws(sc, p + 1);
    if (p < sc->end && *p == ']') return p + 1;
    for (;;) {
        if (p >= sc->end || *p != '"') return fail_shape(sc, p, what);
        if (!(p = string(sc, p))) return NULL;
        ++*count;
        p = ws(sc, p);
        if (p < sc->end && *p == ']') return p + 1;
        if (p >= sc->end || *p != ',') return fail(sc, p, "expected ',' or ']'");
        p = ws(sc, p + 1);
    }
}

/* log10_likelihoods at p: rows of numbers or nulls, all of one length. */
static const char *likelihoods(scan_t *sc, const char *p, hk_scan_region_t *r)
{
    static const char not_rows[] = "log10_likelihoods is not an array of rows of numbers";
    if (p >= sc->end || *p != '[') return fail_shape(sc, p, "log10_likelihoods is not an array");
    r->n_reads = r->n_haps = 0;
    p = ws(sc, p + 1);
    if (p < sc->end && *p == ']') return p + 1;
    for (;;) {
        if (p >= sc->end || *p != '[') return fail_shape(sc, p, not_rows);
        const char *row = p;
        uint64_t n = 0;
        p = ws(sc, p + 1);
        if (p < sc->end && *p == ']') p++;
        else for (;;) {
            if (p < sc->end && *p == 'n') p = literal(sc, p, "null", 4);
            else if (p < sc->end && (*p == '-' || is_digit(*p))) {
                const char *const at = p;
                if ((p = lk_number(sc, p)) && !hk_json_number_finite(at, (size_t)(p - at)))
                    return fail_shape(sc, at, "a likelihood beyond a double's range");
            } else return fail_shape(sc, p, not_rows);
            if (!p) return NULL;
            n++;
            p = ws(sc, p);
            if (p < sc->end && *p == ']') { p++; break; }
            if (p >= sc->end || *p != ',') return fail(sc, p, "expected ',' or ']'");
            p = ws(sc, p + 1);
        }
        if (r->n_reads++ == 0) r->n_haps = n;
        else if (n != r->n_haps) return fail_shape(sc, row, "log10_likelihoods has rows of different lengths");
        p = ws(sc, p);
        if (p < sc->end && *p == ']') return p + 1;
        if (p >= sc->end || *p != ',') return fail(sc, p, "expected ',' or ']'");
        p = ws(sc, p + 1);
    }
}

/* The members merge looks at, by bit. */
enum { M_INDEX = 1, M_NAME = 2, M_LINE = 4, M_LK = 8, M_READS = 16, M_HAPS = 32 };

static int member(const char *name, size_t n)
{
#define IS(word) (n == sizeof word - 1 && !memcmp(name, word, n))
    if (IS("index")) return M_INDEX;
    if (IS("name")) return M_NAME;
    if (IS("line")) return M_LINE;
    if (IS("log10_likelihoods")) return M_LK;
    if (IS("reads")) return M_READS;
    if (IS("haplotypes")) return M_HAPS;
#undef IS
    return 0;
}

/* The index's value at p: a count (as a double: an integer up to 2^53). */
static const char *index_value(scan_t *sc, const char *p, uint64_t *index)
{
    if (p >= sc->end || !is_digit(*p)) {
        int kind;
        /* a fault of JSON first, then of shape */
        if (value(sc, p, 1, &kind)) fail_shape(sc, p, "it does not start with its index");
        return NULL;
    }
    const char *q = number(sc, p);
    if (!q) return NULL;
    const size_t n = (size_t)(q - p);
    if (n <= 15 && digits(p, q) == q) {   /* digits alone, the index as written: exact */
        uint64_t v = 0;
        for (const char *d = p; d < q; d++) v = v * 10 + (uint64_t)(*d - '0');
        *index = v;
        return q;
    }
    char buf[64];
    if (n >= sizeof buf) return fail_shape(sc, p, "it does not start with its index");
    memcpy(buf, p, n);
    buf[n] = '\0';
    const double v = strtod(buf, NULL);
    if (!(v <= 9007199254740992.0) || v != (double)(uint64_t)v)
        return fail_shape(sc, p, "it does not start with its index");
    *index = (uint64_t)v;
    return q;
}

int hk_json_scan_region(const char *s, size_t n, hk_scan_region_t *r, hk_scan_fault_t *fault)
{
    scan_t sc = { s, s + n, fault, 0 };
    const char *p = ws(&sc, s);
    int seen = 0;
    fault->what = NULL;
    fault->at = 0;
    fault->shape = 0;
    memset(r, 0, sizeof *r);
    r->reads = r->haps = -1;
    if (p >= sc.end || *p != '{') {
        int kind;
        /* a fault of JSON first, then of shape */
        if (value(&sc, p, 0, &kind) && !fault->what) fail_shape(&sc, p, "not an object");
        return result(&sc, NULL);
    }
    p = ws(&sc, p + 1);
    for (;;) {
        if (p >= sc.end || *p != '"') {
            if (seen) fail(&sc, p, "expected a member's name");
            else fail_shape(&sc, p, "it does not start with its index");
            return result(&sc, NULL);
        }
        const char *name = p;
        if (!(p = string(&sc, p))) return result(&sc, NULL);
        const int m = member(name + 1, (size_t)(p - name - 2));
        if (!seen && m != M_INDEX) {
            fail_shape(&sc, name, "it does not start with its index");
            return result(&sc, NULL);
        }
        if (m & seen) {
            fail_shape(&sc, name, "a member given twice");
            return result(&sc, NULL);
        }
        seen |= m;
        p = ws(&sc, p);
        if (p >= sc.end || *p != ':') { fail(&sc, p, "expected ':'"); return result(&sc, NULL); }
        p = ws(&sc, p + 1);
        uint64_t count;
        int kind = K_NONE;
        switch (m) {
        case M_INDEX:
            if ((p = index_value(&sc, p, &r->index))) r->rest = (size_t)(p - s);
            break;
        case M_NAME:
            if ((p = value(&sc, p, 1, &kind)) && kind != K_STRING && kind != K_NULL)
                p = fail_shape(&sc, name, "name is not a string or null");
            break;
        case M_LINE: {
            const char *const at = p;
            if ((p = value(&sc, p, 1, &kind)) && (kind != K_NUMBER || !is_line_number(at, (size_t)(p - at))))
                p = fail_shape(&sc, name, "line is not a line number");
            break;
        }
        case M_LK: p = likelihoods(&sc, p, r); break;
        case M_READS:
            if ((p = strings(&sc, p, &count, "reads is not an array of strings")))
                r->reads = (int64_t)count;
            break;
        case M_HAPS:
            if ((p = strings(&sc, p, &count, "haplotypes is not an array of strings")))
                r->haps = (int64_t)count;
            break;
        default: p = value(&sc, p, 1, &kind);
        }
        if (!p) return result(&sc, NULL);
        p = ws(&sc, p);
        if (p < sc.end && *p == '}') { p++; break; }
        if (p >= sc.end || *p != ',') {
            fail(&sc, p, p >= sc.end ? "an unterminated object" : "expected ',' or '}'");
            return result(&sc, NULL);
        }
        p = ws(&sc, p + 1);
    }
    const int rc = result(&sc, p);
    if (rc != HK_SCAN_OK) return rc;
    const char *why = NULL;
    if (!(seen & M_NAME)) why = "name is not a string or null";
    else if (!(seen & M_LINE)) why = "line is not a line number";
    else if (!(seen & M_LK)) why = "log10_likelihoods is not an array";
    else if (r->reads >= 0 && (uint64_t)r->reads != r->n_reads)
        why = "reads and log10_likelihoods differ in length";
    else if (r->haps >= 0 && r->n_reads && (uint64_t)r->haps != r->n_haps)
        why = "haplotypes and the rows of log10_likelihoods differ in length";
    if (why) {
        fault->what = why;
        fault->at = 0;
        fault->shape = 1;
        return HK_SCAN_BAD;
    }
    return HK_SCAN_OK;
}
