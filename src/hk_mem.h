/* hk_mem.h - the large arrays of a run: batches, blocks of input text, line
 * indexes, table text.
 *
 * They reach hundreds of MB and are written once soon after they grow. Backed
 * by 4 KiB pages, a 1.4 GB input costs some 350,000 page faults while it is
 * read, and as many pages to unmap when the run frees them and at exit. Where
 * the kernel offers transparent huge pages on request (Linux's "madvise" mode,
 * Debian's default), asking for them cuts both several times. This module
 * includes no other haplik header.
 */
#ifndef HK_MEM_H
#define HK_MEM_H

#include <stddef.h>

/* realloc(p, bytes); a block of HK_MEM_HUGE_BYTES or more is also advised to
 * use huge pages (where it cannot be, it is still a plain block). */
void *hk_mem_realloc(void *p, size_t bytes);

/* Below this, a block holds no whole aligned huge page often enough to ask. */
#define HK_MEM_HUGE_BYTES ((size_t)4 << 20)

#endif
