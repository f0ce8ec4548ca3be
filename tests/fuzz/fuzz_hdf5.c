/*
 * fuzz_hdf5.c - our HDF5 wrapper (formats/hdf5.c, the parent side, and
 * formats/hdf5_child.c, the forked child that makes every libhdf5 call)
 * on arbitrary bytes, through the crash-isolated path: each input is
 * written to one temporary file (the child opens the file by name with
 * H5Fopen, so an in-memory descriptor will not do), opened with
 * na_format_hdf5.open (directly, not through the sniffer: a mutated
 * signature would only reach the sniffer's own target), every tensor
 * read through the engine in windows of 64 or 4096 bytes, then closed.
 *
 * Outcomes that are NOT findings: the child crashing inside libhdf5
 * 1.10.8 (its CVE reproducers crash it; hdf5.c turns that into the
 * one-line error "libhdf5 crashed reading this file: SIGSEGV", exit 3)
 * or looping (the --hdf5-timeout, 2 s here, stops it). hdf5_child.c
 * resets SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT to SIG_DFL, so a libhdf5
 * crash kills the child by its signal and libFuzzer's and ASan's
 * handlers, inherited through fork, do not report it as a crash.
 *
 * Findings (abort() or a sanitizer report in this process): any crash,
 * leak or sanitizer report in the PARENT; an error message that is not
 * one line; open returning an input on error; the reports of what was
 * read not parsing back (JSON) or holding control bytes (text). The
 * child's exit status is not checked: under ASan an overread inside
 * libhdf5 (caught by the memcpy interceptor) and a bug in our child code
 * both end it with status 1, and only the stack in the log tells them
 * apart; such reports name na_h5c_main in their stack.
 *
 * libFuzzer's malloc limit hook (-rss_limit_mb) is inherited too: a
 * bogus 4 GB allocation by libhdf5 in the child leaves an oom- file in
 * the artifacts folder, from the child; the run goes on.
 *
 * Cost: one fork per input (of an ASan process) plus libhdf5's open:
 * 20 to 35 executions per second on the shared 2-core machine, so a
 * 20 s CI run does a few hundred.
 */
#include "fuzz_common.h"

#include <fcntl.h> /* open */

static char g_path[64];

/* The temporary file, created once per process and rewritten per input. */
static int fz_tmpfile(const uint8_t *data, size_t size)
{
    if (g_path[0] == '\0') {
        const char *dir = getenv("TMPDIR");
        snprintf(g_path, sizeof g_path, "%s/nanaudit-fuzz-h5-XXXXXX",
                 dir != NULL && strlen(dir) < 32 ? dir : "/tmp");
        int fd = mkstemp(g_path);
        if (fd < 0) {
            g_path[0] = '\0';
            return -1;
        }
        close(fd);
    }
    int fd = open(g_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0 || fz_write_all(fd, data, size) != 0)
        return -1;
    close(fd);
    return open(g_path, O_RDONLY | O_CLOEXEC);
}

static void fz_remove_tmp(void)
{
    if (g_path[0] != '\0')
        unlink(g_path);
}

/* gcc says __SANITIZE_ADDRESS__, clang 14 only __has_feature */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FZ_ASAN)
#define FZ_ASAN 1
#endif

#ifdef FZ_ASAN
#include <pthread.h>                    /* pthread_atfork */
#include <sanitizer/common_interface_defs.h> /* __sanitizer_set_death_callback */

/* In the forked child, ASan still intercepts libhdf5's memcpy and malloc
 * and stops the child on libhdf5's own overreads (exit status 1): a
 * contained libhdf5 bug, not ours. Without this, libFuzzer's death
 * callback, inherited through fork, would also save the input as a
 * crash- artifact from the child while the parent carries on. */
static void fz_child_quiet(void) { __sanitizer_set_death_callback(NULL); }
#endif
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int registered;
    if (!registered) {
        registered = 1;
        atexit(fz_remove_tmp);
#ifdef FZ_ASAN
        pthread_atfork(NULL, NULL, fz_child_quiet);
#endif
    }
    int fd = fz_tmpfile(data, size);
    if (fd < 0)
        return 0;
    na_open_opts_t o;
    na_open_opts_init(&o);
    o.window_bytes = (size & 1) ? 4096 : 3 * 4096;
    o.hdf5_timeout = 2.0; /* libhdf5 loops on some files: not our finding */
    o.threads = 1;
    na_input_t *in = NULL;
    na_err_t err = {{0}};
    na_status_t st = na_format_hdf5.open(g_path, fd, &o, &in, &err);
    fz_check_msg(st, &err);
    if (st != NA_OK) {
        if (in != NULL)
            abort(); /* open leaves *out NULL on error */
        return 0;
    }
    /* Notes (dangling and external links) hold link names as stored,
     * control bytes included; their readers escape them (cli/info.c
     * esc), so only their presence is checked here. */
    const char *const *notes;
    size_t nn = na_hdf5_notes(in, &notes);
    for (size_t i = 0; i < nn; i++)
        if (notes[i] == NULL)
            abort();
    size_t n = na_input_count(in);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        na_tensor_t t;
        na_err_t e2 = {{0}};
        memset(&t, 0, sizeof t);
        fz_check_msg(na_input_tensor(in, i, &t, &e2), &e2);
        uint64_t b = na_input_tensor_bytes(in, i);
        total = b > UINT64_MAX - total ? UINT64_MAX : total + b;
    }
    /* An HDF5 dataset's logical size is not bounded by the file size
     * (unallocated chunks read as the fill value; hdfgroup-tbigdims.h5
     * declares billions of elements in 6 KB), and each window is one
     * round trip to the child: scanning those is time proportional to
     * the declared size, a libFuzzer timeout and not a bug. Small data
     * is scanned in 64-byte windows, up to 4 MiB in 4096-byte ones. */
    if (total <= ((uint64_t)4 << 20))
        fz_scan_input(in, "fuzz.h5", (size & 2) && total <= 65536 ? 64 : 4096, 2.0);
    na_input_close(in);
    return 0;
}
