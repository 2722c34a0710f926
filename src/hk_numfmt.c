/* hk_numfmt.c - see hk_numfmt.h. */
#include "hk_numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const double pow10_tab[HK_NUMFMT_MAX_DECIMALS + 1] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12
};

/* "00" "01" ... "99": two digits per division (19 ns a number dividing by 10
 * one digit at a time, 14 with this, on the development box). */
static const char two_digits[201] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* The n lowest decimal digits of u, leading zeros kept, written to end at p. */
static void digits_back(char *p, uint64_t u, int n)
{
    for (; n >= 2; n -= 2, u /= 100) {
        p -= 2;
        memcpy(p, two_digits + 2 * (u % 100), 2);
    }
    if (n) *--p = (char)('0' + u % 10);
}

static int n_digits(uint64_t u)
{
    int n = 1;
    for (; u >= 100; u /= 100) n += 2;
    return n + (u >= 10);
}

char *hk_numfmt_u64(char *p, uint64_t u)
{
    const int n = n_digits(u);
    digits_back(p + n, u, n);
    return p + n;
}

char *hk_numfmt_fixed(char *p, double v, int decimals)
{
    if (!isfinite(v)) { memcpy(p, "null", 4); return p + 4; }
    const double scaled = fabs(v) * pow10_tab[decimals];
    if (scaled >= 9.0e15)   /* beyond exact integers in a double */
        return p + snprintf(p, HK_NUMFMT_MAX_LEN, "%.*f", decimals, v);
    const uint64_t u = (uint64_t)llround(scaled), unit = (uint64_t)pow10_tab[decimals];
    /* a division by a constant is a multiplication: 6 decimals is the default */
    const uint64_t whole = decimals == 6 ? u / 1000000 : u / unit;
    if (signbit(v)) *p++ = '-';
    const int nw = n_digits(whole);   /* at least one digit before the point */
    digits_back(p + nw, whole, nw);
    p += nw;
    if (decimals > 0) {
        *p++ = '.';
        digits_back(p + decimals, u - whole * unit, decimals);
        p += decimals;
    }
    return p;
}
