/*
 * json_err.c - see json_err.h.
 */
#include "json_err.h"

#include <stdint.h> /* uint8_t */

na_status_t na_json_bom_error(const char *what, const void *buf, size_t n, na_err_t *err)
{
    const uint8_t *b = buf;
    if (n >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF)
        return na_err_set(err, NA_E_FORMAT,
                          "%s begins with a UTF-8 byte-order mark (EF BB BF), which JSON text "
                          "must not (RFC 8259, section 8.1); save it without one",
                          what);
    if (n >= 2 && ((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF)))
        return na_err_set(err, NA_E_FORMAT,
                          "%s begins with a UTF-16 byte-order mark (%02X %02X): JSON here must "
                          "be UTF-8 (RFC 8259, section 8.1)",
                          what, b[0], b[1]);
    return NA_OK;
}

na_status_t na_json_load_error(const char *what, const json_error_t *je, const void *buf, size_t n,
                               na_err_t *err)
{
    na_status_t st = na_json_bom_error(what, buf, n, err);
    if (st != NA_OK)
        return st;
    enum json_error_code code = json_error_code(je);
    if (code == json_error_null_character || code == json_error_null_byte_in_key)
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "%s: a %s holds a NUL character (U+0000; line %d, column %d), which "
                          "nanaudit does not support",
                          what,
                          code == json_error_null_byte_in_key ? "tensor name or key" : "string",
                          je->line, je->column);
    return na_err_set(err, NA_E_FORMAT, "%s is not valid JSON: %s (line %d, column %d)", what,
                      je->text, je->line, je->column);
}
