/*
 * test_safetensors.c - the safetensors reader (formats/safetensors.c) and
 * the windowed mapping (formats/mapfile.c).
 *
 * Every file is written at test time into a temporary directory: a valid
 * file's listing, shapes, metadata and bytes are checked exactly, and each
 * rule of the reference loader (safetensors/src/tensor.rs) has a broken
 * file whose one-line message is checked. The committed corpus
 * tests/data/bad/ is replayed too: every file must be refused with the
 * fragment of its NAME.expect.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>   /* opendir */
#include <fcntl.h>    /* open */
#include <math.h>     /* fabs */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h> /* gettimeofday */
#include <unistd.h>

#include "format.h"

static char g_dir[256];

/* ---- helpers ------------------------------------------------------- */

/* Write 8-byte LE len(header) + header + data to g_dir/name; hlen_override
 * replaces the length field when not UINT64_MAX. Returns the path. */
static const char *write_file(const char *name, const char *header, const void *data,
                              size_t dlen, uint64_t hlen_override)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint64_t n = hlen_override != UINT64_MAX ? hlen_override : strlen(header);
    unsigned char len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (unsigned char)(n >> (8 * i));
    assert_int_equal(fwrite(len8, 1, 8, f), 8);
    assert_int_equal(fwrite(header, 1, strlen(header), f), strlen(header));
    if (dlen)
        assert_int_equal(fwrite(data, 1, dlen, f), dlen);
    fclose(f);
    return path;
}

static na_status_t open_path(const char *path, uint64_t cap, na_input_t **in, na_err_t *err)
{
    na_open_opts_t o;
    memset(&o, 0, sizeof o);
    o.max_header_bytes = cap;
    o.window_bytes = 1 << 20;
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    err->msg[0] = '\0';
    return na_format_safetensors.open(path, fd, &o, in, err);
}

/* Open a file made of header + data and expect st with msg containing frag. */
static void expect_error(const char *header, const void *data, size_t dlen, na_status_t st,
                         const char *frag)
{
    const char *p = write_file("bad.safetensors", header, data, dlen, UINT64_MAX);
    na_input_t *in = NULL;
    na_err_t err;
    na_status_t got = open_path(p, 100000000, &in, &err);
    if (got != st || strstr(err.msg, frag) == NULL)
        print_error("header %.200s\n  got %d '%s'\n  want %d '%s'\n", header, got, err.msg, st,
                    frag);
    assert_int_equal(got, st);
    assert_non_null(strstr(err.msg, frag));
    assert_null(in);
    assert_null(strchr(err.msg, '\n'));
}

/* A header of 2^24 + 1 JSON values is refused before jansson builds them
 * (33 M empty arrays in a 99 MB header took 4.5 GB, eighteenth fresh-user
 * round); one value fewer is parsed (and refused for its content). Values
 * are counted as jansson makes them: strings and keys, numbers, literals,
 * arrays, objects (twice: their hash tables) - not a digit or letter
 * inside another. */
static void test_json_value_cap(void **state)
{
    (void)state;
    const size_t cap = (size_t)16 << 20;
    /* {"x":[ then 0,0,...: the object (2), its key and the array, then
     * cap - 4 zeros: cap values; one zero more: cap + 1 */
    size_t len = 6 + 2 * (cap - 1) + 2 + 16;
    char *h = malloc(len);
    assert_non_null(h);
    for (int more = 0; more < 2; more++) {
        size_t k = 0;
        memcpy(h, "{\"x\":[", 6);
        k = 6;
        for (size_t i = 0; i < cap - 4 + (size_t)more; i++) {
            memcpy(h + k, i ? ",0" : "0", i ? 2 : 1);
            k += i ? 2 : 1;
        }
        memcpy(h + k, "]}", 3);
        if (more)
            expect_error(h, NULL, 0, NA_E_UNSUPPORTED,
                         "header holds more than 16777216 JSON values (a tensor takes about "
                         "12): not parsed, it would take gigabytes");
        else /* parsed: then refused as a tensor entry that is not an object */
            expect_error(h, NULL, 0, NA_E_FORMAT, "tensor 'x'");
    }
    /* numbers and words of several characters count once */
    expect_error("{\"x\":[12345,-0.5e-3,true,false,null]}", NULL, 0, NA_E_FORMAT, "tensor 'x'");
    free(h);
}

