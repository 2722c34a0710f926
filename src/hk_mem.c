/* hk_mem.c - large arrays on transparent huge pages where the kernel allows. */
#include "hk_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void *hk_mem_realloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes);
#ifdef MADV_HUGEPAGE
    if (q && bytes >= HK_MEM_HUGE_BYTES) {
        /* Whole pages, rounded outwards: a block that realloc got from mmap
         * is then advised as one mapping (advising only its inside would
         * split it, and realloc could no longer grow it in place with
         * mremap); a neighbour in the heap advised too is harmless. It may
         * fail (a kernel without THP): the block is still usable. */
        const long sz = sysconf(_SC_PAGESIZE);
        const uintptr_t mask = (uintptr_t)(sz > 0 ? sz : 4096) - 1;
        const uintptr_t lo = (uintptr_t)q & ~mask;
        const uintptr_t hi = ((uintptr_t)q + bytes + mask) & ~mask;
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    return q;
}
