/*
 * write.c - what every writer of write.h shares: a 1 MiB output buffer
 * over write(2) that retries short writes and EINTR and turns ENOSPC and
 * EFBIG (RLIMIT_FSIZE, with SIGXFSZ ignored by the caller) into one-line
 * NA_E_WRITE errors; per-tensor byte accounting; the dispatch to a
 * format's writer; and the input's SHA-256 for provenance metadata.
 */
#include "write.h"

#include <errno.h>          /* errno, EINTR, EFAULT */
#include <fcntl.h>          /* open */
#include <openssl/crypto.h> /* OPENSSL_thread_stop */
#include <openssl/evp.h>    /* EVP_DigestInit_ex, EVP_sha256 */
#include <pthread.h>        /* pthread_create */
#include <semaphore.h>      /* sem_post, sem_wait */
#include <signal.h>         /* pthread_sigmask, kill */
#include <stdatomic.h>      /* atomic_int */
#include <stdlib.h>         /* malloc, free */
#include <sys/wait.h>       /* waitpid */
#include <string.h>         /* strcmp, strerror, memcpy */
#include <unistd.h>         /* write, read, close */

const na_writer_format_t *na_writer_for(const char *input_format)
{
    if (!input_format)
        return NULL;
    if (!strcmp(input_format, "safetensors"))
        return &na_writer_safetensors;
    if (!strcmp(input_format, "raw"))
        return &na_writer_raw;
    if (!strcmp(input_format, "npy"))
        return &na_writer_npy;
    if (!strcmp(input_format, "hdf5"))
        return &na_writer_hdf5;
    if (!strcmp(input_format, "npz"))
        return &na_writer_npz;
    if (!strcmp(input_format, "pytorch"))
        return &na_writer_torch;
    return NULL;
}

int na_writer_dtype_ok(const char *input_format, na_dtype_t dt)
{
    const na_writer_format_t *f = na_writer_for(input_format);
    return !(f == &na_writer_npy || f == &na_writer_npz) || na_npy_wdtype_ok(dt);
}

int na_writer_rowcopy(const char *input_format)
{
    const na_writer_format_t *f = na_writer_for(input_format);
    return f == &na_writer_hdf5 || f == &na_writer_npz;
}

na_status_t na_writer_base_init(na_writer_t *w, int fd, const na_wtensor_t *t, size_t n,
                                na_err_t *err)
{
    w->fd = fd;
    w->used = 0;
    w->written = 0;
    w->n = n;
    w->cur = n;
    w->cur_done = 0;
    w->buf = malloc(NA_WBUF);
    w->bytes = malloc((n ? n : 1) * sizeof *w->bytes);
    if (!w->buf || !w->bytes)
        return na_err_set(err, NA_E_NOMEM, "out of memory for the output buffer");
    for (size_t i = 0; i < n; i++)
        w->bytes[i] = t[i].bytes;
    return NA_OK;
}

void na_writer_base_free(na_writer_t *w)
{
    free(w->buf);
    free(w->bytes);
    free(w->header);
    free(w->copies);
}

uint64_t na_writer_header_find(const na_writer_t *w, const char *needle, size_t len)
{
    for (size_t i = 0; w->header && len && i + len <= w->header_len; i++)
        if (!memcmp(w->header + i, needle, len))
            return i;
    return UINT64_MAX;
}

/* Incremental SHA-256 (libcrypto EVP) for sha_file. new: NULL on out of
 * memory; final writes hex[65] (s NULL: "") and frees. */
typedef struct na_sha na_sha_t;
struct na_sha {
    EVP_MD_CTX *ctx;
};

static na_sha_t *na_sha_new(void)
{
    na_sha_t *s = malloc(sizeof *s);
    if (s && !(s->ctx = EVP_MD_CTX_new())) {
        free(s);
        return NULL;
    }
    if (s && EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(s->ctx);
        free(s);
        return NULL;
    }
    return s;
}

static void na_sha_update(na_sha_t *s, const void *p, size_t len)
{
    if (s)
        EVP_DigestUpdate(s->ctx, p, len);
}

static void na_sha_final(na_sha_t *s, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    hex[0] = '\0';
    if (!s)
        return;
    if (EVP_DigestFinal_ex(s->ctx, md, &len) == 1 && len == 32) {
        for (unsigned i = 0; i < 32; i++) {
            static const char hx[] = "0123456789abcdef";
            hex[2 * i] = hx[md[i] >> 4];
            hex[2 * i + 1] = hx[md[i] & 15];
        }
        hex[64] = '\0';
    }
    EVP_MD_CTX_free(s->ctx);
    free(s);
}

