/*
 * internal.h - what the report module's files share and nothing outside
 * them sees: text wrapped at words for the terminal.
 */
#ifndef LUMEN_REPORT_INTERNAL_H
#define LUMEN_REPORT_INTERNAL_H

#include <stddef.h>

#include "base/base.h"

/* lm_report_width: the characters n bytes of s take on a terminal: UTF-8
 * continuation bytes and ANSI colour sequences (ESC [ ... m) take none. */
size_t lm_report_width(const char *s, size_t n);

/* lm_report_time_text: a duration in ns as the summaries write it
 * ("216.41 ms", "3.1 µs"; "n/a" for NaN), into out (cap bytes). */
void lm_report_time_text(double ns, char *out, size_t cap);

/* lm_report_wrap: append lead, then text (escaped for the terminal)
 * wrapped at words to width characters, continuation lines indented by
 * indent spaces, and a newline. The lead's width counts toward the first
 * line; a word longer than a line is cut with "…". */
void lm_report_wrap(lm_buf *out, const char *lead, const char *text, size_t indent, size_t width);

#endif