/* Read all bytes of entry i through its source. */
static void read_entry(na_input_t *in, size_t i, void *out, size_t n)
{
    na_tensor_t t;
    na_err_t err;
    assert_int_equal(in->v->tensor(in, i, &t, &err), NA_OK);
    const uint8_t *p = NULL;
    assert_int_equal(t.src.read(t.src.ctx, 0, n, &p, &err), NA_OK);
    memcpy(out, p, n);
}

/* ---- valid files ---------------------------------------------------- */

static void test_valid_listing(void **state)
{
    (void)state;
    /* header order b, a; storage order a (0..8), s (8..10), b (10..14) */
    const char *h = "{\"b\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[10,14]},"
                    "\"__metadata__\":{\"format\":\"pt\",\"k\":\"v\"},"
                    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    "\"s\":{\"dtype\":\"F16\",\"shape\":[],\"data_offsets\":[8,10]}}   ";
    unsigned char data[14];
    float a[2] = {1.5f, -2.0f};
    memcpy(data, a, 8);
    data[8] = 0x00, data[9] = 0x3c; /* F16 1.0 */
    int32_t b = -7;
    memcpy(data + 10, &b, 4);
    const char *p = write_file("ok.safetensors", h, data, sizeof data, UINT64_MAX);
    na_input_t *in;
    na_err_t err;
    assert_int_equal(open_path(p, 100000000, &in, &err), NA_OK);
    assert_string_equal(in->format, "safetensors");
    assert_string_equal(in->path, p);
    assert_int_equal(in->file_size, 8 + strlen(h) + 14);
    assert_int_equal(in->v->count(in), 3);
    const char *want[3] = {"a", "s", "b"};
    const int nd[3] = {1, 0, 1};
    const uint64_t el[3] = {2, 1, 1}, by[3] = {8, 2, 4};
    const na_dtype_t dt[3] = {NA_DT_F32, NA_DT_F16, NA_DT_I32};
    for (size_t i = 0; i < 3; i++) {
        na_tensor_t t;
        assert_int_equal(in->v->tensor(in, i, &t, &err), NA_OK);
        assert_string_equal(t.name, want[i]);
        assert_int_equal(t.ndim, nd[i]);
        assert_int_equal(t.elements, el[i]);
        assert_int_equal(t.dtype, dt[i]);
        assert_int_equal(t.stored, dt[i]);
        assert_int_equal(t.byte_order, NA_LITTLE);
        assert_int_equal(t.elem_stride, by[i] / el[i]);
        assert_int_equal(t.elem_offset, 0);
        assert_int_equal(in->v->tensor_bytes(in, i), by[i]);
    }
    float ra[2];
    read_entry(in, 0, ra, 8);
    assert_memory_equal(ra, a, 8);
    int32_t rb;
    read_entry(in, 2, &rb, 4);
    assert_int_equal(rb, -7);
    assert_int_equal(in->v->meta_count(in), 2);
    const char *k, *v;
    in->v->meta(in, 1, &k, &v);
    assert_string_equal(k, "k");
    assert_string_equal(v, "v");
    const char *const *names;
    assert_int_equal(na_safetensors_stored_names(in, &names), 3);
    assert_string_equal(names[2], "b");
    assert_int_equal(na_safetensors_data_bytes(in), 14);
    /* reading past the tensor's end is refused, not served from the map */
    na_tensor_t t;
    const uint8_t *ptr;
    assert_int_equal(in->v->tensor(in, 0, &t, &err), NA_OK);
    assert_int_equal(t.src.read(t.src.ctx, 4, 8, &ptr, &err), NA_E_INTERNAL);
    in->v->close(in);
}

