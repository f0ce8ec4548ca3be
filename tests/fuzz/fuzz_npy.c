/*
 * fuzz_npy.c - the .npy reader (formats/npy.c, view.c): the header
 * parser na_npy_parse_header on the raw bytes (magic, version, header
 * length, the restricted Python literal: strings, ints, tuples, lists,
 * nesting, descr type strings and structured field lists, shape
 * arithmetic with 64-bit overflow checks), then the same bytes as a .npy
 * file scanned through the engine in 64-byte windows (Fortran-order
 * gathers, structured records, complex parts, truncated data).
 *
 * Checks beyond "no crash": one-line errors; an accepted header's
 * data_bytes equals elements x itemsize and its fields lie inside a
 * record; reports parse back and hold no control bytes.
 */
#include "fuzz_common.h"

#include "npt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_npy_header_t h;
    na_err_t err = {{0}};
    na_status_t st = na_npy_parse_header(data, size, &h, &err);
    fz_check_msg(st, &err);
    if (st == NA_OK) {
        if (h.itemsize != 0 && h.data_bytes / h.itemsize != h.elements)
            abort();
        for (size_t i = 0; i < h.n_fields; i++)
            if (h.fields[i].kind == NA_NPY_NUMERIC &&
                (uint64_t)h.fields[i].offset + h.fields[i].esize > h.itemsize)
                abort();
        na_npy_header_free(&h);
    }
    int fd = fz_memfd(data, size);
    if (fd < 0)
        return 0;
    na_open_opts_t o;
    na_open_opts_init(&o);
    o.window_bytes = 4096;
    na_input_t *in = NULL;
    na_err_t e2 = {{0}};
    st = na_format_npy.open("fuzz.npy", fd, &o, &in, &e2);
    fz_check_msg(st, &e2);
    if (st == NA_OK) {
        fz_scan_input(in, "fuzz.npy", 64, 1.5);
        na_input_close(in);
    }
    return 0;
}
