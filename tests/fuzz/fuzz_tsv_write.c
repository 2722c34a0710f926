/* fuzz_tsv_write.c - libFuzzer target for the tsv writer, end to end: a dump
 * whose region name and file name come from the input is scored into a tsv
 * table (hk_run, the CPU backend), which merge's reader (hk_table_read.h)
 * must then read back without a fault: one header row, rows of the column
 * contract (escaped UTF-8 names, counts, numbers or empty fields), a
 * sidecar whose summary counts them.
 *
 * Input: one option byte, then the region name's bytes, then (after the first
 * NUL, when there is one) the input file's name's bytes.
 *   bit  0    a results file (gatk format, with GATK's value in expected) instead
 *             of the batch format
 *   bits 1-2  decimals: 0, 1, 6, 12 (the range output.decimals allows)
 *   bit  3    --precision float (non-finite values written as empty fields)
 *
 * Besides crashes and sanitizer reports, it checks that scoring succeeds,
 * that the reader reads every row of the table, and that each row's
 * region_name, its escapes decoded, is the dump's name (trimmed as the dump's
 * reader trims it: a substring of it).
 */
#include "hk_config.h"
#include "hk_log.h"
#include "hk_model.h"
#include "hk_run.h"
#include "hk_table_read.h"
#include "fuzz_common.h"

#include <cJSON.h>
#include <stdint.h>
#include <sys/stat.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_tsv_write: check failed: %s (%s:%d)\n", \
                                           #c, __FILE__, __LINE__); abort(); } } while (0)

static char dir[256];

/* Decode a tsv field's escapes into out; its length. */
static size_t unescape(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') { out[k++] = s[i]; continue; }
        const char c = s[++i];
        if (c == 't') out[k++] = '\t';
        else if (c == 'n') out[k++] = '\n';
        else if (c == 'r') out[k++] = '\r';
        else if (c == '\\') out[k++] = '\\';
        else {   /* xNN: the reader checked the form */
            unsigned v;
            CHECK(c == 'x' && sscanf(s + i + 1, "%2x", &v) == 1);
            out[k++] = (char)v;
            i += 2;
        }
    }
    return k;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    hk_log_set_quiet(1);
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/haplik-fuzz-tsv.%ld", tmp, (long)getpid());
    mkdir(dir, 0700);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 2000) return 0;
    static const int digits[4] = { 0, 1, 6, 12 };   /* output.decimals allows 0..12 */
    const unsigned opt = data[0];
    const char *p = (const char *)data + 1, *end = p + size - 1;
    const char *nul = memchr(p, '\0', (size_t)(end - p));
    char name[2000], file[300], path[600], out[700];
    size_t n_name = 0, n_file = 0;
    for (const char *q = p; q < (nul ? nul : end); q++)
        if (*q != '\n' && *q != '\r') name[n_name++] = *q;   /* a name is on one line */
    for (const char *q = nul ? nul + 1 : end; q < end && n_file < 64; q++)
        if (*q != '/' && *q != '\0') file[n_file++] = *q;
    file[n_file] = '\0';
    if (!n_file || !strcmp(file, ".") || !strcmp(file, "..")) strcpy(file, "in");
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(out, sizeof out, "%s/table.tsv", dir);
    FILE *fp = fopen(path, "wb");
    if (!fp) return 0;
    /* htslib calls a file with control bytes in its first KiB binary: a
     * comment line first */
    fprintf(fp, "# %01100d\n", 0);
    if (opt & 1) {
        fprintf(fp, "# hap-bases read-bases read-qual read-ins-qual read-del-qual gcp expected-result\n"
                    "ACGTT ACGT IIII IIII IIII ++++ -1.5\nACGTA ACGT IIII IIII IIII ++++ -Infinity\n");
    } else {
        fputs("# region ", fp);
        fwrite(name, 1, n_name, fp);
        fputs("\n1 2\nACGT IIII IIII IIII IIII\nACGTT\nACGAT\n", fp);
    }
    if (fclose(fp)) { unlink(path); return 0; }

    hk_config_t c;
    hk_config_init(&c);
    c.backend = HK_BACKEND_CPU;
    c.threads = 1;
    c.output_format = HK_OUT_TSV;
    c.decimals = digits[(opt >> 1) & 3];
    if (opt & 8) c.model.precision = HK_PREC_FLOAT;
    char *inputs[1] = { path };
    hk_run_stats_t stats;
    const hk_status_t status = hk_run(&c, inputs, 1, NULL, out, 0, &stats);
    hk_config_free(&c);
    unlink(path);
    CHECK(status == HK_OK);

    hk_tread_t *t;
    CHECK(hk_tread_open(out, &t) == HK_OK);
    const cJSON *h;
    CHECK(hk_tread_header(t, 1, &h, NULL, NULL) == HK_OK && h != NULL);
    hk_tread_rec_t rec;
    hk_status_t rc;
    int got;
    uint64_t rows = 0;
    char decoded[8200];
    while (!(rc = hk_tread_next(t, &rec, &got)) && got) {
        rows++;
        /* region_name: the field after region_index */
        const char *f = rec.rest + 1, *tab = memchr(f, '\t', rec.rest_len - 1);
        CHECK(rec.rest_len && rec.rest[0] == '\t' && tab);
        CHECK((size_t)(tab - f) <= sizeof decoded);
        const size_t k = unescape(f, (size_t)(tab - f), decoded);
        if (!(opt & 1)) CHECK(k == 0 || memmem(name, n_name, decoded, k) != NULL);
        /* input: the file's name as given */
        const size_t n_in = unescape(rec.head, (size_t)(memchr(rec.head, '\t', rec.head_len) ?
            (const char *)memchr(rec.head, '\t', rec.head_len) - rec.head : 0), decoded);
        CHECK(n_in == strlen(path) && !memcmp(decoded, path, n_in));
    }
    CHECK(rc == HK_OK);
    CHECK(rows == 2);
    hk_tread_close(t);
    char meta[720];
    snprintf(meta, sizeof meta, "%s.meta.json", out);
    unlink(out);
    unlink(meta);
    return 0;
}
