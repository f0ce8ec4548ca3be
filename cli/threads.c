/*
 * threads.c - start the run's OpenMP threads before any work, as many as
 * the system lets us.
 *
 * GNU libgomp ends the process with exit(1) ("libgomp: Thread creation
 * failed") when a parallel region cannot create its threads: under a
 * small RLIMIT_AS (`ulimit -v`), RLIMIT_NPROC or a container's pids.max.
 * For scan, exit 1 means "findings" and nothing was audited; for clean,
 * "written" with nothing written; and the exit ran OpenSSL's atexit
 * cleanup under clean's hashing thread, which then crashed (exit 139;
 * round 32b). So the threads are tried first with POSIX threads, which
 * report failure, and the pool libgomp keeps between regions is started
 * with that many at once: later regions of at most that many threads
 * reuse it (libgomp's team code). Under an address-space limit each
 * thread costs its stack (8 MiB by default) and, once it allocates, a
 * glibc malloc arena (64 MiB of address space on 64-bit: glibc's
 * HEAP_MAX_SIZE), so threads get at most half of the room left and the
 * run's buffers the rest; under a process limit 3 threads' room is left
 * for the run's own helpers (HELPERS). Fewer threads than asked for is one warning,
 * never an exit.
 */
#include "cli.h"

#include <errno.h>   /* ENOMEM */
#include <limits.h>  /* INT_MAX */
#include <stdio.h>   /* fopen, fscanf */
#include <sys/resource.h> /* getrlimit, RLIMIT_AS */
#include <unistd.h>  /* sysconf */
#include <omp.h>     /* omp_get_max_threads, omp_set_num_threads */
#include <pthread.h> /* pthread_create, pthread_join, pthread_cond_* */
#include <stdint.h>  /* SIZE_MAX */
#include <stdlib.h>  /* malloc, free, getenv, strtoull */
#include <string.h>  /* strerror */

typedef struct probe {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
} probe_t;

/* A probe thread: alive until every other one has been created, as
 * libgomp's team is. */
static void *probe_main(void *arg)
{
    probe_t *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->go)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* The stack libgomp gives its threads: OMP_STACKSIZE, else GOMP_STACKSIZE
 * ("N" in KiB, or with a B, K, M or G suffix: the OpenMP 5.2 spec, 6.6),
 * else 0 - the default of pthread_create. An invalid value is ignored, as
 * libgomp ignores it. */
static size_t omp_stack(void)
{
    const char *s = getenv("OMP_STACKSIZE");
    if (!s || !*s)
        s = getenv("GOMP_STACKSIZE");
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    unsigned shift = 10;
    switch (*end) {
    case 'b': case 'B': shift = 0; end++; break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    while (*end == ' ' || *end == '\t')
        end++;
    if (errno || end == s || *end || v > (SIZE_MAX >> shift))
        return 0;
    return (size_t)v << shift;
}

/* How many of want - 1 extra threads of stack bytes (0: the default) can
 * run at once; *why gets pthread_create's error when it stops short. */
static int probe_threads(int want, size_t stack, int *why)
{
    pthread_t *th = malloc(sizeof *th * (size_t)(want > 1 ? want - 1 : 1));
    probe_t p = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    pthread_attr_t at, *ap = NULL;
    if (stack && pthread_attr_init(&at) == 0) {
        ap = &at;
        if ((*why = pthread_attr_setstacksize(&at, stack)) != 0)
            want = 1; /* libgomp could not make such threads either */
    }
    int made = 0;
    if (!th)
        *why = ENOMEM;
    while (th && made < want - 1 && (*why = pthread_create(&th[made], ap, probe_main, &p)) == 0)
        made++;
    if (ap)
        pthread_attr_destroy(ap);
    pthread_mutex_lock(&p.mu);
    p.go = 1;
    pthread_cond_broadcast(&p.cv);
    pthread_mutex_unlock(&p.mu);
    for (int i = 0; i < made; i++)
        pthread_join(th[i], NULL);
    free(th);
    return made + 1;
}

/* Threads an address-space limit leaves room for (see above), each with
 * stack bytes (0: the default): INT_MAX without one; *mib gets the limit
 * in MiB. */
static int as_room(size_t stack, unsigned long long *mib)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return INT_MAX;
    *mib = (unsigned long long)rl.rlim_cur >> 20;
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r"); /* first field: address space, in pages */
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    unsigned long long used = (unsigned long long)pages * (unsigned long long)sysconf(_SC_PAGESIZE);
    pthread_attr_t a;
    if (!stack && pthread_getattr_default_np(&a) == 0) {
        pthread_attr_getstacksize(&a, &stack);
        pthread_attr_destroy(&a);
    }
    unsigned long long per = (stack ? stack : (size_t)8 << 20) + (64ull << 20);
    unsigned long long n = used < rl.rlim_cur ? (rl.rlim_cur - used) / 2 / per : 0;
    return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}

#define HELPERS 3

void cli_threads_start(cli_opts_t *o)
{
    int want = o->threads > 0 ? o->threads : omp_get_max_threads();
    want = want < 1 ? 1 : want > 4096 ? 4096 : want; /* --threads' range */
    unsigned long long mib = 0;
    size_t stack = omp_stack();
    int room = as_room(stack, &mib), target = want < room ? want : room;
    /* and room for the run's own helpers under a process limit: the HDF5
     * reader's and writer's processes, the verification's reader, the
     * hashing thread (round 34b: scan --threads 2 under --nproc=2 could
     * not fork its HDF5 reader, exit 4) */
    int why = 0, got = 0, use = target;
    if (target > 1) {
        got = probe_threads(target + HELPERS, stack, &why);
        if (got < target + HELPERS)
            use = got > HELPERS ? got - HELPERS : 1;
    }
    if (use < want) {
        if (got && got < target + HELPERS)
            cli_warn(NULL, "only %d of %d threads could be started (%s); running with %d, "
                     "leaving room for the run's helper processes", got, target + HELPERS,
                     strerror(why), use);
        else
            cli_warn(NULL, "the address-space limit (ulimit -v, %llu MiB) leaves room for %d "
                     "of the %d threads asked for; running with %d", mib, use, want, use);
        o->threads = o->open.threads = use;
    }
    omp_set_num_threads(use);
    if (use > 1) { /* the pool, kept for the run's regions; nothing shared */
#pragma omp parallel num_threads(use)
        {
#pragma omp barrier
        }
    }
}
