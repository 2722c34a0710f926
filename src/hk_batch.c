/* hk_batch.c - see hk_batch.h. */
#include "hk_batch.h"
#include "hk_model.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void hk_batch_init(hk_batch_t *b) { memset(b, 0, sizeof *b); }

void hk_batch_clear(hk_batch_t *b)
{
    for (size_t i = 0; i < b->n_regions; i++) free(b->regions[i].name);
    b->n_regions = b->n_reads = b->n_haps = b->n_pairs = 0;
    b->n_read_pos = b->n_hap_pos = 0;
    b->cells = b->n_recomputed = 0;
    b->max_read_len = b->max_hap_len = 0;
}

void hk_batch_free(hk_batch_t *b)
{
    if (!b) return;
    hk_batch_clear(b);
    free(b->regions);
    free(b->read_off); free(b->read_text); free(b->read_base);
    free(b->read_q); free(b->read_i); free(b->read_d); free(b->read_g);
    free(b->hap_off); free(b->hap_text); free(b->hap_base);
    free(b->lk); free(b->expected);
    hk_batch_init(b);
}

/* Grow each array of a group to hold need elements; capacities double. */
static int grow(void **p, size_t elem, size_t need, size_t cap)
{
    void *q = realloc(*p, need > cap ? need * elem : cap * elem);
    if (!q) return -1;
    *p = q;
    return 0;
}

static size_t next_cap(size_t need, size_t cap)
{
    if (need <= cap) return cap;
    size_t c = cap ? cap : 64;
    while (c < need) c *= 2;
    return c;
}

static int reserve_read_pos(hk_batch_t *b, size_t add)
{
    size_t need = b->n_read_pos + add, cap = next_cap(need, b->m_read_pos);
    if (cap == b->m_read_pos) return 0;
    if (grow((void **)&b->read_text, 1, cap, cap) || grow((void **)&b->read_base, 1, cap, cap) ||
        grow((void **)&b->read_q, 1, cap, cap) || grow((void **)&b->read_i, 1, cap, cap) ||
        grow((void **)&b->read_d, 1, cap, cap) || grow((void **)&b->read_g, 1, cap, cap))
        return -1;
    b->m_read_pos = cap;
    return 0;
}

static int reserve_hap_pos(hk_batch_t *b, size_t add)
{
    size_t need = b->n_hap_pos + add, cap = next_cap(need, b->m_hap_pos);
    if (cap == b->m_hap_pos) return 0;
    if (grow((void **)&b->hap_text, 1, cap, cap) || grow((void **)&b->hap_base, 1, cap, cap))
        return -1;
    b->m_hap_pos = cap;
    return 0;
}

int hk_batch_begin_region(hk_batch_t *b, const char *name, long line)
{
    size_t cap = next_cap(b->n_regions + 1, b->m_regions);
    if (cap != b->m_regions) {
        if (grow((void **)&b->regions, sizeof *b->regions, cap, cap)) return HK_BATCH_ENOMEM;
        b->m_regions = cap;
    }
    hk_region_t *r = &b->regions[b->n_regions];
    memset(r, 0, sizeof *r);
    if (name && !(r->name = strdup(name))) return HK_BATCH_ENOMEM;
    r->line = line;
    r->read0 = (uint32_t)b->n_reads;
    r->hap0 = (uint32_t)b->n_haps;
    r->pair0 = b->n_pairs;
    b->n_regions++;
    return 0;
}

/* Base codes by letter; -1 for letters that are not bases. */
static int8_t base_code[256];
static pthread_once_t base_once = PTHREAD_ONCE_INIT;

static void base_init(void)
{
    for (int c = 0; c < 256; c++) base_code[c] = (int8_t)hk_model_base_code(c);
}

static int encode_bases(const hk_model_t *m, const char *in, uint8_t *code, uint32_t len,
                        const char **bad)
{
    pthread_once(&base_once, base_init);
    int8_t all = 0;
    for (uint32_t i = 0; i < len; i++) {   /* one pass, branch-free; errors located after */
        int8_t c = base_code[(unsigned char)in[i]];
        all |= c;
        code[i] = (uint8_t)c;
    }
    if (all >= 0) return 0;
    for (uint32_t i = 0; i < len; i++) {
        if ((int8_t)code[i] >= 0) continue;
        if (!m->unknown_as_n) { *bad = in + i; return HK_BATCH_EBASE; }
        code[i] = HK_BASE_N;
    }
    return 0;
}

