/* hk_table_read_types.h - the table reader's handle and records, below its
 * interface (hk_table_read.h) and its parts (hk_table_read_internal.h). */
#ifndef HK_TABLE_READ_TYPES_H
#define HK_TABLE_READ_TYPES_H

#include "hk_types.h"

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hk_tread hk_tread_t;

/* One record: its region index in its table, and its text before and after
 * that index (head empty but for tsv, where it is the fields before
 * region_index with their tab; rest starts after the index's digits). Valid
 * until the next call on the table. */
typedef struct {
    uint64_t    index;
    const char *head, *rest;
    size_t      head_len, rest_len;
    uint64_t    pairs;          /* pairs it holds */
} hk_tread_rec_t;

#endif
