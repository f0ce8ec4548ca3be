/*
 * npy_write.c - the NumPy .npy writer of `nanaudit clean` (issue 4).
 *
 * Format: numpy.lib.format (NEP 1,
 * https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
 *   "\x93NUMPY" | major | minor | HEADER_LEN (u16 LE in 1.0, u32 LE in
 *   2.0) | header | data
 * The header is the repr of a dict with the keys 'descr', 'fortran_order'
 * and 'shape', in that (sorted) order, then spaces and one '\n' so that
 * the data starts at a multiple of 64 bytes (numpy's ARRAY_ALIGN, "for
 * memory-mapping"; the docs: "terminated by a newline and padded with
 * spaces ... divisible by 64"). Version 1.0 unless the header does not
 * fit 65535 bytes, then 2.0, as np.save chooses. Like np.save we leave
 * room after the dict for the first axis to grow to 21 digits (numpy's
 * GROWTH_AXIS_MAX_DIGITS), so a file can be appended to in place; with
 * that, our header is byte for byte the one np.save writes.
 *
 * What is written: the one array of the input .npy, C order
 * (fortran_order False: the reader gathers a Fortran-order input in C
 * order, view.c), little-endian for a cleaned array (na_clean_emit's
 * bytes, the writer's dtype), or the input's byte order for an array
 * copied unchanged (na_wtensor_t.byte_order). An input with nothing
 * cleaned - its array not selected, not numeric (object, string), or a
 * structured or complex array, which clean copies (na_tensor_t.part) -
 * is copied byte for byte. Dtypes without a NumPy type string (BF16,
 * F8_*) are refused with a one-line NA_E_UNSUPPORTED error (exit 3, as
 * for a format clean cannot write): nothing is written.
 */
#include "write.h"

#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* calloc, malloc, free */
#include <errno.h>  /* errno, EINTR */
#include <fcntl.h>  /* open */
#include <string.h> /* memcpy, strlen, strerror */
#include <unistd.h> /* read, close */

#define NPY_ALIGN 64        /* numpy.lib.format.ARRAY_ALIGN */
#define NPY_GROWTH_DIGITS 21 /* numpy.lib.format.GROWTH_AXIS_MAX_DIGITS */
#define NPY_MAGIC_LEN 8      /* "\x93NUMPY" + major + minor */

/* NumPy type string kind+size of dt ("f4"), or NULL when numpy has none. */
static const char *npy_kind(na_dtype_t dt)
{
    switch (dt) {
    case NA_DT_F64: return "f8";
    case NA_DT_F32: return "f4";
    case NA_DT_F16: return "f2";
    case NA_DT_I8: return "i1";
    case NA_DT_I16: return "i2";
    case NA_DT_I32: return "i4";
    case NA_DT_I64: return "i8";
    case NA_DT_U8: return "u1";
    case NA_DT_U16: return "u2";
    case NA_DT_U32: return "u4";
    case NA_DT_U64: return "u8";
    case NA_DT_BOOL: return "b1";
    case NA_DT_C64: return "c8";
    default: return NULL;
    }
}

int na_npy_wdtype_ok(na_dtype_t dt) { return npy_kind(dt) != NULL; }

/* The header dict as np.save writes it: "{'descr': '<f4', 'fortran_order':
 * False, 'shape': (3, 4), }" plus the growth spaces. Returns its length
 * or 0 when it does not fit cap. */
static size_t npy_dict(const na_wtensor_t *t, const char *kind, char *out, size_t cap)
{
    char shape[NA_MAX_NDIM * 24 + 4], first[24] = "";
    size_t k = (size_t)snprintf(shape, sizeof shape, "(");
    for (int d = 0; d < t->ndim; d++) {
        k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%llu", d ? ", " : "",
                              (unsigned long long)t->shape[d]);
        if (d == 0)
            snprintf(first, sizeof first, "%llu", (unsigned long long)t->shape[0]);
    }
    snprintf(shape + k, sizeof shape - k, t->ndim == 1 ? ",)" : ")");
    /* byte order: '|' for one-byte types (numpy's "not applicable") */
    char order = kind[1] == '1' ? '|' : (t->byte_order == NA_BIG ? '>' : '<');
    int grow = t->ndim > 0 ? NPY_GROWTH_DIGITS - (int)strlen(first) : 0;
    int n = snprintf(out, cap, "{'descr': '%c%s', 'fortran_order': False, 'shape': %s, }%*s",
                     order, kind, shape, grow > 0 ? grow : 0, "");
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static void npy_wfree(na_writer_t *w)
{
    if (!w)
        return;
    na_writer_base_free(w);
    free(w);
}

static const struct na_writer_vtbl npy_wvtbl = {NULL, NULL, npy_wfree, NULL, NULL};

