/*
 * npz_write.c - the NumPy .npz writer of `nanaudit clean` (issue 4).
 *
 * Format: a zip archive (PKWARE APPNOTE.TXT) of NAME.npy members, as
 * numpy.savez (stored) and numpy.savez_compressed (deflated) write it
 * (numpy/lib/_npyio_impl.py, _savez: one zipfile member per array, opened
 * with force_zip64=True, deflated at zlib's default level). Written with
 * minizip's zip.h (zlib contrib/minizip, Debian libminizip-dev), the
 * library the reader (zip.c) builds on.
 *
 * What is written: the input's members, in its order, under their names
 * ('/' included: numpy allows it).
 *  - A member with a cleaned array is a new .npy (the header np.save
 *    writes, na_npy_header_build, then the cleaned bytes), streamed into
 *    the archive piece by piece as clean hands them over: minizip keeps
 *    one 64 KiB buffer (and zlib's deflate state), and since the
 *    temporary file is seekable it writes the CRC-32 and the sizes into
 *    the local header when the member ends. Memory does not grow with the
 *    data.
 *  - An untouched member (every array in it copied; strings, object
 *    arrays and other non-numeric members too) is copied byte for byte:
 *    its compressed bytes (na_zip_read_raw), CRC and sizes as they are in
 *    the input, written with minizip's raw mode, so nothing is
 *    re-compressed. Runs of zeros become holes (nw_write). Only when its
 *    method differs from the archive's (a mixed archive) is a plain array
 *    re-encoded from the bytes clean hands over.
 *  - Deflated if any input member is deflated (savez_compressed), else
 *    stored (savez). Every new member gets a zip64 extra field, as numpy
 *    writes it, so members over 4 GiB need no special case.
 *  - Dates and attributes of each member are the input member's, so the
 *    same input and command give the same bytes.
 * A cleaned array inside a structured or complex128 member (several
 * tensors of one member) cannot be written back into its records: the
 * open is refused with a one-line NA_E_UNSUPPORTED error (exit 3, as
 * npy_write.c refuses such a .npy). An object array is never cleaned:
 * its member is copied as stored, its pickle never loaded (cli/clean.c).
 *
 * minizip writes through our I/O table onto the writer's buffer
 * (write.c: na_writer_put, so a full disk or RLIMIT_FSIZE gives its
 * one-line message); a seek flushes the buffer and moves the descriptor.
 * The input archive is opened by its path (na_wopts_t.input), read only,
 * for its member list, headers and raw copies, through formats/zip.c (the
 * readers' zip code): Debian's minizip 1.1 misreads the zip64 sizes and
 * offsets of a member of 4 GiB or more and of every member after it,
 * which zip.c reads itself (with its checks of local against central
 * headers and of overlapping members). minizip's zip.h writes them right:
 * tests/cli/large_clean_npz_zip64.sh reads such an output back with
 * Python's zipfile and numpy.load.
 */
#include "npt.h"
#include "write.h"

#include <errno.h>    /* errno */
#include <fcntl.h>    /* open */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, malloc, free */
#include <string.h>   /* strlen, strcmp, strncmp, memcpy, strerror */
#include <sys/stat.h> /* fstat */
#include <unistd.h>   /* lseek */
#include <zip.h>      /* minizip: the output archive */

#define NPZ_COPY_BUF (1u << 20)

typedef struct npz_member {
    const char *name;      /* "x.npy", as in the input (the input's entry) */
    size_t first, count;   /* its writer tensors [first, first + count) */
    size_t index;          /* member index in the input (na_zip_entry) */
    int method;            /* 0 stored, Z_DEFLATED */
    int raw;               /* copied as its compressed bytes */
    uint8_t *rowhead;      /* rows selected (na_wtensor_t.drop): the new
                            * header (owned), then the kept rows of the
                            * input's data, rowb bytes each from data_at */
    size_t rowhead_len;
    uint64_t data_at, rowb;
    zip_fileinfo fi;       /* date and attributes, kept */
    uLong version;         /* "version made by" */
} npz_member_t;

