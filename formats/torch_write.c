/*
 * torch_write.c - the PyTorch checkpoint writer of `nanaudit clean`
 * (issue 4: clean writes the format it reads).
 *
 * A checkpoint's tensors are described by its pickle (data.pkl: dtype,
 * shape, strides, storage key and offset; torch.c) and their bytes live
 * in storages (zip member DIR/data/KEY, stored, or after the pickles of
 * a legacy file). clean changes values, never dtypes or shapes of a
 * checkpoint, so the pickle can stay as it is, byte for byte: the output
 * is a copy of the input file in which the bytes of each cleaned tensor
 * are replaced where they lie, and, for the zip format, the CRC-32 of
 * every storage member that changed is computed again (zlib's crc32) and
 * written into its local header, its data descriptor when it has one,
 * and its central header (PKWARE APPNOTE.TXT 4.3.7, 4.3.9, 4.3.12; CRC
 * field offsets 14, 4 after an optional signature, 16). Member order,
 * names, alignment padding, dates, the serialization id and every
 * untouched byte are the input's; torch.load reads the copy as it reads
 * the input (tests/cli/clean_torch.sh).
 *
 * Refused at open, one line each (NA_E_UNSUPPORTED, exit 3; the same in
 * --dry-run, where o->path is NULL and nothing is copied):
 *  - a cleaned tensor whose dtype or shape would change (--out-dtype,
 *    integers with --normalize, samples dropped with --samples): the
 *    pickle holds them, and it is never rewritten;
 *  - a cleaned tensor that is not a C-contiguous view of bytes stored as
 *    they are (a transposed view, a re-compressed storage, a complex
 *    part), or of a big-endian checkpoint;
 *  - a cleaned tensor whose bytes overlap those of another tensor, unless
 *    that one is cleaned too and is the same view (tied weights: both are
 *    computed from the same values with the same steps, so they write
 *    the same bytes). Writing one would silently change the other.
 *    "The same view" includes the same rows and statistics (width,
 *    nfeat): with --samples, x and x.view(-1) get other features.
 *  - a cleaned tensor whose storage member fails its CRC-32 check in the
 *    input: the new CRC-32 would hide the damage (check_input_crc).
 * The input's metadata has no place to go without rewriting the pickle:
 * the change report carries the provenance, as for raw and .npz output.
 */
#include "npt.h"
#include "write.h"

#include <errno.h>  /* errno, EINTR */
#include <stdlib.h> /* calloc, free, malloc, qsort */
#include <string.h> /* memcmp, strerror */
#include <unistd.h> /* lseek, pread, pwrite */
#include <zlib.h>   /* crc32_z */

#define ZIP_LOCAL_SIG 0x04034b50u /* APPNOTE 4.3.7 */
#define ZIP_CEN_SIG 0x02014b50u   /* APPNOTE 4.3.12 */
#define ZIP_DD_SIG 0x08074b50u    /* APPNOTE 4.3.9.3: optional */

typedef struct torch_writer {
    na_writer_t base;
    uint64_t *at;                   /* per tensor: file offset of its bytes */
    const na_zip_entry_t **changed; /* members whose bytes change, once each */
    size_t n_changed;
} torch_writer_t;

/* A tensor's bytes in the file, for the overlap check. */
typedef struct span {
    uint64_t lo, hi;
    size_t i;    /* writer tensor */
    int cleaned;
} span_t;

static void tw_free(na_writer_t *w)
{
    torch_writer_t *tw = (torch_writer_t *)w;
    na_writer_base_free(w);
    free(tw->at);
    free(tw->changed);
    free(tw);
}

/* A cleaned tensor's bytes go where the input has them. */
static na_status_t tw_begin(na_writer_t *w, size_t i, na_err_t *err)
{
    torch_writer_t *tw = (torch_writer_t *)w;
    if (w->copies[i])
        return NA_OK;
    na_status_t st = na_writer_flush(w, err);
    if (st == NA_OK && lseek(w->fd, (off_t)tw->at[i], SEEK_SET) < 0)
        st = na_err_set(err, NA_E_WRITE, "seek: %s", strerror(errno));
    return st;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static na_status_t pread_all(int fd, uint64_t off, void *buf, size_t len, na_err_t *err)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t r = pread(fd, p, len, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return na_err_set(err, NA_E_WRITE, "reading the copy back: %s",
                              r < 0 ? strerror(errno) : "unexpected end of file");
        p += r;
        off += (uint64_t)r;
        len -= (size_t)r;
    }
    return NA_OK;
}

