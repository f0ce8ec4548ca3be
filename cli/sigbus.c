/*
 * sigbus.c - a SIGBUS from a mapped input: that file's error, the run
 * goes on.
 *
 * Why: inputs are read through mmap windows (formats/mapfile.c). When
 * another process truncates a file while we read it, touching a page past
 * the new end raises SIGBUS (mmap(2), "SIGBUS"). mapfile.c re-checks the
 * size with fstat for every window, but a truncation between that check
 * and the touch cannot be caught without a handler: without this file,
 * nanaudit died with "Bus error" and the shell's status 135, which a CI
 * gate cannot tell from a crash.
 *
 * Recovery (SA_SIGINFO): a fault the kernel raised for an address
 * (si_code BUS_ADRERR) inside a window mapfile.c has registered is handed
 * to na_map_sigbus, which maps anonymous zero pages over the rest of that
 * window and marks the map; the handler returns and the faulting load,
 * on whichever thread (an OpenMP worker, the GPU path's host copy), reads
 * zeros. Those zeros are never reported as data: the next read of that
 * map fails, and the scanner compares na_map_shrinks before and after
 * each tensor (cli/scan.c: the tensor and its file become errors, the
 * file's later tensors are not audited, the other inputs are, and every
 * report is written; cli/clean.c: nothing written, the report is, exit
 * 3). The handler itself only calls getpid, mmap and atomics
 * (signal-safety(7); mmap is a plain system call on Linux) and keeps
 * errno.
 *
 * Fallback: any other SIGBUS (one sent with kill, an address outside the
 * windows, a failed mmap) cannot be resumed. The handler then says what
 * happened in one line and exits 3 (DESIGN.md: "an input could not be
 * read"); no report is written, since the run was cut short at an
 * unknown point and its state is not safe to touch from a signal handler
 * (only write, unlink and _exit here). The line names the input being
 * read (cli_sigbus_input: scan sets it per file, clean for its one
 * input), as every other error line does; without one it says "an
 * input". During `clean` it also unlinks the hidden temporary output
 * (cli_sigbus_unlink), as cli/clean.c's SIGINT/SIGTERM handler does, so
 * nothing is left under either name.
 *
 * The HDF5 reader's forked child (formats/hdf5.c) inherits the handler;
 * there the default action is kept, so the parent still reports
 * "libhdf5 crashed reading this file: SIGBUS".
 */
#include "cli.h"
#include "write.h" /* na_writer_stop_child */

#include <errno.h>    /* errno */
#include <signal.h>   /* sigaction, raise, SIGBUS, BUS_ADRERR */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* free */
#include <string.h>   /* memset */
#include <unistd.h>   /* write, _exit, getpid, unlink, pause */

static pid_t g_main_pid; /* the process that installed the handler */
/* "nanaudit: PATH: " of the input being read (cli_sigbus_input), built
 * before the read so that the handler only writes it; length 0: none. */
static char g_input_msg[4096 + 32];
static volatile sig_atomic_t g_input_len;
static const char *g_tmp_path;              /* clean's temporary file */
static volatile sig_atomic_t *g_tmp_live;   /* nonzero while it exists */

void cli_sigbus_unlink(const char *path, volatile sig_atomic_t *live)
{
    g_tmp_path = path;
    g_tmp_live = live;
}

void cli_sigbus_input(const char *path)
{
    g_input_len = 0;
    char *esc = path ? na_escape_text_dup(path) : NULL;
    int n = esc ? snprintf(g_input_msg, sizeof g_input_msg, "nanaudit: %s: ", esc) : 0;
    free(esc);
    /* a name too long for the buffer: the line without it */
    g_input_len = n > 0 && (size_t)n < sizeof g_input_msg ? n : 0;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    static const char msg[] =
        "nanaudit: bus error reading an input: a file shrank while it was being read "
        "(truncated by another process?); no report written\n";
    static const char msg_clean[] =
        "nanaudit: bus error reading an input: a file shrank while it was being read "
        "(truncated by another process?); nothing written\n";
    /* with the input's name: "nanaudit: PATH: " + the rest of the line */
    static const char file_msg[] =
        "bus error: the file shrank while it was being read "
        "(truncated by another process?); no report written\n";
    static const char file_msg_clean[] =
        "bus error: the file shrank while it was being read "
        "(truncated by another process?); nothing written\n";
    if (getpid() != g_main_pid) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    int saved = errno;
    /* A truncated input under a registered window: zero pages, the run
     * goes on, the reader sees the mark (formats/mapfile.c). */
    if (si && si->si_code == BUS_ADRERR && na_map_sigbus(si->si_addr)) {
        errno = saved;
        return;
    }
    /* Threads that fault together: one message, from the first; the
     * others wait for its _exit. */
    static int entered;
    if (__atomic_exchange_n(&entered, 1, __ATOMIC_SEQ_CST))
        for (;;)
            pause();
    int clean = g_tmp_live != NULL;
    if (clean)
        na_writer_stop_child(); /* it would create the file again */
    if (clean && *g_tmp_live)
        unlink(g_tmp_path);
    ssize_t w;
    if (g_input_len > 0) {
        w = write(STDERR_FILENO, g_input_msg, (size_t)g_input_len);
        w = clean ? write(STDERR_FILENO, file_msg_clean, sizeof file_msg_clean - 1)
                  : write(STDERR_FILENO, file_msg, sizeof file_msg - 1);
    } else {
        w = clean ? write(STDERR_FILENO, msg_clean, sizeof msg_clean - 1)
                  : write(STDERR_FILENO, msg, sizeof msg - 1);
    }
    (void)w;
    _exit(3);
}

void cli_sigbus_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    g_main_pid = getpid();
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}