typedef struct npz_writer {
    na_writer_t base;
    na_zip_t *in;          /* the input archive (zip.c) */
    zipFile out;
    npz_member_t *m;
    size_t n_m;
    size_t *member_of;     /* per tensor */
    na_wtensor_t *t;       /* the tensor list (names point into the caller's) */
    int method;            /* of re-encoded members */
    int open;              /* a member is open in out */
    uint64_t pos;          /* file position as minizip sees it */
    na_status_t io_st;     /* first error of the I/O table */
    na_err_t io_err;
} npz_writer_t;

/* ---- minizip's I/O table over the writer's buffer ---------------------- */

static voidpf ZCALLBACK nw_open(voidpf opaque, const void *filename, int mode)
{
    (void)filename, (void)mode;
    return opaque; /* the temporary file is open already */
}

static uLong ZCALLBACK nw_read(voidpf opaque, voidpf stream, void *buf, uLong size)
{
    (void)opaque, (void)stream, (void)buf, (void)size;
    return 0; /* a new archive is never read back (no append mode) */
}

/* minizip hands its 64 KiB buffer over whole. One that is all zeros (a
 * mask or padding of a sparse input; the zero blocks of a .npz's stored
 * member) is skipped with lseek instead of written: the new file reads
 * back zeros there and does not take the disk space (the central
 * directory, written last, always ends the file after it). */
#define NPZ_HOLE 4096u

static int all_zero(const uint8_t *p, size_t n)
{
    return n > 0 && p[0] == 0 && memcmp(p, p + 1, n - 1) == 0;
}

static uLong ZCALLBACK nw_write(voidpf opaque, voidpf stream, const void *buf, uLong size)
{
    npz_writer_t *z = stream;
    (void)opaque;
    if (z->io_st != NA_OK)
        return 0;
    if (size >= NPZ_HOLE && all_zero(buf, size)) {
        z->io_st = na_writer_flush(&z->base, &z->io_err);
        if (z->io_st == NA_OK && lseek(z->base.fd, (off_t)size, SEEK_CUR) < 0)
            z->io_st = na_err_set(&z->io_err, NA_E_WRITE, "write error: %s", strerror(errno));
        if (z->io_st != NA_OK)
            return 0;
        z->pos += size;
        return size;
    }
    z->io_st = na_writer_put(&z->base, buf, size, &z->io_err);
    if (z->io_st != NA_OK)
        return 0;
    z->pos += size;
    return size;
}

static ZPOS64_T ZCALLBACK nw_tell(voidpf opaque, voidpf stream)
{
    (void)opaque;
    return ((npz_writer_t *)stream)->pos;
}

/* minizip seeks back to fill in a local header's CRC and sizes, then to
 * where it was: the buffered bytes go out first, so the descriptor's
 * position is the archive's. */
static long ZCALLBACK nw_seek(voidpf opaque, voidpf stream, ZPOS64_T off, int origin)
{
    npz_writer_t *z = stream;
    (void)opaque;
    if (z->io_st == NA_OK)
        z->io_st = na_writer_flush(&z->base, &z->io_err);
    if (z->io_st != NA_OK)
        return -1;
    struct stat sb;
    uint64_t base = origin == ZLIB_FILEFUNC_SEEK_CUR ? z->pos : 0;
    if (origin == ZLIB_FILEFUNC_SEEK_END)
        base = fstat(z->base.fd, &sb) == 0 ? (uint64_t)sb.st_size : UINT64_MAX;
    if (base == UINT64_MAX || lseek(z->base.fd, (off_t)(base + off), SEEK_SET) < 0)
        return -1;
    z->pos = base + off;
    return 0;
}

static int ZCALLBACK nw_close(voidpf opaque, voidpf stream)
{
    (void)opaque, (void)stream;
    return 0; /* the caller owns the descriptor */
}

static int ZCALLBACK nw_error(voidpf opaque, voidpf stream)
{
    (void)opaque;
    return ((npz_writer_t *)stream)->io_st != NA_OK;
}

/* A minizip result code as a one-line error; the I/O table's own message
 * (write error: No space left on device) when it failed first. */
static na_status_t zerr(npz_writer_t *z, int r, const char *what, const char *member,
                        na_err_t *err)
{
    if (z->io_st != NA_OK)
        return na_err_set(err, z->io_st, "%s", z->io_err.msg);
    return na_err_set(err, r == ZIP_PARAMERROR || r == ZIP_INTERNALERROR ? NA_E_INTERNAL
                                                                          : NA_E_WRITE,
                      "zip: %s member '%.200s' failed (minizip %d)", what, member, r);
}

