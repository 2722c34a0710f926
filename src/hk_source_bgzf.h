/* hk_source_bgzf.h - a BGZF file's blocks inflated by several threads
 * (hk_source.c's, with ISA-L): internal to hk_source.c. One plan at a time:
 * plan the next blocks (in order, one thread), inflate them in parts (every
 * thread, into the planned bytes' place), then take the result. */
#ifndef HK_SOURCE_BGZF_H
#define HK_SOURCE_BGZF_H

#include <stddef.h>
#include <sys/types.h>
#include "hk_types.h"

typedef struct hk_bgzf hk_bgzf_t;

/* Open path into *out. HK_OK; else *out is NULL, errno says why, and the
 * status is HK_E_NOMEM or the open's (hk_status_of_errno). Logs nothing. */
HK_RESULT_USED hk_status_t hk_bgzf_open(const char *path, hk_bgzf_t **out);
/* Plan the blocks after the last plan's that fill at most room bytes once
 * inflated (room: 64 KB or more). Returns those bytes; *end is 0 when more
 * follows, 1 at the end of the file, -1 when the data after them cannot be
 * read (not BGZF, cut short, a read error, no memory). */
ssize_t hk_bgzf_plan(hk_bgzf_t *z, size_t room, int *end);
/* Inflate part `part` of nparts of the plan's blocks into dst (the planned
 * bytes' start), checking each block's CRC. From several threads at once. */
void hk_bgzf_inflate(hk_bgzf_t *z, char *dst, int part, int nparts);
/* After every part: the planned bytes inflated good from the start (all of
 * them, or those before the first bad block, then *bad is 1). */
size_t hk_bgzf_done(hk_bgzf_t *z, int *bad);
void hk_bgzf_close(hk_bgzf_t *z);

#endif