static void test_empty_and_scalar(void **state)
{
    (void)state;
    /* [0] and [2,0] are empty (0 bytes, zero-width offsets), [] is 1 element;
     * metadata null and a header with no tensors are valid */
    const char *h = "{\"__metadata__\":null,"
                    "\"e\":{\"dtype\":\"F8_E4M3\",\"shape\":[2,0],\"data_offsets\":[0,0]},"
                    "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                    "\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]}}";
    double one = 1.0;
    const char *p = write_file("empty.safetensors", h, &one, 8, UINT64_MAX);
    na_input_t *in;
    na_err_t err;
    assert_int_equal(open_path(p, 100000000, &in, &err), NA_OK);
    assert_int_equal(in->v->count(in), 3);
    na_tensor_t t;
    assert_int_equal(in->v->tensor(in, 0, &t, &err), NA_OK);
    assert_string_equal(t.name, "e"); /* ties at offset 0 keep header order */
    assert_int_equal(t.ndim, 2);
    assert_int_equal(t.shape[0], 2);
    assert_int_equal(t.shape[1], 0);
    assert_int_equal(t.elements, 0);
    assert_int_equal(in->v->tensor(in, 2, &t, &err), NA_OK);
    assert_string_equal(t.name, "s");
    assert_int_equal(t.ndim, 0);
    assert_int_equal(t.elements, 1);
    assert_int_equal(in->v->meta_count(in), 0);
    in->v->close(in);

    p = write_file("none.safetensors", "{}", NULL, 0, UINT64_MAX);
    assert_int_equal(open_path(p, 100000000, &in, &err), NA_OK);
    assert_int_equal(in->v->count(in), 0);
    in->v->close(in);
    p = write_file("meta.safetensors", " {\"__metadata__\":{}}\n", NULL, 0, UINT64_MAX);
    assert_int_equal(open_path(p, 100000000, &in, &err), NA_OK);
    in->v->close(in);
    /* only scalars: no dims stored at all */
    p = write_file("scalar.safetensors", "{\"s\":{\"dtype\":\"U8\",\"shape\":[],"
                   "\"data_offsets\":[0,1]}}", "\x05", 1, UINT64_MAX);
    assert_int_equal(open_path(p, 100000000, &in, &err), NA_OK);
    assert_int_equal(in->v->tensor(in, 0, &t, &err), NA_OK);
    assert_int_equal(t.ndim, 0);
    assert_int_equal(t.elements, 1);
    in->v->close(in);
}

static void test_c64_and_f4(void **state)
{
    (void)state;
    const char *h = "{\"c\":{\"dtype\":\"C64\",\"shape\":[2],\"data_offsets\":[0,16]},"
                    "\"q\":{\"dtype\":\"F4\",\"shape\":[4],\"data_offsets\":[16,18]}}";
    float c[4] = {1, 2, 3, 4};
    unsigned char data[18] = {0};
    memcpy(data, c, 16);
    const char *p = write_file("c64.safetensors", h, data, sizeof data, UINT64_MAX);
    na_input_t *in;
    na_err_t err;
    assert_int_equal(open_path(p, 100000000, &in, &err), NA_OK);
    assert_int_equal(in->v->count(in), 3);
    na_tensor_t t;
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(in->v->tensor(in, i, &t, &err), NA_OK);
        assert_string_equal(t.name, i ? "c.imag" : "c.real");
        assert_int_equal(t.dtype, NA_DT_F32);
        assert_int_equal(t.stored, NA_DT_C64);
        assert_int_equal(t.elem_stride, 8);
        assert_int_equal(t.elem_offset, 4 * i);
        assert_int_equal(t.elements, 2);
        assert_int_equal(in->v->tensor_bytes(in, i), 8);
        const uint8_t *ptr;
        assert_int_equal(t.src.read(t.src.ctx, 0, 16, &ptr, &err), NA_OK);
        float imag1;
        memcpy(&imag1, ptr + 8 + t.elem_offset, 4);
        assert_true(imag1 == (i ? 4.0f : 3.0f));
    }
    assert_int_equal(in->v->tensor(in, 2, &t, &err), NA_E_UNSUPPORTED);
    assert_string_equal(err.msg, "q: unsupported dtype F4");
    assert_string_equal(t.name, "q");
    assert_int_equal(t.elements, 4);
    const char *const *names;
    assert_int_equal(na_safetensors_stored_names(in, &names), 2);
    assert_string_equal(names[0], "c");
    assert_int_equal(in->v->tensor(in, 3, &t, &err), NA_E_INTERNAL);
    assert_string_equal(err.msg, "tensor index 3 out of range");
    in->v->close(in);
}

/* Raising max_header_bytes turns the cap error into a valid file. */
static void test_header_cap(void **state)
{
    (void)state;
    const char *h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    const char *p = write_file("cap.safetensors", h, "x", 1, UINT64_MAX);
    na_input_t *in = NULL;
    na_err_t err;
    assert_int_equal(open_path(p, 16, &in, &err), NA_E_FORMAT);
    char want[200];
    snprintf(want, sizeof want, "header length %zu bytes exceeds the limit of 16 bytes "
             "(raise it with --max-header-bytes)", strlen(h));
    assert_string_equal(err.msg, want);
    assert_int_equal(open_path(p, strlen(h), &in, &err), NA_OK);
    in->v->close(in);
}