/* Readers of bytes [off, off+len) for member_crc: of the copy (the
 * writer's descriptor, src an int *) and of the input (src the input,
 * through its own descriptor: na_torch_pread). */
typedef na_status_t (*read_fn)(const void *src, uint64_t off, size_t len, void *buf,
                               na_err_t *err);

static na_status_t read_copy(const void *src, uint64_t off, size_t len, void *buf,
                             na_err_t *err)
{
    return pread_all(*(const int *)src, off, buf, len, err);
}

static na_status_t read_input(const void *src, uint64_t off, size_t len, void *buf,
                              na_err_t *err)
{
    return na_torch_pread(src, off, len, buf, err);
}

/* CRC-32 (zlib) of member m's data as rd reads it, in pieces of NA_WBUF
 * bytes through buf. */
static na_status_t member_crc(read_fn rd, const void *src, const na_zip_entry_t *m,
                              uint8_t *buf, uint32_t *crc, na_err_t *err)
{
    uLong c = crc32_z(0L, Z_NULL, 0);
    na_status_t st = NA_OK;
    for (uint64_t off = 0; off < m->usize && st == NA_OK;) {
        size_t len = m->usize - off < NA_WBUF ? (size_t)(m->usize - off) : NA_WBUF;
        st = rd(src, m->data_pos + off, len, buf, err);
        c = crc32_z(c, buf, len);
        off += len;
    }
    *crc = (uint32_t)c;
    return st;
}

/* The 4 bytes of crc at off, where the input has a CRC-32 field (sig:
 * the record's signature at rec, checked first; 0: none). */
static na_status_t put_crc(int fd, uint64_t rec, uint32_t sig, uint64_t off, uint32_t crc,
                           const char *member, na_err_t *err)
{
    uint8_t b[4];
    na_status_t st = pread_all(fd, rec, b, 4, err);
    if (st == NA_OK && sig && get32(b) != sig)
        return na_err_set(err, NA_E_INTERNAL, "zip member '%.200s': no header at %llu",
                          member, (unsigned long long)rec);
    for (int k = 0; k < 4; k++)
        b[k] = (uint8_t)(crc >> (8 * k));
    while (st == NA_OK) {
        ssize_t r = pwrite(fd, b, 4, (off_t)off);
        if (r == 4)
            break;
        if (r < 0 && errno == EINTR)
            continue;
        st = na_err_set(err, NA_E_WRITE, "write error: %s",
                        r < 0 ? strerror(errno) : "short write");
    }
    return st;
}

/* The new CRC-32 of member m, computed over its bytes in the copy, into
 * each of its headers. */
static na_status_t fix_crc(torch_writer_t *tw, const na_zip_entry_t *m, na_err_t *err)
{
    int fd = tw->base.fd;
    uint32_t c = 0;
    na_status_t st = member_crc(read_copy, &fd, m, tw->base.buf, &c, err);
    uint8_t flag[2] = {0, 0};
    if (st == NA_OK)
        st = pread_all(fd, m->local_pos + 6, flag, 2, err);
    int dd = (flag[0] & 8) != 0; /* bit 3: CRC and sizes after the data */
    uint8_t lcrc[4] = {0, 0, 0, 0};
    if (st == NA_OK)
        st = pread_all(fd, m->local_pos + 14, lcrc, 4, err);
    /* with bit 3 the local field may be 0 (APPNOTE 4.4.4): left so */
    if (st == NA_OK && (!dd || get32(lcrc) != 0))
        st = put_crc(fd, m->local_pos, ZIP_LOCAL_SIG, m->local_pos + 14, c, m->name, err);
    if (st == NA_OK && dd) {
        uint64_t d = m->data_pos + m->csize;
        uint8_t b[4];
        st = pread_all(fd, d, b, 4, err);
        if (st == NA_OK)
            st = put_crc(fd, d, 0, get32(b) == ZIP_DD_SIG ? d + 4 : d, c, m->name, err);
    }
    if (st == NA_OK)
        st = put_crc(fd, m->central_pos, ZIP_CEN_SIG, m->central_pos + 16, c, m->name, err);
    return st;
}

static na_status_t tw_finish(na_writer_t *w, na_err_t *err)
{
    torch_writer_t *tw = (torch_writer_t *)w;
    na_status_t st = NA_OK;
    for (size_t k = 0; k < tw->n_changed && st == NA_OK; k++)
        st = fix_crc(tw, tw->changed[k], err);
    return st;
}

