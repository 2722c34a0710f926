/* hk_format_gatk.c - HaplotypeCaller's results file (--pair-hmm-results-file,
 * SPEC section 2): one record of 7 space-separated fields per pair,
 *
 *   HAP READ QUALS INS DELS GCPS EXPECTED
 *
 * Regions are rebuilt from runs of records (hk_results_regions.c).
 */
#include "hk_results_regions.h"

static int gatk_claims(const hk_line_t *L) { return hk_line_count(L, ' ') == 6; }

/* Check the record on the current entry and push it. */
HK_RESULT_USED static hk_status_t gatk_line(hk_walk_t *w, void *st, hk_batch_t *b)
{
    hk_status_t rc;
    const size_t i = hk_walk_pos(w);
    const hk_line_t *L = hk_walk_line(w, i);
    const long line = hk_walk_line_no(w, i);
    const int nf = L->n_fields;
    if (nf != 7)
        return hk_walk_fail(w, line, "expected 7 space-separated fields (hap-bases read-bases "
                            "read-qual read-ins-qual read-del-qual gcp expected-result), found %s%d",
                            nf > 7 ? "more than " : "", nf > 7 ? 7 : nf);
    if ((rc = hk_results_check(w, L, line, L->field_end[0], 1))) return rc;
    return hk_results_push(w, st, b, i, line);
}

const hk_format_t hk_format_gatk = {
    .name = "gatk",
    .state_size = sizeof(hk_results_state_t),
    .separator = ' ',
    .header_prefix = "# hap-bases",
    .header = "# hap-bases read-bases read-qual read-ins-qual read-del-qual gcp expected-result",
    .claims = gatk_claims,
    .scan = hk_results_scan,
    .scan_free = hk_results_scan_free,
    .line = gatk_line,
    .boundary = hk_results_close,
    .end = hk_results_close,
    .place_open = hk_results_place_open,
    .first_needed = hk_results_first_needed,
    .shift = hk_results_shift,
    .free_state = hk_results_free,
};