/* ---- the rules, one broken file each --------------------------------- */

/* One tensor entry of a header, as a string literal. */
#define T(dt, shape, b, e) \
    "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":[" b "," e "]}"

static void test_prefix_rules(void **state)
{
    (void)state;
    na_input_t *in = NULL;
    na_err_t err;
    static const char z[8];
    char path[512];
    for (size_t n = 0; n < 8; n += 7) { /* 0 and 7 bytes */
        snprintf(path, sizeof path, "%s/short%zu", g_dir, n);
        FILE *f = fopen(path, "wb");
        fwrite(z, 1, n, f);
        fclose(f);
        assert_int_equal(open_path(path, 100000000, &in, &err), NA_E_FORMAT);
        char want[120];
        snprintf(want, sizeof want, "file is %zu bytes, too short for a safetensors header "
                 "(needs at least 8)", n);
        assert_string_equal(err.msg, want);
    }
    const char *p = write_file("past.safetensors", "{}", NULL, 0, 3);
    assert_int_equal(open_path(p, 100000000, &in, &err), NA_E_FORMAT);
    assert_string_equal(err.msg, "header length 3 bytes runs past the end of the file "
                        "(8 + 3 > 10 bytes)");
    p = write_file("huge.safetensors", "{}", NULL, 0, (uint64_t)1 << 63);
    assert_int_equal(open_path(p, 100000000, &in, &err), NA_E_FORMAT);
    assert_string_equal(err.msg, "header length 9223372036854775808 bytes exceeds the limit "
                        "of 100000000 bytes (raise it with --max-header-bytes)");
    assert_int_equal(open_path(p, UINT64_MAX, &in, &err), NA_E_FORMAT);
    assert_non_null(strstr(err.msg, "runs past the end of the file"));
}

static void test_json_rules(void **state)
{
    (void)state;
    expect_error("{\"a\":\"\xff\"}", NULL, 0, NA_E_FORMAT,
                 "header is not valid UTF-8 (byte 0xFF at header offset 6)");
    expect_error("{\"a\":\"\xc0\xaf\"}", NULL, 0, NA_E_FORMAT, "not valid UTF-8"); /* overlong */
    expect_error("{\"a\":", NULL, 0, NA_E_FORMAT, "header is not valid JSON: ");
    expect_error("{} {}", NULL, 0, NA_E_FORMAT, "header is not valid JSON: end of file expected");
    expect_error("[1]", NULL, 0, NA_E_FORMAT, "header is an array, not a JSON object");
    /* valid JSON (serde_json reads it), but not representable here */
    expect_error("{\"__metadata__\":{\"k\":\"a\\u0000b\"}}", NULL, 0, NA_E_UNSUPPORTED,
                 "header: a string holds a NUL character (U+0000; line 1, column 31), which "
                 "nanaudit does not support");
    expect_error("{\"a\\u0000b\":" T("F32", "[0]", "0", "0") "}", NULL, 0, NA_E_UNSUPPORTED,
                 "header: a tensor name or key holds a NUL character (U+0000; line 1");
    expect_error("{\"__metadata__\":[]}", NULL, 0, NA_E_FORMAT,
                 "__metadata__ is an array; it must be an object of strings (or null)");
    expect_error("{\"__metadata__\":{\"v\":2}}", NULL, 0, NA_E_FORMAT,
                 "__metadata__ value of 'v' is an integer, not a string");
    expect_error("{\"__metadata__\":\"x\"}", NULL, 0, NA_E_FORMAT, "__metadata__ is a string");
    /* deep nesting stops at jansson's depth limit, no stack overflow */
    size_t depth = 100000;
    char *deep = malloc(depth * 5 + 8);
    size_t k = 0;
    for (size_t i = 0; i < depth; i++)
        memcpy(deep + k, "{\"a\":", 5), k += 5;
    deep[k] = '\0';
    expect_error(deep, NULL, 0, NA_E_FORMAT, "maximum parsing depth reached");
    free(deep);
}

