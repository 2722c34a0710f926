/* hk_textbuf.c - see hk_textbuf.h. */
#include "hk_textbuf.h"
#include "hk_mem.h"

#include <string.h>

typedef hk_textbuf_t textbuf_t;

char *hk_textbuf_room(textbuf_t *buf, size_t n)
{
    if (buf->len + n > buf->cap) {
        size_t cap = buf->cap ? buf->cap : (1u << 16);
        while (cap < buf->len + n) cap *= 2;
        char *p = hk_mem_realloc(buf->p, cap);
        if (!p) { buf->failed = 1; return NULL; }
        buf->p = p;
        buf->cap = cap;
    }
    return buf->p + buf->len;
}

int hk_textbuf_put(textbuf_t *buf, const char *s, size_t n)
{
    char *p = hk_textbuf_room(buf, n);
    if (!p) return -1;
    memcpy(p, s, n);
    buf->len += n;
    return 0;
}

int hk_textbuf_puts(textbuf_t *buf, const char *s) { return hk_textbuf_put(buf, s, strlen(s)); }
