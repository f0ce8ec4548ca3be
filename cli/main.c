/*
 * main.c - nanaudit's entry point, kept short after curl's
 * src/tool_main.c: pick the subcommand, parse its options (options.c),
 * run it (scan.c, info.c) and return its exit code (exitcode.c).
 */
#include "cli.h"

#include <errno.h>  /* errno, EBADF */
#include <fcntl.h>  /* fcntl, open */
#include <openssl/crypto.h> /* OPENSSL_init_crypto */
#include <poll.h>   /* poll, POLLERR */
#include <signal.h> /* signal, SIGPIPE */
#include <stdio.h>  /* printf */
#include <stdlib.h> /* free, getenv, setenv */
#include <string.h> /* strcmp */
#include <sys/stat.h> /* fstat, S_ISFIFO */
#include <unistd.h> /* dup2, close, execv, readlink */

int cli_stdout_closed;

static int dispatch(int argc, char **argv)
{
    cli_opts_t o;
    cli_opts_init(&o);
    if (argc < 2)
        return cli_usage(CLI_GLOBAL, "no command given");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "scan"))
        o.cmd = CLI_SCAN;
    else if (!strcmp(cmd, "info"))
        o.cmd = CLI_INFO;
    else if (!strcmp(cmd, "clean"))
        o.cmd = CLI_CLEAN;
    else if (cmd[0] != '-')
        return cli_usage(CLI_GLOBAL, "unknown command '%s'", cmd);

    int rc = cli_parse(argc, argv, o.cmd ? 2 : 1, &o);
    if (rc == 0 && o.help) {
        cli_print_help(o.cmd ? o.cmd : CLI_GLOBAL);
    } else if (rc == 0 && o.version) {
        printf("nanaudit %s\n", NA_VERSION);
    } else if (rc == 0 && !o.cmd) {
        rc = cli_usage(CLI_GLOBAL, "no command given");
    } else if (rc == 0) {
        if (o.cmd != CLI_INFO)
            cli_threads_start(&o);
        rc = o.cmd == CLI_SCAN ? cli_scan(&o) : (o.cmd == CLI_CLEAN ? cli_clean(&o) : cli_info(&o));
    }
    free(o.inputs);
    cli_clean_opts_free(&o.clean);
    cli_gate_free(&o);
    return rc;
}

/* A closed standard stream (`>&-`) is opened on /dev/null, so that no
 * file the run opens (a report, a temporary copy) takes its descriptor
 * and receives what is printed to it; 1 when standard output was. */
static int guard_std_fds(void)
{
    int out_closed = 0;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        out_closed |= fd == STDOUT_FILENO;
        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (n >= 0 && n != fd) { /* a lower one was closed too: taken in order */
            dup2(n, fd);
            close(n);
        }
    }
    return out_closed;
}

int cli_stdout_failed(void)
{
    if (cli_stdout_closed)
        return 1;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    /* A pipe whose reader has gone (`| head`, `| grep -q`) polls POLLERR
     * on its write end: the reader took what it wanted, and the verdict
     * (the exit code, the --report files) stands, as it did when SIGPIPE
     * ended such a run with the reports written (twentieth fresh-user
     * round: every report turned to ERROR, exit 4). What is still
     * buffered is dropped, quietly. */
    struct stat st;
    struct pollfd p = {1, POLLOUT, 0};
    if (fstat(1, &st) == 0 && S_ISFIFO(st.st_mode) && poll(&p, 1, 0) == 1 &&
        (p.revents & POLLERR)) {
        if (freopen("/dev/null", "w", stdout) == NULL)
            clearerr(stdout);
        return 0;
    }
    return 1;
}

/* libgomp's idle threads spin for GOMP_SPINCOUNT iterations (300,000 by
 * default) waiting for the next parallel region before they sleep. On a
 * machine whose cores are busy (a CI runner) a spinning thread takes the
 * CPU from the thread doing the serial work between regions: a sparse
 * 2^40-element HDF5 scan took 15-17 s with --threads 2 beside one busy
 * core, 4.1 s with --threads 1 or GOMP_SPINCOUNT=1000 (bench/RESULTS.md).
 * libgomp reads its environment once, when it is loaded, before main: so
 * when the user set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT, nanaudit
 * starts itself again, once, with GOMP_SPINCOUNT=1000 (about a
 * microsecond of spinning). When that exec fails, it goes on as it is.
 * It executes the binary's own path (readlink of /proc/self/exe): through
 * /proc/self/exe the process was named "exe" for ps -C, pgrep -x, top and
 * the OOM killer's log (round 37a); that link is the fallback (a binary
 * replaced meanwhile reads "... (deleted)"). */
/* 1 when s is what libgomp takes for OMP_NUM_THREADS: a comma-separated
 * list of positive integers, blanks around them allowed (OpenMP 5.2,
 * section 6.2). */
static int omp_threads_valid(const char *s)
{
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s < '0' || *s > '9')
            return 0;
        int pos = 0;
        while (*s >= '0' && *s <= '9')
            pos |= *s++ != '0';
        while (*s == ' ' || *s == '\t')
            s++;
        if (!pos)
            return 0;
        if (*s == '\0')
            return 1;
        if (*s++ != ',')
            return 0;
    }
}

static void omp_spin_short(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") != NULL || getenv("GOMP_SPINCOUNT") != NULL)
        return;
    if (setenv("GOMP_SPINCOUNT", "1000", 1) != 0)
        return;
    /* libgomp printed its warning for an invalid value as it loaded and
     * ignores the variable: the second process need not say it again
     * (round 37a) */
    const char *nt = getenv("OMP_NUM_THREADS");
    if (nt != NULL && !omp_threads_valid(nt))
        unsetenv("OMP_NUM_THREADS");
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        execv(self, argv);
    }
    execv("/proc/self/exe", argv);
    unsetenv("GOMP_SPINCOUNT");
}

int main(int argc, char **argv)
{
    omp_spin_short(argv);
    /* No OpenSSL clean-up at exit: an exit() while clean's hashing thread
     * is inside libcrypto (an error path, a library's fatal exit) freed
     * its tables under that thread, which crashed (exit 139; round 32b).
     * The process is ending: the kernel frees it all. */
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
    cli_sigbus_install();
    /* A reader that closes the pipe (`| head`) makes a write fail with
     * EPIPE, which cli_stdout_failed tells from a full or closed standard
     * output, instead of killing the run with SIGPIPE (exit 141). */
    signal(SIGPIPE, SIG_IGN);
    cli_stdout_closed = guard_std_fds();
    int rc = dispatch(argc, argv);
    /* A failed write to stdout (a full disk, a closed descriptor) is
     * exit 4. */
    if (cli_stdout_failed()) {
        cli_error(NULL, "write error on standard output");
        rc = cli_exit_merge(rc, 4);
    }
    return rc;
}