static const struct na_writer_vtbl torch_wvtbl = {tw_begin, tw_finish, tw_free, NULL, NULL};

static int span_cmp(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    if (x->lo != y->lo)
        return (x->lo > y->lo) - (x->lo < y->lo);
    return (x->hi > y->hi) - (x->hi < y->hi);
}

/* Every cleaned tensor's bytes are its own, or those of the same view of
 * another cleaned tensor (tied weights). Within each run of overlapping
 * spans (sorted), a conflict is a cleaned span beside any span that is
 * not the same bytes; the two named overlap each other. */
static na_status_t check_overlaps(span_t *sp, size_t ns, const na_wtensor_t *t, na_err_t *err)
{
    qsort(sp, ns, sizeof *sp, span_cmp);
    for (size_t a = 0; a < ns;) {
        size_t b = a + 1;
        uint64_t hi = sp[a].hi;
        while (b < ns && sp[b].lo < hi) {
            hi = sp[b].hi > hi ? sp[b].hi : hi;
            b++;
        }
        for (size_t x = a; x < b; x++)
            for (size_t y = a; y < b; y++) {
                const span_t *p = &sp[x], *q = &sp[y];
                if (x == y || !p->cleaned || q->hi <= p->lo || p->hi <= q->lo)
                    continue;
                /* the same values computed the same way: equal rows
                 * and statistics (with --samples x and x.view(-1) of
                 * the same bytes have other features) */
                if (q->cleaned && q->lo == p->lo && q->hi == p->hi &&
                    t[q->i].dtype == t[p->i].dtype && t[q->i].width == t[p->i].width &&
                    t[q->i].nfeat == t[p->i].nfeat)
                    continue;
                return na_err_set(err, NA_E_UNSUPPORTED,
                                  "%s: shares storage bytes with '%s'%s: writing one would "
                                  "change the other; --exclude both copies them unchanged",
                                  t[p->i].name, t[q->i].name,
                                  q->cleaned ? " (another view of them)"
                                             : ", which is not cleaned");
            }
        a = b;
    }
    return NA_OK;
}

/* Can tensor i (cleaned) be written in place? Its location in *at. */
static na_status_t check_cleaned(const na_input_t *in, const na_wtensor_t *w,
                                 const na_torch_loc_t *loc, na_err_t *err)
{
    na_tensor_t t;
    na_status_t st = na_input_tensor((na_input_t *)in, w->index, &t, err);
    if (st != NA_OK)
        return st;
    if (t.dtype != w->dtype)
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "%s: would become %s, but a PyTorch checkpoint's pickle names each "
                          "tensor's dtype (%s) and clean writes it back unchanged: keep the "
                          "dtype (no --out-dtype; integer tensors are not normalized) or "
                          "--exclude it", w->name, na_dtype_name(w->dtype),
                          na_dtype_name(t.dtype));
    int same = t.ndim == w->ndim;
    for (int d = 0; same && d < t.ndim; d++)
        same = t.shape[d] == w->shape[d];
    if (!same)
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "%s: dropping samples changes its shape, which a PyTorch "
                          "checkpoint's pickle holds and clean writes back unchanged: use "
                          "--nonfinite zero|mean|value=X and --outliers clip|nan|mean "
                          "instead", w->name);
    if (!loc->direct && t.elements != 0)
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "%s: %s, which clean cannot write back in place; --exclude copies "
                          "it unchanged", w->name, loc->why ? loc->why : "not stored as is");
    if (loc->order == NA_BIG && na_dtype_bits(t.dtype) > 8)
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "%s: a big-endian checkpoint (byteorder \"big\"), which clean "
                          "cannot write back; --exclude copies it unchanged", w->name);
    return NA_OK;
}

/* Copy the input file to fd through the writer's buffer (its errors: a
 * full disk, RLIMIT_FSIZE). From the descriptor the reader holds, not by
 * path: a checkpoint saved again under the input's name while clean ran
 * would otherwise be copied, and the cleaned bytes and CRC-32 fields
 * written at the old file's offsets into it (cli/clean.c then reports
 * the input as changed). */
