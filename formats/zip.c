/*
 * zip.c - zip archives (.npz, torch.save checkpoints) through minizip.
 *
 * Why minizip (zlib's contrib/minizip, Debian libminizip-dev): it hands out
 * a stored member's data position (unzGetCurrentFileZStreamPos64), so the
 * bytes of an uncompressed tensor are read through the same mmap windows
 * as a safetensors file, with no copy; libzip 1.7 has no such call. It
 * reads zip64 archives (torch writes zip64 for files over 4 GiB).
 *
 * minizip reads through our own I/O table (pread on the descriptor the
 * prober opened), never by reopening the path: the file audited is the
 * file that was sniffed. Deflated members are inflated by minizip as a
 * stream, one member open at a time; a read before the current position
 * restarts the member (the engine's second pass does that once), and a
 * member read to its end has its CRC-32 checked. Stored members read
 * through the mapping are not CRC-checked (that would cost a full extra
 * pass; safetensors has no checksum either): their size and position are
 * checked against the file instead.
 *
 * Format: PKWARE APPNOTE.TXT (https://pkware.cachefly.net/webdocs/casestudies/APPNOTE.TXT).
 */
#include "npt.h"

#include <errno.h>  /* errno, EINTR */
#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* calloc, free, getenv, mkstemp */
#include <string.h> /* strcmp, strdup, strerror */
#include <unistd.h> /* pread, close, dup, unlink, write */
#include <unzip.h>  /* minizip */

#define ZIP_NAME_MAX 65535u  /* the name length field is 16 bits */
#define ZIP_MAX_MEMBERS 10000000u

typedef struct zio {        /* minizip's stream: our descriptor + position */
    int fd;
    uint64_t size, pos;
    int error;
} zio_t;

struct na_zip {
    zio_t io;
    unzFile uf;
    size_t n;
    na_zip_entry_t *e;
    unz64_file_pos *pos;    /* central-directory position of each member */
    size_t open_member;     /* member open for reading, or SIZE_MAX */
    uint64_t open_at;       /* uncompressed bytes already read from it */
    uint8_t *skip;          /* discard buffer for forward skips */
};

/* ---- minizip I/O table over a descriptor ----------------------------- */

static voidpf ZCALLBACK zio_open(voidpf opaque, const void *filename, int mode)
{
    return opaque; /* the descriptor is open already */
}

static uLong ZCALLBACK zio_read(voidpf opaque, voidpf stream, void *buf, uLong size)
{
    zio_t *z = stream;
    uLong done = 0;
    while (done < size && z->pos < z->size) {
        ssize_t r = pread(z->fd, (char *)buf + done, size - done, (off_t)z->pos);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            z->error = r < 0;
            break;
        }
        done += (uLong)r;
        z->pos += (uint64_t)r;
    }
    return done;
}

static uLong ZCALLBACK zio_write(voidpf opaque, voidpf stream, const void *buf, uLong size)
{
    return 0; /* read-only */
}

static ZPOS64_T ZCALLBACK zio_tell(voidpf opaque, voidpf stream)
{
    return ((zio_t *)stream)->pos;
}

static long ZCALLBACK zio_seek(voidpf opaque, voidpf stream, ZPOS64_T off, int origin)
{
    zio_t *z = stream;
    uint64_t base = origin == ZLIB_FILEFUNC_SEEK_CUR ? z->pos
                    : origin == ZLIB_FILEFUNC_SEEK_END ? z->size
                                                       : 0;
    /* minizip only seeks forward from its base (SEEK_END with 0) */
    if (off > UINT64_MAX - base || base + off > z->size)
        return -1;
    z->pos = base + off;
    return 0;
}

static int ZCALLBACK zio_close(voidpf opaque, voidpf stream) { return 0; }

static int ZCALLBACK zio_error(voidpf opaque, voidpf stream)
{
    return ((zio_t *)stream)->error;
}

/* ---- open / list ------------------------------------------------------ */

