/* hk_outfile.h - output files that are complete or absent.
 *
 * Output goes to a temporary file beside the destination and is renamed into
 * place by hk_outfile_commit; hk_outfile_abort (or SIGINT/SIGTERM, once
 * hk_outfile_catch_signals was called) removes it. Standard output ("-" or
 * NULL) is spooled to an anonymous temporary file and copied out on commit,
 * so a failed run writes nothing there either.
 */
#ifndef HK_OUTFILE_H
#define HK_OUTFILE_H

#include <stdio.h>

typedef struct hk_outfile hk_outfile_t;

/* NULL on failure (logged). */
hk_outfile_t *hk_outfile_open(const char *path);
FILE *hk_outfile_fp(hk_outfile_t *o);
const char *hk_outfile_path(const hk_outfile_t *o);
/* Flush, close and move into place; frees o. 0, or -1 (logged; nothing left). */
int hk_outfile_commit(hk_outfile_t *o) __attribute__((warn_unused_result));
/* Discard; frees o; accepts NULL. */
void hk_outfile_abort(hk_outfile_t *o);

/* Remove pending temporary files and exit 128+signal on SIGINT, SIGTERM,
 * SIGHUP and SIGPIPE. */
void hk_outfile_catch_signals(void);

#endif