static void test_duplicates(void **state)
{
    (void)state;
    float d[2] = {1.0f, 0.0f};
    expect_error("{\"w\":" T("F32", "[1]", "0", "4") ",\"w\":" T("F32", "[1]", "4", "8") "}", d,
                 8, NA_E_FORMAT, "duplicate tensor name 'w' in header (refused: readers "
                 "disagree on which copy wins)");
    /* longer than jansson's 20-char context, with an escaped quote */
    expect_error("{\"a_rather_long_tensor_name\\\"x\":" T("F32", "[1]", "0", "4")
                 ",\"a_rather_long_tensor_name\\\"x\":" T("F32", "[1]", "4", "8") "}",
                 d, 8, NA_E_FORMAT, "duplicate tensor name 'a_rather_long_tensor_name\\\"x'");
    expect_error("{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[1],"
                 "\"data_offsets\":[0,4]}}", d, 4, NA_E_FORMAT,
                 "tensor 'w': duplicate key 'dtype' in its entry (at byte 27)");
}

static void test_tensor_rules(void **state)
{
    (void)state;
    static unsigned char d[64];
    expect_error("{\"w\":3}", d, 0, NA_E_FORMAT, "tensor 'w': entry is an integer, not an object");
    expect_error("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", d, 4, NA_E_FORMAT,
                 "tensor 'w': missing \"dtype\"");
    expect_error("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", d, 4, NA_E_FORMAT,
                 "tensor 'w': missing \"shape\"");
    expect_error("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", d, 4, NA_E_FORMAT,
                 "tensor 'w': missing \"data_offsets\"");
    expect_error("{\"w\":" T("F33", "[1]", "0", "4") "}", d, 4, NA_E_FORMAT,
                 "tensor 'w': unknown dtype 'F33'");
    expect_error("{\"w\":" T("F80", "[1]", "0", "10") "}", d, 10, NA_E_FORMAT,
                 "tensor 'w': unknown dtype 'F80'");
    expect_error("{\"w\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", d, 4, NA_E_FORMAT,
                 "tensor 'w': dtype is an integer, not a string");
    expect_error("{\"w\":" T("F32", "{}", "0", "4") "}", d, 4, NA_E_FORMAT,
                 "tensor 'w': shape is an object, not an array");
    expect_error("{\"w\":" T("F32", "[2,-3]", "0", "4") "}", d, 4, NA_E_FORMAT,
                 "tensor 'w': shape[1] is -3, negative");
    expect_error("{\"w\":" T("F32", "[1.5]", "0", "4") "}", d, 4, NA_E_FORMAT,
                 "tensor 'w': shape[0] is a floating-point number, not an integer");
    expect_error("{\"w\":" T("F32", "[\"2\"]", "0", "8") "}", d, 8, NA_E_FORMAT,
                 "tensor 'w': shape[0] is a string, not an integer");
    expect_error("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", d, 8,
                 NA_E_FORMAT, "tensor 'w': data_offsets is an array of 3, not [begin, end]");
    expect_error("{\"w\":" T("F32", "[1]", "-4", "0") "}", d, 4, NA_E_FORMAT,
                 "tensor 'w': data_offsets[0] is -4, negative");
    expect_error("{\"w\":" T("F32", "[1]", "4", "0") "}", d, 4, NA_E_FORMAT,
                 "tensor 'w': data_offsets [4, 0]: begin after end");
    expect_error("{\"w\":" T("F32", "[1000,1000]", "0", "4") "}", d, 4, NA_E_FORMAT,
                 "tensor 'w': shape [1000, 1000] of F32 needs 4000000 bytes but data_offsets "
                 "[0, 4] hold 4");
    expect_error("{\"w\":" T("F32", "[4294967296,4294967296]", "0", "4") "}", d, 4, NA_E_FORMAT,
                 "tensor 'w': element count of shape [4294967296, 4294967296] overflows 64 bits");
    expect_error("{\"w\":" T("F64", "[4611686018427387904]", "0", "8") "}", d, 8, NA_E_FORMAT,
                 "tensor 'w': size in bits of shape [4611686018427387904] x F64 overflows 64 bits");
    expect_error("{\"w\":" T("F4", "[3]", "0", "2") "}", d, 2, NA_E_FORMAT,
                 "tensor 'w': 3 elements of F4 are not a whole number of bytes");
    expect_error("{\"w\":" T("F32", "[1]", "0", "18446744073709551615") "}", d, 4, NA_E_FORMAT,
                 "header is not valid JSON: too big integer");
}

