/*
 * mapfile.c - windowed read-only mapping of an input file.
 *
 * Why windows: a checkpoint can be far larger than the address space a
 * CI job is allowed (DESIGN.md: "a 4 GiB file is audited in 1 GiB of
 * address space"), so the file is never mapped whole. na_map_get maps
 * one page-aligned window of at most window_bytes (plus the sub-page
 * slack in front of an unaligned offset) and reuses it while requests
 * fall inside it; the engine asks for increasing offsets, so each byte of
 * a tensor is mapped about once per pass. A request for more than
 * window_bytes at once gets a window of its own size instead of an error
 * (the engine's window option and the reader's are set separately).
 * Small ranges (headers) are read with pread instead, so they never cost
 * a mapping.
 *
 * Safety: a mapping never extends past the end of the file as it was
 * when opened, and every new window re-checks the size with fstat, so a
 * file truncated by someone else while we read gives NA_E_IO instead of
 * a SIGBUS on the first touch of a page past the new end (a truncation
 * between that check and the touch cannot be caught without a signal
 * handler; see mmap(2), "SIGBUS").
 */
#include "format.h"

#include <errno.h>    /* errno, EINTR */
#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* strerror */
#include <sys/mman.h> /* mmap, munmap, madvise */
#include <sys/stat.h> /* fstat */
#include <unistd.h>   /* pread, close, sysconf */

struct na_map {
    int fd;
    uint64_t file_size;   /* bytes, as at open */
    size_t window_bytes;  /* max bytes handed out per na_map_get */
    uint64_t page;        /* system page size */
    uint8_t *base;        /* current mapping or NULL */
    uint64_t base_off;    /* file offset of base (page-aligned) */
    size_t base_len;      /* bytes mapped at base */
};

na_status_t na_map_open(int fd, uint64_t file_size, size_t window_bytes, na_map_t **out,
                        na_err_t *err)
{
    *out = NULL;
    if (window_bytes == 0) {
        close(fd);
        return na_err_set(err, NA_E_INTERNAL, "mapping window of 0 bytes");
    }
    na_map_t *m = calloc(1, sizeof *m);
    if (m == NULL) {
        close(fd);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    long ps = sysconf(_SC_PAGESIZE);
    m->fd = fd;
    m->file_size = file_size;
    m->window_bytes = window_bytes;
    m->page = ps > 0 ? (uint64_t)ps : 4096u;
    *out = m;
    return NA_OK;
}

static void map_drop(na_map_t *m)
{
    if (m->base != NULL)
        munmap(m->base, m->base_len);
    m->base = NULL;
    m->base_len = 0;
}

/* Map a new window that starts at the page holding `off` and covers at
 * least [off, off+len): window_bytes beyond off when the file has them,
 * so that the following sequential requests are served from it. */
static na_status_t map_window(na_map_t *m, uint64_t off, size_t len, na_err_t *err)
{
    struct stat st;
    if (fstat(m->fd, &st) != 0)
        return na_err_set(err, NA_E_IO, "fstat failed: %s", strerror(errno));
    if ((uint64_t)st.st_size < m->file_size)
        return na_err_set(err, NA_E_IO, "file shrank from %llu to %llu bytes while being read",
                          (unsigned long long)m->file_size, (unsigned long long)st.st_size);
    map_drop(m);
    uint64_t start = off - off % m->page;
    uint64_t want = (off - start) + (len > m->window_bytes ? len : m->window_bytes);
    uint64_t end = start + want;
    if (end > m->file_size)
        end = m->file_size;
    if (end - start > (uint64_t)SIZE_MAX)
        return na_err_set(err, NA_E_INTERNAL, "window does not fit in the address space");
    size_t maplen = (size_t)(end - start);
    void *p = mmap(NULL, maplen, PROT_READ, MAP_PRIVATE, m->fd, (off_t)start);
    if (p == MAP_FAILED) {
        return na_err_set(err, errno == ENOMEM ? NA_E_NOMEM : NA_E_IO,
                          "mmap of %zu bytes at offset %llu failed: %s", maplen,
                          (unsigned long long)start, strerror(errno));
    }
    /* Advice only: failure changes speed, never results. */
    (void)madvise(p, maplen, MADV_SEQUENTIAL);
    m->base = p;
    m->base_off = start;
    m->base_len = maplen;
    return NA_OK;
}

na_status_t na_map_get(na_map_t *m, uint64_t off, size_t len, const uint8_t **ptr,
                       na_err_t *err)
{
    static const uint8_t empty[1];
    *ptr = NULL;
    if (off > m->file_size || len > m->file_size - off)
        return na_err_set(err, NA_E_IO,
                          "read of %zu bytes at offset %llu is past the end of the file "
                          "(%llu bytes)",
                          len, (unsigned long long)off, (unsigned long long)m->file_size);
    if (len == 0) {
        *ptr = empty;
        return NA_OK;
    }
    if (m->base == NULL || off < m->base_off || off + len > m->base_off + m->base_len) {
        na_status_t st = map_window(m, off, len, err);
        if (st != NA_OK)
            return st;
    }
    *ptr = m->base + (off - m->base_off);
    return NA_OK;
}

na_status_t na_map_pread(na_map_t *m, uint64_t off, size_t len, void *buf, na_err_t *err)
{
    if (off > m->file_size || len > m->file_size - off)
        return na_err_set(err, NA_E_IO,
                          "read of %zu bytes at offset %llu is past the end of the file "
                          "(%llu bytes)",
                          len, (unsigned long long)off, (unsigned long long)m->file_size);
    uint8_t *b = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(m->fd, b + done, len - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return na_err_set(err, NA_E_IO, "read failed at offset %llu: %s",
                              (unsigned long long)(off + done), strerror(errno));
        if (r == 0)
            return na_err_set(err, NA_E_IO, "file ended at %llu bytes while reading (shrank?)",
                              (unsigned long long)(off + done));
        done += (size_t)r;
    }
    return NA_OK;
}

void na_map_close(na_map_t *m)
{
    if (m == NULL)
        return;
    map_drop(m);
    close(m->fd);
    free(m);
}
