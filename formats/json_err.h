/*
 * json_err.h - one-line errors for JSON that jansson could not load: the
 * safetensors header and the sharded-checkpoint index say the same thing
 * the same way.
 */
#ifndef NA_JSON_ERR_H
#define NA_JSON_ERR_H

#include "nanaudit.h"

#include <jansson.h> /* json_error_t */
#include <stddef.h>  /* size_t */

/* The error of json_loadb(buf, n, ...) failing with *je, for JSON that
 * `what` names ("header", "index"):
 *  - a UTF-8 or UTF-16 byte-order mark at the start: JSON text must not
 *    begin with one (RFC 8259, section 8.1); NA_E_FORMAT;
 *  - a NUL character (U+0000) in a string or key: valid JSON that the
 *    reference loaders take, but names are NUL-terminated strings here
 *    (jansson refuses them unless JSON_ALLOW_NUL); NA_E_UNSUPPORTED;
 *  - anything else: "WHAT is not valid JSON: jansson's text (line L,
 *    column C)"; NA_E_FORMAT.
 * Out of memory and duplicate keys are the callers' (they say more). */
na_status_t na_json_load_error(const char *what, const json_error_t *je, const void *buf, size_t n,
                               na_err_t *err);

/* The first case above alone: NA_OK when buf (n bytes) does not begin
 * with a byte-order mark; for a check made before the JSON is parsed
 * (the safetensors header's UTF-8 check would call UTF-16 "byte 0xFF"). */
na_status_t na_json_bom_error(const char *what, const void *buf, size_t n, na_err_t *err);

#endif