static void test_layout_rules(void **state)
{
    (void)state;
    static unsigned char d[64];
    expect_error("{\"w\":" T("F32", "[1]", "4", "8") "}", d, 8, NA_E_FORMAT,
                 "tensor 'w' starts at data byte 4; the first tensor must start at 0");
    expect_error("{\"a\":" T("F32", "[1]", "0", "4") ",\"b\":" T("F32", "[1]", "8", "12") "}", d,
                 12, NA_E_FORMAT, "tensor 'b' starts at data byte 8, leaving a gap of 4 bytes "
                 "after 'a' (ends at 4)");
    expect_error("{\"a\":" T("F32", "[2]", "0", "8") ",\"b\":" T("F32", "[1]", "4", "8") "}", d,
                 8, NA_E_FORMAT, "tensor 'b' starts at data byte 4, overlapping 'a' (ends at 8)");
    expect_error("{\"a\":" T("F32", "[2]", "0", "8") "}", d, 4, NA_E_FORMAT,
                 "truncated: tensor 'a' runs past the end of the file (the tensors need 8 "
                 "data bytes after the header, file has 4: 4 bytes short)");
    expect_error("{\"a\":" T("F32", "[1]", "0", "4") "}", d, 7, NA_E_FORMAT,
                 "3 trailing bytes after the last tensor (tensor data ends at byte 66 of 69)");
    expect_error("{}", d, 1, NA_E_FORMAT, "1 trailing bytes after the last tensor");
    /* a name with a newline and an escape stays one line in the message */
    expect_error("{\"a\\nb\\u001b[2J\":" T("F32", "[1]", "4", "8") "}", d, 8, NA_E_FORMAT,
                 "tensor 'a?b?[2J' starts at data byte 4");
    expect_error("{\"a\":" T("U8", "[1152921504606846976]", "0", "1152921504606846976") "}", d,
                 4, NA_E_FORMAT, "truncated: tensor 'a' runs past the end of the file (the tensors "
                 "need 1152921504606846976 data bytes");
}

/* A header of many tensors parses in time linear in their number. The
 * size comes from NA_BIG_TENSORS (default 100000; 1000000 for the
 * measurement in the report). */
static void test_many_tensors(void **state)
{
    (void)state;
    const char *env = getenv("NA_BIG_TENSORS");
    size_t n = env ? strtoul(env, NULL, 10) : 100000;
    size_t cap = n * 80 + 16, k = 0;
    char *h = malloc(cap);
    assert_non_null(h);
    h[k++] = '{';
    for (size_t i = 0; i < n; i++) /* reverse storage order: the sort does work */
        k += (size_t)snprintf(h + k, cap - k, "%s\"t%zu\":" T("U8", "[1]", "%zu", "%zu"),
                              i ? "," : "", i, n - 1 - i, n - i);
    h[k++] = '}';
    h[k] = '\0';
    char *data = calloc(n ? n : 1, 1);
    const char *p = write_file("many.safetensors", h, data, n, UINT64_MAX);
    free(h);
    free(data);
    struct timeval t0, t1;
    gettimeofday(&t0, NULL);
    na_input_t *in;
    na_err_t err;
    assert_int_equal(open_path(p, UINT64_MAX, &in, &err), NA_OK);
    gettimeofday(&t1, NULL);
    print_message("%zu tensors opened in %.2f s\n", n,
                  (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_usec - t0.tv_usec));
    assert_int_equal(in->v->count(in), n);
    na_tensor_t t;
    assert_int_equal(in->v->tensor(in, 0, &t, &err), NA_OK);
    char want[32];
    snprintf(want, sizeof want, "t%zu", n - 1);
    assert_string_equal(t.name, want);
    in->v->close(in);
    unlink(p);
}

/* A tensor bigger than the mapping window, starting at an unaligned file
 * offset (after a U8 [3]), scanned by the engine in 1 MiB windows: counts
 * and the NaN's location exact, min/max exact, mean to 1e-12. */
