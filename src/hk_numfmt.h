/* hk_numfmt.h - fast fixed-point formatting of likelihoods.
 *
 * printf("%.6f") per number dominated writing the table (docs/PERFORMANCE.md);
 * this writes the same digits from one integer conversion. Values that do not
 * fit the fast path fall back to snprintf.
 */
#ifndef HK_NUMFMT_H
#define HK_NUMFMT_H

#include <stdint.h>

/* Largest number of decimals supported. */
#define HK_NUMFMT_MAX_DECIMALS 12
/* Bytes that always suffice for one number. */
#define HK_NUMFMT_MAX_LEN 352

/* Write v with `decimals` digits after the point at p (no terminating NUL);
 * non-finite values are written as JSON null. Returns the end. */
char *hk_numfmt_fixed(char *p, double v, int decimals);

/* Bytes that always suffice for hk_numfmt_u64. */
#define HK_NUMFMT_U64_LEN 20
/* Write u in decimal at p (no terminating NUL), as printf's %llu does. Returns the end. */
char *hk_numfmt_u64(char *p, uint64_t u);

#endif
