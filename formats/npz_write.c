/*
 * npz_write.c - the NumPy .npz writer of `nanaudit clean` (issue 4).
 *
 * Format: a zip archive (PKWARE APPNOTE.TXT) of NAME.npy members, as
 * numpy.savez (stored) and numpy.savez_compressed (deflated) write it
 * (numpy/lib/_npyio_impl.py, _savez: one zipfile member per array, opened
 * with force_zip64=True, deflated at zlib's default level). Written with
 * minizip's zip.h (zlib contrib/minizip, Debian libminizip-dev), the
 * library the reader (zip.c) uses.
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
 *  - An untouched member (every array in it copied; strings and other
 *    non-numeric members too) is copied byte for byte: its compressed bytes, CRC and sizes as they are in the input
 *    (minizip's raw mode), so nothing is re-compressed. Only when its
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
 * npy_write.c refuses such a .npy). Object arrays never reach a writer:
 * cli/clean.c refuses them as it does for .npy (a pickle is never read,
 * so nothing says the copy would be what the user expects to load).
 *
 * minizip writes through our I/O table onto the writer's buffer
 * (write.c: na_writer_put, so a full disk or RLIMIT_FSIZE gives its
 * one-line message); a seek flushes the buffer and moves the descriptor.
 * The input archive is opened by its path (na_wopts_t.input), read only,
 * for its member list, headers and raw copies.
 */
#include "npt.h"
#include "write.h"

#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, malloc, free */
#include <string.h>   /* strlen, strcmp, strncmp, memcpy */
#include <sys/stat.h> /* fstat */
#include <unistd.h>   /* lseek */
#include <unzip.h>    /* minizip: the input archive */
#include <zip.h>      /* minizip: the output archive */

#define NPZ_COPY_BUF (1u << 20)
#define NPZ_NAME_MAX 65535u /* the zip name length field is 16 bits */

typedef struct npz_member {
    char *name;            /* "x.npy", as in the input */
    size_t first, count;   /* its writer tensors [first, first + count) */
    unz64_file_pos pos;    /* in the input's central directory */
    int method;            /* 0 stored, Z_DEFLATED */
    int raw;               /* copied as its compressed bytes */
    zip_fileinfo fi;       /* date and attributes, kept */
    uLong version;         /* "version made by" */
} npz_member_t;

