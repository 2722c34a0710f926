/* fuzz_reader.c - libFuzzer target for the dump readers (hk_reader_open /
 * hk_reader_next): the HaplotypeCaller results-file formats (gatk, pdhmm) and
 * the batch format, plain, gzip and BGZF, intact or truncated.
 *
 * Input: one option byte, then the file's content.
 *   bits 0-1  format: 0 auto, else HK_FMT_* (1 pdhmm, 2 gatk, 3 batch)
 *   bit  2    model: 0 split's raw model (qualities unchanged, letters as N),
 *             and then the round-trip check below; 1 the default model
 *             (unknown letters are errors, base quality floor 6)
 *   bits 3-4  pairs per batch: 1, 3, 64, 65536
 *   bits 5-6  container: 0 the bytes as they are (plain, or compressed seeds),
 *             1 gzip, 2 BGZF, 3 BGZF without its end-of-file marker
 *   bit  7    compressed containers: cut off the last third (truncated stream)
 *
 * Besides crashes, sanitizer reports and hangs, it checks:
 *   - the batch's invariants (offsets, counts, pairs) after every call;
 *   - round trip through `split` (raw model, reading succeeded, printable text,
 *     at least one region): hk_split_plan and hk_split_write cut the input into
 *     3 shards (in memory); the shards concatenated in order read back as the
 *     same regions: names, reported lines, reads, haplotypes, qualities, and
 *     expected values exactly equal (the shards copy the input's own text).
 */
#include "hk_batch.h"
#include "hk_model.h"
#include "hk_pdhmm.h"
#include "hk_reader.h"
#include "hk_split.h"
#include "hk_log.h"
#include "fuzz_common.h"

#include <htslib/bgzf.h>
#include <math.h>
#include <stdint.h>
#include <zlib.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_reader: check failed: %s (%s:%d)\n", \
                                           #c, __FILE__, __LINE__); abort(); } } while (0)

/* Read k's gap rows (hk_batch_gap_rows) in a scratch of this file's: valid
 * until the next call with the same slot. */
static const uint8_t *const *gap_rows(const hk_batch_t *b, size_t k, int slot)
{
    static uint8_t scratch[2][3 * HK_MAX_SEQ_LEN];
    static const uint8_t *rows[2][3];
    hk_batch_gap_rows(b, k, scratch[slot], rows[slot]);
    return rows[slot];
}

static void check_batch(const hk_batch_t *b)
{
    uint64_t pairs = 0, cells = 0, max_cols = 0;
    /* a PDHMM batch keeps the case of its letters */
    const unsigned max_code = b->pdhmm ? HK_BASE_N + HK_BASE_LOWER : HK_BASE_N;
    size_t reads = 0, haps = 0, max_haps = 0;
    for (size_t i = 0; i < b->n_regions; i++) {
        const hk_region_t *rg = &b->regions[i];
        CHECK(rg->read0 == reads && rg->hap0 == haps && rg->pair0 == pairs);
        CHECK(rg->n_reads > 0 && rg->n_haps > 0);
        reads += rg->n_reads;
        haps += rg->n_haps;
        pairs += (uint64_t)rg->n_reads * rg->n_haps;
        uint64_t rs = 0, hs = 0;
        for (uint32_t k = 0; k < rg->n_reads; k++) rs += hk_batch_read_len(b, rg->read0 + k);
        for (uint32_t k = 0; k < rg->n_haps; k++) hs += hk_batch_hap_len(b, rg->hap0 + k);
        CHECK(rg->cells == rs * hs);
        cells += rg->cells;
        if (rg->n_haps > max_haps) max_haps = rg->n_haps;
        if (hs > max_cols) max_cols = hs;
    }
    CHECK(reads == b->n_reads && haps == b->n_haps && pairs == b->n_pairs && cells == b->cells);
    CHECK(max_haps == b->max_region_haps && max_cols == b->max_region_hap_cols);
    for (size_t k = 0; k < b->n_reads; k++) {
        CHECK(b->read_off[k] < b->read_off[k + 1]);
        CHECK(hk_batch_read_len(b, k) <= HK_MAX_SEQ_LEN);
        /* rows left out only where the summary holds them all */
        CHECK(b->read_gaps[k].rows || b->read_gaps[k].constant);
        const uint8_t *const *g = gap_rows(b, k, 0);
        for (uint64_t p = b->read_off[k], i = 0; p < b->read_off[k + 1]; p++, i++)
            CHECK(b->read_base[p] <= max_code && b->read_q[p] <= 93 && g[0][i] <= 93 && g[1][i] <= 93 &&
                  g[2][i] <= 93);
    }
    if (b->n_reads) CHECK(b->read_off[b->n_reads] == b->n_read_pos);
    for (size_t k = 0; k < b->n_haps; k++) {
        CHECK(b->hap_off[k] < b->hap_off[k + 1]);
        for (uint64_t p = b->hap_off[k]; p < b->hap_off[k + 1]; p++) CHECK(b->hap_base[p] <= max_code);
    }
    if (b->n_haps) CHECK(b->hap_off[b->n_haps] == b->n_hap_pos);
}

