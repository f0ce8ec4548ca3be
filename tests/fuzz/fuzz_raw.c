/*
 * fuzz_raw.c - the raw reader (formats/raw.c), plain and gzip: its size
 * and shape arithmetic (--offset, --length, --shape against the file
 * size, with 64-bit overflow checks), the zlib stream (multi-member
 * files, trailing garbage, truncation, restarts for the second pass) and
 * the engine's decoding of every fixed-size dtype in both byte orders.
 *
 * Input layout: 8 control bytes, then the file's bytes.
 *   [0] dtype (index into kDtypes)       [1] flags: bit 0 big-endian,
 *   bits 1-2 --offset 0..3, bit 3 --shape given, bit 4 --length given,
 *   bit 5 z-score 0 (one pass) instead of 1.5 (two passes)
 *   [2] ndim - 1 (mod 3)   [3..5] dims   [6] --length   [7] unused.
 * Checks beyond "no crash": one-line errors; an accepted file's element
 * count matches its layout; reports parse back and hold no control bytes.
 */
#include "fuzz_common.h"

static const na_dtype_t kDtypes[] = {
    NA_DT_F32, NA_DT_F16, NA_DT_BF16, NA_DT_F64, NA_DT_F8_E4M3, NA_DT_F8_E5M2,
    NA_DT_F8_E8M0, NA_DT_F8_E4M3FNUZ, NA_DT_F8_E5M2FNUZ, NA_DT_C64, NA_DT_F80,
    NA_DT_BOOL, NA_DT_U8, NA_DT_I8, NA_DT_U16, NA_DT_I16, NA_DT_U32, NA_DT_I32,
    NA_DT_U64, NA_DT_I64, NA_DT_F4 /* refused: sub-byte */,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    na_open_opts_t o;
    na_open_opts_init(&o);
    o.raw_dtype = kDtypes[data[0] % (sizeof kDtypes / sizeof kDtypes[0])];
    o.raw_endian = (data[1] & 1) ? NA_BIG : NA_LITTLE;
    o.raw_offset = (data[1] >> 1) & 3;
    if (data[1] & 8) {
        o.raw_ndim = 1 + data[2] % 3;
        for (int i = 0; i < o.raw_ndim; i++)
            o.raw_shape[i] = data[3 + i];
    }
    if (data[1] & 16)
        o.raw_length = data[6];
    o.window_bytes = 4096;
    double z = (data[1] & 32) ? 0.0 : 1.5;

    int fd = fz_memfd(data + 8, size - 8);
    if (fd < 0)
        return 0;
    na_input_t *in = NULL;
    na_err_t err = {{0}};
    na_status_t st = na_format_raw.open("fuzz.raw", fd, &o, &in, &err);
    fz_check_msg(st, &err);
    if (st != NA_OK)
        return 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < na_input_count(in); i++)
        bytes += na_input_tensor_bytes(in, i);
    if (o.raw_length != NA_RAW_TO_EOF && bytes != o.raw_length)
        abort();
    /* windows of 40 bytes: a multiple of every element size but F80's */
    fz_scan_input(in, "fuzz.raw", o.raw_dtype == NA_DT_F80 ? 50 : 40, z);
    na_input_close(in);
    return 0;
}