/* ---- the input's members ------------------------------------------------ */

/* Writer tensors one member gives: cli/clean.c's list has one per field
 * (npy.c, "x.field"), two for a complex128 field (x.real and x.imag, F64
 * each) and one for a complex64 one (its .imag is folded into .real).
 * Non-numeric and object fields give one entry each. */
static size_t member_tensors(const na_npy_header_t *h)
{
    size_t k = 0;
    for (size_t f = 0; f < h->n_fields; f++) {
        const na_npy_field_t *fd = &h->fields[f];
        k += fd->kind == NA_NPY_NUMERIC && fd->nparts == 2 && fd->stored != NA_DT_C64 ? 2 : 1;
    }
    return k;
}

/* Blanks between the tokens of a header's literal (spaces, tabs, form
 * feeds, as Python's tokenizer skips them). */
static int lit_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\f'; }

/* The value of the 'shape' key in dict[0..n) (a .npy header's Python
 * literal, any spacing: spaces, tabs or form feeds, as numpy's
 * ast.literal_eval takes them; either quote): *open at its '(' or '[',
 * *close at the bracket that ends it. Returns how many 'shape' keys were
 * found (a key is a string followed by ':'; a field named 'shape' inside
 * 'descr' is followed by ','), so 1 is the only usable answer. */
static int shape_span(const char *dict, size_t n, const char **open, const char **close)
{
    int found = 0;
    for (size_t i = 0; i + 7 <= n; i++) {
        char q = dict[i];
        if ((q != '\'' && q != '"') || memcmp(dict + i + 1, "shape", 5) || dict[i + 6] != q)
            continue;
        size_t j = i + 7;
        while (j < n && lit_space(dict[j]))
            j++;
        if (j >= n || dict[j] != ':')
            continue;
        for (j++; j < n && lit_space(dict[j]); j++)
            ;
        if (j >= n || (dict[j] != '(' && dict[j] != '['))
            continue;
        const char *end = memchr(dict + j, dict[j] == '(' ? ')' : ']', n - j);
        if (!end)
            continue;
        *open = dict + j;
        *close = end;
        found++;
    }
    return found;
}

/* A member whose rows follow a --together group (na_wtensor_t.drop on
 * its one tensor t[first], an array clean does not read: strings, bytes,
 * void): the kept rows are copied as they are, after the input's header
 * with axis 0 of 'shape' made the rows kept (head: the input's header,
 * parsed as h). Records of a fixed size only: an object array's rows are
 * pickles, and a Fortran-order array's rows are not contiguous
 * (NA_E_USAGE); a header whose 'shape' key cannot be found once is
 * NA_E_UNSUPPORTED. The version stays the input's or above (3.0: UTF-8
 * field names). */
