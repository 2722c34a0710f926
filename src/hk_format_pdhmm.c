/* hk_format_pdhmm.c - DRAGEN-GATK's PDHMM results file (--pdhmm-results-file,
 * SPEC section 2): one record of 8 tab-separated fields per pair,
 *
 *   HAP PD READ QUALS INS DELS GCPS EXPECTED
 *
 * PD is the haplotype's partially determined bytes as Java prints a byte
 * array, "[0, 0, 33, -128]" (one signed value per base). A haplotype is its
 * bases and its PD bytes together: the scan joins the two fields into field
 * 0, so that regions are rebuilt as for the `gatk` format
 * (hk_results_regions.c), and the PD bytes are parsed when the haplotype is
 * placed. GATK's files end without a newline and GKL's with one.
 */
#include "hk_results_regions.h"
#include "hk_pdhmm.h"

#include <stdio.h>
#include <string.h>

static const char *const layout = "(hap-bases hap-pd-bases read-bases read-qual read-ins-qual "
                                  "read-del-qual gcp expected-result)";

static int pdhmm_claims(const hk_line_t *L) { return hk_line_count(L, '\t') == 7; }

/* Join fields 0 (bases) and 1 (PD bytes) of each 8-field record: field 0 is
 * then the haplotype's identity, and the fields after it are the results
 * layout's. */
static void pdhmm_scan(hk_line_t *lines, size_t n, void **state)
{
    for (size_t i = 0; i < n; i++) {
        hk_line_t *L = &lines[i];
        if (L->kind != HK_LINE_TEXT || L->n_fields != 8) continue;
        /* the fields after them move down one. HK_LINE_REGULAR stays true
         * where it was (fields 3..6 as long as 2, so 4..6 as long as 3); a
         * line without it has its fields split again where asked */
        const uint32_t end3 = hk_field_end(L, 3);
        L->field_end[0] = L->field_end[1];
        L->field_end[1] = L->field_end[2];
        L->field_end[2] = end3;
        L->n_fields = 7;
    }
    hk_results_scan(lines, n, state);
}

/* Parse Java's text of a byte array, s[0, n), holding len values, into out
 * (NULL: check only). 0, or -1 with why[] saying what is wrong. */
static int parse_pd(const char *s, size_t n, uint32_t len, uint8_t *out, char *why, size_t why_len)
{
    const char *p = s, *const end = s + n;
    if (p == end || *p++ != '[') return snprintf(why, why_len, "does not start with '['"), -1;
    for (uint32_t k = 0;; k++) {
        if (k == len) {
            if (p != end && *p == ']' && p + 1 == end) return 0;
            if (p != end && *p == ']') return snprintf(why, why_len, "has text after ']'"), -1;
            return snprintf(why, why_len, "has more values than the haplotype's %u bases", len), -1;
        }
        if (k > 0) {
            if (p != end && *p == ']')
                return snprintf(why, why_len, "has %u values but the haplotype has %u bases", k, len), -1;
            if (end - p < 2 || p[0] != ',' || p[1] != ' ')
                return snprintf(why, why_len, "value %u is not followed by ', ' or ']'", k), -1;
            p += 2;
        }
        const char *v = p;
        const int neg = p != end && *p == '-';
        p += neg;
        int x = 0, digits = 0;
        while (p != end && *p >= '0' && *p <= '9' && digits < 4) x = 10 * x + (*p++ - '0'), digits++;
        if (!digits) {
            if (k == 0 && p != end && *p == ']')
                return snprintf(why, why_len, "is empty but the haplotype has %u bases", len), -1;
            return snprintf(why, why_len, "value %u is not a number", k + 1), -1;
        }
        if (p != end && *p >= '0' && *p <= '9') digits++;
        if (neg) x = -x;
        if (digits > 3 || x < -128 || x > 127)
            return snprintf(why, why_len, "value %u (%.*s) is outside -128..127", k + 1,
                            (int)(p - v < 12 ? p - v : 12), v), -1;
        if (out) out[k] = (uint8_t)(x & 0xff);
    }
}

static hk_status_t pdhmm_place_hap(hk_walk_t *w, hk_batch_t *b, size_t li);