static na_status_t copy_input(na_writer_t *w, const na_input_t *in, na_err_t *err)
{
    uint8_t *buf = malloc(NA_WBUF);
    na_status_t st = buf ? NA_OK : na_err_set(err, NA_E_NOMEM, "out of memory");
    for (uint64_t off = 0; st == NA_OK && off < in->file_size;) {
        size_t len = in->file_size - off < NA_WBUF ? (size_t)(in->file_size - off) : NA_WBUF;
        st = na_torch_pread(in, off, len, buf, err);
        if (st == NA_OK)
            st = na_writer_put(w, buf, len, err);
        off += len;
    }
    if (st == NA_OK)
        st = na_writer_flush(w, err);
    free(buf);
    return st;
}

/* The input's bytes of member m against the CRC-32 its central header
 * holds. The reader does not check stored members (zip.c: an extra pass),
 * but a member clean rewrites gets a new, valid CRC-32: damage in the
 * input (a flipped bit, a member patched without its CRC) would be
 * hidden, so it is refused here (tensor: the first one cleaned in m). */
static na_status_t check_input_crc(const na_input_t *in, const na_zip_entry_t *m,
                                   const char *tensor, uint8_t *buf, na_err_t *err)
{
    uint32_t crc = 0;
    na_status_t st = member_crc(read_input, in, m, buf, &crc, err);
    if (st == NA_OK && crc != m->crc)
        st = na_err_set(err, NA_E_UNSUPPORTED,
                        "%s: its storage member '%.200s' fails its CRC-32 check (stored "
                        "%08x, bytes give %08x): the input is damaged, and the copy would "
                        "get a valid CRC-32 over it; --exclude copies it unchanged",
                        tensor, m->name, (unsigned)m->crc, (unsigned)crc);
    return st;
}

static na_status_t tw_open(int fd, const na_wopts_t *o, const na_wtensor_t *t, size_t n,
                           const na_wmeta_t *meta, size_t n_meta, na_writer_t **out,
                           na_err_t *err)
{
    (void)meta; /* no place for it without rewriting the pickle (above) */
    (void)n_meta;
    torch_writer_t *tw = calloc(1, sizeof *tw);
    if (!tw)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    na_writer_t *w = &tw->base;
    w->v = &torch_wvtbl;
    na_status_t st = na_writer_base_init(w, fd, t, n, err);
    size_t cap = n ? n : 1;
    tw->at = calloc(cap, sizeof *tw->at);
    tw->changed = calloc(cap, sizeof *tw->changed);
    w->copies = calloc(cap, 1);
    span_t *sp = calloc(cap, sizeof *sp);
    size_t ns = 0;
    if (st == NA_OK && (!tw->at || !tw->changed || !w->copies || !sp))
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    if (st == NA_OK && o->in == NULL)
        st = na_err_set(err, NA_E_INTERNAL, "the PyTorch writer needs the open input");
    for (size_t i = 0; st == NA_OK && i < n; i++) {
        na_torch_loc_t loc;
        na_err_t lerr;
        w->copies[i] = (uint8_t)(t[i].copied != 0);
        if (t[i].copied) {
            w->bytes[i] = 0; /* its bytes are the copy's already */
            /* a tensor the reader cannot decode has no known span */
            if (na_torch_locate(o->in, t[i].index, &loc, &lerr) != NA_OK)
                continue;
        } else {
            st = na_torch_locate(o->in, t[i].index, &loc, err);
            if (st == NA_OK)
                st = check_cleaned(o->in, &t[i], &loc, err);
            if (st != NA_OK)
                break;
            tw->at[i] = loc.lo;
            int seen = loc.member == NULL || loc.lo == loc.hi;
            for (size_t k = 0; k < tw->n_changed && !seen; k++)
                seen = tw->changed[k] == loc.member;
            if (!seen) {
                tw->changed[tw->n_changed++] = loc.member;
                st = check_input_crc(o->in, loc.member, t[i].name, w->buf, err);
                if (st != NA_OK)
                    break;
            }
        }
        if (loc.lo < loc.hi)
            sp[ns++] = (span_t){loc.lo, loc.hi, i, !t[i].copied};
    }
    if (st == NA_OK)
        st = check_overlaps(sp, ns, t, err);
    free(sp);
    if (st == NA_OK && o->path != NULL) /* not a --dry-run check */
        st = copy_input(w, o->in, err);
    if (st != NA_OK) {
        tw_free(w);
        return st;
    }
    *out = w;
    return NA_OK;
}

const na_writer_format_t na_writer_torch = {"pytorch", tw_open};
