/*
 * hdf5_write.c - the HDF5 writer of `nanaudit clean` (write.h), the
 * parent side: it never calls libhdf5. A forked process (hdf5_wchild.c,
 * messages in hdf5_wproto.h) copies the input's structure into the
 * temporary file and writes the cleaned tensors' elements, which arrive
 * here in pieces and go to it through a shared mapping, in windows of
 * at most H5W_SHM bytes (memory stays bounded whatever the dataset's
 * size).
 *
 * Tensors the caller marks copied (not cleaned) take no bytes: the child
 * copies those datasets whole with H5Ocopy (na_writer_wants says 0 for
 * them). Metadata is written at finish as root attributes, so the input's
 * SHA-256 can be given after the data (na_writer_set_meta).
 *
 * A crash or hang of the child (libhdf5 on a hostile input) is one line,
 * NA_E_WRITE: "libhdf5 crashed while writing the copy: SIGSEGV". A
 * refusal decided by the child (a compound dataset whose fields would
 * lose different rows) keeps its own status (NA_E_USAGE).
 *
 * With na_wopts_t.path NULL (clean --dry-run) the open is a check: the
 * child walks and validates the structure as for a real write, in an
 * in-memory file, without reading data (hdf5_wchild.c), and the writer
 * is freed after READY; its refusals are a real open's, word for word.
 */
#include "hdf5_wproto.h"

#include <errno.h>     /* errno, EINTR */
#include <omp.h>       /* omp_get_max_threads */
#include <poll.h>      /* poll */
#include <signal.h>    /* kill, SIGKILL */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* memcpy, strdup, sigabbrev_np */
#include <sys/mman.h>  /* mmap, munmap */
#include <sys/stat.h>  /* stat */
#include <sys/statvfs.h> /* fstatvfs */
#include <sys/wait.h>  /* waitpid */
#include <unistd.h>    /* close */

/* The shared window: 32 MiB, a multiple of every element size. */
#define H5W_SHM ((uint64_t)32 << 20)

typedef struct h5w {
    na_writer_t base;   /* first: the vtbl functions get &base */
    h5w_job_t job;
    pid_t pid;          /* the child, or -1 once reaped */
    int sock;
    uint8_t *shm;
    uint64_t fill;      /* bytes waiting at the start of shm */
    uint64_t first;     /* element index (in the tensor) of shm[0] */
    uint32_t *esize;    /* bytes per dataset element (unit), per tensor */
    uint32_t *unit;     /* tensor elements per dataset element (array
                         * types), per tensor: the child's READY says */
    int timeout_ms;     /* per answer; -1: none */
    size_t n_meta;
    char **mkey, **mval;
    char *dead;         /* why the child is gone, once it is */
    na_status_t dead_st; /* its status: NA_E_WRITE, or NA_E_FORMAT for a crash
                          * reading an input object (job.where) */
} h5w_t;

/* libhdf5 1.10 dies with SIGSEGV in H5Ocopy when a write meets ENOSPC
 * (a full disk; RLIMIT_FSIZE's EFBIG is reported properly), so the crash
 * alone would hide the cause: " (the output's file system is full)" when
 * fewer than 64 KiB are left to us on it (f_bfree for root, who may use
 * the reserved blocks, else f_bavail: statvfs(3)), else "". */
static const char *full_hint(int fd)
{
    struct statvfs v;
    if (fd < 0 || fstatvfs(fd, &v) != 0)
        return "";
    uint64_t left = (uint64_t)(geteuid() == 0 ? v.f_bfree : v.f_bavail) * v.f_frsize;
    return left < ((uint64_t)64 << 10) ? " (the output's file system is full: no space left "
                                         "on device)" : "";
}

