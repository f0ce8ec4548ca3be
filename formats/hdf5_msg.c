/*
 * hdf5_msg.c - libhdf5's error descriptions as one clean line (issue 4).
 *
 * The HDF5 children (hdf5_child.c, hdf5_wchild.c) report the innermost
 * description of libhdf5's error stack, the real cause. For a failed
 * write or read, libhdf5's file drivers give one long string, e.g.
 * H5FDsec2.c's
 *   file write failed: time = Mon Nov 30 08:16:12 2026\n, filename =
 *   '...', file descriptor = 8, errno = 27, error message = 'File too
 *   large', buf = 0x7f0b05367800, total write size = 8192, ...
 * whose time comes from ctime() with its newline, and whose useful part,
 * the system's message, lay past the 200 bytes the children kept: the
 * line a user saw broke in two and stopped at "total write".
 */
#include "hdf5_msg.h"

#include "nanaudit.h" /* na_utf8_seq_len */

#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* strtol */
#include <string.h> /* strstr, strcspn */

#define EMSG "error message = '"
#define ERRNO "errno = "

/* "HEAD: TEXT (errno N)" from a driver's description into buf, or 0 when
 * desc is not one. */
static int driver_cause(const char *desc, char *buf, size_t cap)
{
    const char *em = strstr(desc, EMSG), *en = strstr(desc, ERRNO);
    if (!em)
        return 0;
    const char *m = em + strlen(EMSG);
    size_t head = strcspn(desc, ":"), mlen = strcspn(m, "'");
    if (desc[head] == '\0' || head > 80)
        head = 0; /* no short head: the message alone */
    long eno = en ? strtol(en + strlen(ERRNO), NULL, 10) : 0;
    char no[32] = "";
    if (en)
        snprintf(no, sizeof no, " (errno %ld)", eno);
    snprintf(buf, cap, "%.*s%s%.*s%s", (int)head, desc, head ? ": " : "", (int)mlen, m, no);
    return 1;
}

void na_h5_clean_cause(const char *desc, char *out, size_t cap)
{
    char drv[NA_H5_CAUSE_MAX + 64];
    if (cap == 0)
        return;
    if (!desc)
        desc = "";
    if (driver_cause(desc, drv, sizeof drv))
        desc = drv;
    /* one line: controls to spaces, runs of spaces to one, no ends */
    size_t n = 0, len = strlen(desc);
    int cut = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)desc[i];
        if (c < 0x20 || c == 0x7f || c == ' ') {
            if (n && out[n - 1] != ' ' && n + 1 < cap)
                out[n++] = ' ';
            i++;
            continue;
        }
        /* whole UTF-8 characters only (a bad byte counts as one) */
        size_t k = na_utf8_seq_len(desc + i, len - i);
        k = k ? k : 1;
        if (n + k + 1 > cap) {
            cut = 1;
            break;
        }
        memcpy(out + n, desc + i, k);
        n += k;
        i += k;
    }
    if (cut) { /* room for "..." on a character boundary */
        while (n > 0 && n + 4 > cap) {
            n--;
            while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80)
                n--;
        }
        if (n + 4 <= cap) {
            memcpy(out + n, "...", 3);
            n += 3;
        }
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}