static na_status_t plan_rows(npz_writer_t *z, npz_member_t *m, const na_npy_header_t *h,
                             const uint8_t *head, size_t first, na_err_t *err)
{
    const na_wtensor_t *t = &z->t[first];
    if (h->n_fields >= 1 && h->fields[0].kind == NA_NPY_OBJECT) /* a guard: cli/clean.c
                                                                  * offers none */
        return na_err_set(err, NA_E_USAGE, "%s: an object array (pickled rows), whose rows "
                          "clean cannot select; leave it out of --together", t->name);
    if (h->fortran && h->ndim > 1)
        return na_err_set(err, NA_E_USAGE, "%s: a Fortran-order array, whose rows are not "
                          "contiguous; leave it out of --together", t->name);
    if (h->ndim < 1 || h->shape[0] != t->in_rows)
        return na_err_set(err, NA_E_INTERNAL, "%s: its rows differ from the tensor list's",
                          t->name);
    if (h->shape[0] && h->data_bytes / h->shape[0] > ((uint64_t)1 << 30))
        return na_err_set(err, NA_E_USAGE, "%s: its rows take more than 1 GiB each; leave it "
                          "out of --together", t->name);
    size_t hoff = h->major == 1 ? 10 : 12, hl = (size_t)h->header_bytes - hoff;
    const char *dict = (const char *)head + hoff, *at = NULL, *close = NULL;
    if (shape_span(dict, hl, &at, &close) != 1)
        return na_err_set(err, NA_E_UNSUPPORTED, "%s: no single 'shape' in its .npy header: "
                          "clean cannot select its rows", t->name);
    char shape[NA_MAX_NDIM * 24 + 4];
    uint64_t out_shape[NA_MAX_NDIM];
    memcpy(out_shape, h->shape, sizeof out_shape);
    out_shape[0] = t->shape[0];
    na_npy_shape_str(out_shape, h->ndim, shape, sizeof shape);
    /* the input's dict around the new tuple; its padding (spaces, '\n')
     * is made again */
    size_t pre = (size_t)(at - dict), sl = strlen(shape);
    const char *tail = close + 1;
    size_t tl = hl - (size_t)(tail - dict);
    while (tl && (tail[tl - 1] == '\n' || tail[tl - 1] == ' '))
        tl--;
    /* numpy's growth room: spaces for axis 0 to reach 21 digits
     * (numpy.lib.format.GROWTH_AXIS_MAX_DIGITS), as npy_write.c writes */
    char digits[24];
    int grow = 21 - snprintf(digits, sizeof digits, "%llu", (unsigned long long)out_shape[0]);
    size_t dl = pre + sl + tl + (size_t)(grow > 0 ? grow : 0);
    char *d = malloc(dl + 1);
    m->rowhead = malloc(dl + 128);
    if (!d || !m->rowhead) {
        free(d);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    memcpy(d, dict, pre);
    memcpy(d + pre, shape, sl);
    memcpy(d + pre + sl, tail, tl);
    memset(d + pre + sl + tl, ' ', dl - (pre + sl + tl));
    na_status_t st = na_npy_header_wrap(d, dl, h->major, m->rowhead, dl + 128,
                                        &m->rowhead_len, err);
    free(d);
    m->data_at = h->header_bytes;
    m->rowb = h->data_bytes / (h->shape[0] ? h->shape[0] : 1);
    return st;
}

/* Name, method, header and place in the tensor list of member i of
 * z->in. The header is read (inflated) through zip.c: only its first
 * bytes, so the member's CRC is not checked here. */
static na_status_t read_member(npz_writer_t *z, npz_member_t *m, size_t i, size_t first,
                               na_err_t *err)
{
    const na_zip_entry_t *e = na_zip_entry(z->in, i);
    m->name = e->name;
    m->index = i;
    m->method = e->method;
    m->version = e->version;
    m->fi.dosDate = e->dos_date;
    m->fi.internal_fa = e->internal_fa;
    m->fi.external_fa = e->external_fa;
    m->first = first;
    int arr = na_npz_member_is_array(z->in, i); /* as the reader decides (npz.c) */
    if (arr < 0) /* the reader refuses it */
        return na_err_set(err, NA_E_IO, "member '%.200s': its first bytes cannot be read",
                          e->name);
    if (arr == 0) {
        m->count = 1; /* a member that is not an array (npz.c): copied */
        m->raw = 1;
        return NA_OK;
    }
    uint8_t head[NA_NPY_MAX_HEADER + 12];
    size_t hn = e->usize < sizeof head ? (size_t)e->usize : sizeof head;
    na_status_t st = na_zip_read(z->in, i, 0, head, hn, err);
    if (st != NA_OK)
        return st;
    na_npy_header_t h;
    memset(&h, 0, sizeof h);
    st = na_npy_parse_header(head, hn, &h, err);
    if (st == NA_OK) {
        m->count = member_tensors(&h);
        /* one tensor of a plain numeric array: "x" for "x.npy" */
        m->raw = !(h.n_fields == 1 && !h.fields[0].name[0] && m->count == 1 &&
                   h.fields[0].kind == NA_NPY_NUMERIC);
        if (m->count == 1 && first < z->base.n && z->t[first].drop)
            st = plan_rows(z, m, &h, head, first, err);
    }
    na_npy_header_free(&h);
    return st;
}

/* Raw copy or re-encode: a member is copied as its compressed bytes when
 * nothing in it was cleaned and it can be (same method, or not a plain
 * array, which only a raw copy can keep). m->raw says "not plain" on entry. */
static na_status_t plan_member(npz_writer_t *z, npz_member_t *m, na_err_t *err)
{
    int cleaned = 0;
    for (size_t k = m->first; k < m->first + m->count; k++)
        cleaned |= !z->t[k].copied;
    size_t stem = strlen(m->name);
    if (stem >= 4 && !strcmp(m->name + stem - 4, ".npy"))
        stem -= 4; /* "x.npy" gives "x"; other members keep their name (npz.c) */
    for (size_t k = m->first; k < m->first + m->count; k++)
        if (strncmp(z->t[k].name, m->name, stem) ||
            (z->t[k].name[stem] && z->t[k].name[stem] != '.'))
            return na_err_set(err, NA_E_INTERNAL, "tensor '%s' is not in member '%.200s'",
                              z->t[k].name, m->name);
    if (cleaned && m->raw)
        return na_err_set(err, NA_E_UNSUPPORTED, "member '%.200s' holds a structured or "
                          "complex array (%zu tensors): clean cannot write cleaned fields "
                          "back into its records (--exclude them to copy it unchanged)",
                          m->name, m->count);
    m->raw = !cleaned && !m->rowhead && (m->raw || m->method == z->method);
    for (size_t k = m->first; k < m->first + m->count && (m->raw || m->rowhead); k++) {
        z->base.copies[k] = 1;
        z->base.bytes[k] = 0; /* copied here, not sent (na_writer_wants) */
    }
    return NA_OK;
}

/* The input re-opened by its path (clean reads it by path too); zip.c
 * takes the descriptor. */
static na_status_t open_input(npz_writer_t *z, const char *path, na_err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        na_status_t st = na_err_set(err, na_errno_status(errno),
                                    "cannot re-open the input archive '%s': %s",
                                    path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return st;
    }
    return na_zip_open(fd, (uint64_t)sb.st_size, &z->in, err);
}

static na_status_t list_members(npz_writer_t *z, const na_wopts_t *o, na_err_t *err)
{
    na_status_t st = open_input(z, o->input, err);
    if (st != NA_OK)
        return st;
    size_t n = na_zip_count(z->in);
    z->m = calloc(n ? n : 1, sizeof *z->m);
    if (!z->m)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    size_t first = 0;
    for (size_t i = 0; st == NA_OK && i < n; i++) {
        z->n_m = i + 1;
        st = read_member(z, &z->m[i], i, first, err);
        if (st == NA_OK) {
            first += z->m[i].count;
            z->method = z->m[i].method == Z_DEFLATED ? Z_DEFLATED : z->method;
        }
    }
    if (st == NA_OK && first != z->base.n)
        st = na_err_set(err, NA_E_INTERNAL, "the archive's members hold %zu tensors, the "
                        "tensor list %zu", first, z->base.n);
    for (size_t i = 0; st == NA_OK && i < z->n_m; i++) {
        for (size_t k = z->m[i].first; k < z->m[i].first + z->m[i].count; k++)
            z->member_of[k] = i;
        st = plan_member(z, &z->m[i], err);
    }
    return st;
}

/* ---- writing ------------------------------------------------------------ */

static na_status_t close_open(npz_writer_t *z, na_err_t *err)
{
    if (!z->open)
        return NA_OK;
    z->open = 0;
    int r = zipCloseFileInZip(z->out);
    return r == ZIP_OK ? NA_OK : zerr(z, r, "closing", "", err);
}

static int open_entry(npz_writer_t *z, const npz_member_t *m, int method, int level, int raw)
{
    /* A name with bytes beyond ASCII is UTF-8 (numpy writes names with
     * Python's zipfile, which sets the flag then): general purpose bit 11
     * says so (APPNOTE 4.4.4, appendix D). Without it readers take the
     * name as CP437, and np.load's key 'ünï' became '├╝n├»'. */
    unsigned long flag = 0;
    for (const unsigned char *p = (const unsigned char *)m->name; *p; p++)
        if (*p >= 0x80)
            flag = 0x800;
    /* zip64 = 1 as numpy's force_zip64: the local header has room for
     * 64-bit sizes whatever the member's size turns out to be. */
    return zipOpenNewFileInZip4_64(z->out, m->name, &m->fi, NULL, 0, NULL, 0, NULL, method,
                                   level, raw, -MAX_WBITS, DEF_MEM_LEVEL,
                                   Z_DEFAULT_STRATEGY,
                                   NULL, 0, m->version, flag, 1);
}

/* The member's compressed bytes, CRC and sizes as in the input (read
 * through zip.c, na_zip_read_raw). The level only sets the output's
 * general purpose flag bits 1-2 (APPNOTE 4.4.4), which minizip derives
 * from it: the input's bits are kept by passing the level they stand for. */
static na_status_t copy_raw(npz_writer_t *z, const npz_member_t *m, na_err_t *err)
{
    const na_zip_entry_t *e = na_zip_entry(z->in, m->index);
    static const int level_of_bits[4] = {Z_DEFAULT_COMPRESSION, 9, 2, 1};
    int level = e->method == Z_DEFLATED ? level_of_bits[(e->flag >> 1) & 3] : 0;
    uint8_t *buf = malloc(NPZ_COPY_BUF);
    na_status_t st = buf ? NA_OK : na_err_set(err, NA_E_NOMEM, "out of memory");
    int w = st == NA_OK ? open_entry(z, m, e->method, level, 1) : ZIP_OK;
    if (w != ZIP_OK)
        st = zerr(z, w, "opening", m->name, err);
    for (uint64_t done = 0; st == NA_OK && done < e->csize;) {
        size_t k = e->csize - done < NPZ_COPY_BUF ? (size_t)(e->csize - done) : NPZ_COPY_BUF;
        st = na_zip_read_raw(z->in, m->index, done, buf, k, err);
        if (st == NA_OK && (w = zipWriteInFileInZip(z->out, buf, (unsigned)k)) != ZIP_OK)
            st = zerr(z, w, "writing", m->name, err);
        done += k;
    }
    free(buf);
    if (w == ZIP_OK && (w = zipCloseFileInZipRaw64(z->out, e->usize, e->crc)) != ZIP_OK &&
        st == NA_OK)
        st = zerr(z, w, "closing", m->name, err);
    return st;
}

/* A member planned by plan_rows: its new header, then the runs of rows
 * kept, read (inflated) from the input through zip.c and written
 * (deflated as the archive's other new members) through minizip. */
static na_status_t copy_rows(npz_writer_t *z, const npz_member_t *m, const na_wtensor_t *t,
                             na_err_t *err)
{
    int r = open_entry(z, m, z->method, Z_DEFAULT_COMPRESSION, 0);
    if (r != ZIP_OK)
        return zerr(z, r, "opening", m->name, err);
    z->open = 1;
    r = zipWriteInFileInZip(z->out, m->rowhead, (unsigned)m->rowhead_len);
    if (r != ZIP_OK)
        return zerr(z, r, "writing", m->name, err);
    uint64_t per = m->rowb ? NPZ_COPY_BUF / m->rowb : 0, kept = 0;
    per = per ? per : 1;
    uint8_t *buf = m->rowb ? malloc((size_t)(per * m->rowb)) : NULL;
    na_status_t st = buf || !m->rowb ? NA_OK : na_err_set(err, NA_E_NOMEM, "out of memory");
    for (uint64_t a = 0; st == NA_OK && m->rowb && a < t->in_rows;) {
        if (t->drop[a / 8] >> (a % 8) & 1) {
            a++;
            continue;
        }
        uint64_t b = a + 1; /* [a, b): rows kept, at most per */
        while (b < t->in_rows && b - a < per && !(t->drop[b / 8] >> (b % 8) & 1))
            b++;
        size_t n = (size_t)((b - a) * m->rowb);
        st = na_zip_read(z->in, m->index, m->data_at + a * m->rowb, buf, n, err);
        if (st == NA_OK && (r = zipWriteInFileInZip(z->out, buf, (unsigned)n)) != ZIP_OK)
            st = zerr(z, r, "writing", m->name, err);
        kept += b - a;
        a = b;
    }
    free(buf);
    if (st == NA_OK && m->rowb && kept != t->shape[0])
        st = na_err_set(err, NA_E_INTERNAL, "%s: %llu rows kept, %llu announced", t->name,
                        (unsigned long long)kept, (unsigned long long)t->shape[0]);
    return st;
}

static na_status_t npz_begin(na_writer_t *w, size_t i, na_err_t *err)
{
    npz_writer_t *z = (npz_writer_t *)w;
    na_status_t st = close_open(z, err);
    const npz_member_t *m = &z->m[z->member_of[i]];
    if (st != NA_OK || i != m->first)
        return st;
    if (m->raw)
        return copy_raw(z, m, err);
    if (m->rowhead)
        return copy_rows(z, m, &z->t[i], err);
    uint8_t head[NA_NPY_WHEADER_MAX];
    size_t hn;
    st = na_npy_header_build(&z->t[i], head, sizeof head, &hn, err);
    if (st != NA_OK)
        return st;
    int r = open_entry(z, m, z->method, Z_DEFAULT_COMPRESSION, 0);
    if (r != ZIP_OK)
        return zerr(z, r, "opening", m->name, err);
    z->open = 1;
    r = zipWriteInFileInZip(z->out, head, (unsigned)hn);
    return r == ZIP_OK ? NA_OK : zerr(z, r, "writing", m->name, err);
}

static na_status_t npz_data(na_writer_t *w, const void *buf, size_t len, na_err_t *err)
{
    npz_writer_t *z = (npz_writer_t *)w;
    const uint8_t *p = buf;
    while (len) { /* zipWriteInFileInZip takes an unsigned length */
        unsigned k = len > (1u << 30) ? (1u << 30) : (unsigned)len;
        int r = zipWriteInFileInZip(z->out, p, k);
        if (r != ZIP_OK)
            return zerr(z, r, "writing", z->m[z->member_of[w->cur]].name, err);
        p += k;
        len -= k;
    }
    return NA_OK;
}

static na_status_t npz_finish(na_writer_t *w, na_err_t *err)
{
    npz_writer_t *z = (npz_writer_t *)w;
    na_status_t st = close_open(z, err);
    if (st == NA_OK) {
        char *cm = na_zip_comment(z->in); /* kept, as for every member */
        int r = zipClose(z->out, cm); /* the central directory */
        free(cm);
        z->out = NULL;
        if (r != ZIP_OK)
            st = zerr(z, r, "closing the archive after", "", err);
    }
    return st == NA_OK ? na_writer_flush(w, err) : st;
}

static void npz_free(na_writer_t *w)
{
    npz_writer_t *z = (npz_writer_t *)w;
    if (!z)
        return;
    if (z->out) {
        z->io_st = NA_E_WRITE; /* abandoned: minizip frees, writes nothing */
        zipClose(z->out, NULL);
    }
    na_zip_close(z->in); /* NULL ok; names were the input entries' */
    for (size_t i = 0; z->m && i < z->n_m; i++)
        free(z->m[i].rowhead);
    free(z->m);
    free(z->member_of);
    free(z->t);
    na_writer_base_free(w);
    free(z);
}

static const struct na_writer_vtbl npz_wvtbl = {npz_begin, npz_finish, npz_free, npz_data,
                                                 NULL};

static na_status_t npz_wopen(int fd, const na_wopts_t *o, const na_wtensor_t *t, size_t n,
                             const na_wmeta_t *meta, size_t n_meta, na_writer_t **out,
                             na_err_t *err)
{
    (void)meta; /* .npz has no place for metadata (the change report has it) */
    (void)n_meta;
    npz_writer_t *z = calloc(1, sizeof *z);
    if (!z)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    z->base.v = &npz_wvtbl;
    na_status_t st = na_writer_base_init(&z->base, fd, t, n, err);
    z->base.copies = calloc(n ? n : 1, 1);
    z->member_of = calloc(n ? n : 1, sizeof *z->member_of);
    z->t = malloc((n ? n : 1) * sizeof *z->t);
    if (st == NA_OK && (!z->base.copies || !z->member_of || !z->t))
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    if (st == NA_OK) {
        memcpy(z->t, t, n * sizeof *t);
        st = list_members(z, o, err);
    }
    if (st == NA_OK) {
        zlib_filefunc64_def ff = {nw_open, nw_read, nw_write, nw_tell, nw_seek,
                                  nw_close, nw_error, z};
        z->out = zipOpen2_64("", APPEND_STATUS_CREATE, NULL, &ff);
        if (!z->out)
            st = z->io_st != NA_OK ? na_err_set(err, z->io_st, "%s", z->io_err.msg)
                                   : na_err_set(err, NA_E_NOMEM, "zip: cannot start the "
                                                "archive (out of memory)");
    }
    if (st != NA_OK) {
        npz_free(&z->base);
        return st;
    }
    *out = &z->base;
    return NA_OK;
}

const na_writer_format_t na_writer_npz = {"npz", npz_wopen};
