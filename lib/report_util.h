/*
 * report_util.h - helpers shared by the JSON-based report writers
 * (report_json.c, report_sarif.c). Internal to lib/.
 */
#ifndef NA_REPORT_UTIL_H
#define NA_REPORT_UTIL_H

#include <jansson.h>

/* A JSON string for s (NULL gives JSON null). jansson refuses strings
 * that are not valid UTF-8; those are written through na_escape_text,
 * which turns each invalid byte into \xHH, so a hostile tensor name can
 * neither break the document nor vanish from it. NULL on out of memory. */
json_t *na_json_text(const char *s);

#endif /* NA_REPORT_UTIL_H */