static void test_scan_across_windows(void **state)
{
    (void)state;
    const size_t n = 1500000, nan_at = 1048576; /* element 4 MiB in */
    const char *h = "{\"pad\":" T("U8", "[3]", "0", "3") ",\"x\":"
                    T("F32", "[1500, 1000]", "3", "6000003") "}";
    unsigned char *data = malloc(3 + 4 * n);
    assert_non_null(data);
    memset(data, 9, 3);
    long double sum = 0;
    for (size_t i = 0; i < n; i++) {
        float v = (float)(i % 1000);
        if (i == nan_at) {
            uint32_t q = 0x7fc00000u;
            memcpy(&v, &q, 4);
        } else {
            sum += v;
        }
        memcpy(data + 3 + 4 * i, &v, 4);
    }
    const char *p = write_file("big.safetensors", h, data, 3 + 4 * n, UINT64_MAX);
    free(data);
    na_input_t *in;
    na_err_t err;
    assert_int_equal(open_path(p, 100000000, &in, &err), NA_OK); /* 1 MiB windows */
    na_tensor_t t;
    assert_int_equal(in->v->tensor(in, 1, &t, &err), NA_OK);
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    o.window_bytes = 1 << 20;
    o.threads = 2;
    na_result_t r;
    assert_int_equal(na_scan_tensor(&t, &o, &r, &err), NA_OK);
    assert_int_equal(r.st.elements, n);
    assert_int_equal(r.st.nan, 1);
    assert_int_equal(r.st.finite, n - 1);
    assert_int_equal(r.n_nan_locs, 1);
    assert_int_equal(r.nan_locs[0], nan_at);
    assert_true(r.st.min == 0.0 && r.st.max == 999.0);
    double mean = (double)(sum / (long double)(n - 1));
    assert_true(fabs(r.st.mean - mean) <= 1e-12 * mean);
    na_result_free(&r);
    in->v->close(in);
    unlink(p);
}

/* ---- mapfile -------------------------------------------------------- */

static void test_mapfile(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/map.bin", g_dir);
    FILE *f = fopen(path, "wb");
    size_t n = 3 * 4096 + 123;
    for (size_t i = 0; i < n; i++)
        fputc((int)(i * 7 % 251), f);
    fclose(f);
    na_map_t *m;
    na_err_t err;
    assert_int_equal(na_map_open(open(path, O_RDONLY), n, 8192, &m, &err), NA_OK);
    const uint8_t *p;
    /* sequential windows, unaligned offsets, a read ending at EOF */
    for (size_t off = 0; off < n; off += 1000) {
        size_t len = off + 5000 <= n ? 5000 : n - off;
        assert_int_equal(na_map_get(m, off, len, &p, &err), NA_OK);
        for (size_t i = 0; i < len; i++)
            if (p[i] != (uint8_t)((off + i) * 7 % 251))
                fail_msg("byte %zu", off + i);
    }
    assert_int_equal(na_map_get(m, n, 0, &p, &err), NA_OK);
    /* a request above the window size gets a window of its own size */
    assert_int_equal(na_map_get(m, 1, n - 1, &p, &err), NA_OK);
    assert_int_equal(p[n - 2], (uint8_t)((n - 1) * 7 % 251));
    assert_int_equal(na_map_get(m, n - 1, 2, &p, &err), NA_E_IO);
    assert_non_null(strstr(err.msg, "past the end of the file"));
    assert_int_equal(na_map_get(m, UINT64_MAX, 2, &p, &err), NA_E_IO);
    uint8_t b[3], b2[200];
    assert_int_equal(na_map_pread(m, 4096, 3, b, &err), NA_OK);
    assert_int_equal(b[2], (uint8_t)(4098 * 7 % 251));
    assert_int_equal(na_map_pread(m, n - 2, 3, b, &err), NA_E_IO);
    na_map_close(m);
    /* someone truncates the file: the next window or pread says so, no
     * SIGBUS (the window in use keeps pages past the new end: its bytes
     * are not touched again here) */
    assert_int_equal(na_map_open(open(path, O_RDONLY), n, 4096, &m, &err), NA_OK);
    assert_int_equal(na_map_get(m, 0, 16, &p, &err), NA_OK);
    assert_int_equal(truncate(path, 4096), 0);
    assert_int_equal(na_map_get(m, 8192, 16, &p, &err), NA_E_IO);
    assert_string_equal(err.msg, "file shrank from 12411 to 4096 bytes while being read");
    assert_int_equal(na_map_pread(m, 4000, 200, b2, &err), NA_E_IO);
    assert_string_equal(err.msg, "file ended at 4096 bytes while reading (shrank?)");
    na_map_close(m);
    na_map_close(NULL);
}

/* The SIGBUS recovery (na_map_sigbus, called here directly, as
 * cli/sigbus.c's handler calls it with si_addr): an address inside the
 * window now mapped gets zero pages from its page to the window's end,
 * the map is marked (its next read fails) and the shrink count grows; an
 * address outside every window changes nothing. The truncation's SIGBUS
 * itself: tests/cli/scan_truncated_during_read.sh. */
