/* hk_log.h - diagnostics on stderr, one line each, prefixed "haplik: ".
 *
 * Library code reports an error once, where it is found, and returns a status;
 * only main() decides the exit status. Notices (fallbacks, progress) are
 * silenced by --quiet; errors never are. Control characters in a message
 * (which may quote input) are printed as \xNN, never raw.
 */
#ifndef HK_LOG_H
#define HK_LOG_H

void hk_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A notice, or a progress line (rewritten in place with \r, ended by the
 * next line or hk_log_progress_end). Once an error is printed, notices and
 * progress are dropped: the error stays the last line on stderr, whichever
 * thread reports what when. */
void hk_log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hk_log_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hk_log_progress_end(void);
void hk_log_set_quiet(int quiet);
int  hk_log_quiet(void);
/* Errors of the calling thread not printed while set: for work done ahead of
 * time whose failure is found, and reported, again when it is done in turn. */
void hk_log_mute_errors(int mute);

/* Timing for performance work: whether to trace (HK_TRACE=1, which the
 * edge hands here: hk_options_apply; set before other threads start), and
 * a monotonic clock in seconds. */
void   hk_log_set_tracing(int on);
int    hk_log_tracing(void);
double hk_log_now(void);

#endif
