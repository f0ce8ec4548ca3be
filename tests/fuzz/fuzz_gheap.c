/*
 * fuzz_gheap.c - the global heap checks of variable-length sequence
 * descriptors (formats/hdf5_gheap.c), which parse collections of a file
 * libhdf5 has not vetted: sizes past the end, objects past their
 * collection, free space of size 0 (a loop in libhdf5 1.10), indices up
 * to 2^32, addresses anywhere.
 *
 * Input layout: 2 control bytes, then the file's bytes.
 *   [0] bytes of one stored value, 1..16   [1] bits 0-1: sizeof_addr and
 *   bits 2-3 sizeof_length (2, 4, 8, 8), bits 4-7: the base address / 16.
 * The descriptors checked are the file's own first 64 descriptor-sized
 * pieces, so collections and the descriptors naming them come from one
 * input. Checks beyond "no crash": 0, -1 or -2 only (-3, out of memory,
 * cannot happen with at most 65536 indices), and a message of one line
 * for every refusal.
 */
#include "fuzz_common.h"
#include "hdf5_gheap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    static const unsigned kSizes[4] = {2, 4, 8, 8};
    uint32_t fbase = 1 + data[0] % 16;
    unsigned sa = kSizes[data[1] & 3], sl = kSizes[(data[1] >> 2) & 3];
    uint64_t base = (uint64_t)(data[1] >> 4) * 16;
    const uint8_t *file = data + 2;
    size_t n = size - 2;
    int fd = fz_memfd(file, n);
    if (fd < 0)
        return 0;
    na_gheap_t *g = na_gheap_new(fd, base, n, sa, sl, fbase);
    if (g == NULL)
        abort(); /* valid parameters: only out of memory may refuse them */
    size_t dsz = na_gheap_desc_size(g);
    for (size_t k = 0; k < 64 && (k + 1) * dsz <= n; k++) {
        na_err_t e;
        memset(&e, 0, sizeof e);
        int r = na_gheap_check(g, file + k * dsz, k, e.msg, sizeof e.msg);
        if (r != 0 && r != -1 && r != -2)
            abort();
        fz_check_msg(r == 0 ? NA_OK : NA_E_FORMAT, &e);
    }
    na_gheap_free(g);
    close(fd);
    return 0;
}
