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
 * a SIGBUS on the first touch of a page past the new end. A truncation
 * between that check and the touch still raises SIGBUS (mmap(2),
 * "SIGBUS"); for it, every window is registered in a small lock-free
 * table (slots[]) that the CLI's SIGBUS handler consults through
 * na_map_sigbus: a fault inside a registered window is answered by
 * mapping anonymous zero pages over the rest of that window (MAP_FIXED),
 * so the faulting load resumes and reads zeros, and by marking the map.
 * The reader never trusts those zeros: the next na_map_get of that map
 * fails with NA_E_IO, and na_map_shrinks (a process-wide count of
 * shrinks seen, by fstat or by fault) lets the caller tell that a read
 * that looked complete was not (cli/scan.c, cli/clean.c). The cost is
 * one slot write per window mapped, nothing per element.
 */
#include "format.h"

#include <errno.h>    /* errno, EINTR */
#include <stdatomic.h> /* atomic_uint, atomic_uintptr_t: the window table */
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
    int slot;             /* its entry in slots[] while base is mapped, or -1 */
    atomic_int faulted;   /* set by na_map_sigbus: the file shrank under a window */
};

/* The windows now mapped, for na_map_sigbus, which runs in a signal
 * handler and so may take no lock. A slot is claimed by one thread
 * (used: 0 -> 1) and then written only by the thread that owns the map;
 * seq is odd while lo/hi/flag change (a seqlock), so the handler skips
 * a slot it would read half written. A window that finds no free slot
 * (more than NA_MAP_SLOTS maps with a window at once: never in practice,
 * scan reads one file at a time) is not registered, and a fault in it
 * keeps the handler's fallback: one line, exit 3. */
#define NA_MAP_SLOTS 256
static struct map_slot {
    atomic_int used;
    atomic_uint seq;
    atomic_uintptr_t lo, hi;         /* [lo, hi) mapped from the file */
    _Atomic(atomic_int *) flag;      /* the map's faulted */
} slots[NA_MAP_SLOTS];
static atomic_uintptr_t g_page;      /* page size, for the handler */
static _Atomic uint64_t g_shrinks;   /* na_map_shrinks */

static void slot_set(struct map_slot *sl, uintptr_t lo, uintptr_t hi, atomic_int *flag)
{
    atomic_fetch_add(&sl->seq, 1); /* odd: being written */
    atomic_store(&sl->lo, lo);
    atomic_store(&sl->hi, hi);
    atomic_store(&sl->flag, flag);
    atomic_fetch_add(&sl->seq, 1);
}

static void slot_register(na_map_t *m)
{
    m->slot = -1;
    for (int i = 0; i < NA_MAP_SLOTS; i++) {
        int free_ = 0;
        if (atomic_load(&slots[i].used) == 0 &&
            atomic_compare_exchange_strong(&slots[i].used, &free_, 1)) {
            slot_set(&slots[i], (uintptr_t)m->base, (uintptr_t)m->base + m->base_len, &m->faulted);
            m->slot = i;
            return;
        }
    }
}

/* Before the window is unmapped: from here on a fault at its addresses
 * is not ours. */
static void slot_release(na_map_t *m)
{
    if (m->slot < 0)
        return;
    struct map_slot *sl = &slots[m->slot];
    slot_set(sl, 0, 0, NULL);
    atomic_store(&sl->used, 0);
    m->slot = -1;
}

int na_map_sigbus(const void *addr)
{
    uintptr_t a = (uintptr_t)addr, page = atomic_load(&g_page);
    if (page == 0)
        return 0; /* no map was ever opened */
    for (int i = 0; i < NA_MAP_SLOTS; i++) {
        struct map_slot *sl = &slots[i];
        unsigned s1 = atomic_load(&sl->seq);
        if (s1 & 1u)
            continue;
        uintptr_t lo = atomic_load(&sl->lo), hi = atomic_load(&sl->hi);
        atomic_int *flag = atomic_load(&sl->flag);
        if (atomic_load(&sl->seq) != s1 || flag == NULL || a < lo || a >= hi)
            continue;
        /* The faulting address lies in a live window (its owner cannot
         * unmap it while one of its threads reads it). Zero pages from
         * the faulting page to the window's end: the load resumes, and
         * later touches of the lost part fault no more. */
        uintptr_t from = a - a % page;
        int saved = errno;
        void *p = mmap((void *)from, hi - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
        errno = saved;
        if (p == MAP_FAILED)
            return 0;
        atomic_store(flag, 1);
        atomic_fetch_add(&g_shrinks, 1);
        return 1;
    }
    return 0;
}

uint64_t na_map_shrinks(void)
{
    return atomic_load(&g_shrinks);
}

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
    m->slot = -1;
    atomic_init(&m->faulted, 0);
    atomic_store(&g_page, (uintptr_t)m->page);
    *out = m;
    return NA_OK;
}

static void map_drop(na_map_t *m)
{
    slot_release(m);
    if (m->base != NULL)
        munmap(m->base, m->base_len);
    m->base = NULL;
    m->base_len = 0;
}

/* Map a new window that starts at the page holding `off` and covers at
 * least [off, off+len): window_bytes beyond off when the file has them,
 * so that the following sequential requests are served from it. */
na_status_t na_map_check_size(na_map_t *m, na_err_t *err)
{
    struct stat st;
    if (fstat(m->fd, &st) != 0)
        return na_err_set(err, NA_E_IO, "fstat failed: %s", strerror(errno));
    if ((uint64_t)st.st_size < m->file_size) {
        atomic_fetch_add(&g_shrinks, 1);
        return na_err_set(err, NA_E_IO, "file shrank from %llu to %llu bytes while being read",
                          (unsigned long long)m->file_size, (unsigned long long)st.st_size);
    }
    return NA_OK;
}

static na_status_t map_window(na_map_t *m, uint64_t off, size_t len, na_err_t *err)
{
    na_status_t cs = na_map_check_size(m, err);
    if (cs != NA_OK)
        return cs;
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
    slot_register(m);
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
    if (atomic_load(&m->faulted)) /* zeros stand in for what the file lost */
        return na_err_set(err, NA_E_IO, NA_MAP_SHRANK_MSG);
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
