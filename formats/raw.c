/*
 * raw.c - raw binary arrays (--dtype, --shape, --endian, --offset,
 * --length), plain or gzip-compressed.
 *
 * A raw file has no header, so nothing in it can be checked but its
 * size: the data after --offset (and up to --length, or the end) must be
 * exactly shape x element size bytes; otherwise the message gives both
 * byte counts. Without --shape the array is 1-D and the size must be a
 * multiple of the element size.
 *
 * A raw file is one tensor named "data" (a file has no names inside; the
 * report's file path already says which file it is). C64 data is listed
 * as "data.real" and "data.imag" (DESIGN.md, complex values).
 *
 * Plain files are read through the windowed mapping of mapfile.c. A file
 * that starts with the gzip magic \x1f\x8b (RFC 1952) is inflated with
 * zlib as a stream into a window buffer, so memory stays at one window
 * whatever the size. A stream cannot seek: a read before the current
 * position (the engine's second pass) restarts it from the start. The
 * inflated size, which the default shape and the size check need, is
 * measured by one full streaming pass at open; that pass also finds a
 * corrupt or truncated file before any statistics are reported.
 * --offset and --length count bytes of the inflated data.
 */
#include "format.h"

#include <errno.h>    /* errno, EINTR */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, realloc, free */
#include <string.h>   /* strdup, strerror */
#include <sys/stat.h> /* fstat */
#include <unistd.h>   /* pread, close */
#include <zlib.h>     /* inflate */

#define GZ_IN_BYTES (256u << 10)   /* compressed bytes read per pread */
#define GZ_SKIP_BYTES (1u << 20)   /* inflate-and-discard step */
#define GZ_MAX_WINDOW (1u << 30)   /* largest window handed out */

typedef struct raw_gz {
    int fd;
    uint64_t file_size; /* compressed bytes */
    z_stream zs;
    int zinit;
    uint8_t *in;        /* GZ_IN_BYTES of compressed input */
    uint64_t in_off;    /* file offset of the next compressed read */
    int ended;          /* last member done, no input left */
    uint64_t pos;       /* inflated bytes produced since the (re)start */
    uint8_t *win;       /* output window, also the discard buffer */
    size_t win_cap;
} raw_gz_t;

typedef struct raw_input {
    na_input_t base;
    na_dtype_t dtype;
    na_endian_t endian;
    unsigned esize;      /* bytes per stored element */
    int ndim;
    uint64_t shape[NA_MAX_NDIM];
    uint64_t elements;
    uint64_t offset;     /* bytes skipped at the start of the (inflated) data */
    uint64_t data_bytes; /* bytes of the tensor */
    na_map_t *map;       /* plain file, or NULL */
    raw_gz_t *gz;        /* gzip file, or NULL */
} raw_input_t;

/* ---- gzip stream ---------------------------------------------------- */

static na_status_t gz_zerr(raw_gz_t *g, int zr, na_err_t *err)
{
    return na_err_set(err, zr == Z_MEM_ERROR ? NA_E_NOMEM : NA_E_FORMAT, "gzip: %s",
                      g->zs.msg != NULL ? g->zs.msg : zError(zr));
}

static na_status_t gz_restart(raw_gz_t *g, na_err_t *err)
{
    int zr = g->zinit ? inflateReset(&g->zs) : inflateInit2(&g->zs, 16 + MAX_WBITS);
    if (zr != Z_OK)
        return gz_zerr(g, zr, err);
    g->zinit = 1;
    g->zs.next_in = g->in;
    g->zs.avail_in = 0;
    g->in_off = 0;
    g->pos = 0;
    g->ended = 0;
    return NA_OK;
}

