/* hk_text.c - see hk_text.h. */
#include "hk_text.h"

#include <stdlib.h>
#include <string.h>

size_t hk_text_utf8_next(const char *str, size_t n, int *valid)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char lo = 0x80, hi = 0xbf;   /* range of the second byte (Unicode table 3-7) */
    size_t len;
    *valid = 1;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        if (s[0] == 0xe0) lo = 0xa0;        /* overlong */
        if (s[0] == 0xed) hi = 0x9f;        /* surrogates */
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        if (s[0] == 0xf0) lo = 0x90;        /* overlong */
        if (s[0] == 0xf4) hi = 0x8f;        /* past U+10FFFF */
    } else {
        *valid = 0;                         /* a continuation byte, C0, C1 or F5..FF */
        return 1;
    }
    if (n < 2 || s[1] < lo || s[1] > hi) { *valid = 0; return 1; }
    size_t i = 2;
    while (i < len && i < n && s[i] >= 0x80 && s[i] <= 0xbf) i++;
    if (i < len) *valid = 0;
    return i;
}

size_t hk_text_utf8_valid_len(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        /* ASCII runs first: tables and names are mostly ASCII */
        while (i < n && !((unsigned char)s[i] & 0x80)) i++;
        if (i == n) break;
        int valid;
        const size_t k = hk_text_utf8_next(s + i, n - i, &valid);
        if (!valid) break;
        i += k;
    }
    return i;
}

char *hk_text_utf8_fix(const char *s, size_t n, size_t *len)
{
    /* U+FFFD takes 3 bytes and replaces at least one */
    if (n > ((size_t)-1 - 1) / 3) return NULL;
    char *out = malloc(3 * n + 1), *p = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        int valid;
        const size_t k = hk_text_utf8_next(s + i, n - i, &valid);
        if (valid) {
            memcpy(p, s + i, k);
            p += k;
        } else {
            memcpy(p, "\xef\xbf\xbd", 3);
            p += 3;
        }
        i += k;
    }
    *p = '\0';
    if (len) *len = (size_t)(p - out);
    return out;
}

/* Optimal string alignment distance of a and b, or more than max when it
 * exceeds max (names are short: longer words are not compared). */
static size_t edit_distance(const char *a, const char *b, size_t max)
{
    enum { LONGEST = 64 };
    const size_t la = strlen(a), lb = strlen(b);
    if (la > LONGEST || lb > LONGEST || (la > lb ? la - lb : lb - la) > max) return max + 1;
    size_t d[LONGEST + 1][LONGEST + 1];
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

const char *hk_text_nearest(const char *word, const char *const *names, size_t n)
{
    size_t max = strlen(word) / 3;
    if (max < 1) max = 1;
    const char *best = NULL;
    size_t best_d = max + 1;
    for (size_t i = 0; i < n; i++) {
        if (!names[i]) continue;
        const size_t d = edit_distance(word, names[i], max);
        if (d == 0) return NULL;
        if (d < best_d) { best_d = d; best = names[i]; }
    }
    return best;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Whether s[0, n) is a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int is_json_number(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-') i++;
    if (i < n && s[i] == '0') i++;
    else if (i < n && is_digit(s[i])) while (i < n && is_digit(s[i])) i++;
    else return 0;
    if (i < n && s[i] == '.') {
        if (++i >= n || !is_digit(s[i])) return 0;
        while (i < n && is_digit(s[i])) i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        if (++i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n || !is_digit(s[i])) return 0;
        while (i < n && is_digit(s[i])) i++;
    }
    return i == n;
}

static int in_number(char c)
{
    return is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

const char *hk_text_json_strict(const char *s, size_t n, size_t *at)
{
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        *at = i;
        if (c == '"') {
            /* a string: cJSON checked its escapes; only raw controls are left */
            for (i++; i < n && s[i] != '"'; i++) {
                if ((unsigned char)s[i] < 0x20) { *at = i; return "a raw control character in a string"; }
                if (s[i] == '\\') i++;
            }
        } else if (c < 0x20 && c != '\t' && c != '\r' && c != '\n') {
            return "a raw control character";
        } else if (is_digit((char)c) || c == '-' || c == '+' || c == '.') {
            /* true, false and null hold none of these characters */
            size_t k = i;
            while (k < n && in_number(s[k])) k++;
            if (!is_json_number(s + i, k - i)) return "a malformed number";
            i = k - 1;
        }
    }
    return NULL;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

char *hk_text_unescape(const char *s, size_t n)
{
    char *out = malloc(n + 1), *p = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 == n) { *p++ = s[i]; continue; }
        const char e = s[i + 1];
        int hi, lo;
        if (e == '\\' || e == 't' || e == 'n' || e == 'r') {
            *p++ = e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : '\\';
            i++;
        } else if (e == 'x' && i + 3 < n && (hi = hex_digit(s[i + 2])) >= 0 &&
                   (lo = hex_digit(s[i + 3])) >= 0) {
            *p++ = (char)(hi << 4 | lo);
            i += 3;
        } else {
            *p++ = s[i];
        }
    }
    *p = '\0';
    return out;
}