typedef struct npz_writer {
    na_writer_t base;
    unzFile in;
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

static uLong ZCALLBACK nw_write(voidpf opaque, voidpf stream, const void *buf, uLong size)
{
    npz_writer_t *z = stream;
    (void)opaque;
    if (z->io_st != NA_OK)
        return 0;
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

/* Name, method, header and place in the tensor list of the current
 * member of z->in. */
static na_status_t read_member(npz_writer_t *z, npz_member_t *m, size_t first, char *nbuf,
                               na_err_t *err)
{
    unz_file_info64 fi;
    int r = unzGetCurrentFileInfo64(z->in, &fi, nbuf, NPZ_NAME_MAX + 1, NULL, 0, NULL, 0);
    if (r == UNZ_OK)
        r = unzGetFilePos64(z->in, &m->pos);
    if (r != UNZ_OK || !(m->name = strdup(nbuf)))
        return na_err_set(err, r != UNZ_OK ? NA_E_IO : NA_E_NOMEM, "re-reading the input "
                          "archive's directory failed (minizip %d)", r);
    m->method = (int)fi.compression_method;
    m->version = fi.version;
    m->fi.dosDate = fi.dosDate;
    m->fi.internal_fa = fi.internal_fa;
    m->fi.external_fa = fi.external_fa;
    m->first = first;
    uint8_t head[NA_NPY_MAX_HEADER + 12];
    size_t hn = fi.uncompressed_size < sizeof head ? (size_t)fi.uncompressed_size : sizeof head;
    r = unzOpenCurrentFile(z->in);
    int got = r == UNZ_OK ? unzReadCurrentFile(z->in, head, (unsigned)hn) : r;
    if (r == UNZ_OK)
        unzCloseCurrentFile(z->in); /* CRC not checked: read in part */
    if (got < 0 || (size_t)got != hn)
        return na_err_set(err, NA_E_IO, "member '%.200s' of the input could not be re-read "
                          "(minizip %d)", m->name, got);
    na_npy_header_t h;
    memset(&h, 0, sizeof h);
    na_status_t st = na_npy_parse_header(head, hn, &h, err);
    if (st == NA_OK) {
        m->count = member_tensors(&h);
        /* one tensor of a plain numeric array: "x" for "x.npy" */
        m->raw = !(h.n_fields == 1 && !h.fields[0].name[0] && m->count == 1 &&
                   h.fields[0].kind == NA_NPY_NUMERIC);
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
    stem -= stem >= 4 ? 4 : 0; /* ".npy" (na_zip_classify) */
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
    m->raw = !cleaned && (m->raw || m->method == z->method);
    for (size_t k = m->first; k < m->first + m->count && m->raw; k++) {
        z->base.copies[k] = 1;
        z->base.bytes[k] = 0; /* copied here, not sent (na_writer_wants) */
    }
    return NA_OK;
}

static na_status_t list_members(npz_writer_t *z, const na_wopts_t *o, na_err_t *err)
{
    z->in = unzOpen64(o->input);
    unz_global_info64 gi;
    if (!z->in || unzGetGlobalInfo64(z->in, &gi) != UNZ_OK)
        return na_err_set(err, NA_E_IO, "cannot re-open the input archive '%s'", o->input);
    z->m = calloc(gi.number_entry ? (size_t)gi.number_entry : 1, sizeof *z->m);
    char *nbuf = malloc(NPZ_NAME_MAX + 1);
    na_status_t st = z->m && nbuf ? NA_OK : na_err_set(err, NA_E_NOMEM, "out of memory");
    size_t first = 0;
    int r = gi.number_entry ? unzGoToFirstFile(z->in) : UNZ_OK;
    for (uint64_t i = 0; st == NA_OK && i < gi.number_entry; i++) {
        if (r != UNZ_OK)
            st = na_err_set(err, NA_E_IO, "re-reading the input archive's directory failed "
                            "(minizip %d)", r);
        z->n_m = (size_t)i + (st == NA_OK); /* listed names are freed */
        if (st == NA_OK)
            st = read_member(z, &z->m[i], first, nbuf, err);
        if (st == NA_OK) {
            first += z->m[i].count;
            z->method = z->m[i].method == Z_DEFLATED ? Z_DEFLATED : z->method;
            r = unzGoToNextFile(z->in);
        }
    }
    free(nbuf);
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
    /* zip64 = 1 as numpy's force_zip64: the local header has room for
     * 64-bit sizes whatever the member's size turns out to be. */
    return zipOpenNewFileInZip4_64(z->out, m->name, &m->fi, NULL, 0, NULL, 0, NULL, method,
                                   level, raw, -MAX_WBITS, DEF_MEM_LEVEL,
                                   Z_DEFAULT_STRATEGY,
                                   NULL, 0, m->version, 0, 1);
}

/* The member's compressed bytes, CRC and sizes as in the input. */
static na_status_t copy_raw(npz_writer_t *z, const npz_member_t *m, na_err_t *err)
{
    int method = 0, level = 0;
    unz_file_info64 fi;
    int r = unzGoToFilePos64(z->in, &m->pos);
    if (r == UNZ_OK)
        r = unzGetCurrentFileInfo64(z->in, &fi, NULL, 0, NULL, 0, NULL, 0);
    if (r == UNZ_OK)
        r = unzOpenCurrentFile2(z->in, &method, &level, 1);
    if (r != UNZ_OK)
        return na_err_set(err, NA_E_IO, "member '%.200s' of the input could not be re-read "
                          "(minizip %d)", m->name, r);
    uint8_t *buf = malloc(NPZ_COPY_BUF);
    na_status_t st = buf ? NA_OK : na_err_set(err, NA_E_NOMEM, "out of memory");
    int w = st == NA_OK ? open_entry(z, m, method, level, 1) : ZIP_OK;
    if (w != ZIP_OK)
        st = zerr(z, w, "opening", m->name, err);
    uint64_t done = 0;
    while (st == NA_OK) {
        int k = unzReadCurrentFile(z->in, buf, NPZ_COPY_BUF);
        if (k < 0)
            st = na_err_set(err, NA_E_IO, "member '%.200s' of the input could not be "
                            "re-read (minizip %d)", m->name, k);
        if (k <= 0)
            break;
        done += (uint64_t)k;
        if ((w = zipWriteInFileInZip(z->out, buf, (unsigned)k)) != ZIP_OK)
            st = zerr(z, w, "writing", m->name, err);
    }
    unzCloseCurrentFile(z->in);
    free(buf);
    if (st == NA_OK && done != fi.compressed_size)
        st = na_err_set(err, NA_E_IO, "member '%.200s' of the input ended after %llu of its "
                        "%llu bytes", m->name, (unsigned long long)done,
                        (unsigned long long)fi.compressed_size);
    if (w == ZIP_OK && (w = zipCloseFileInZipRaw64(z->out, fi.uncompressed_size,
                                                   fi.crc)) != ZIP_OK && st == NA_OK)
        st = zerr(z, w, "closing", m->name, err);
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
        int r = zipClose(z->out, NULL); /* the central directory */
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
    if (z->in)
        unzClose(z->in);
    for (size_t i = 0; i < z->n_m; i++)
        free(z->m[i].name);
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