static void test_mapfile_sigbus(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/map_bus.bin", g_dir);
    FILE *f = fopen(path, "wb");
    size_t n = 4 * 4096;
    for (size_t i = 0; i < n; i++)
        fputc(1 + (int)(i % 200), f);
    fclose(f);
    na_map_t *m, *m2;
    na_err_t err;
    const uint8_t *p, *p2;
    uint64_t s0 = na_map_shrinks();
    assert_int_equal(na_map_sigbus(&err), 0); /* not in a window */
    assert_int_equal(na_map_open(open(path, O_RDONLY), n, n, &m, &err), NA_OK);
    assert_int_equal(na_map_open(open(path, O_RDONLY), n, n, &m2, &err), NA_OK);
    assert_int_equal(na_map_get(m, 0, n, &p, &err), NA_OK);
    assert_int_equal(na_map_get(m2, 0, n, &p2, &err), NA_OK);
    assert_int_equal(na_map_sigbus(p + n), 0);  /* one past the window */
    assert_int_equal(na_map_shrinks(), s0);
    assert_int_equal(na_map_sigbus(p + 2 * 4096 + 5), 1);
    assert_int_equal(na_map_shrinks(), s0 + 1);
    assert_int_equal(p[2 * 4096 - 1], 1 + (2 * 4096 - 1) % 200); /* the page before: kept */
    for (size_t i = 2 * 4096; i < n; i++)
        if (p[i] != 0)
            fail_msg("byte %zu not zero", i);
    assert_int_equal(p2[n - 1], 1 + (n - 1) % 200); /* the other map: untouched */
    assert_int_equal(na_map_get(m, 0, 16, &p, &err), NA_E_IO);
    assert_string_equal(err.msg, NA_MAP_SHRANK_MSG);
    assert_int_equal(na_map_get(m2, 0, 16, &p2, &err), NA_OK);
    na_map_close(m);
    /* m2's window is gone: its addresses are no longer ours */
    na_map_close(m2);
    assert_int_equal(na_map_sigbus(p2), 0);
    assert_int_equal(na_map_shrinks(), s0 + 1);
    unlink(path);
}

/* ---- the committed corpus ------------------------------------------- */

/* Files whose refusal comes from sniffing (input.c), not from this reader,
 * are checked by tests/cli/bad_files.sh only. */
static int reader_case(const char *name)
{
    return strcmp(name, "empty.safetensors") != 0 && strcmp(name, "seven_bytes.safetensors") != 0;
}

static void test_bad_corpus(void **state)
{
    (void)state;
    char dir[512], path[1024], exp[1100];
    snprintf(dir, sizeof dir, "%s/bad", NA_TEST_DATA);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    size_t checked = 0;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 12 || strcmp(de->d_name + l - 12, ".safetensors") != 0 || !reader_case(de->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        snprintf(exp, sizeof exp, "%s.expect", path);
        FILE *f = fopen(exp, "r");
        assert_non_null(f);
        char frag[600] = "";
        if (fgets(frag, sizeof frag, f) == NULL)
            frag[0] = '\0';
        fclose(f);
        frag[strcspn(frag, "\n")] = '\0';
        na_input_t *in = NULL;
        na_err_t err;
        na_status_t st = open_path(path, 100000000, &in, &err);
        if (st == NA_OK) { /* valid header: the entries must fail instead */
            na_tensor_t t;
            for (size_t i = 0; st == NA_OK && i < in->v->count(in); i++)
                st = in->v->tensor(in, i, &t, &err);
            in->v->close(in);
        }
        if (st == NA_OK || strstr(err.msg, frag) == NULL)
            fail_msg("%s: got %d '%s', want '%s'", de->d_name, st, err.msg, frag);
        checked++;
    }
    closedir(d);
    print_message("%zu corpus files refused as expected\n", checked);
    assert_true(checked >= 30);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/na_test_st_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_listing), cmocka_unit_test(test_empty_and_scalar),
        cmocka_unit_test(test_c64_and_f4),    cmocka_unit_test(test_header_cap),
        cmocka_unit_test(test_prefix_rules),  cmocka_unit_test(test_json_rules),
        cmocka_unit_test(test_duplicates),    cmocka_unit_test(test_tensor_rules),
        cmocka_unit_test(test_layout_rules),  cmocka_unit_test(test_many_tensors),
        cmocka_unit_test(test_mapfile),       cmocka_unit_test(test_mapfile_sigbus),
        cmocka_unit_test(test_bad_corpus),    cmocka_unit_test(test_scan_across_windows),
        cmocka_unit_test(test_json_value_cap),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