/* len bytes at p to w->fd, through short writes and EINTR. */
static na_status_t write_all(na_writer_t *w, const uint8_t *p, size_t len, na_err_t *err)
{
    size_t off = 0;
    while (off < len) {
        ssize_t k = write(w->fd, p + off, len - off);
        if (k < 0 && errno == EINTR)
            continue;
        /* The bytes to write are not readable: a large piece goes out
         * straight from the input's mapping (clean's copies), and the
         * kernel's copy of a page the input lost (truncated by another
         * process: formats/mapfile.c) fails with EFAULT instead of the
         * SIGBUS a load would raise. The input's problem, not the
         * output's. */
        if (k < 0 && errno == EFAULT)
            return na_err_set(err, NA_E_IO, "%s", NA_MAP_SHRANK_MSG);
        if (k <= 0)
            return na_err_set(err, NA_E_WRITE, "write error: %s",
                              k < 0 ? strerror(errno) : "no progress");
        off += (size_t)k;
        w->written += (uint64_t)k;
    }
    return NA_OK;
}

na_status_t na_writer_flush(na_writer_t *w, na_err_t *err)
{
    na_status_t st = write_all(w, w->buf, w->used, err);
    if (st == NA_OK)
        w->used = 0;
    return st;
}

na_status_t na_writer_put(na_writer_t *w, const void *buf, size_t len, na_err_t *err)
{
    const uint8_t *p = buf;
    while (len) {
        /* Once the buffer is empty, the rest of a large piece goes to
         * write(2) as it is, not copied through the buffer (the clean
         * write pass hands over whole chunks of cleaned values, tens of
         * MiB). */
        if (w->used == 0 && len >= NA_WBUF)
            return write_all(w, p, len, err);
        size_t room = NA_WBUF - w->used, k = len < room ? len : room;
        memcpy(w->buf + w->used, p, k);
        w->used += k;
        p += k;
        len -= k;
        if (w->used == NA_WBUF) {
            na_status_t st = na_writer_flush(w, err);
            if (st != NA_OK)
                return st;
        }
    }
    return NA_OK;
}

static na_status_t check_done(const na_writer_t *w, na_err_t *err)
{
    if (w->cur < w->n && w->cur_done != w->bytes[w->cur])
        return na_err_set(err, NA_E_INTERNAL, "tensor %zu got %llu of its %llu bytes", w->cur,
                          (unsigned long long)w->cur_done, (unsigned long long)w->bytes[w->cur]);
    return NA_OK;
}

na_status_t na_writer_begin(na_writer_t *w, size_t i, na_err_t *err)
{
    na_status_t st = check_done(w, err);
    if (st != NA_OK)
        return st;
    if (i >= w->n || (w->cur < w->n && i != w->cur + 1) || (w->cur == w->n && i != 0))
        return na_err_set(err, NA_E_INTERNAL, "tensor %zu written out of order", i);
    w->cur = i;
    w->cur_done = 0;
    return w->v->begin ? w->v->begin(w, i, err) : NA_OK;
}

na_status_t na_writer_write(na_writer_t *w, const void *buf, size_t len, na_err_t *err)
{
    if (w->cur >= w->n || len > w->bytes[w->cur] - w->cur_done)
        return na_err_set(err, NA_E_INTERNAL, "more bytes than the tensor holds");
    w->cur_done += len;
    return w->v->data ? w->v->data(w, buf, len, err) : na_writer_put(w, buf, len, err);
}

int na_writer_wants(const na_writer_t *w, size_t i)
{
    return !(w->copies && i < w->n && w->copies[i]);
}

int na_writer_late_meta(const na_writer_t *w)
{
    return w->v->meta != NULL;
}

na_status_t na_writer_set_meta(na_writer_t *w, const char *key, const char *value,
                               na_err_t *err)
{
    if (!w->v->meta)
        return na_err_set(err, NA_E_INTERNAL, "this writer takes metadata only at open");
    return w->v->meta(w, key, value, err);
}

na_status_t na_writer_finish(na_writer_t *w, na_err_t *err)
{
    na_status_t st = check_done(w, err);
    if (st == NA_OK && w->n && w->cur != w->n - 1)
        st = na_err_set(err, NA_E_INTERNAL, "only %zu of %zu tensors written",
                        w->cur == w->n ? 0 : w->cur + 1, w->n);
    if (st == NA_OK)
        st = na_writer_flush(w, err);
    if (st == NA_OK && w->v->finish)
        st = w->v->finish(w, err);
    return st;
}

void na_writer_free(na_writer_t *w)
{
    if (w)
        w->v->free(w);
}

static pid_t writer_child = -1; /* __atomic only */

void na_writer_set_child(pid_t pid)
{
    __atomic_store_n(&writer_child, pid, __ATOMIC_SEQ_CST);
}