/* Read a whole file into one batch (at most limit pairs, else give up with
 * -2); the reader's status otherwise: 0 or -1. */
static int read_all(const char *path, int format, const hk_model_t *m, size_t max_pairs,
                    hk_batch_t *all, int *detected, uint64_t limit)
{
    hk_reader_t *r;
    if (hk_reader_open(path, format, hk_model_seq_rules(m), NULL, &r)) return -1;
    size_t got;
    hk_status_t st;
    int rc = 0;
    while (!(st = hk_reader_next(r, all, max_pairs, &got)) && got > 0) {
        check_batch(all);
        if (all->n_pairs > limit) { rc = -2; break; }
    }
    if (st) rc = -1;
    *detected = hk_reader_format(r);
    hk_reader_close(r);
    return rc;
}

static int same_bytes(const void *a, const void *b, size_t n) { return n == 0 || !memcmp(a, b, n); }

static void check_same(const hk_batch_t *a, const hk_batch_t *b)
{
    CHECK(a->n_regions == b->n_regions && a->n_reads == b->n_reads && a->n_haps == b->n_haps &&
          a->n_pairs == b->n_pairs && a->n_read_pos == b->n_read_pos && a->n_hap_pos == b->n_hap_pos);
    for (size_t i = 0; i < a->n_regions; i++) {
        const hk_region_t *x = &a->regions[i], *y = &b->regions[i];
        CHECK(x->n_reads == y->n_reads && x->n_haps == y->n_haps && x->line == y->line);
        CHECK((x->name == NULL) == (y->name == NULL));
        if (x->name) CHECK(!strcmp(x->name, y->name));
    }
    if (a->n_reads) CHECK(same_bytes(a->read_off, b->read_off, (a->n_reads + 1) * sizeof *a->read_off));
    if (a->n_haps) CHECK(same_bytes(a->hap_off, b->hap_off, (a->n_haps + 1) * sizeof *a->hap_off));
    const size_t rp = a->n_read_pos, hp = a->n_hap_pos;
    CHECK(same_bytes(a->read_text, b->read_text, rp) && same_bytes(a->read_q, b->read_q, rp) &&
          same_bytes(a->hap_text, b->hap_text, hp));
    for (size_t k = 0; k < a->n_reads; k++) {
        const uint8_t *const *x = gap_rows(a, k, 0), *const *y = gap_rows(b, k, 1);
        const size_t len = hk_batch_read_len(a, k);
        CHECK(same_bytes(x[0], y[0], len) && same_bytes(x[1], y[1], len) && same_bytes(x[2], y[2], len));
    }
    CHECK(a->pdhmm == b->pdhmm && (!a->pdhmm || same_bytes(a->hap_pd, b->hap_pd, hp)));
    for (size_t p = 0; p < a->n_pairs; p++) {
        const double u = a->expected[p], v = b->expected[p];
        /* the shards hold the input's own text: the same value, bit for bit */
        if (isnan(u) || isnan(v)) { CHECK(isnan(u) && isnan(v)); continue; }
        CHECK(!memcmp(&u, &v, sizeof u));
    }
}

static size_t gzip_mem(const uint8_t *in, size_t n, uint8_t **out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    size_t cap = deflateBound(&z, n) + 32;
    *out = malloc(cap);
    if (!*out) { deflateEnd(&z); return 0; }
    z.next_in = (Bytef *)in; z.avail_in = (uInt)n;
    z.next_out = *out; z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) { free(*out); *out = NULL; return 0; }
    return len;
}

