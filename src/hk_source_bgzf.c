/* hk_source_bgzf.c - a BGZF file's blocks inflated on the reader's threads.
 *
 * htslib hands BGZF text to one caller in order (bgzf_read copies each
 * inflated block out of its cache): that task held every step of a large
 * file, the step's other threads waiting for it (docs/PERFORMANCE.md). BGZF
 * blocks are independent
 * deflate streams whose inflated sizes are in their trailers, so a block of
 * the reader is planned in order (read the compressed bytes, walk the block
 * headers: cheap) and inflated in parts on every thread, straight into place
 * (ISA-L, each block's CRC checked). Used for BGZF regular files where
 * haplik was built with ISA-L; htslib reads the rest.
 */
#include "config.h"
#include "hk_source_bgzf.h"

#ifdef HAVE_ISAL
#include <errno.h>
#include <fcntl.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_BYTES   ((size_t)1 << 20)   /* compressed bytes read at a time */
#define HEADER_BYTES 18                  /* a BGZF block's header, its BSIZE included */
#define TRAILER_BYTES 8                  /* CRC32 and ISIZE */

typedef struct {
    size_t   cdata;      /* the deflate data: offset in cbuf */
    uint32_t clen, usize, crc;
    size_t   uoff;       /* where it goes in the planned bytes */
} block_t;

struct hk_bgzf {
    int        fd;
    off_t      coff;     /* file offset of cbuf[0] */
    uint8_t   *cbuf;     /* compressed bytes from coff */
    size_t     clen, ccap, cpos;   /* held, allocated, walked */
    int        file_end;           /* the file has no more bytes after cbuf */
    block_t   *blocks;   /* the plan */
    size_t     n_blocks, m_blocks;
    size_t     planned;
    atomic_size_t first_bad;   /* the first block that failed to inflate; n_blocks if none */
};

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }

hk_status_t hk_bgzf_open(const char *path, hk_bgzf_t **out)
{
    *out = NULL;
    hk_bgzf_t *z = calloc(1, sizeof *z);
    if (!z) {
        errno = ENOMEM;
        return HK_E_NOMEM;
    }
    z->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (z->fd < 0) {
        const int e = errno;
        free(z);
        errno = e;
        return hk_status_of_errno(e);
    }
    *out = z;
    return HK_OK;
}

void hk_bgzf_close(hk_bgzf_t *z)
{
    if (!z) return;
    close(z->fd);
    free(z->cbuf);
    free(z->blocks);
    free(z);
}

/* At least n bytes held from cpos on (fewer at the end of the file). 0, or
 * -1 on a read error or without memory. */
static int hold(hk_bgzf_t *z, size_t n)
{
    while (z->clen - z->cpos < n && !z->file_end) {
        if (z->clen + READ_BYTES > z->ccap) {
            const size_t cap = 2 * (z->clen + READ_BYTES);
            uint8_t *x = realloc(z->cbuf, cap);
            if (!x) return -1;
            z->cbuf = x;
            z->ccap = cap;
        }
        ssize_t got;
        do got = pread(z->fd, z->cbuf + z->clen, READ_BYTES, z->coff + (off_t)z->clen);
        while (got < 0 && errno == EINTR);
        if (got < 0) return -1;
        if (got == 0) z->file_end = 1;
        z->clen += (size_t)got;
    }
    return 0;
}

ssize_t hk_bgzf_plan(hk_bgzf_t *z, size_t room, int *end)
{
    /* the blocks inflated last time are done with: drop their bytes (none,
     * and no buffer yet, the first time: memmove may not be given NULL) */
    if (z->cpos) {
        memmove(z->cbuf, z->cbuf + z->cpos, z->clen - z->cpos);
        z->coff += (off_t)z->cpos;
        z->clen -= z->cpos;
        z->cpos = 0;
    }
    z->n_blocks = z->planned = 0;
    *end = -1;
    for (;;) {
        if (hold(z, HEADER_BYTES) < 0) break;
        const uint8_t *h = z->cbuf + z->cpos;
        const size_t left = z->clen - z->cpos;
        if (left == 0) { *end = 1; break; }   /* the end of the file, at a block's end */
        /* gzip, deflate, FEXTRA, XLEN 6, the subfield 'BC' of 2 bytes: BGZF */
        if (left < HEADER_BYTES || h[0] != 31 || h[1] != 139 || h[2] != 8 || !(h[3] & 4) ||
            le16(h + 10) != 6 || h[12] != 'B' || h[13] != 'C' || le16(h + 14) != 2)
            break;
        const size_t total = le16(h + 16) + 1;
        if (total < HEADER_BYTES + TRAILER_BYTES || hold(z, total) < 0) break;
        h = z->cbuf + z->cpos;   /* hold may have moved it */
        if (z->clen - z->cpos < total) break;   /* cut short */
        const uint32_t usize = le32(h + total - 4);
        if (usize > 65536) break;
        if (usize && z->planned + usize > room) { *end = 0; break; }
        if (usize) {   /* an empty block (the end-of-file marker) adds nothing */
            if (z->n_blocks == z->m_blocks) {
                const size_t m = z->m_blocks ? 2 * z->m_blocks : 1024;
                block_t *x = realloc(z->blocks, m * sizeof *x);
                if (!x) break;
                z->blocks = x;
                z->m_blocks = m;
            }
            z->blocks[z->n_blocks++] = (block_t){ .cdata = z->cpos + HEADER_BYTES,
                                                  .clen = (uint32_t)(total - HEADER_BYTES - TRAILER_BYTES),
                                                  .usize = usize, .crc = le32(h + total - 8),
                                                  .uoff = z->planned };
            z->planned += usize;
        }
        z->cpos += total;
    }
    atomic_store(&z->first_bad, z->n_blocks);
    return (ssize_t)z->planned;
}

void hk_bgzf_inflate(hk_bgzf_t *z, char *dst, int part, int nparts)
{
    const size_t lo = z->n_blocks * (size_t)part / (size_t)nparts;
    const size_t hi = z->n_blocks * (size_t)(part + 1) / (size_t)nparts;
    for (size_t k = lo; k < hi; k++) {
        const block_t *b = &z->blocks[k];
        uint8_t *out = (uint8_t *)dst + b->uoff;
        struct inflate_state st;
        isal_inflate_init(&st);
        st.crc_flag = ISAL_DEFLATE;   /* raw deflate: the CRC is checked below */
        st.next_in = z->cbuf + b->cdata;
        st.avail_in = b->clen;
        st.next_out = out;
        st.avail_out = b->usize;
        if (isal_inflate_stateless(&st) != ISAL_DECOMP_OK || st.total_out != b->usize ||
            crc32_gzip_refl(0, out, b->usize) != b->crc) {
            size_t was = atomic_load(&z->first_bad);   /* keep the earliest */
            while (k < was && !atomic_compare_exchange_weak(&z->first_bad, &was, k)) {}
            return;
        }
    }
}

size_t hk_bgzf_done(hk_bgzf_t *z, int *bad)
{
    const size_t k = atomic_load(&z->first_bad);
    *bad = k < z->n_blocks;
    return *bad ? z->blocks[k].uoff : z->planned;
}
#endif