static na_status_t zfail(const char *what, int code, na_err_t *err)
{
    const char *why = code == UNZ_BADZIPFILE ? "bad zip structure"
                      : code == UNZ_CRCERROR ? "CRC mismatch"
                      : code == UNZ_ERRNO    ? "read error"
                      : code == UNZ_INTERNALERROR ? "internal error"
                      : code == Z_DATA_ERROR ? "corrupt deflate data"
                      : code == Z_MEM_ERROR  ? "out of memory"
                                             : "error";
    return na_err_set(err, code == Z_MEM_ERROR ? NA_E_NOMEM : NA_E_FORMAT, "zip: %s: %s (%d)",
                      what, why, code);
}

/* nbuf: ZIP_NAME_MAX + 1 bytes of scratch; each name keeps only its own
 * length (a hostile archive of tiny members must not cost 64 KiB each). */
static na_status_t list_member(na_zip_t *z, size_t i, char *nbuf, na_err_t *err)
{
    unz_file_info64 fi;
    int r = unzGetCurrentFileInfo64(z->uf, &fi, nbuf, ZIP_NAME_MAX + 1, NULL, 0, NULL, 0);
    if (r == UNZ_OK)
        r = unzGetFilePos64(z->uf, &z->pos[i]);
    if (r != UNZ_OK)
        return zfail("central directory", r, err);
    nbuf[ZIP_NAME_MAX] = '\0';
    char *name = strdup(nbuf);
    if (name == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    na_zip_entry_t *e = &z->e[i];
    e->name = name;
    e->csize = fi.compressed_size;
    e->usize = fi.uncompressed_size;
    e->method = (int)fi.compression_method;
    e->encrypted = (fi.flag & 1) != 0;
    e->data_pos = UINT64_MAX;
    if (e->method == 0 && !e->encrypted) {
        /* The local header's name and extra lengths may differ from the
         * central ones; minizip reads the local header on open. */
        r = unzOpenCurrentFile(z->uf);
        if (r != UNZ_OK)
            return zfail(name, r, err);
        e->data_pos = unzGetCurrentFileZStreamPos64(z->uf);
        unzCloseCurrentFile(z->uf);
        if (e->data_pos > z->io.size || e->usize > z->io.size - e->data_pos)
            return na_err_set(err, NA_E_FORMAT, "zip: member '%.200s' (%llu bytes at offset "
                              "%llu) runs past the end of the file (%llu bytes)", name,
                              (unsigned long long)e->usize, (unsigned long long)e->data_pos,
                              (unsigned long long)z->io.size);
        if (e->csize != e->usize)
            return na_err_set(err, NA_E_FORMAT, "zip: stored member '%.200s' has compressed "
                              "size %llu but size %llu", name, (unsigned long long)e->csize,
                              (unsigned long long)e->usize);
    }
    return NA_OK;
}

na_status_t na_zip_open(int fd, uint64_t size, na_zip_t **out, na_err_t *err)
{
    *out = NULL;
    na_zip_t *z = calloc(1, sizeof *z);
    if (z == NULL) {
        close(fd);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    z->io = (zio_t){fd, size, 0, 0};
    z->open_member = SIZE_MAX;
    *out = z;
    zlib_filefunc64_def ff = {zio_open, zio_read, zio_write, zio_tell, zio_seek,
                              zio_close, zio_error, &z->io};
    z->uf = unzOpen2_64("", &ff);
    if (z->uf == NULL)
        return na_err_set(err, NA_E_FORMAT, "not a readable zip archive (no valid end of "
                          "central directory record)");
    unz_global_info64 gi;
    int r = unzGetGlobalInfo64(z->uf, &gi);
    if (r != UNZ_OK)
        return zfail("central directory", r, err);
    if (gi.number_entry > ZIP_MAX_MEMBERS || gi.number_entry > size / 22)
        return na_err_set(err, NA_E_FORMAT, "zip: %llu members cannot fit in a file of %llu "
                          "bytes", (unsigned long long)gi.number_entry,
                          (unsigned long long)size);
    size_t n = (size_t)gi.number_entry;
    z->e = calloc(n ? n : 1, sizeof *z->e);
    z->pos = calloc(n ? n : 1, sizeof *z->pos);
    if (z->e == NULL || z->pos == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    char *nbuf = malloc(ZIP_NAME_MAX + 1);
    if (nbuf == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    r = n ? unzGoToFirstFile(z->uf) : UNZ_OK;
    na_status_t st = NA_OK;
    for (size_t i = 0; i < n && st == NA_OK; i++) {
        if (r != UNZ_OK) {
            st = zfail("central directory", r, err);
            break;
        }
        z->n = i + 1; /* counted for close even when listing fails */
        st = list_member(z, i, nbuf, err);
        r = unzGoToNextFile(z->uf);
    }
    free(nbuf);
    return st;
}

size_t na_zip_count(const na_zip_t *z) { return z->n; }

const na_zip_entry_t *na_zip_entry(const na_zip_t *z, size_t i)
{
    return i < z->n ? &z->e[i] : NULL;
}

size_t na_zip_find(const na_zip_t *z, const char *name)
{
    for (size_t i = 0; i < z->n; i++)
        if (z->e[i].name != NULL && strcmp(z->e[i].name, name) == 0)
            return i;
    return SIZE_MAX;
}

int na_zip_dup_fd(const na_zip_t *z) { return dup(z->io.fd); }

/* ---- reading ----------------------------------------------------------- */

static void close_member(na_zip_t *z)
{
    if (z->open_member != SIZE_MAX)
        unzCloseCurrentFile(z->uf);
    z->open_member = SIZE_MAX;
}

static na_status_t open_member(na_zip_t *z, size_t i, na_err_t *err)
{
    const na_zip_entry_t *e = &z->e[i];
    close_member(z);
    if (e->encrypted)
        return na_err_set(err, NA_E_UNSUPPORTED, "zip: member '%.200s' is encrypted", e->name);
    if (e->method != 0 && e->method != Z_DEFLATED)
        return na_err_set(err, NA_E_UNSUPPORTED, "zip: member '%.200s' uses compression "
                          "method %d (only stored and deflated are supported)", e->name,
                          e->method);
    int r = unzGoToFilePos64(z->uf, &z->pos[i]);
    if (r == UNZ_OK)
        r = unzOpenCurrentFile(z->uf);
    if (r != UNZ_OK)
        return zfail(e->name, r, err);
    z->open_member = i;
    z->open_at = 0;
    return NA_OK;
}

/* Read exactly len bytes from the open member (fewer: truncated). */
static na_status_t pull(na_zip_t *z, uint8_t *dst, size_t len, na_err_t *err)
{
    const na_zip_entry_t *e = &z->e[z->open_member];
    while (len > 0) {
        unsigned step = len > (1u << 30) ? (1u << 30) : (unsigned)len;
        int r = unzReadCurrentFile(z->uf, dst, step);
        if (r < 0) {
            close_member(z);
            return zfail(e->name, r, err);
        }
        if (r == 0) {
            close_member(z);
            return na_err_set(err, NA_E_FORMAT, "zip: member '%.200s' ended after %llu "
                              "bytes (truncated or corrupt)", e->name,
                              (unsigned long long)z->open_at);
        }
        dst += r;
        len -= (size_t)r;
        z->open_at += (uint64_t)r;
    }
    if (z->open_at == e->usize) {
        /* The whole member was read: minizip now checks its CRC-32. */
        int r = unzCloseCurrentFile(z->uf);
        z->open_member = SIZE_MAX;
        if (r != UNZ_OK)
            return zfail(e->name, r, err);
    }
    return NA_OK;
}

na_status_t na_zip_read(na_zip_t *z, size_t i, uint64_t off, void *buf, size_t len,
                        na_err_t *err)
{
    if (i >= z->n)
        return na_err_set(err, NA_E_INTERNAL, "zip member %zu out of range", i);
    const na_zip_entry_t *e = &z->e[i];
    if (off > e->usize || len > e->usize - off)
        return na_err_set(err, NA_E_FORMAT, "zip: read of %zu bytes at %llu is past the end "
                          "of member '%.200s' (%llu bytes)", len, (unsigned long long)off,
                          e->name, (unsigned long long)e->usize);
    if (len == 0)
        return NA_OK;
    na_status_t st = NA_OK;
    if (z->open_member != i || z->open_at > off)
        st = open_member(z, i, err);
    if (st == NA_OK && z->skip == NULL && (z->skip = malloc(1u << 20)) == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    while (st == NA_OK && z->open_at < off) {
        uint64_t left = off - z->open_at;
        st = pull(z, z->skip, left < (1u << 20) ? (size_t)left : (1u << 20), err);
    }
    return st == NA_OK ? pull(z, buf, len, err) : st;
}

na_status_t na_zip_read_all(na_zip_t *z, size_t i, uint64_t cap, uint8_t **buf, size_t *len,
                            na_err_t *err)
{
    *buf = NULL;
    *len = 0;
    const na_zip_entry_t *e = &z->e[i];
    if (e->usize > cap)
        return na_err_set(err, NA_E_FORMAT, "zip: member '%.200s' is %llu bytes, more than the "
                          "limit of %llu", e->name, (unsigned long long)e->usize,
                          (unsigned long long)cap);
    uint8_t *b = malloc(e->usize ? (size_t)e->usize : 1);
    if (b == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory (%llu bytes)",
                          (unsigned long long)e->usize);
    na_status_t st = na_zip_read(z, i, 0, b, (size_t)e->usize, err);
    if (st != NA_OK) {
        free(b);
        return st;
    }
    *buf = b;
    *len = (size_t)e->usize;
    return NA_OK;
}

na_status_t na_zip_spill(na_zip_t *z, size_t i, int *fd_out, na_err_t *err)
{
    *fd_out = -1;
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/nanaudit-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return na_err_set(err, NA_E_IO, "cannot create a temporary file in %s: %s",
                          dir && *dir ? dir : "/tmp", strerror(errno));
    unlink(path); /* nothing is left behind, whatever happens next */
    uint64_t size = z->e[i].usize, done = 0;
    na_status_t st = NA_OK;
    if (z->skip == NULL && (z->skip = malloc(1u << 20)) == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    while (st == NA_OK && done < size) {
        size_t step = size - done < (1u << 20) ? (size_t)(size - done) : (1u << 20);
        /* na_zip_read uses z->skip only for skips, and done is the
         * current position, so nothing is skipped here */
        uint8_t *tmp = malloc(step);
        if (tmp == NULL) {
            st = na_err_set(err, NA_E_NOMEM, "out of memory");
            break;
        }
        st = na_zip_read(z, i, done, tmp, step, err);
        for (size_t w = 0; st == NA_OK && w < step;) {
            ssize_t r = write(fd, tmp + w, step - w);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                st = na_err_set(err, NA_E_WRITE, "writing a temporary file: %s",
                                strerror(errno));
            else
                w += (size_t)r;
        }
        free(tmp);
        done += step;
    }
    if (st != NA_OK) {
        close(fd);
        return st;
    }
    *fd_out = fd;
    return NA_OK;
}

/* ---- classification ---------------------------------------------------- */

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

na_kind_of_file_t na_zip_classify(const na_zip_t *z)
{
    size_t pkl = 0, npy = 0;
    for (size_t i = 0; i < z->n; i++) {
        const char *nm = z->e[i].name;
        const char *slash = strchr(nm, '/');
        if ((slash != NULL && slash != nm && strcmp(slash, "/data.pkl") == 0) ||
            strcmp(nm, "data.pkl") == 0)
            pkl++; /* a top-level data.pkl too: torch refuses it, we read
                    * it to name what its pickle would run */
        if (ends_with(nm, ".npy"))
            npy++;
    }
    if (pkl == 1)
        return NA_FILE_TORCH;
    if (z->n > 0 && npy == z->n)
        return NA_FILE_NPZ;
    return NA_FILE_ZIP;
}

void na_zip_close(na_zip_t *z)
{
    if (z == NULL)
        return;
    close_member(z);
    if (z->uf != NULL)
        unzClose(z->uf);
    for (size_t i = 0; i < z->n; i++)
        free(z->e[i].name);
    free(z->e);
    free(z->pos);
    free(z->skip);
    close(z->io.fd);
    free(z);
}