/* Write the content in the container the option byte asks for. */
static int write_input(const char *path, int container, int cut, const uint8_t *p, size_t n)
{
    if (container == 0) return fuzz_write_file(path, p, n);
    if (container == 1) {
        uint8_t *gz = NULL;
        size_t len = gzip_mem(p, n, &gz);
        if (!gz) return -1;
        if (cut) len -= len / 3;
        int rc = fuzz_write_file(path, gz, len);
        free(gz);
        return rc;
    }
    BGZF *bz = bgzf_open(path, "w");
    if (!bz) return -1;
    /* small blocks so that a cut falls between blocks as well as inside one */
    for (size_t o = 0; o < n; o += 700) {
        size_t k = n - o < 700 ? n - o : 700;
        if (bgzf_write(bz, p + o, k) < 0 || bgzf_flush(bz) < 0) { bgzf_close(bz); return -1; }
    }
    if (bgzf_close(bz) < 0) return -1;
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fclose(fp);
    if (container == 3) len -= 28;              /* the BGZF end-of-file marker */
    if (cut) len -= len / 3;
    return truncate(path, len < 0 ? 0 : len);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    hk_log_set_quiet(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const unsigned opt = data[0];
    static const size_t batch_pairs[4] = { 1, 3, 64, 1u << 16 };
#ifdef FUZZ_FORMAT
    const int format = FUZZ_FORMAT;   /* a target of its own per format module (run.sh) */
#else
    const int format = (int)(opt & 3) % HK_FMT_COUNT;
#endif
    const int raw = !(opt & 4);
    const size_t max_pairs = batch_pairs[(opt >> 3) & 3];
    const int container = (opt >> 5) & 3, cut = (opt >> 7) & 1;
    const char *path = fuzz_tmp_path("reader");
    if (write_input(path, container, cut, data + 1, size - 1)) return 0;

    hk_model_t m = { .precision = HK_PREC_MIXED, .float_threshold = HK_FLOAT_THRESHOLD, .min_base_quality = 6,
                     .gcp = -1, .unknown_as_n = 0 };
    if (raw) m = (hk_model_t){ .precision = HK_PREC_DOUBLE, .min_base_quality = 0, .gcp = -1,
                               .unknown_as_n = 1 };
    hk_batch_t all, again;
    hk_batch_init(&all);
    hk_batch_init(&again);
    int detected = HK_FMT_AUTO, detected2;
    int rc = read_all(path, format, &m, max_pairs, &all, &detected, 1u << 20);
    if (rc == 0 && !raw && all.cells <= 200000) {
        /* the scorer on what was read: no sanitizer report, finite or -inf results */
        CHECK((all.pdhmm ? hk_pdhmm_score_batch(&all, 1) : hk_model_score_batch(&m, &all, 1)) == 0);
        /* gap-open qualities below Q4 make match->match = 1 - err(I) - err(D)
         * negative: the model itself then gives NaN or values above 0 */
        int proper = 1;   /* the PDHMM model clamps match->match at 0 (SPEC 1b) */
        for (size_t k = 0; !all.pdhmm && k < all.n_reads && proper; k++) {
            const uint8_t *const *g = gap_rows(&all, k, 0);
            for (uint32_t i = 0; i < hk_batch_read_len(&all, k) && proper; i++) proper = g[0][i] >= 4 && g[1][i] >= 4;
        }
        for (size_t p = 0; proper && p < all.n_pairs; p++)
            CHECK(!isnan(all.lk[p]) && all.lk[p] <= 1e-5);
    }
    /* htslib takes a plain file with control characters for binary content
     * (refused with a clear error), and only one CR is a line end, so the
     * round trip needs text */
    int text = 1;
    for (size_t i = 1; i < size && text; i++)
        text = data[i] == '\n' || (data[i] >= 0x20 && data[i] < 0x7f) ||
               (data[i] == '\r' && (i + 1 == size || data[i + 1] == '\n'));   /* a line end */
    if (rc == 0 && raw && text && all.n_regions) {
        /* round trip through `split`: 3 shards, concatenated, read as the input */
        CHECK(detected > HK_FMT_AUTO && detected < HK_FMT_COUNT);
        hk_split_plan_t *plan = NULL;
        CHECK(hk_split_plan(path, detected, NULL, 3, &plan) == HK_OK && plan != NULL);
        CHECK(hk_split_n_regions(plan) == all.n_regions);
        char *buf[3] = { NULL, NULL, NULL };
        size_t len[3] = { 0, 0, 0 };
        FILE *out[3];
        static const char *const names[3] = { "shard0", "shard1", "shard2" };
        for (int k = 0; k < 3; k++) CHECK((out[k] = open_memstream(&buf[k], &len[k])) != NULL);
        CHECK(hk_split_write(plan, out, names) == 0);
        hk_split_free(plan);
        for (int k = 0; k < 3; k++) CHECK(fclose(out[k]) == 0);
        FILE *fp = fopen(path, "wb");
        CHECK(fp != NULL);
        for (int k = 0; k < 3; k++) {
            CHECK(len[k] == 0 || fwrite(buf[k], 1, len[k], fp) == len[k]);
            free(buf[k]);
        }
        CHECK(fclose(fp) == 0);
        rc = read_all(path, detected, &m, 1u << 16, &again, &detected2, 1u << 21);
        if (rc != 0) {
            fprintf(stderr, "fuzz_reader: the concatenated shards do not read back\n");
            abort();
        }
        check_same(&all, &again);
    }
    hk_batch_free(&all);
    hk_batch_free(&again);
    return 0;
}
