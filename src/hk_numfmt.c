/* hk_numfmt.c - see hk_numfmt.h. */
#include "hk_numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const double pow10_tab[HK_NUMFMT_MAX_DECIMALS + 1] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12
};

char *hk_numfmt_fixed(char *p, double v, int decimals)
{
    if (!isfinite(v)) { memcpy(p, "null", 4); return p + 4; }
    const double scaled = fabs(v) * pow10_tab[decimals];
    if (scaled >= 9.0e15)   /* beyond exact integers in a double */
        return p + snprintf(p, HK_NUMFMT_MAX_LEN, "%.*f", decimals, v);
    uint64_t u = (uint64_t)llround(scaled);
    char tmp[32];
    int n = 0;
    do { tmp[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    while (n <= decimals) tmp[n++] = '0';      /* at least one digit before the point */
    if (signbit(v)) *p++ = '-';
    for (int i = n - 1; i >= decimals; i--) *p++ = tmp[i];
    if (decimals > 0) {
        *p++ = '.';
        for (int i = decimals - 1; i >= 0; i--) *p++ = tmp[i];
    }
    return p;
}
