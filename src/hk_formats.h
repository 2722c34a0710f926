/* hk_formats.h - the input formats haplik reads: the one list of them.
 *
 * X(name, NAME): the format's name (input.format, messages, the table; its
 * module src/hk_format_NAME.c defines `hk_format_name`, see hk_format.h) and
 * its id HK_FMT_NAME. Adding a format is a module and a line here. Auto-
 * detection asks them in this order (pdhmm before gatk: a PDHMM header starts
 * with gatk's, and a PD array's spaces can give a record gatk's 7 fields).
 */
#ifndef HK_FORMATS_H
#define HK_FORMATS_H

#define HK_FORMATS(X) \
    X(pdhmm, PDHMM)   \
    X(gatk, GATK)     \
    X(batch, BATCH)

#define HK_FORMAT_ID(name, NAME) HK_FMT_##NAME,
enum { HK_FMT_AUTO = 0, HK_FORMATS(HK_FORMAT_ID) HK_FMT_COUNT };
#undef HK_FORMAT_ID

#endif
