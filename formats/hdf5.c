/*
 * hdf5.c - HDF5 reader (also netCDF-4 and MATLAB v7.3, which are HDF5
 * inside), behind the na_format_t interface of format.h.
 *
 * This file never calls libhdf5. It forks a child per file
 * (hdf5_child.c) that opens the file with libhdf5 and sends the catalog
 * of datasets; the engine's windows are then read by the child with
 * H5Dread into a shared mapping and scanned here in place. Why: libhdf5
 * 1.10.8 crashes or loops on hostile files (CVE reproducers), and a
 * crash must cost one file (exit 3), not the run. hdf5_proto.h describes
 * the messages.
 *
 * Failure messages (one line each, the CLI adds the file name):
 *   "libhdf5 crashed reading this file: SIGSEGV"
 *   "libhdf5 did not answer within N s (--hdf5-timeout): reader stopped"
 *   "libhdf5 cannot open the file: <innermost cause on the HDF5 stack>"
 * A crash while a tensor is read makes that tensor and the ones after
 * it errors; the tensors before keep their results.
 *
 * A dataset of variable-length numeric sequences is one tensor, the
 * concatenation of its sequences (na_tensor_t.vlen): measured by the
 * child when the tensor is first asked for (H5P_VLEN, one pass over the
 * data), its windows are value ranges of the concatenation.
 */
#include "format.h"
#include "hdf5_chunks.h" /* na_h5_spans_merge, na_h5_span_find */
#include "hdf5_inflate.h"
#include "hdf5_proto.h"

#include <errno.h>      /* errno */
#include <poll.h>       /* poll */
#include <signal.h>     /* kill, SIGKILL */
#include <stdlib.h>     /* calloc, free */
#include <string.h>     /* memcpy, strdup, sigabbrev_np */
#include <sys/mman.h>   /* mmap, munmap */
#include <sys/prctl.h>  /* prctl, PR_SET_PDEATHSIG */
#include <sys/socket.h> /* socketpair */
#include <sys/stat.h>   /* fstat */
#include <sys/wait.h>   /* waitpid */
#include <unistd.h>     /* fork, close */

/* NA_FORK_QUIESCE (format.h): under TSan, libomp's workers run Archer's
 * callbacks, which allocate, after a parallel region ends, so sanitizer
 * builds stop the OpenMP threads before fork (omp_pause_resource_all,
 * OpenMP 5.0 section 3.2.43, libomp and libgomp alike; the next parallel
 * region starts them again). */
#ifdef NA_FORK_QUIESCE
#include <omp.h>        /* omp_pause_resource_all */
#endif

typedef struct h5_entry {
    h5p_entry_t e;
    char *name, *reason, *detail;
    size_t n_alias;      /* other hard-link paths (na_hdf5_aliases) */
    char **alias;
    uint64_t more_alias; /* met beyond NA_HDF5_MAX_ALIASES, not kept */
    int measured;        /* e.vlen: values is known */
    uint64_t values;     /* e.vlen: values of all its sequences */
} h5_entry_t;

typedef struct h5_input h5_input_t;

typedef struct h5_src {
    h5_input_t *h;
    size_t entry;  /* index in the child's catalog */
    /* Fill runs (h5_fill): the allocated chunks' flat bounds, merged and
     * ascending, asked from the child once; n_spans UINT64_MAX: none known. */
    int fill_asked;
    uint64_t n_spans;
    uint64_t (*spans)[2];
    uint8_t elem[64];
} h5_src_t;

struct h5_input {
    na_input_t base;
    pid_t pid;          /* child, or -1 once reaped */
    int sock;
    uint8_t *shm;
    uint64_t shm_bytes;
    na_map_t *map;      /* the file, for datasets read directly */
    uint8_t *win;       /* window assembled from inflated chunks */
    int serial;         /* NANAUDIT_HDF5_SERIAL set: always H5Dread */
    int threads;        /* inflate threads (--threads), 0 = all */
    int timeout_ms;     /* per answer; -1 = none */
    int use_missing;
    int attributes; /* --attributes */
    int no_measure;     /* na_open_opts_t.no_measure (info) */
    char *dead;         /* set once the child is gone: the message */
    na_status_t dead_st;
    size_t n, cap;      /* tensor-like entries (not notes) */
    h5_entry_t *ents;
    size_t *cat_index;  /* catalog index of each entry */
    h5_src_t *srcs;
    size_t n_notes, cap_notes;
    char **notes;
    size_t alias_bytes; /* kept other paths' bytes, <= H5_ALIAS_BYTES */
};

#define H5_DEFAULT_SHM (64u << 20)
/* Room after a window: a read that starts or ends inside an element of
 * an array type reads whole elements (at most 65536 values of at most 16
 * bytes each, hdf5_child.c), then moves the window to the start. */
#define H5_SHM_SLACK ((uint64_t)2 << 20)

/* ---- the child ------------------------------------------------------------ */