na_status_t na_npy_header_build(const na_wtensor_t *t, uint8_t *out, size_t cap, size_t *len,
                                na_err_t *err)
{
    const char *kind = npy_kind(t->dtype);
    *len = 0;
    if (!kind)
        return na_err_set(err, NA_E_UNSUPPORTED, ".npy has no type for dtype %s (use "
                          "--out-dtype)", na_dtype_name(t->dtype));
    char dict[NA_MAX_NDIM * 24 + 160];
    size_t dl = npy_dict(t, kind, dict, sizeof dict);
    return na_npy_header_wrap(dict, dl, 1, out, cap, len, err);
}

na_status_t na_npy_header_wrap(const char *dict, size_t dl, int major, uint8_t *out,
                               size_t cap, size_t *len, na_err_t *err)
{
    *len = 0;
    /* numpy's _wrap_header: padding so magic + length field + header
     * (dict, spaces, '\n') is a multiple of 64; 1.0 has a 2-byte length,
     * 2.0 and 3.0 (UTF-8 text) a 4-byte one. */
    size_t lenf = major >= 2 ? 4 : 2, hl = dl + 1;
    size_t pad = NPY_ALIGN - (NPY_MAGIC_LEN + lenf + hl) % NPY_ALIGN;
    if (hl + pad > 65535 && lenf == 2) {
        lenf = 4;
        major = 2;
        pad = NPY_ALIGN - (NPY_MAGIC_LEN + lenf + hl) % NPY_ALIGN;
    }
    size_t total = NPY_MAGIC_LEN + lenf + hl + pad;
    if (!dl || total > cap)
        return na_err_set(err, NA_E_INTERNAL, ".npy header too long");
    uint8_t pre[NPY_MAGIC_LEN] = {0x93, 'N', 'U', 'M', 'P', 'Y', (uint8_t)(major > 1 ? major : 1),
                                  0};
    memcpy(out, pre, NPY_MAGIC_LEN);
    for (size_t i = 0; i < lenf; i++)
        out[NPY_MAGIC_LEN + i] = (uint8_t)((hl + pad) >> (8 * i));
    memcpy(out + NPY_MAGIC_LEN + lenf, dict, dl);
    memset(out + NPY_MAGIC_LEN + lenf + dl, ' ', pad);
    out[total - 1] = '\n';
    *len = total;
    return NA_OK;
}

/* The input file, byte for byte, through w's buffer. */
static na_status_t copy_input(na_writer_t *w, const char *path, na_err_t *err)
{
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return na_err_set(err, NA_E_WRITE, "cannot re-open the input to copy it: %s",
                          strerror(errno));
    na_status_t st = na_writer_flush(w, err);
    for (;;) {
        if (st != NA_OK)
            break;
        ssize_t k = read(in, w->buf, NA_WBUF);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            st = na_err_set(err, NA_E_WRITE, "reading the input to copy it: %s",
                            strerror(errno));
        if (k <= 0)
            break;
        w->used = (size_t)k;
        st = na_writer_flush(w, err);
    }
    close(in);
    return st;
}

static na_status_t npy_wopen(int fd, const na_wopts_t *o, const na_wtensor_t *t, size_t n,
                             const na_wmeta_t *meta, size_t n_meta, na_writer_t **out,
                             na_err_t *err)
{
    (void)meta; /* .npy has no place for metadata (the change report has it) */
    (void)n_meta;
    /* Nothing cleaned (one array not selected, not numeric, or the
     * parts of a structured or complex array, which clean copies:
     * nanaudit.h, na_tensor_t.part): the output is the input byte for
     * byte, its header (Fortran order, byte order, record dtype) and an
     * object array's pickle (never loaded) included. */
    int whole = 1;
    for (size_t i = 0; i < n; i++)
        whole &= t[i].copied;
    if (n != 1 && !whole)
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "a .npy file holds one array; this input gives %zu tensors (a "
                          "structured array?): clean cannot write it", n);
    uint8_t head[NA_NPY_WHEADER_MAX];
    size_t hn = 0;
    na_status_t st = whole ? NA_OK : na_npy_header_build(&t[0], head, sizeof head, &hn, err);
    if (st != NA_OK)
        return st;
    na_writer_t *w = calloc(1, sizeof *w);
    if (!w)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    w->v = &npy_wvtbl;
    st = na_writer_base_init(w, fd, t, n, err);
    if (st == NA_OK && whole) {
        w->copies = malloc(n ? n : 1);
        if (!w->copies)
            st = na_err_set(err, NA_E_NOMEM, "out of memory");
        for (size_t i = 0; st == NA_OK && i < n; i++) {
            w->copies[i] = 1; /* copied here, not sent (na_writer_wants) */
            w->bytes[i] = 0;
        }
        /* o->path NULL: a dry run's check, nothing to copy */
        if (st == NA_OK && o->path)
            st = copy_input(w, o->input, err);
    } else if (st == NA_OK)
        st = na_writer_put(w, head, hn, err);
    if (st != NA_OK) {
        npy_wfree(w);
        return st;
    }
    *out = w;
    return NA_OK;
}

const na_writer_format_t na_writer_npy = {"npy", npy_wopen};
