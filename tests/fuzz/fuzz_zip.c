/*
 * fuzz_zip.c - the zip path (formats/zip.c over minizip, npz.c, torch.c):
 * the same bytes opened as an .npz (members parsed as .npy, stored ones
 * mapped at their data position, deflated ones streamed or spilled to a
 * temporary file) and as a torch.save zip (DIR/data.pkl through the
 * restricted pickle reader, storages DIR/data/KEY, DIR/byteorder), each
 * scanned through the engine in small windows; plus na_zip_classify and
 * raw reads of every member (na_zip_read_raw).
 *
 * Checks beyond "no crash": one-line errors (minizip's codes become
 * messages); reports parse back and hold no control bytes.
 */
#include "fuzz_common.h"

#include "npt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const na_format_t *const fmts[] = {&na_format_npz, &na_format_torch};
    for (size_t k = 0; k < 2; k++) {
        int fd = fz_memfd(data, size);
        if (fd < 0)
            return 0;
        na_open_opts_t o;
        na_open_opts_init(&o);
        o.window_bytes = 4096;
        na_input_t *in = NULL;
        na_err_t err = {{0}};
        na_status_t st = fmts[k]->open("fuzz.zip", fd, &o, &in, &err);
        fz_check_msg(st, &err);
        if (st == NA_OK) {
            fz_scan_input(in, "fuzz.zip", 64, 1.5);
            na_input_close(in);
        }
    }
    int fd = fz_memfd(data, size);
    na_zip_t *z = NULL;
    na_err_t err = {{0}};
    if (fd >= 0 && na_zip_open(fd, size, &z, &err) == NA_OK) {
        (void)na_zip_classify(z);
        /* each member's stored bytes, as clean's .npz writer copies them
         * (na_zip_read_raw): its start and its last byte */
        uint8_t buf[4096];
        for (size_t i = 0; i < na_zip_count(z) && i < 64; i++) {
            uint64_t c = na_zip_entry(z, i)->csize;
            na_status_t st = na_zip_read_raw(z, i, 0, buf, c < sizeof buf ? (size_t)c
                                                                           : sizeof buf, &err);
            if (st == NA_OK && c > 0)
                st = na_zip_read_raw(z, i, c - 1, buf, 1, &err);
            fz_check_msg(st, &err);
        }
    }
    na_zip_close(z);
    return 0;
}