/* Refill the input buffer when it is empty; leaves avail_in 0 at EOF. */
static na_status_t gz_fill(raw_gz_t *g, na_err_t *err)
{
    while (g->zs.avail_in == 0 && g->in_off < g->file_size) {
        ssize_t r = pread(g->fd, g->in, GZ_IN_BYTES, (off_t)g->in_off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return na_err_set(err, NA_E_IO, "read failed at offset %llu: %s",
                              (unsigned long long)g->in_off, strerror(errno));
        if (r == 0)
            return na_err_set(err, NA_E_IO, "file shrank while being read");
        g->zs.next_in = g->in;
        g->zs.avail_in = (uInt)r;
        g->in_off += (uint64_t)r;
    }
    return NA_OK;
}

/* After the end of one member: another member follows (gzip files may
 * be concatenated, RFC 1952 2.2), or the file ends. Anything else is
 * refused rather than silently ignored. */
static na_status_t gz_next_member(raw_gz_t *g, na_err_t *err)
{
    na_status_t st = gz_fill(g, err);
    if (st != NA_OK)
        return st;
    if (g->zs.avail_in == 0) {
        g->ended = 1;
        return NA_OK;
    }
    if (g->zs.next_in[0] != 0x1f)
        return na_err_set(err, NA_E_FORMAT,
                          "gzip: trailing garbage after the compressed data (at byte %llu)",
                          (unsigned long long)(g->in_off - g->zs.avail_in));
    int zr = inflateReset(&g->zs);
    return zr == Z_OK ? NA_OK : gz_zerr(g, zr, err);
}

/* Inflate up to `want` bytes into dst; fewer only at the end of data. */
static na_status_t gz_inflate(raw_gz_t *g, uint8_t *dst, size_t want, size_t *got,
                              na_err_t *err)
{
    na_status_t st = NA_OK;
    g->zs.next_out = dst;
    g->zs.avail_out = (uInt)want;
    while (st == NA_OK && g->zs.avail_out > 0 && !g->ended) {
        st = gz_fill(g, err);
        if (st != NA_OK)
            break;
        if (g->zs.avail_in == 0) {
            st = na_err_set(err, NA_E_FORMAT,
                            "gzip: unexpected end of file (the compressed data is truncated)");
            break;
        }
        int zr = inflate(&g->zs, Z_NO_FLUSH);
        if (zr == Z_STREAM_END)
            st = gz_next_member(g, err);
        else if (zr != Z_OK && !(zr == Z_BUF_ERROR && g->zs.avail_in == 0))
            st = gz_zerr(g, zr, err);
    }
    *got = want - g->zs.avail_out;
    g->pos += *got;
    return st;
}

static na_status_t gz_reserve(raw_gz_t *g, size_t len, na_err_t *err)
{
    if (len <= g->win_cap)
        return NA_OK;
    /* zlib counts output in a 32-bit uInt; engine windows are MiBs. */
    if (len > GZ_MAX_WINDOW)
        return na_err_set(err, NA_E_INTERNAL, "gzip window of %zu bytes is too large", len);
    uint8_t *w = realloc(g->win, len);
    if (w == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory (gzip window of %zu bytes)", len);
    g->win = w;
    g->win_cap = len;
    return NA_OK;
}

/* Inflate and discard until the stream position is `to`. */
static na_status_t gz_skip_to(raw_gz_t *g, uint64_t to, na_err_t *err)
{
    while (g->pos < to) {
        uint64_t left = to - g->pos;
        size_t step = left < g->win_cap ? (size_t)left : g->win_cap;
        size_t got;
        na_status_t st = gz_inflate(g, g->win, step, &got, err);
        if (st != NA_OK)
            return st;
        if (got < step)
            return na_err_set(err, NA_E_IO, "gzip: data ended at %llu bytes (shrank?)",
                              (unsigned long long)g->pos);
    }
    return NA_OK;
}

/* Takes fd. Measures the inflated size with one full pass. */
static na_status_t gz_open(int fd, uint64_t file_size, raw_gz_t **out, uint64_t *total,
                           na_err_t *err)
{
    raw_gz_t *g = calloc(1, sizeof *g);
    if (g == NULL) {
        close(fd);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    g->fd = fd;
    g->file_size = file_size;
    *out = g;
    g->in = malloc(GZ_IN_BYTES);
    if (g->in == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    na_status_t st = gz_reserve(g, GZ_SKIP_BYTES, err);
    if (st == NA_OK)
        st = gz_restart(g, err);
    while (st == NA_OK && !g->ended) {
        size_t got;
        st = gz_inflate(g, g->win, g->win_cap, &got, err);
    }
    *total = g->pos;
    return st;
}

static void gz_close(raw_gz_t *g)
{
    if (g == NULL)
        return;
    if (g->zinit)
        inflateEnd(&g->zs);
    close(g->fd);
    free(g->in);
    free(g->win);
    free(g);
}

/* ---- data sources (na_read_fn) ---------------------------------------- */

static na_status_t raw_check_range(const raw_input_t *r, uint64_t off, size_t len,
                                   na_err_t *err)
{
    if (off > r->data_bytes || len > r->data_bytes - off)
        return na_err_set(err, NA_E_INTERNAL, "read of %zu bytes at %llu past the %llu data bytes",
                          len, (unsigned long long)off, (unsigned long long)r->data_bytes);
    return NA_OK;
}

static na_status_t raw_read_map(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                                na_err_t *err)
{
    raw_input_t *r = ctx;
    na_status_t st = raw_check_range(r, off, len, err);
    return st != NA_OK ? st : na_map_get(r->map, r->offset + off, len, ptr, err);
}

static na_status_t raw_read_gz(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                               na_err_t *err)
{
    raw_input_t *r = ctx;
    raw_gz_t *g = r->gz;
    uint64_t at = r->offset + off;
    na_status_t st = raw_check_range(r, off, len, err);
    if (st == NA_OK && at < g->pos)
        st = gz_restart(g, err); /* a stream only goes forward */
    if (st == NA_OK)
        st = gz_skip_to(g, at, err);
    if (st == NA_OK)
        st = gz_reserve(g, len, err);
    size_t got = 0;
    if (st == NA_OK)
        st = gz_inflate(g, g->win, len, &got, err);
    if (st == NA_OK && got != len)
        st = na_err_set(err, NA_E_IO, "gzip: data ended at %llu bytes (shrank?)",
                        (unsigned long long)g->pos);
    *ptr = st == NA_OK ? g->win : NULL;
    return st;
}

/* ---- layout: offset, length, shape ------------------------------------ */

static void shape_str(const uint64_t *shape, int ndim, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%llu", i ? "," : "",
                              (unsigned long long)shape[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

/* Bytes that o's shape needs, with overflow checks. */
static na_status_t shape_bytes(raw_input_t *r, const na_open_opts_t *o, uint64_t *need,
                               na_err_t *err)
{
    char sh[256];
    shape_str(o->raw_shape, o->raw_ndim, sh, sizeof sh);
    uint64_t n = 1;
    for (int i = 0; i < o->raw_ndim; i++) {
        if (o->raw_shape[i] != 0 && n > UINT64_MAX / o->raw_shape[i])
            return na_err_set(err, NA_E_FORMAT, "shape %s: element count overflows 64 bits", sh);
        n *= o->raw_shape[i];
    }
    if (n > UINT64_MAX / r->esize)
        return na_err_set(err, NA_E_FORMAT, "shape %s of %s: byte size overflows 64 bits", sh,
                          na_dtype_name(r->dtype));
    r->ndim = o->raw_ndim;
    memcpy(r->shape, o->raw_shape, sizeof r->shape);
    r->elements = n;
    *need = n * r->esize;
    return NA_OK;
}

static na_status_t raw_layout(raw_input_t *r, const na_open_opts_t *o, uint64_t stream,
                              na_err_t *err)
{
    const char *what = r->gz != NULL ? "inflated data" : "file";
    if (o->raw_offset > stream)
        return na_err_set(err, NA_E_FORMAT, "--offset %llu is past the end of the %s (%llu bytes)",
                          (unsigned long long)o->raw_offset, what, (unsigned long long)stream);
    r->offset = o->raw_offset;
    uint64_t avail = stream - r->offset;
    r->data_bytes = avail;
    if (o->raw_length != NA_RAW_TO_EOF) {
        if (o->raw_length > avail)
            return na_err_set(err, NA_E_FORMAT,
                              "--length %llu goes past the end of the %s: %llu bytes after "
                              "offset %llu",
                              (unsigned long long)o->raw_length, what,
                              (unsigned long long)avail, (unsigned long long)r->offset);
        r->data_bytes = o->raw_length;
    }
    if (o->raw_ndim < 0) {
        if (stream == 0) /* a --shape of 0 elements says it is meant */
            return na_err_set(err, NA_E_FORMAT, "empty %s (0 bytes); give --shape with a 0 "
                              "dimension if no data is right", what);
        /* nothing after --offset (a header whose payload was lost) is no
         * data either: it was a [0] tensor, exit 0 (sixteenth fresh-user
         * round); --length 0 or a --shape with a 0 says it is meant */
        if (r->data_bytes == 0 && o->raw_length == NA_RAW_TO_EOF)
            return na_err_set(err, NA_E_FORMAT, "no data after --offset %llu (the %s has %llu "
                              "bytes); give --shape with a 0 dimension or --length 0 if no "
                              "data is right", (unsigned long long)r->offset, what,
                              (unsigned long long)stream);
        if (r->data_bytes % r->esize != 0)
            return na_err_set(err, NA_E_FORMAT,
                              "data size %llu bytes is not a multiple of the %s element size "
                              "(%u bytes); give --shape, --offset or --length",
                              (unsigned long long)r->data_bytes, na_dtype_name(r->dtype),
                              r->esize);
        r->ndim = 1;
        r->shape[0] = r->elements = r->data_bytes / r->esize;
        return NA_OK;
    }
    if (o->raw_ndim > NA_MAX_NDIM)
        return na_err_set(err, NA_E_USAGE, "--shape has %d dimensions (at most %d)",
                          o->raw_ndim, NA_MAX_NDIM);
    uint64_t need = 0;
    na_status_t st = shape_bytes(r, o, &need, err);
    if (st != NA_OK || need == r->data_bytes)
        return st;
    char sh[256];
    shape_str(r->shape, r->ndim, sh, sizeof sh);
    return na_err_set(err, NA_E_FORMAT,
                      "shape %s of %s needs %llu bytes, but the data after offset %llu is "
                      "%llu bytes",
                      sh, na_dtype_name(r->dtype), (unsigned long long)need,
                      (unsigned long long)r->offset, (unsigned long long)r->data_bytes);
}

/* ---- vtbl ------------------------------------------------------------- */

static size_t raw_count(const na_input_t *in)
{
    return ((const raw_input_t *)in)->dtype == NA_DT_C64 ? 2 : 1;
}

static na_status_t raw_tensor(na_input_t *in, size_t i, na_tensor_t *t, na_err_t *err)
{
    raw_input_t *r = (raw_input_t *)in;
    int cplx = r->dtype == NA_DT_C64;
    memset(t, 0, sizeof *t);
    t->name = cplx ? (i ? "data.imag" : "data.real") : "data";
    t->dtype = cplx ? NA_DT_F32 : r->dtype;
    t->stored = r->dtype;
    t->byte_order = r->endian;
    t->ndim = r->ndim;
    memcpy(t->shape, r->shape, sizeof t->shape);
    t->elements = r->elements;
    t->elem_stride = r->esize;
    t->elem_offset = cplx ? (uint32_t)(4 * i) : 0;
    t->src.read = r->gz != NULL ? raw_read_gz : raw_read_map;
    t->src.ctx = r;
    return NA_OK;
}

static size_t raw_meta_count(const na_input_t *in) { return 0; }

static void raw_meta(const na_input_t *in, size_t i, const char **k, const char **v)
{
    *k = *v = NULL;
}

/* C64: each part is half of the stored bytes, so the parts add up. */
static uint64_t raw_tensor_bytes(const na_input_t *in, size_t i)
{
    const raw_input_t *r = (const raw_input_t *)in;
    return r->dtype == NA_DT_C64 ? r->data_bytes / 2 : r->data_bytes;
}

static void raw_close(na_input_t *in)
{
    raw_input_t *r = (raw_input_t *)in;
    if (r == NULL)
        return;
    na_map_close(r->map);
    gz_close(r->gz);
    free(r->base.path);
    free(r);
}

static const struct na_input_vtbl raw_vtbl = {
    raw_count, raw_tensor, raw_meta_count, raw_meta, raw_tensor_bytes, raw_close, NULL,
};

/* ---- open ------------------------------------------------------------- */

int na_raw_dtype_ok(na_dtype_t dt)
{
    unsigned bits = na_dtype_bits(dt);
    return na_dtype_supported(dt) && bits != 0 && bits % 8 == 0;
}

/* Takes fd: hands it to the mapping or the gzip stream, or closes it. */
static na_status_t raw_setup(raw_input_t *r, int fd, const na_open_opts_t *o, na_err_t *err)
{
    struct stat sb;
    if (!na_raw_dtype_ok(o->raw_dtype)) {
        close(fd);
        return na_err_set(err, NA_E_UNSUPPORTED, "unsupported dtype %s for raw data",
                          na_dtype_name(o->raw_dtype));
    }
    if (o->raw_dtype == NA_DT_F80 && o->raw_endian == NA_BIG) {
        close(fd);
        return na_err_set(err, NA_E_UNSUPPORTED, "F80 (the x87 80-bit type) is little-endian "
                          "only: --endian big does not apply");
    }
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return na_err_set(err, NA_E_IO, "fstat failed: %s", strerror(e));
    }
    r->dtype = o->raw_dtype;
    r->endian = o->raw_endian;
    /* F80, the x87 80-bit type, as numpy's np.longdouble(...).tofile()
     * writes it on x86-64 (and C's long double in memory): 16-byte slots,
     * the value in the first 10 bytes, as an .npy '<f16' (npy.c) */
    r->esize = o->raw_dtype == NA_DT_F80 ? 16 : na_dtype_bits(o->raw_dtype) / 8;
    r->base.file_size = (uint64_t)sb.st_size;
    uint8_t magic[2] = {0, 0};
    ssize_t got = r->base.file_size >= 2 ? pread(fd, magic, 2, 0) : 0;
    uint64_t stream = r->base.file_size;
    na_status_t st;
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
        st = gz_open(fd, r->base.file_size, &r->gz, &stream, err);
    else
        st = na_map_open(fd, r->base.file_size,
                         o->window_bytes ? o->window_bytes : NA_DEFAULT_WINDOW_BYTES, &r->map,
                         err);
    return st != NA_OK ? st : raw_layout(r, o, stream, err);
}

static na_status_t raw_open(const char *path, int fd, const na_open_opts_t *o,
                            na_input_t **out, na_err_t *err)
{
    *out = NULL;
    raw_input_t *r = calloc(1, sizeof *r);
    char *p = strdup(path);
    if (r == NULL || p == NULL) {
        free(r);
        free(p);
        close(fd);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    r->base.v = &raw_vtbl;
    r->base.format = "raw";
    r->base.path = p;
    na_status_t st = raw_setup(r, fd, o, err);
    if (st != NA_OK) {
        raw_close(&r->base);
        return st;
    }
    *out = &r->base;
    return NA_OK;
}

const na_format_t na_format_raw = {"raw", raw_open};
