/* hk_textbuf.h - a growing text buffer: the table's writers format into it
 * (hk_table_internal.h), the table's core hands it to its I/O thread
 * (hk_table.c). */
#ifndef HK_TEXTBUF_H
#define HK_TEXTBUF_H

#include <stddef.h>

typedef struct {
    char  *p;
    size_t len, cap;
    int    failed;     /* out of memory */
} hk_textbuf_t;

/* Room for n more bytes at the end; NULL when memory ran out (then failed). */
char *hk_textbuf_room(hk_textbuf_t *buf, size_t n);
int hk_textbuf_put(hk_textbuf_t *buf, const char *s, size_t n);
int hk_textbuf_puts(hk_textbuf_t *buf, const char *s);

#endif
