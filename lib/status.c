/*
 * status.c - status codes: their text, their exit code, and the one-line
 * error buffer every lib/ and formats/ function fills.
 *
 * One switch holds every message (after zstd's lib/common/error_private.c)
 * and one switch the exit codes of ../shared/DESIGN.md ("Exit codes"):
 * 0 ok, 2 usage, 3 input could not be read/audited, 4 internal or
 * environment. tests/unit/test_status.c pins both tables.
 */
#include "nanaudit.h"

#include <errno.h>  /* ENOENT, EMFILE */
#include <stdarg.h> /* va_list */
#include <stdio.h>  /* vsnprintf */
#include <string.h> /* strlen */

const char *na_status_str(na_status_t s)
{
    switch (s) {
    case NA_OK: return "success";
    case NA_E_NOMEM: return "out of memory";
    case NA_E_IO: return "read error";
    case NA_E_FORMAT: return "malformed input";
    case NA_E_UNSUPPORTED: return "unsupported input";
    case NA_E_NOTFOUND: return "not found";
    case NA_E_WRITE: return "write error";
    case NA_E_INTERNAL: return "internal error";
    case NA_E_USAGE: return "usage error";
    }
    return "unknown status";
}

int na_status_exit_code(na_status_t s)
{
    switch (s) {
    case NA_OK: return 0;
    case NA_E_USAGE: return 2;
    case NA_E_IO:
    case NA_E_FORMAT:
    case NA_E_UNSUPPORTED:
    case NA_E_NOTFOUND: return 3;
    case NA_E_NOMEM:
    case NA_E_WRITE:
    case NA_E_INTERNAL: return 4;
    }
    /* A value outside the enum is a bug somewhere: report it as internal
     * rather than as success or as a problem with the input. */
    return 4;
}

na_status_t na_errno_status(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR: return NA_E_NOTFOUND;
    case ENOMEM: return NA_E_NOMEM;
    case EMFILE:
    case ENFILE:
    case EAGAIN: return NA_E_INTERNAL;
    default: return NA_E_IO;
    }
}

/* Make msg safe to print on one terminal line: every C0 control, DEL,
 * C1 control (U+0080..U+009F) and byte that is not part of valid UTF-8
 * becomes '?'. Raw bytes 0x80..0x9F must go too: a terminal not in UTF-8
 * mode reads 0x9B as CSI, the start of an escape sequence. */
static void sanitize_line(char *msg)
{
    unsigned char *s = (unsigned char *)msg;
    size_t n = strlen(msg);
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            if (s[i] < 0x20 || s[i] == 0x7f)
                s[i] = '?';
            i++;
            continue;
        }
        size_t len = na_utf8_seq_len(s + i, n - i);
        /* C2 80..C2 9F is U+0080..U+009F, the C1 controls */
        if (len == 0 || (s[i] == 0xc2 && s[i + 1] < 0xa0)) {
            s[i++] = '?';
            continue;
        }
        i += len;
    }
}

na_status_t na_err_set(na_err_t *err, na_status_t st, const char *fmt, ...)
{
    if (err == NULL)
        return st;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n < 0) /* an encoding error in a %ls argument; keep something */
        snprintf(err->msg, sizeof err->msg, "%s", na_status_str(st));
    sanitize_line(err->msg);
    return st;
}
