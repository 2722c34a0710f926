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
        } else if (c < 0x20 && c != '\t' && c != '\r') {
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
