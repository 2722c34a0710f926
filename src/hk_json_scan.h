/* hk_json_scan.h - a strict, streaming check of one JSON text (RFC 8259),
 * and of a likelihood table's region line, without building a tree.
 *
 * merge copies region lines as they are written; it must still know that each
 * is one well-formed JSON object of the region's shape. A tree per line
 * (cJSON) costs more than the copy itself; this scanner reads the line once,
 * keeps only what the checks need, and refuses what cJSON refuses and what
 * cJSON lets through but RFC 8259 does not (raw control characters, numbers
 * such as 01 or .5, lone UTF-16 surrogates, text after the value). Strings
 * must be well-formed UTF-8 (hk_text.h); where they are not, the result says
 * so apart from other faults, so that a caller may repair the line and scan it
 * again. Includes no other haplik header but hk_text.h's peers.
 */
#ifndef HK_JSON_SCAN_H
#define HK_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Results of the scans. */
enum {
    HK_SCAN_OK = 0,
    HK_SCAN_BAD = -1,     /* not JSON, or not of the expected shape: see what and at */
    HK_SCAN_UTF8 = -2,    /* well-formed but for a string that is not UTF-8 (at) */
};

/* The deepest nesting accepted (cJSON's own limit). */
#define HK_SCAN_MAX_DEPTH 1000

typedef struct {
    const char *what;     /* the fault (a static string), or NULL */
    size_t      at;       /* its byte offset */
    int         shape;    /* JSON, but not of the region's shape */
} hk_scan_fault_t;

/* Whether s[0, n) is exactly one JSON value, surrounded by nothing but space,
 * tab, CR or LF (JSON white space). HK_SCAN_* (fault filled unless OK). */
int hk_json_scan_value(const char *s, size_t n, hk_scan_fault_t *fault)
    __attribute__((warn_unused_result));

/* What a region line holds, as far as merge checks it. */
typedef struct {
    uint64_t index;       /* its "index", the first member */
    size_t   rest;        /* offset of the text after the index's value */
    uint64_t n_reads;     /* rows of log10_likelihoods */
    uint64_t n_haps;      /* their length (0 when there are no rows) */
    int64_t  reads, haps; /* lengths of "reads" and "haplotypes", -1 when absent */
} hk_scan_region_t;

/* Whether s[0, n) is one region of a json or jsonl table (hk_table.h): an
 * object whose first member is "index" (a count); "name" a string or null,
 * "line" a line number (digits, 1 to 2^53), "log10_likelihoods" an array of
 * equally long arrays of numbers within a double's range, or nulls; "reads" and "haplotypes", when present, arrays of strings
 * as many as its rows and columns; any other member any JSON value; no member
 * twice. HK_SCAN_* (fault filled unless OK; r filled when OK). */
int hk_json_scan_region(const char *s, size_t n, hk_scan_region_t *r, hk_scan_fault_t *fault)
    __attribute__((warn_unused_result));

/* Whether s[0, n) is a JSON number (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?). */
int hk_json_is_number(const char *s, size_t n);
/* Whether the JSON number s[0, n) is within a double's range (1e400 is not:
 * every reader takes it as inf); 0 also when memory runs out. */
int hk_json_number_finite(const char *s, size_t n);

#endif