static void h5_reap(h5_input_t *h, int force)
{
    if (h->pid <= 0)
        return;
    if (force)
        kill(h->pid, SIGKILL);
    int st;
    while (waitpid(h->pid, &st, 0) < 0 && errno == EINTR)
        ;
    h->pid = -1;
}

/* The child is gone or stuck: record why (once) and stop it. why, not
 * NULL: the file shrank while the child read it (h5_shrank's text). */
static na_status_t h5_dead_why(h5_input_t *h, int timed_out, const char *why, na_err_t *err)
{
    if (h->dead == NULL) {
        char msg[NA_ERR_LEN];
        if (why != NULL) {
            kill(h->pid, SIGKILL);
            snprintf(msg, sizeof msg, "%s", why);
        } else if (timed_out) {
            kill(h->pid, SIGKILL);
            snprintf(msg, sizeof msg,
                     "libhdf5 did not answer within %g s (--hdf5-timeout): reader stopped",
                     h->timeout_ms / 1000.0);
        } else {
            snprintf(msg, sizeof msg, "HDF5 reader process ended unexpectedly");
        }
        int st = 0;
        pid_t r;
        while ((r = waitpid(h->pid, &st, 0)) < 0 && errno == EINTR)
            ;
        h->pid = -1;
        if (r > 0 && !timed_out && !why && WIFSIGNALED(st)) {
            const char *abbr = sigabbrev_np(WTERMSIG(st));
            if (abbr != NULL)
                snprintf(msg, sizeof msg, "libhdf5 crashed reading this file: SIG%s", abbr);
            else
                snprintf(msg, sizeof msg, "libhdf5 crashed reading this file: signal %d",
                         WTERMSIG(st));
        } else if (r > 0 && !timed_out && !why && WIFEXITED(st) && WEXITSTATUS(st) != 0) {
            snprintf(msg, sizeof msg, "HDF5 reader process failed (exit status %d, out of memory?)",
                     WEXITSTATUS(st));
        }
        h->dead = strdup(msg);
        h->dead_st = why != NULL ? NA_E_IO : NA_E_FORMAT;
        if (h->dead == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    return na_err_set(err, h->dead_st, "%s", h->dead);
}

static na_status_t h5_dead(h5_input_t *h, int timed_out, na_err_t *err)
{
    return h5_dead_why(h, timed_out, NULL, err);
}

/* 1 with the message in e when the file is shorter than when it was
 * opened: libhdf5 reads a chunk past the new end as zeros (a NaN would
 * be missed, exit 0) or spins on a cut heap, so every answer of the
 * child, and every second of a wait for one, is checked. */
static int h5_shrank(h5_input_t *h, na_err_t *e)
{
    return h->map != NULL && na_map_check_size(h->map, e) != NA_OK;
}

/* Wait for the next message header (timeout per message). */
static na_status_t h5_recv_hdr(h5_input_t *h, h5p_hdr_t *hd, na_err_t *err)
{
    if (h->dead != NULL)
        return na_err_set(err, h->dead_st, "%s", h->dead);
    struct pollfd pf = {h->sock, POLLIN, 0};
    int r, left = h->timeout_ms; /* -1: no limit */
    for (;;) { /* in slices of a second at most, the file's size checked between */
        int slice = left < 0 || left > 1000 ? 1000 : left;
        r = poll(&pf, 1, slice);
        if (r < 0 && errno == EINTR)
            continue;
        if (r != 0)
            break;
        na_err_t e;
        if (h5_shrank(h, &e))
            return h5_dead_why(h, 0, e.msg, err);
        if (left >= 0 && (left -= slice) <= 0)
            break;
    }
    if (r == 0)
        return h5_dead(h, 1, err);
    if (r < 0 || na_h5p_recv_all(h->sock, hd, sizeof *hd) != 0)
        return h5_dead(h, 0, err);
    return NA_OK;
}

/* Payload of a message, malloc'd and NUL-terminated. */
static na_status_t h5_recv_body(h5_input_t *h, uint64_t len, char **out, na_err_t *err)
{
    *out = NULL;
    if (len > (64u << 20))
        return na_err_set(err, NA_E_INTERNAL, "HDF5 reader sent a %llu-byte message",
                          (unsigned long long)len);
    char *b = malloc(len + 1);
    if (b == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    if (na_h5p_recv_all(h->sock, b, len) != 0) {
        free(b);
        return h5_dead(h, 0, err);
    }
    b[len] = '\0';
    *out = b;
    return NA_OK;
}

static char *dup_n(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s != NULL) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static na_status_t h5_add_entry(h5_input_t *h, size_t cat, const char *body, uint64_t len,
                                na_err_t *err)
{
    h5p_entry_t e;
    if (len < sizeof e)
        return na_err_set(err, NA_E_INTERNAL, "short catalog entry");
    memcpy(&e, body, sizeof e);
    if ((uint64_t)e.name_len + e.reason_len + e.detail_len != len - sizeof e ||
        e.ndim < 0 || e.ndim > NA_MAX_NDIM || e.n_missing > 2)
        return na_err_set(err, NA_E_INTERNAL, "bad catalog entry");
    const char *p = body + sizeof e;
    if (e.kind == H5P_K_NOTE) {
        if (h->n_notes == h->cap_notes) {
            size_t nc = h->cap_notes ? h->cap_notes * 2 : 8;
            char **nn = realloc(h->notes, nc * sizeof *nn);
            if (nn == NULL)
                return na_err_set(err, NA_E_NOMEM, "out of memory");
            h->notes = nn;
            h->cap_notes = nc;
        }
        if ((h->notes[h->n_notes] = dup_n(p + e.name_len, e.reason_len)) == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        h->n_notes++;
        return NA_OK;
    }
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 16;
        h5_entry_t *ne = realloc(h->ents, nc * sizeof *ne);
        size_t *ni = realloc(h->cat_index, nc * sizeof *ni);
        if (ne != NULL)
            h->ents = ne;
        if (ni != NULL)
            h->cat_index = ni;
        if (ne == NULL || ni == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        h->cap = nc;
    }
    h5_entry_t *x = &h->ents[h->n];
    memset(x, 0, sizeof *x);
    x->e = e;
    x->name = dup_n(p, e.name_len);
    x->reason = dup_n(p + e.name_len, e.reason_len);
    x->detail = dup_n(p + e.name_len + e.reason_len, e.detail_len);
    h->cat_index[h->n] = cat;
    h->n++;
    if (x->name == NULL || x->reason == NULL || x->detail == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    return NA_OK;
}

/* Bytes of other paths kept per file: 64 per entry could still be 64
 * copies of every path under a group with 64 links; past this they are
 * counted, not kept (the man page says so). */
#define H5_ALIAS_BYTES ((size_t)64 << 20)

/* Give entry x the name `pre` (pl bytes) + suf, unless it has it already
 * or holds NA_HDF5_MAX_ALIASES, or the file's H5_ALIAS_BYTES are spent
 * (then it is only counted). */
static na_status_t h5_push_alias(h5_input_t *h, h5_entry_t *x, const char *pre, size_t pl,
                                 const char *suf, na_err_t *err)
{
    size_t sl = strlen(suf);
    if (x->n_alias == NA_HDF5_MAX_ALIASES || h->alias_bytes + pl + sl > H5_ALIAS_BYTES) {
        x->more_alias++; /* not compared with the kept ones: a count */
        return NA_OK;
    }
    for (size_t k = 0; k <= x->n_alias; k++) {
        const char *have = k ? x->alias[k - 1] : x->name;
        if (!strncmp(have, pre, pl) && !strcmp(have + pl, suf))
            return NA_OK;
    }
    h->alias_bytes += pl + sl;
    char **na = realloc(x->alias, (x->n_alias + 1) * sizeof *na);
    char *s = malloc(pl + sl + 1);
    if (na != NULL)
        x->alias = na;
    if (na == NULL || s == NULL) {
        free(s);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    memcpy(s, pre, pl);
    memcpy(s + pl, suf, sl + 1);
    x->alias[x->n_alias++] = s;
    return NA_OK;
}

/* H5P_ALIAS (hdf5_proto.h): another path of the object whose entries
 * have catalog indices [lo, hi) of the n_cat sent. Each entry's name is
 * the object's first path (plen bytes) plus a suffix; the entry gets the
 * other path plus that suffix, and plus the suffix of each of its names
 * so far that passes through the object (a path "/g/..." of a member of
 * group /g: the child sends the innermost objects first, so a dataset
 * /g/x also linked as /g/y, in a group also linked as /h, gets /h/x and
 * /h/y). Up to NA_HDF5_MAX_ALIASES per entry; the rest are counted. */
static na_status_t h5_add_alias(h5_input_t *h, size_t n_cat, const char *body, uint64_t len,
                                na_err_t *err)
{
    h5p_alias_t a;
    if (len < sizeof a)
        return na_err_set(err, NA_E_INTERNAL, "short alias message");
    memcpy(&a, body, sizeof a);
    if (a.lo > a.hi || a.hi > n_cat)
        return na_err_set(err, NA_E_INTERNAL, "bad alias message");
    const char *p = body + sizeof a;
    size_t pl = (size_t)(len - sizeof a), lo = 0, hi = h->n;
    while (lo < hi) { /* first entry at or after catalog index a.lo */
        size_t mid = lo + (hi - lo) / 2;
        if (h->cat_index[mid] < a.lo)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < h->n && h->cat_index[i] < a.hi; i++) {
        h5_entry_t *x = &h->ents[i];
        if (a.plen > strlen(x->name))
            continue; /* not named under the object's path: no suffix */
        x->more_alias += a.more;
        if (pl > 0 && x->n_alias == NA_HDF5_MAX_ALIASES) {
            x->more_alias++; /* full: counted, its routes through it not */
            continue;
        }
        size_t n_names = x->n_alias; /* this object's paths apply to these */
        for (size_t k = 0; pl > 0 && k <= n_names; k++) {
            const char *nm = k ? x->alias[k - 1] : x->name;
            if (k && (strncmp(nm, x->name, a.plen) || nm[a.plen] != '/'))
                continue; /* another route, not through this object */
            na_status_t st = h5_push_alias(h, x, p, pl, nm + a.plen, err);
            if (st != NA_OK)
                return st;
        }
    }
    return NA_OK;
}

static na_status_t h5_catalog(h5_input_t *h, na_err_t *err)
{
    for (size_t cat = 0;;) {
        h5p_hdr_t hd;
        char *body = NULL;
        na_status_t st = h5_recv_hdr(h, &hd, err);
        if (st == NA_OK)
            st = h5_recv_body(h, hd.len, &body, err);
        if (st == NA_OK && hd.type == H5P_DONE) {
            free(body);
            return NA_OK;
        }
        if (st == NA_OK && hd.type == H5P_FAIL)
            st = na_err_set(err, (na_status_t)hd.status, "%s", body);
        else if (st == NA_OK && hd.type == H5P_ALIAS)
            st = h5_add_alias(h, cat, body, hd.len, err);
        else if (st == NA_OK && hd.type != H5P_ENTRY)
            st = na_err_set(err, NA_E_INTERNAL, "unexpected message %u from the HDF5 reader",
                            hd.type);
        else if (st == NA_OK)
            st = h5_add_entry(h, cat++, body, hd.len, err);
        free(body);
        if (st != NA_OK)
            return st;
    }
}

/* ---- data source ---------------------------------------------------------- */

/* Send request `type` {entry, first, count} (hdf5_proto.h) and wait for
 * the answer: DATA gives its payload in *body (malloc'd, NUL-ended, the
 * caller frees it) and *len; FAIL becomes its status and message; any
 * other message is NA_E_INTERNAL. */
static na_status_t h5_request(h5_input_t *h, uint32_t type, size_t entry, uint64_t first,
                              uint64_t count, char **body, uint64_t *len, na_err_t *err)
{
    *body = NULL;
    *len = 0;
    if (h->dead != NULL)
        return na_err_set(err, h->dead_st, "%s", h->dead);
    h5p_read_t rq = {h->cat_index[entry], first, count};
    if (na_h5p_send(h->sock, type, 0, &rq, sizeof rq, NULL, 0) != 0)
        return h5_dead(h, 0, err);
    h5p_hdr_t hd;
    na_status_t st = h5_recv_hdr(h, &hd, err);
    if (st == NA_OK)
        st = h5_recv_body(h, hd.len, body, err);
    if (st == NA_OK && hd.type == H5P_FAIL)
        st = na_err_set(err, (na_status_t)hd.status, "%s", *body);
    else if (st == NA_OK && hd.type != H5P_DATA)
        st = na_err_set(err, NA_E_INTERNAL, "unexpected message %u from the HDF5 reader",
                        hd.type);
    if (st != NA_OK) {
        free(*body);
        *body = NULL;
        na_err_t e; /* libhdf5's complaint about a cut file: the cut said */
        return h5_shrank(h, &e) ? na_err_set(err, NA_E_IO, "%s", e.msg) : st;
    }
    *len = hd.len;
    return NA_OK;
}

static na_status_t h5_read1(h5_src_t *s, uint64_t off, size_t len, const uint8_t **ptr,
                            na_err_t *err);

/* A window from stored chunks inflated here on all threads
 * (hdf5_inflate.c). NA_E_UNSUPPORTED: the child could not hand the chunks
 * over (an unallocated chunk) or some chunk skipped a filter: the caller
 * reads the window through H5Dread instead. */
static na_status_t h5_read_raw(h5_input_t *h, size_t entry, uint64_t first, uint64_t count,
                               const uint8_t **ptr, na_err_t *err)
{
    const h5_entry_t *x = &h->ents[entry];
    if (h->win == NULL && (h->win = malloc(h->shm_bytes)) == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    char *body = NULL;
    uint64_t blen = 0;
    na_status_t st = h5_request(h, H5P_RAW, entry, first, count, &body, &blen, err);
    if (st == NA_OK && blen % sizeof(h5p_chunk_t) != 0)
        st = na_err_set(err, NA_E_INTERNAL, "HDF5 reader: bad chunk list");
    size_t nk = st == NA_OK ? blen / sizeof(h5p_chunk_t) : 0;
    const h5p_chunk_t *ck = (const h5p_chunk_t *)(void *)body;
    uint64_t room = h->shm_bytes + H5_SHM_SLACK;
    for (size_t i = 0; st == NA_OK && i < nk; i++) {
        if (ck[i].mask != 0)
            st = NA_E_UNSUPPORTED;
        else if (ck[i].offset > room || ck[i].bytes > room - ck[i].offset)
            st = na_err_set(err, NA_E_INTERNAL, "HDF5 reader: chunk outside the buffer");
    }
    if (st == NA_OK) {
        na_h5i_layout_t L = {x->e.chunk_elems, x->e.elem_size,
                             x->e.par_mode == H5P_PAR_SHUFFLE_DEFLATE, x->e.elements,
                             h->threads, x->e.ndim, {0}, {0}};
        memcpy(L.shape, x->e.shape, sizeof L.shape);
        memcpy(L.chunk, x->e.chunk, sizeof L.chunk);
        st = na_h5i_assemble(h->shm, ck, nk, &L, first, count, h->win, err);
    }
    free(body);
    if (st == NA_OK)
        *ptr = h->win;
    return st;
}

/* na_read_fn: one window, read by the child into the shared mapping.
 * Errors name the tensor ("/g/x: libhdf5 crashed reading this file: ..."). */
static na_status_t h5_read(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                           na_err_t *err)
{
    h5_src_t *s = ctx;
    na_err_t e = {{0}};
    na_status_t st = h5_read1(s, off, len, ptr, &e);
    if (st != NA_OK)
        na_err_set(err, st, "%s: %s", s->h->ents[s->entry].name, e.msg);
    return st;
}

/* One window of entry s: mapped, inflated here, or read by the child. */
static na_status_t h5_read_window(h5_src_t *s, uint64_t off, size_t len, const uint8_t **ptr,
                                  na_err_t *err)
{
    h5_input_t *h = s->h;
    const h5_entry_t *x = &h->ents[s->entry];
    uint64_t es = x->e.elem_size, total = x->e.vlen ? x->values : x->e.elements;
    *ptr = NULL;
    if (h->dead != NULL)
        return na_err_set(err, h->dead_st, "%s", h->dead);
    /* clean reads whole rows: one row larger than the shared window (a
     * (1, 2^28) F32 dataset) cannot come through it */
    if (len > h->shm_bytes)
        return na_err_set(err, NA_E_UNSUPPORTED, "a read of %zu bytes (one row or more) is "
                          "larger than the HDF5 reader's window (%llu bytes)", len,
                          (unsigned long long)h->shm_bytes);
    if (es == 0 || off % es != 0 || len % es != 0 || (x->e.vlen && !x->measured) ||
        off / es > total || len / es > total - off / es)
        return na_err_set(err, NA_E_INTERNAL, "bad HDF5 window [%llu, +%zu)",
                          (unsigned long long)off, len);
    if (len == 0) {
        *ptr = h->shm;
        return NA_OK;
    }
    if (x->e.direct_offset != UINT64_MAX && h->map != NULL) /* checked at open */
        return na_map_get(h->map, x->e.direct_offset + off, len, ptr, err);
    if (x->e.par_mode != H5P_PAR_NONE && !h->serial) {
        na_status_t pst = h5_read_raw(h, s->entry, off / es, len / es, ptr, err);
        if (pst != NA_E_UNSUPPORTED)
            return pst; /* else: some chunk unallocated or filtered apart */
    }
    char *body = NULL;
    uint64_t blen = 0;
    na_status_t st = h5_request(h, H5P_READ, s->entry, off / es, len / es, &body, &blen, err);
    free(body);
    if (st == NA_OK)
        *ptr = h->shm;
    return st;
}

/* h5_read_window, then the file's size: a window libhdf5 read after the
 * file shrank is not data, whatever it answered (a mapped window is
 * checked by mapfile.c itself). */
static na_status_t h5_read1(h5_src_t *s, uint64_t off, size_t len, const uint8_t **ptr,
                            na_err_t *err)
{
    na_status_t st = h5_read_window(s, off, len, ptr, err);
    int mapped = s->h->ents[s->entry].e.direct_offset != UINT64_MAX && s->h->map != NULL;
    if (!mapped && h5_shrank(s->h, err)) {
        *ptr = NULL;
        return NA_E_IO;
    }
    return st;
}

/* Ask the child where source s is fill value (H5P_FILL, hdf5_proto.h). */
static na_status_t h5_fill_ask(h5_src_t *s, na_err_t *err)
{
    h5_input_t *h = s->h;
    const h5_entry_t *x = &h->ents[s->entry];
    s->fill_asked = 1;
    s->n_spans = UINT64_MAX;
    char *body = NULL;
    uint64_t blen = 0;
    h5p_fill_t f = {UINT64_MAX, 0, 0};
    na_status_t st = h5_request(h, H5P_FILL, s->entry, 0, 0, &body, &blen, err);
    if (st == NA_OK && blen < sizeof f)
        st = na_err_set(err, NA_E_INTERNAL, "bad fill answer from the HDF5 reader");
    if (st == NA_OK)
        memcpy(&f, body, sizeof f);
    uint64_t n = f.n_spans;
    if (st == NA_OK && n != UINT64_MAX &&
        (f.elem_size != x->e.elem_size || f.elem_size > sizeof s->elem || n > blen / 16 ||
         blen != sizeof f + n * 16 + f.elem_size))
        st = na_err_set(err, NA_E_INTERNAL, "bad fill answer from the HDF5 reader");
    if (st == NA_OK && n != UINT64_MAX && n > 0 && (s->spans = malloc(n * 16)) == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    if (st == NA_OK && n != UINT64_MAX) {
        /* n == 0 (no chunk written: s->spans NULL) is no span at all;
         * memcpy and qsort of NULL are undefined even for 0 bytes (UBSan,
         * clean --normalize of a dataset never written) */
        if (n > 0)
            memcpy(s->spans, body + sizeof f, n * 16);
        memcpy(s->elem, body + sizeof f + n * 16, f.elem_size);
        /* merged again: the child's answer is not trusted to be */
        uint64_t m = na_h5_spans_merge(s->spans, n);
        s->n_spans = m;
        for (uint64_t i = 0; i < m; i++) /* bounds that make no sense: read all */
            if (s->spans[i][1] < s->spans[i][0] || s->spans[i][1] >= x->e.elements)
                s->n_spans = UINT64_MAX;
    }
    free(body);
    return st;
}

/* na_fill_fn: the first stretch of [off, off+len) outside every allocated
 * chunk's flat bounds, which reads as the fill element (hdf5_child.c,
 * c_fill). Errors name the tensor, as h5_read's. */
static na_status_t h5_fill(void *ctx, uint64_t off, uint64_t len, uint64_t *skip,
                           uint64_t *run, const uint8_t **elem, na_err_t *err)
{
    h5_src_t *s = ctx;
    *skip = len;
    *run = 0;
    *elem = NULL;
    if (!s->fill_asked) {
        na_err_t e = {{0}};
        na_status_t st = h5_fill_ask(s, &e);
        if (st != NA_OK)
            return na_err_set(err, st, "%s: %s", s->h->ents[s->entry].name, e.msg);
    }
    uint64_t es = s->h->ents[s->entry].e.elem_size, n = s->n_spans;
    if (n == UINT64_MAX || es == 0)
        return NA_OK;
    uint64_t lo = off / es, hi = (off + len) / es;
    uint64_t a = na_h5_span_find((const uint64_t(*)[2])s->spans, n, lo);
    uint64_t start = lo;
    if (a < n && s->spans[a][0] <= lo)
        start = s->spans[a++][1] + 1;
    uint64_t end = a < n && s->spans[a][0] < hi ? s->spans[a][0] : hi;
    if (start >= end)
        return NA_OK;
    *skip = (start - lo) * es;
    *run = (end - start) * es;
    *elem = s->elem;
    return NA_OK;
}

/* ---- vtbl --------------------------------------------------------------- */

static size_t h5_count(const na_input_t *in) { return ((const h5_input_t *)in)->n; }

/* A variable-length entry's values, asked from the child once
 * (H5P_VLEN: one read of every sequence). */
static na_status_t h5_measure(h5_input_t *h, size_t i, na_err_t *err)
{
    h5_entry_t *x = &h->ents[i];
    if (x->measured)
        return NA_OK;
    char *body = NULL;
    uint64_t blen = 0;
    na_status_t st = h5_request(h, H5P_VLEN, i, 0, 0, &body, &blen, err);
    if (st == NA_OK && blen != sizeof x->values)
        st = na_err_set(err, NA_E_INTERNAL, "bad measure answer from the HDF5 reader");
    if (st == NA_OK) {
        memcpy(&x->values, body, sizeof x->values);
        x->measured = 1;
    }
    free(body);
    return st;
}

/* The tensor of a variable-length entry: the concatenation of its
 * sequences, 1-D, measured unless h->no_measure; the dataset's shape in
 * vshape. */
static na_status_t h5_vlen_tensor(h5_input_t *h, size_t i, na_tensor_t *t, na_err_t *err)
{
    h5_entry_t *x = &h->ents[i];
    t->vlen = 1;
    t->sequences = x->e.elements;
    t->vndim = x->e.ndim;
    memcpy(t->vshape, x->e.shape, sizeof t->vshape);
    t->ndim = 1;
    memset(t->shape, 0, sizeof t->shape);
    t->elements = 0;
    t->src.fill = NULL;
    t->constant = 0;
    if (h->no_measure)
        return NA_OK;
    na_err_t e = {{0}};
    na_status_t st = h5_measure(h, i, &e);
    if (st != NA_OK)
        return na_err_set(err, st, "%s: %s", x->name, e.msg);
    t->shape[0] = t->elements = x->values;
    return NA_OK;
}

static na_status_t h5_tensor(na_input_t *in, size_t i, na_tensor_t *t, na_err_t *err)
{
    h5_input_t *h = (h5_input_t *)in;
    const h5_entry_t *x = &h->ents[i];
    memset(t, 0, sizeof *t);
    t->name = x->name;
    t->dtype = (na_dtype_t)x->e.dtype;
    t->stored = (na_dtype_t)x->e.stored;
    t->byte_order = (na_endian_t)x->e.byte_order;
    t->ndim = x->e.ndim;
    memcpy(t->shape, x->e.shape, sizeof t->shape);
    t->elements = x->e.elements;
    t->elem_stride = x->e.elem_size;
    t->elem_offset = 0;
    t->src.read = h5_read;
    t->src.ctx = &h->srcs[i];
    /* Unallocated chunks are counted, not read (lib/scan_fill.c). */
    t->src.fill = x->e.unallocated_chunks > 0 ? h5_fill : NULL;
    t->n_missing = h->use_missing ? (int)x->e.n_missing : 0;
    t->missing[0] = x->e.missing[0];
    t->missing[1] = x->e.missing[1];
    t->missing_int[0] = x->e.missing_int[0];
    t->missing_int[1] = x->e.missing_int[1];
    t->missing_exact = x->e.missing_exact & 3u;
    t->report_missing = 1;
    t->unallocated_chunks = x->e.unallocated_chunks;
    t->constant = (int)x->e.constant;
    t->packed = (int)x->e.packed;
    t->dim_scale = (int)x->e.dim_scale;
    memcpy(t->scale0, x->e.scale0, sizeof t->scale0);
    t->scale_other_axis = (int)x->e.scale_other_axis;
    if (x->e.kind == H5P_K_ERROR)
        return na_err_set(err, x->e.status ? (na_status_t)x->e.status : NA_E_UNSUPPORTED, "%s: %s",
                          x->name, x->reason);
    if (x->e.kind == H5P_K_SKIP) { /* not numeric: listed as skipped (format.h) */
        t->src.read = NULL;
        na_err_set(err, NA_OK, "%s", x->reason);
        return NA_OK;
    }
    if (h->dead != NULL)
        return na_err_set(err, h->dead_st, "%s: %s", x->name, h->dead);
    if (x->e.vlen)
        return h5_vlen_tensor(h, i, t, err);
    return NA_OK;
}

static size_t h5_meta_count(const na_input_t *in) { return 0; }

static void h5_meta(const na_input_t *in, size_t i, const char **k, const char **v)
{
    *k = *v = NULL;
}

static uint64_t h5_tensor_bytes(const na_input_t *in, size_t i)
{
    const h5_entry_t *x = &((const h5_input_t *)in)->ents[i];
    if (x->e.vlen) /* the values' bytes once measured (info does not) */
        return x->measured ? x->values * x->e.elem_size : 0;
    return x->e.kind == H5P_K_TENSOR ? x->e.elements * x->e.elem_size : 0;
}

static void h5_close(na_input_t *in)
{
    h5_input_t *h = (h5_input_t *)in;
    if (h == NULL)
        return;
    if (h->sock >= 0)
        close(h->sock); /* the child leaves at end of input */
    h5_reap(h, 1);      /* read-only child: stopping it loses nothing */
    if (h->shm != NULL)
        munmap(h->shm, h->shm_bytes + H5_SHM_SLACK);
    na_map_close(h->map);
    for (size_t i = 0; i < h->n; i++) {
        free(h->ents[i].name);
        free(h->ents[i].reason);
        free(h->ents[i].detail);
        for (size_t k = 0; k < h->ents[i].n_alias; k++)
            free(h->ents[i].alias[k]);
        free(h->ents[i].alias);
    }
    for (size_t i = 0; i < h->n_notes; i++)
        free(h->notes[i]);
    free(h->notes);
    free(h->ents);
    free(h->cat_index);
    for (size_t i = 0; h->srcs != NULL && i < h->n; i++)
        free(h->srcs[i].spans);
    free(h->srcs);
    free(h->win);
    free(h->dead);
    free(h->base.path);
    free(h);
}

static const char *h5_name(const na_input_t *in, size_t i)
{
    const h5_entry_t *x = &((const h5_input_t *)in)->ents[i];
    return x->e.kind == H5P_K_ERROR ? NULL : x->name; /* an error says its own */
}

static const struct na_input_vtbl h5_vtbl = {
    h5_count, h5_tensor, h5_meta_count, h5_meta, h5_tensor_bytes, h5_close, h5_name,
};

/* ---- open ---------------------------------------------------------------- */

na_status_t na_h5p_spawn(uint64_t shm_bytes, na_h5p_child_fn fn, void *arg, pid_t *pid,
                         int *sock, uint8_t **shm, na_err_t *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return na_err_set(err, NA_E_INTERNAL, "socketpair: %s", strerror(errno));
    void *m = mmap(NULL, shm_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        close(sv[0]);
        close(sv[1]);
        return na_err_set(err, NA_E_NOMEM, "cannot map %llu bytes of shared memory: %s",
                          (unsigned long long)shm_bytes, strerror(errno));
    }
    *shm = m;
#ifdef NA_FORK_QUIESCE
    (void)omp_pause_resource_all(omp_pause_soft);
#endif
    pid_t p = fork();
    if (p < 0) {
        close(sv[0]);
        close(sv[1]);
        return na_err_set(err, NA_E_INTERNAL, "fork: %s", strerror(errno));
    }
    if (p == 0) {
        close(sv[0]);
        /* Stop with us: a child left behind would hold the file. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGPIPE, SIG_IGN);
        fn(sv[1], m, arg);
        _exit(2); /* fn does not return */
    }
    close(sv[1]);
    *pid = p;
    *sock = sv[0];
    return NA_OK;
}

static void h5_child(int sock, uint8_t *shm, void *arg)
{
    h5_input_t *h = arg;
    na_h5c_main(h->base.path, sock, shm, h->shm_bytes + H5_SHM_SLACK, h->attributes);
}

static na_status_t h5_spawn(h5_input_t *h, na_err_t *err)
{
    return na_h5p_spawn(h->shm_bytes + H5_SHM_SLACK, h5_child, h, &h->pid, &h->sock, &h->shm,
                        err);
}

static na_status_t h5_open(const char *path, int fd, const na_open_opts_t *o, na_input_t **out,
                           na_err_t *err)
{
    *out = NULL;
    struct stat sb;
    uint64_t fsize = fstat(fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    h5_input_t *h = calloc(1, sizeof *h);
    char *p = strdup(path);
    if (h == NULL || p == NULL) {
        free(h);
        free(p);
        close(fd);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    h->base.v = &h5_vtbl;
    h->base.format = "hdf5";
    h->base.path = p;
    h->base.file_size = fsize;
    h->pid = -1;
    h->sock = -1;
    h->shm_bytes = o->window_bytes > H5_DEFAULT_SHM ? o->window_bytes : H5_DEFAULT_SHM;
    h->timeout_ms = o->hdf5_timeout > 0 ? (int)(o->hdf5_timeout * 1000.0 + 0.5) : -1;
    h->use_missing = o->missing_mode != NA_MISSING_NONE;
    h->attributes = o->attributes;
    h->no_measure = o->no_measure;
    h->threads = o->threads;
    /* Benchmarks and the identity test compare with libhdf5's own path. */
    h->serial = getenv("NANAUDIT_HDF5_SERIAL") != NULL;
    /* The child opens the file by name with libhdf5; this descriptor maps
     * the contiguous datasets that need no conversion (h5_read). */
    na_status_t st = na_map_open(fd, fsize, o->window_bytes ? o->window_bytes
                                                            : NA_DEFAULT_WINDOW_BYTES,
                                 &h->map, err);
    if (st == NA_OK)
        st = h5_spawn(h, err);
    if (st == NA_OK)
        st = h5_catalog(h, err);
    if (st == NA_OK && (h->srcs = calloc(h->n + 1, sizeof *h->srcs)) == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    for (size_t i = 0; st == NA_OK && i < h->n; i++) {
        h->srcs[i].h = h;
        h->srcs[i].entry = i;
        h5p_entry_t *e = &h->ents[i].e;
        uint64_t bytes = e->elements * e->elem_size;
        if (e->direct_offset != UINT64_MAX &&
            (e->direct_offset > fsize || bytes > fsize - e->direct_offset))
            e->direct_offset = UINT64_MAX; /* past the end: let libhdf5 say why */
    }
    if (st != NA_OK) {
        h5_close(&h->base);
        return st;
    }
    *out = &h->base;
    return NA_OK;
}

const na_format_t na_format_hdf5 = {"hdf5", h5_open};

/* ---- HDF5-only accessors (format.h) -------------------------------------- */

static const h5_input_t *as_h5(const na_input_t *in)
{
    return in != NULL && in->v == &h5_vtbl ? (const h5_input_t *)in : NULL;
}

size_t na_hdf5_notes(const na_input_t *in, const char *const **notes)
{
    const h5_input_t *h = as_h5(in);
    *notes = h != NULL ? (const char *const *)h->notes : NULL;
    return h != NULL ? h->n_notes : 0;
}

const char *na_hdf5_detail(const na_input_t *in, size_t i)
{
    const h5_input_t *h = as_h5(in);
    return h != NULL && i < h->n ? h->ents[i].detail : NULL;
}

size_t na_hdf5_aliases(const na_input_t *in, size_t i, const char *const **names,
                       uint64_t *more)
{
    const h5_input_t *h = as_h5(in);
    const h5_entry_t *x = h != NULL && i < h->n ? &h->ents[i] : NULL;
    *names = x != NULL && x->n_alias ? (const char *const *)x->alias : NULL;
    if (more != NULL)
        *more = x != NULL ? x->more_alias : 0;
    return x != NULL ? x->n_alias : 0;
}
