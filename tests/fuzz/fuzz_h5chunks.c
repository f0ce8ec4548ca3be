/*
 * fuzz_h5chunks.c - the chunk list read from an HDF5 object header and
 * its version 1 B-tree (formats/hdf5_chunks.c), bytes libhdf5 has not
 * vetted: message sizes past their chunk, continuation loops, B-tree
 * cycles and levels, entry counts up to 65535, addresses anywhere.
 *
 * Input layout: 10 control bytes, then the file's bytes.
 *   [0] bits 0-1: sizeof_addr and bits 2-3 sizeof_length (2, 4, 8, 8),
 *   bits 4-7: the rank less one; [1] every maximum dim is 2^([1] % 41)
 *   (a fixed array index must match its grid); [2..9] the object
 *   header's address, little-endian (the seeds are h5py files with their
 *   dataset's).
 * Checks beyond "no crash": 0, 1 or -1 only (-3, out of memory, cannot
 * happen: every buffer is bounded by the file's size or by max), at most
 * max chunks listed, and a message of one line for every refusal.
 */
#include "fuzz_common.h"
#include "hdf5_chunks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10)
        return 0;
    static const unsigned kSizes[4] = {2, 4, 8, 8};
    unsigned sa = kSizes[data[0] & 3], sl = kSizes[(data[0] >> 2) & 3];
    unsigned rank = 1 + (data[0] >> 4);
    uint64_t ohdr = 0;
    for (int i = 9; i >= 2; i--)
        ohdr = ohdr << 8 | data[i];
    const uint8_t *file = data + 10;
    size_t n = size - 10;
    int fd = fz_memfd(file, n);
    if (fd < 0)
        return 0;
    uint64_t *offs = NULL, k = 0, max = 4096;
    na_h5ci_chunk_t *info = NULL;
    na_err_t e;
    memset(&e, 0, sizeof e);
    uint64_t maxd[16];
    for (unsigned d = 0; d < rank; d++)
        maxd[d] = (uint64_t)1 << (data[1] % 41);
    int r = na_h5ci_list(fd, 0, n, sa, sl, ohdr, rank, maxd, max, &offs, &info, &k, e.msg,
                         sizeof e.msg);
    if ((r != 0 && r != 1 && r != -1) || k > max || (r != 0 && (offs || info || k)))
        abort();
    fz_check_msg(r == 0 ? NA_OK : NA_E_FORMAT, &e);
    free(offs);
    free(info);
    close(fd);
    return 0;
}
