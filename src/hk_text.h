/* hk_text.h - text from the input, checked before it is written out.
 *
 * Region names, table lines and file names come from outside and need not be
 * UTF-8, nor free of control characters; a JSON table must be both (RFC 8259,
 * and strict readers such as Python's json). This module includes no other
 * haplik header, so that any module may use it.
 */
#ifndef HK_TEXT_H
#define HK_TEXT_H

#include <stddef.h>

/* The UTF-8 character at s (n > 0 bytes available). Returns the bytes it
 * takes and sets *valid; when it is ill-formed (RFC 3629: no overlong forms,
 * surrogates or code points past U+10FFFF), the bytes returned are those one
 * U+FFFD replaces: the maximal subpart, as Unicode recommends and Python's
 * errors="replace" does. */
size_t hk_text_utf8_next(const char *s, size_t n, int *valid);

/* Bytes of s[0, n) before the first ill-formed UTF-8 (n when there is none). */
size_t hk_text_utf8_valid_len(const char *s, size_t n);

/* A copy of s[0, n) with each ill-formed part replaced by U+FFFD (EF BF BD),
 * NUL-terminated, its length in *len when len is not NULL. Free with free();
 * NULL when out of memory. */
char *hk_text_utf8_fix(const char *s, size_t n, size_t *len);

/* The name of names[0, n) nearest to word, for a "did you mean" hint: the
 * fewest single-character insertions, deletions, substitutions or swaps of
 * two neighbours, at most a third of word's length (and at least 1); NULL
 * when none is that near (or word is one of them). Ties: the first. */
const char *hk_text_nearest(const char *word, const char *const *names, size_t n);

/* A copy of s[0, n) with the escapes of a tsv field undone (\\ \t \n \r and \xNN;
 * any other backslash stays), NUL-terminated. Free with free(); NULL when out
 * of memory. */
char *hk_text_unescape(const char *s, size_t n);

/* What cJSON accepts and RFC 8259 does not, in the JSON text s[0, n) that
 * cJSON has parsed: a raw control character (in a string, or outside one but
 * JSON's whitespace: tab, LF, CR), a number such as 01, +1, .5 or 1. . Returns NULL when
 * there is none, else what was found (a static string) with its byte offset
 * in *at. */
const char *hk_text_json_strict(const char *s, size_t n, size_t *at);

#endif
