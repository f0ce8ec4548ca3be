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

/* s as the JSON reports hold it once decoded: s itself when it is valid
 * UTF-8, else na_escape_text's form (each invalid byte as \xHH), so that
 * a report read back as a --baseline names the same file and tensor
 * (lib/baseline.c). malloc'd; NULL on out of memory. */
char *na_json_form(const char *s);

#endif /* NA_REPORT_UTIL_H */