/* Check the record on the current entry and push it (its haplotypes placed
 * with their PD bytes). */
HK_RESULT_USED static hk_status_t pdhmm_line(hk_walk_t *w, void *st, hk_batch_t *b)
{
    hk_status_t rc;
    ((hk_results_state_t *)st)->place_hap = pdhmm_place_hap;
    const size_t i = hk_walk_pos(w);
    const hk_line_t *L = hk_walk_line(w, i);
    const long line = hk_walk_line_no(w, i);
    const uint32_t *fe = L->field_end;
    const char *tab = L->n_fields == 7 ? memchr(L->text, '\t', fe[0]) : NULL;
    if (!tab)
        return hk_walk_fail(w, line, "expected 8 tab-separated fields %s, found %d", layout,
                            hk_line_count(L, '\t') + 1);
    const uint32_t hap_len = (uint32_t)(tab - L->text);
    /* its fields are numbered as written: the PD bytes are field 2 */
    if ((rc = hk_results_check(w, L, line, hap_len, 2))) return rc;
    /* the PD bytes: a record whose haplotype (bases and PD text) the scan saw
     * earlier in the piece was checked there */
    if (L->hap_back == 0 || L->hap_back == HK_HAP_UNKNOWN) {
        char why[96];
        if (parse_pd(tab + 1, (size_t)(L->text + fe[0] - tab - 1), hap_len, NULL, why, sizeof why))
            return hk_walk_fail(w, line, "hap-pd-bases %s", why);
    }
    return hk_results_push(w, st, b, i, line);
}

/* Place the haplotype of entry li and its PD bytes (checked by pdhmm_line). */
HK_RESULT_USED static hk_status_t pdhmm_place_hap(hk_walk_t *w, hk_batch_t *b, size_t li)
{
    hk_status_t rc;
    const hk_line_t *L = hk_walk_line(w, li);
    const char *tab = memchr(L->text, '\t', L->field_end[0]);
    const uint32_t len = (uint32_t)(tab - L->text);
    if ((rc = hk_walk_place_hap_len(w, b, li, len))) return rc;
    char why[96];
    if (parse_pd(tab + 1, (size_t)(L->text + L->field_end[0] - tab - 1), len,
                 b->hap_pd + (b->n_hap_pos - len), why, sizeof why))
        return hk_walk_fail(w, hk_walk_line_no(w, li), "hap-pd-bases %s", why);
    return HK_OK;
}

/* GATK throws where it compares a read's 'n' with an undetermined SNP. */
HK_RESULT_USED static hk_status_t pdhmm_check_set(hk_walk_t *w, const hk_batch_t *b, size_t region0)
{
    for (size_t g = region0; g < b->n_regions; g++) {
        const hk_region_t *rg = &b->regions[g];
        size_t hap;
        uint32_t rpos, hpos;
        const long r = hk_pdhmm_unmatchable_read(b, rg, &hap, &rpos, &hpos);
        if (r < 0) continue;
        return hk_walk_fail(w, b->read_line[rg->read0 + (size_t)r],
                            "read base 'n' at position %u meets haplotype %zu's undetermined SNP "
                            "at position %u (line %ld): there GATK accepts only A, C, G, T (either "
                            "case) or N", rpos + 1, hap + 1, hpos + 1, b->hap_line[rg->hap0 + hap]);
    }
    return HK_OK;
}

const hk_format_t hk_format_pdhmm = {
    .name = "pdhmm",
    .state_size = sizeof(hk_results_state_t),
    .separator = '\t',
    .pdhmm = 1,
    .header_prefix = "# hap-bases\thap-pd-bases",
    .header = "# hap-bases\thap-pd-bases\tread-bases\tread-qual\tread-ins-qual\tread-del-qual\tgcp"
              "\texpected-result",
    .claims = pdhmm_claims,
    .scan = pdhmm_scan,
    .scan_free = hk_results_scan_free,
    .line = pdhmm_line,
    .boundary = hk_results_close,
    .end = hk_results_close,
    .place_open = hk_results_place_open,
    .first_needed = hk_results_first_needed,
    .shift = hk_results_shift,
    .free_state = hk_results_free,
    .check_set = pdhmm_check_set,
};
