/* model_ref.h - the model in natural logs, in long double: an independent
 * reference for the unit tests that neither underflows nor overflows and
 * shares no code with the scorers. */
#ifndef MODEL_REF_H
#define MODEL_REF_H
#include "hk_types.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline long double log_add(long double a, long double b)
{
    if (a < b) { long double t = a; a = b; b = t; }
    return a == -INFINITY ? a : a + log1pl(expl(b - a));
}

/* log10 of the pair's likelihood. Qualities are the batch's (already
 * normalised). */
static inline double log10_reference(const uint8_t *rb, const uint8_t *q, const uint8_t *gi,
                                      const uint8_t *gd, const uint8_t *gc, uint32_t m,
                                      const uint8_t *hb, uint32_t n)
{
    long double *row = malloc(6 * ((size_t)n + 1) * sizeof *row);
    long double *M = row, *I = M + n + 1, *D = I + n + 1, *pM = D + n + 1, *pI = pM + n + 1, *pD = pI + n + 1;
    /* row 0, column 0 included: M = I = 0, D = 1/n */
    for (uint32_t j = 0; j <= n; j++) { pM[j] = pI[j] = -INFINITY; pD[j] = -logl((long double)n); }
    for (uint32_t i = 0; i < m; i++) {
        const long double e = powl(10, -q[i] / 10.0L), ei = powl(10, -gi[i] / 10.0L);
        const long double ed = powl(10, -gd[i] / 10.0L), eg = powl(10, -gc[i] / 10.0L);
        const long double lmm = logl(1 - (ei + ed)), lgm = logl(1 - eg), lmi = logl(ei), lmd = logl(ed);
        const long double lgg = logl(eg), lmatch = logl(1 - e), lmism = logl(e / 3);
        M[0] = I[0] = D[0] = -INFINITY;
        for (uint32_t j = 1; j <= n; j++) {
            const int match = rb[i] == HK_BASE_N || hb[j - 1] == HK_BASE_N || rb[i] == hb[j - 1];
            M[j] = (match ? lmatch : lmism) + log_add(lmm + pM[j - 1], lgm + log_add(pI[j - 1], pD[j - 1]));
            I[j] = log_add(lmi + pM[j], lgg + pI[j]);
            D[j] = log_add(lmd + M[j - 1], lgg + D[j - 1]);
        }
        long double *t;
        t = pM; pM = M; M = t;
        t = pI; pI = I; I = t;
        t = pD; pD = D; D = t;
    }
    long double sum = -INFINITY;
    for (uint32_t j = 1; j <= n; j++) sum = log_add(sum, log_add(pM[j], pI[j]));
    free(row);
    return (double)(sum / logl(10));
}

#endif
