/*
 * fuzz_sniff.c - content sniffing (formats/sniff.c): na_sniff on the
 * buffer with every head length a reader might pass (the first 0..64
 * bytes and all of it), then na_probe_path on the same bytes as a file
 * (the HDF5 signature search at 512, 1024, ..., the Git LFS pointer
 * parse, the JSON parse that tells an HF index from other JSON) and
 * na_probe_check's message.
 *
 * Checks beyond "no crash": na_sniff never reads past n (ASan) and gives
 * a kind with a description; the probe agrees with na_sniff on the size
 * and on empty files; errors have one-line messages.
 */
#include "fuzz_common.h"

#include <stdio.h> /* snprintf */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* each prefix in a buffer of its own size, so a read past n is an
     * ASan heap-buffer-overflow rather than a read of the next byte */
    size_t lim = size < 64 ? size : 64;
    for (size_t n = 0; n <= lim; n += (n < 16 ? 1 : 8)) {
        uint8_t *head = malloc(n ? n : 1);
        if (head == NULL)
            return 0;
        memcpy(head, data, n);
        na_kind_of_file_t k = na_sniff(head, n, size);
        if (na_kind_of_file_str(k) == NULL)
            abort();
        free(head);
    }
    na_kind_of_file_t whole = na_sniff(data, size, size);
    if ((size == 0) != (whole == NA_FILE_EMPTY))
        abort();

    int fd = fz_memfd(data, size);
    if (fd < 0)
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    for (int raw = 0; raw <= 1; raw++) {
        na_probe_t p;
        na_err_t err = {{0}};
        memset(&p, 0, sizeof p);
        na_status_t st = na_probe_path(path, raw, &p, NULL, &err);
        fz_check_msg(st, &err);
        if (st != NA_OK)
            continue;
        if (p.size != size)
            abort();
        na_err_t e2 = {{0}};
        fz_check_msg(na_probe_check(&p, &e2), &e2);
    }
    close(fd);
    return 0;
}