/* The child ended or hangs: stop and reap it, and say why in one line. */
static na_status_t hw_dead(h5w_t *h, int timed_out, na_err_t *err)
{
    if (!h->dead && h->pid > 0) {
        char msg[400];
        int ws = 0;
        pid_t r;
        if (timed_out)
            kill(h->pid, SIGKILL);
        na_writer_set_child(-1); /* killed, or it ended: nothing to stop */
        while ((r = waitpid(h->pid, &ws, 0)) < 0 && errno == EINTR)
            ;
        h->pid = -1;
        h->dead_st = NA_E_WRITE;
        int sig = r > 0 && WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
        char sname[32];
        if (sig && sigabbrev_np(sig))
            snprintf(sname, sizeof sname, "SIG%s", sigabbrev_np(sig));
        else
            snprintf(sname, sizeof sname, "signal %d", sig);
        /* A crash while libhdf5 reads an object of the input (a damaged
         * attribute's heap index: tester round 21a) is the input's (exit
         * 3), named, unless the disk is full (H5Ocopy crashes then too);
         * so is a time-out there (a damaged heap it loops on: 22a). */
        const char *obj = h->job.where, *full = full_hint(h->base.fd);
        if (timed_out && obj && obj[0]) { /* spinning on a damaged heap (22a) */
            snprintf(msg, sizeof msg, "%.*s: libhdf5 did not answer within %g s reading it "
                     "(--hdf5-timeout; a damaged object?): writer stopped", 200, obj,
                     h->timeout_ms / 1000.0);
            h->dead_st = NA_E_FORMAT;
        } else if (timed_out) {
            snprintf(msg, sizeof msg,
                     "libhdf5 did not answer within %g s (--hdf5-timeout): writer stopped",
                     h->timeout_ms / 1000.0);
        } else if (sig && obj && obj[0] && !full[0]) {
            snprintf(msg, sizeof msg, "%.*s: libhdf5 crashed reading it: %s (a damaged "
                     "object?)", 300, obj, sname);
            h->dead_st = NA_E_FORMAT;
        } else if (sig) {
            snprintf(msg, sizeof msg, "libhdf5 crashed while writing the copy: %s%s", sname, full);
        } else {
            snprintf(msg, sizeof msg, "HDF5 writer process ended unexpectedly (exit status %d)",
                     r > 0 && WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
        }
        h->dead = strdup(msg);
    }
    return na_err_set(err, h->dead ? h->dead_st : NA_E_WRITE, "%s",
                      h->dead ? h->dead : "HDF5 writer process gone");
}

/* Wait for the answer to a request: want (with blen bytes of payload
 * into body), or FAIL (its status and message), within ms milliseconds
 * (-1: no limit). */
static na_status_t hw_answer(h5w_t *h, uint32_t want, int ms, void *body, uint64_t blen,
                             na_err_t *err)
{
    if (h->dead || h->pid <= 0)
        return hw_dead(h, 0, err);
    struct pollfd pf = {h->sock, POLLIN, 0};
    int r;
    while ((r = poll(&pf, 1, ms)) < 0 && errno == EINTR)
        ;
    h5p_hdr_t hd;
    if (r == 0)
        return hw_dead(h, 1, err);
    if (r < 0 || na_h5p_recv_all(h->sock, &hd, sizeof hd) != 0)
        return hw_dead(h, 0, err);
    if (hd.type == want) {
        if (hd.len != blen || (blen && na_h5p_recv_all(h->sock, body, blen) != 0))
            return hw_dead(h, 0, err);
        return NA_OK;
    }
    char msg[512];
    if (hd.len >= sizeof msg || na_h5p_recv_all(h->sock, msg, hd.len) != 0)
        return hw_dead(h, 0, err);
    msg[hd.len] = '\0';
    if (hd.type == H5P_FAIL)
        return na_err_set(err, hd.status ? (na_status_t)hd.status : NA_E_WRITE, "%s", msg);
    return na_err_set(err, NA_E_INTERNAL, "unexpected message %u from the HDF5 writer", hd.type);
}

/* Send the whole elements waiting in the mapping (all: every byte must
 * be part of one) and move a partial element's bytes to the start. */
static na_status_t hw_flush(h5w_t *h, int all, na_err_t *err)
{
    size_t cur = h->base.cur;
    uint64_t es = h->esize[cur], whole = h->fill / es;
    if (all && h->fill % es)
        return na_err_set(err, NA_E_INTERNAL, "tensor %zu ends inside an element", cur);
    if (whole == 0)
        return NA_OK;
    h5w_write_t rq = {cur, h->first, whole};
    if (na_h5p_send(h->sock, H5W_WRITE, 0, &rq, sizeof rq, NULL, 0) != 0)
        return hw_dead(h, 0, err);
    na_status_t st = hw_answer(h, H5W_ACK, h->timeout_ms, NULL, 0, err);
    if (st != NA_OK)
        return st;
    h->first += whole;
    memmove(h->shm, h->shm + whole * es, (size_t)(h->fill - whole * es));
    h->fill -= whole * es;
    return NA_OK;
}

static na_status_t hw_data(na_writer_t *w, const void *buf, size_t len, na_err_t *err)
{
    h5w_t *h = (h5w_t *)w;
    const uint8_t *p = buf;
    while (len) {
        size_t room = (size_t)(h->job.shm_bytes - h->fill), k = len < room ? len : room;
        memcpy(h->shm + h->fill, p, k);
        h->fill += k;
        p += k;
        len -= k;
        if (h->fill == h->job.shm_bytes) {
            na_status_t st = hw_flush(h, 0, err);
            if (st != NA_OK)
                return st;
        }
    }
    /* The tensor's last bytes (na_writer_write counted them already). */
    return w->cur_done == w->bytes[w->cur] ? hw_flush(h, 1, err) : NA_OK;
}

static na_status_t hw_begin(na_writer_t *w, size_t i, na_err_t *err)
{
    h5w_t *h = (h5w_t *)w;
    h->first = 0;
    h->fill = 0;
    return NA_OK;
}

static na_status_t hw_meta(na_writer_t *w, const char *key, const char *value, na_err_t *err)
{
    h5w_t *h = (h5w_t *)w;
    size_t i = 0;
    while (i < h->n_meta && strcmp(h->mkey[i], key))
        i++;
    char *v = strdup(value), *k = i == h->n_meta ? strdup(key) : NULL;
    char **nk = i == h->n_meta ? realloc(h->mkey, (i + 1) * sizeof *nk) : h->mkey;
    if (nk)
        h->mkey = nk;
    char **nv = i == h->n_meta ? realloc(h->mval, (i + 1) * sizeof *nv) : h->mval;
    if (nv)
        h->mval = nv;
    if (!v || !nk || !nv || (i == h->n_meta && !k)) {
        free(v);
        free(k);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    if (i == h->n_meta) {
        h->mkey[i] = k;
        h->mval[i] = NULL;
        h->n_meta++;
    }
    free(h->mval[i]);
    h->mval[i] = v;
    return NA_OK;
}

static na_status_t hw_finish(na_writer_t *w, na_err_t *err)
{
    h5w_t *h = (h5w_t *)w;
    size_t len = 0;
    for (size_t i = 0; i < h->n_meta; i++)
        len += 8 + strlen(h->mkey[i]) + strlen(h->mval[i]);
    uint8_t *pl = malloc(len ? len : 1), *p = pl;
    if (!pl)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    for (size_t i = 0; i < h->n_meta; i++) {
        uint32_t kl = (uint32_t)strlen(h->mkey[i]), vl = (uint32_t)strlen(h->mval[i]);
        memcpy(p, &kl, 4);
        memcpy(p + 4, &vl, 4);
        memcpy(p + 8, h->mkey[i], kl);
        memcpy(p + 8 + kl, h->mval[i], vl);
        p += 8 + kl + vl;
    }
    int sent = na_h5p_send(h->sock, H5W_FINISH, 0, pl, len, NULL, 0);
    free(pl);
    if (sent != 0)
        return hw_dead(h, 0, err);
    na_status_t st = hw_answer(h, H5W_DONE, h->timeout_ms, NULL, 0, err);
    if (st != NA_OK)
        return st;
    /* The file is closed: the child's exit status is the last word. */
    int ws = 0;
    pid_t r;
    na_writer_set_child(-1);
    while ((r = waitpid(h->pid, &ws, 0)) < 0 && errno == EINTR)
        ;
    h->pid = -1;
    if (r < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        return na_err_set(err, NA_E_WRITE, "HDF5 writer process failed after closing the file");
    return NA_OK;
}

static void hw_free(na_writer_t *w)
{
    h5w_t *h = (h5w_t *)w;
    if (h->sock >= 0)
        close(h->sock);
    if (h->pid > 0) { /* an error stopped the write: the file is dropped */
        kill(h->pid, SIGKILL);
        na_writer_set_child(-1);
        while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (h->shm)
        munmap(h->shm, h->job.shm_bytes);
    if (h->job.where)
        munmap(h->job.where, H5W_WHERE);
    for (size_t i = 0; i < h->n_meta; i++) {
        free(h->mkey[i]);
        free(h->mval[i]);
    }
    free(h->mkey);
    free(h->mval);
    free(h->esize);
    free(h->unit);
    free(h->dead);
    na_writer_base_free(w);
    free(h);
}

static const struct na_writer_vtbl hw_vtbl = {hw_begin, hw_finish, hw_free, hw_data, hw_meta};

static na_status_t hw_open(int fd, const na_wopts_t *o, const na_wtensor_t *t, size_t n,
                           const na_wmeta_t *meta, size_t n_meta, na_writer_t **out,
                           na_err_t *err)
{
    *out = NULL;
    h5w_t *h = calloc(1, sizeof *h);
    if (!h)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    h->base.v = &hw_vtbl;
    h->pid = -1;
    h->sock = -1;
    h->timeout_ms = o->timeout > 0 ? (int)(o->timeout * 1000.0 + 0.5) : -1;
    /* --threads reaches us as OpenMP's count (cli/clean.c sets it).
     * ThreadSanitizer kills a child of a multi-threaded process that
     * starts threads ("starting new threads after multi-threaded fork is
     * not supported"): its builds deflate on the child's one thread. */
#ifdef NA_TSAN
    int wthreads = 1;
#else
    int wthreads = omp_get_max_threads();
#endif
    h->job = (h5w_job_t){o->input, o->path, t, n, H5W_SHM, wthreads, NULL};
    void *where = mmap(NULL, H5W_WHERE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                       -1, 0);
    if (where != MAP_FAILED) {
        h->job.where = where;
        h->job.where[0] = '\0';
    }
    na_status_t st = na_writer_base_init(&h->base, fd, t, n, err);
    h->esize = calloc(n ? n : 1, sizeof *h->esize);
    h->unit = calloc(n ? n : 1, sizeof *h->unit);
    h->base.copies = calloc(n ? n : 1, 1);
    if (st == NA_OK && (!h->esize || !h->unit || !h->base.copies))
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    for (size_t i = 0; st == NA_OK && i < n; i++) {
        h->esize[i] = na_dtype_bits(t[i].dtype) / 8;
        h->base.copies[i] = (uint8_t)(t[i].copied != 0);
        if (t[i].copied)
            h->base.bytes[i] = 0; /* copied by the child with H5Ocopy */
        else if (h->esize[i] == 0)
            st = na_err_set(err, NA_E_INTERNAL, "%s: no HDF5 element size for dtype %s",
                            t[i].name, na_dtype_name(t[i].dtype));
    }
    for (size_t i = 0; st == NA_OK && i < n_meta; i++)
        st = hw_meta(&h->base, meta[i].key, meta[i].value, err);
    /* The child reads job (and t) from its copy of our memory. */
    if (st == NA_OK)
        st = na_h5p_spawn(H5W_SHM, na_h5w_child_main, &h->job, &h->pid, &h->sock, &h->shm, err);
    if (st == NA_OK)
        na_writer_set_child(h->pid);
    /* READY comes after the whole structure is copied (H5Ocopy of every
     * untouched dataset): the time limit grows with the input, one second
     * per 20 MiB on top (far slower than a disk copies). */
    struct stat sb;
    int ready_ms = h->timeout_ms;
    if (ready_ms >= 0 && stat(o->input, &sb) == 0) {
        double ms = ready_ms + (double)sb.st_size / (20 << 20) * 1000.0;
        ready_ms = ms < 2e9 ? (int)ms : -1;
    }
    if (st == NA_OK)
        st = hw_answer(h, H5W_READY, ready_ms, h->unit, n * sizeof *h->unit, err);
    for (size_t i = 0; st == NA_OK && i < n; i++) {
        uint64_t ub = (uint64_t)h->esize[i] * h->unit[i]; /* one dataset element */
        if (h->unit[i] == 0 || ub > H5W_SHM)
            st = na_err_set(err, NA_E_UNSUPPORTED, "%s: elements of %llu bytes exceed the "
                            "writer's 32 MiB window", t[i].name, (unsigned long long)ub);
        else
            h->esize[i] = (uint32_t)ub;
    }
    if (st != NA_OK) {
        hw_free(&h->base);
        return st;
    }
    *out = &h->base;
    return NA_OK;
}

const na_writer_format_t na_writer_hdf5 = {"hdf5", hw_open};