void na_writer_stop_child(void)
{
    pid_t p = __atomic_load_n(&writer_child, __ATOMIC_SEQ_CST);
    if (p <= 0)
        return;
    int saved = errno;
    kill(p, SIGKILL);
    while (waitpid(p, NULL, 0) < 0 && errno == EINTR) /* ECHILD: reaped already */
        ;
    errno = saved;
}

/* na_sha256_file's loop; once *stop is set (another thread), it stops
 * at the next 1 MiB with NA_E_INTERNAL. */
static na_status_t sha_file(const char *path, char hex[65], const atomic_int *stop, na_err_t *err)
{
    hex[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return na_err_set(err, na_errno_status(errno), "cannot open for SHA-256: %s",
                          strerror(errno));
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    na_sha_t *s = na_sha_new();
    uint8_t *buf = malloc(NA_WBUF);
    na_status_t st = NA_OK;
    if (!s || !buf)
        st = na_err_set(err, NA_E_NOMEM, "SHA-256: out of memory");
    while (st == NA_OK) {
        if (stop && atomic_load_explicit(stop, memory_order_relaxed)) {
            st = na_err_set(err, NA_E_INTERNAL, "SHA-256 stopped");
            break;
        }
        ssize_t k = read(fd, buf, NA_WBUF);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            st = na_err_set(err, NA_E_IO, "read error: %s", strerror(errno));
        else if (k == 0)
            break;
        else
            na_sha_update(s, buf, (size_t)k);
    }
    char h[65];
    na_sha_final(s, h);
    if (st == NA_OK && !h[0])
        st = na_err_set(err, NA_E_INTERNAL, "SHA-256 final failed");
    if (st == NA_OK)
        memcpy(hex, h, 65);
    free(buf);
    close(fd);
    return st;
}

na_status_t na_sha256_file(const char *path, char hex[65], na_err_t *err)
{
    return sha_file(path, hex, NULL, err);
}

/* The thread is detached (but see NA_FORK_QUIESCE, format.h) and posts
 * `done` as its last touch of the job,
 * so that a process that ends without joining it (cli/sigbus.c's _exit)
 * leaves no thread unjoined. */
struct na_sha_job {
    char *path;
    char hex[65];
    na_status_t st;
    na_err_t err;
    atomic_int stop;
    sem_t done;
    pthread_t th;  /* NA_FORK_QUIESCE: joinable, joined once */
    int joined;
};

static void *sha_job_main(void *arg)
{
    na_sha_job_t *j = arg;
    j->st = sha_file(j->path, j->hex, &j->stop, &j->err);
    /* libcrypto's state for this thread, freed now: after the post the
     * process may end before the thread does */
    OPENSSL_thread_stop();
    sem_post(&j->done);
    return NULL;
}

na_sha_job_t *na_sha256_file_start(const char *path)
{
    na_sha_job_t *j = calloc(1, sizeof *j);
    if (!j || !(j->path = strdup(path))) {
        free(j);
        return NULL;
    }
    atomic_init(&j->stop, 0);
    pthread_attr_t at;
    int rc = sem_init(&j->done, 0, 0);
    if (rc == 0 && (rc = pthread_attr_init(&at)) == 0) {
#ifndef NA_FORK_QUIESCE
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
#endif
        /* Every signal blocked in the new thread (it inherits the mask),
         * so the caller's handlers (cli/clean.c removes its temporary
         * file) run on the caller's thread. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        rc = pthread_create(&j->th, &at, sha_job_main, j);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&at);
    }
    if (rc != 0) {
        free(j->path);
        free(j);
        return NULL;
    }
    return j;
}

void na_sha256_file_quiesce(na_sha_job_t *j)
{
#ifdef NA_FORK_QUIESCE
    if (j && !j->joined) {
        pthread_join(j->th, NULL); /* after its sem_post: done stays posted */
        j->joined = 1;
    }
#else
    (void)j;
#endif
}

na_status_t na_sha256_file_join(na_sha_job_t *j, char hex[65], na_err_t *err)
{
    while (sem_wait(&j->done) != 0 && errno == EINTR)
        ;
    na_sha256_file_quiesce(j); /* a joinable thread is joined */
    na_status_t st = j->st;
    if (st == NA_OK)
        memcpy(hex, j->hex, 65);
    else if (err)
        *err = j->err;
    sem_destroy(&j->done);
    free(j->path);
    free(j);
    return st;
}

void na_sha256_file_cancel(na_sha_job_t *j)
{
    if (!j)
        return;
    char unused[65];
    atomic_store(&j->stop, 1);
    (void)na_sha256_file_join(j, unused, NULL);
}
