/* fuzz_table_read.c - libFuzzer target for merge's table reader
 * (hk_table_read.h) and the region scanner under it (hk_json_scan.h): json,
 * jsonl and tsv tables, plain or BGZF, read as a first table (the header read
 * ahead) or in turn.
 *
 * Input: one option byte, then the table; for a tsv table, the bytes after
 * the first "\n@@sidecar\n" are its sidecar (FILE.meta.json).
 *   bit  0    BGZF (else the bytes as they are)
 *   bit  1    read the header ahead, as merge does for its first table
 *   bit  2    also scan the whole input as one JSON value (hk_json_scan_value)
 *
 * Besides crashes, sanitizer reports and hangs, it checks:
 *   - every record handed over: a json/jsonl region's text, with its index
 *     put back, is JSON that cJSON parses and RFC 8259 allows (hk_text.h), a
 *     UTF-8 object whose index is its place; a tsv row is one line;
 *   - every status is HK_OK, HK_E_INPUT or HK_E_NOMEM (the table is a file:
 *     no temporary copy), with no table, header or record handed over with
 *     a fault;
 *   - a table read to its end: the records' pairs and regions are those of
 *     its summary, which is an object;
 *   - the scanner against cJSON: what the scanner accepts, cJSON parses and
 *     hk_text_json_strict passes.
 */
#include "hk_config.h"
#include "hk_json_scan.h"
#include "hk_log.h"
#include "hk_table_read.h"
#include "hk_text.h"
#include "fuzz_common.h"

#include <cJSON.h>
#include <htslib/bgzf.h>
#include <stdint.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_table_read: check failed: %s (%s:%d)\n", \
                                           #c, __FILE__, __LINE__); abort(); } } while (0)

static const char SEP[] = "\n@@sidecar\n";

/* s[0, n) is JSON as cJSON and RFC 8259 read it. */
static void check_json(const char *s, size_t n)
{
    char *z = malloc(n + 1);
    CHECK(z);
    memcpy(z, s, n);
    z[n] = '\0';
    cJSON *j = cJSON_ParseWithLengthOpts(z, n + 1, NULL, 1);
    size_t at;
    CHECK(j != NULL);
    /* hk_text_json_strict reads lines: a table's LF (white space between
     * values: none can be inside a string the scanner passed) as a space */
    for (size_t i = 0; i < n; i++)
        if (z[i] == '\n') z[i] = ' ';
    CHECK(hk_text_json_strict(z, n, &at) == NULL);
    CHECK(hk_text_utf8_valid_len(z, n) == n);
    cJSON_Delete(j);
    free(z);
}

/* What reading a table may fail with: its faults, or memory. */
static int known_fault(hk_status_t st)
{
    return st == HK_E_INPUT || st == HK_E_NOMEM;
}

static int write_table(const char *path, int bgzf, const uint8_t *p, size_t n)
{
    if (!bgzf) return fuzz_write_file(path, p, n);
    BGZF *bz = bgzf_open(path, "w");
    if (!bz) return -1;
    for (size_t o = 0; o < n; o += 500) {
        const size_t k = n - o < 500 ? n - o : 500;
        if (bgzf_write(bz, p + o, k) < 0 || bgzf_flush(bz) < 0) { bgzf_close(bz); return -1; }
    }
    return bgzf_close(bz) < 0 ? -1 : 0;
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
    data++, size--;
    if (opt & 4) {
        hk_scan_fault_t f;
        if (hk_json_scan_value((const char *)data, size, &f) == HK_SCAN_OK)
            check_json((const char *)data, size);
    }
    const uint8_t *sep = size >= sizeof SEP - 1 ? memmem(data, size, SEP, sizeof SEP - 1) : NULL;
    const size_t n_table = sep ? (size_t)(sep - data) + 1 : size;
    const char *path = fuzz_tmp_path("table");
    char sidecar[300];
    snprintf(sidecar, sizeof sidecar, "%s.meta.json", path);
    unlink(sidecar);
    if (write_table(path, opt & 1, data, n_table)) return 0;
    if (sep) {
        const uint8_t *side = sep + sizeof SEP - 1;
        if (fuzz_write_file(sidecar, side, (size_t)(data + size - side))) return 0;
    }
    hk_tread_t *t;
    hk_status_t st = hk_tread_open(path, &t);
    CHECK(st == HK_OK ? t != NULL : t == NULL && known_fault(st));
    if (st) return 0;
    const cJSON *h = NULL;
    if (opt & 2) {
        st = hk_tread_header(t, 1, &h, NULL, NULL);
        CHECK(st == HK_OK ? h != NULL : h == NULL && known_fault(st));
        if (st) { hk_tread_close(t); return 0; }
    }
    const int tsv = hk_tread_format(t) == HK_OUT_TSV;
    hk_tread_rec_t rec;
    uint64_t pairs = 0, regions = 0, last = 0;
    int got;
    while (!(st = hk_tread_next(t, &rec, &got)) && got) {
        pairs += rec.pairs;
        if (tsv) {
            const size_t len = (size_t)(rec.rest + rec.rest_len - rec.head);
            CHECK(!memchr(rec.head, '\n', len));
            CHECK(hk_text_utf8_valid_len(rec.head, len) == len);
            if (!regions || rec.index != last) regions++;
            last = rec.index;
            CHECK(rec.index + 1 == regions);
        } else {
            CHECK(rec.index == regions);
            regions++;
            /* the region as merge writes it */
            char *z = malloc(rec.rest_len + 32);
            CHECK(z);
            const int k = snprintf(z, 32, "{\"index\": %llu", (unsigned long long)rec.index);
            memcpy(z + k, rec.rest, rec.rest_len);
            check_json(z, (size_t)k + rec.rest_len);
            free(z);
        }
    }
    CHECK(st == HK_OK || (got == 0 && known_fault(st)));
    if (st == HK_OK) {
        const cJSON *s = hk_tread_summary(t, NULL, NULL);
        CHECK(cJSON_IsObject(s));
        CHECK(cJSON_GetObjectItemCaseSensitive(s, "pairs")->valuedouble == (double)pairs);
        CHECK(cJSON_GetObjectItemCaseSensitive(s, "regions")->valuedouble == (double)regions);
        CHECK(hk_tread_regions(t) == regions);
        CHECK(hk_tread_header(t, 0, &h, NULL, NULL) == HK_OK && h != NULL);
    }
    hk_tread_close(t);
    return 0;
}