/* Phred+33 characters '!'..'~' to Phred values, raised to at least floor. */
static int decode_qual(const char *in, uint8_t *out, uint32_t len, int floor,
                       const char **bad)
{
    uint8_t worst = 0;
    for (uint32_t i = 0; i < len; i++) {   /* vectorisable: no branch on the data */
        uint8_t q = (uint8_t)((unsigned char)in[i] - 33);
        worst = q > worst ? q : worst;
        out[i] = q < floor ? (uint8_t)floor : q;
    }
    if (worst <= 93) return 0;
    for (uint32_t i = 0; i < len; i++)
        if ((uint8_t)((unsigned char)in[i] - 33) > 93) { *bad = in + i; break; }
    return HK_BATCH_EQUAL;
}

int hk_batch_add_read(hk_batch_t *b, const hk_model_t *m, const char *bases,
                      const char *qual, const char *ins, const char *del,
                      const char *gcp, uint32_t len, const char **bad)
{
    if (len > HK_MAX_SEQ_LEN) { *bad = bases; return HK_BATCH_ELONG; }
    size_t cap = next_cap(b->n_reads + 2, b->m_reads);
    if (cap != b->m_reads) {
        if (grow((void **)&b->read_off, sizeof *b->read_off, cap, cap)) return HK_BATCH_ENOMEM;
        b->m_reads = cap;
    }
    if (reserve_read_pos(b, len)) return HK_BATCH_ENOMEM;
    const size_t o = b->n_read_pos;
    int rc;
    if ((rc = encode_bases(m, bases, b->read_base + o, len, bad)) ||
        (rc = decode_qual(qual, b->read_q + o, len, m->min_base_quality, bad)) ||
        (rc = decode_qual(ins, b->read_i + o, len, 0, bad)) ||
        (rc = decode_qual(del, b->read_d + o, len, 0, bad)) ||
        (rc = decode_qual(gcp, b->read_g + o, len, 0, bad)))
        return rc;
    if (m->gcp >= 0) memset(b->read_g + o, m->gcp, len);
    memcpy(b->read_text + o, bases, len);
    if (b->n_reads == 0) b->read_off[0] = 0;
    b->n_read_pos += len;
    b->read_off[++b->n_reads] = b->n_read_pos;
    if (len > b->max_read_len) b->max_read_len = len;
    hk_batch_last_region(b)->n_reads++;
    return 0;
}

int hk_batch_add_hap(hk_batch_t *b, const hk_model_t *m, const char *bases, uint32_t len,
                     const char **bad)
{
    if (len > HK_MAX_SEQ_LEN) { *bad = bases; return HK_BATCH_ELONG; }
    size_t cap = next_cap(b->n_haps + 2, b->m_haps);
    if (cap != b->m_haps) {
        if (grow((void **)&b->hap_off, sizeof *b->hap_off, cap, cap)) return HK_BATCH_ENOMEM;
        b->m_haps = cap;
    }
    if (reserve_hap_pos(b, len)) return HK_BATCH_ENOMEM;
    const size_t o = b->n_hap_pos;
    int rc = encode_bases(m, bases, b->hap_base + o, len, bad);
    if (rc) return rc;
    memcpy(b->hap_text + o, bases, len);
    if (b->n_haps == 0) b->hap_off[0] = 0;
    b->n_hap_pos += len;
    b->hap_off[++b->n_haps] = b->n_hap_pos;
    if (len > b->max_hap_len) b->max_hap_len = len;
    hk_batch_last_region(b)->n_haps++;
    return 0;
}

int hk_batch_end_region(hk_batch_t *b)
{
    hk_region_t *r = hk_batch_last_region(b);
    const size_t np = (size_t)r->n_reads * r->n_haps;
    size_t cap = next_cap(b->n_pairs + np, b->m_pairs);
    if (cap != b->m_pairs) {
        if (grow((void **)&b->lk, sizeof *b->lk, cap, cap) ||
            grow((void **)&b->expected, sizeof *b->expected, cap, cap))
            return HK_BATCH_ENOMEM;
        b->m_pairs = cap;
    }
    for (size_t i = 0; i < np; i++) b->lk[b->n_pairs + i] = b->expected[b->n_pairs + i] = NAN;
    b->n_pairs += np;
    uint64_t rsum = b->read_off[r->read0 + r->n_reads] - b->read_off[r->read0];
    uint64_t hsum = b->hap_off[r->hap0 + r->n_haps] - b->hap_off[r->hap0];
    r->cells = rsum * hsum;
    b->cells += r->cells;
    return 0;
}
