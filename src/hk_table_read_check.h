/* hk_table_read_check.h - what the table reader's json and tsv parts both
 * check: a JSON text, a table's header and its summary. Below both parts. */
#ifndef HK_TABLE_READ_CHECK_H
#define HK_TABLE_READ_CHECK_H

#include "hk_table_read_internal.h"
#include "hk_json_scan.h"

/* s with ill-formed UTF-8 repaired (into t->fixed, *n its length), told once. */
HK_RESULT_USED hk_status_t hk_tread_repaired(hk_tread_t *t, const char *s, size_t *n);
/* Log a JSON fault of t's current line (skip: bytes put before it). */
void hk_tread_json_fault(const hk_tread_t *t, const hk_scan_fault_t *f, size_t skip);
/* prefix s[0, n) suffix as one JSON value (hk_json_scan_value), parsed into
 * *out; HK_E_INPUT (logged with t's path and line) when it is none. */
HK_RESULT_USED hk_status_t hk_tread_parse(hk_tread_t *t, const char *prefix, const char *s,
                                          size_t n, const char *suffix, cJSON **out);
HK_RESULT_USED hk_status_t hk_tread_check_header(const hk_tread_t *t, const cJSON *h);
/* Check the summary s against what was read, and keep it. */
HK_RESULT_USED hk_status_t hk_tread_check_summary(hk_tread_t *t, const cJSON *s, const char *where,
                                                  long line);

#endif
