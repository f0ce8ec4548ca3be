/*
 * paths.c - the files nanaudit writes besides -o (--report, --save-params)
 * are checked before any work starts (issue 4, "Safety: nothing lost"):
 * none may be an input file (the input is never modified) or the -o
 * output, and each must be creatable, so that a typo costs a usage error
 * and not a finished clean whose report then fails.
 */
#include "cli.h"

#include <errno.h>    /* errno */
#include <fcntl.h>    /* open, fcntl, O_NONBLOCK */
#include <limits.h>   /* PATH_MAX */
#include <signal.h>   /* sigaction, raise, SIGINT, ... */
#include <stdio.h>    /* snprintf, fdopen, fclose */
#include <stdlib.h>   /* realpath, free, mkstemp, getenv */
#include <string.h>   /* strrchr, strcmp, strerror */
#include <strings.h>  /* strcasecmp */
#include <sys/stat.h> /* stat, S_ISDIR, fchmod, umask */
#include <time.h>     /* nanosleep */
#include <unistd.h>   /* access, fsync, unlink, close */

/* The folder part of path ("." when none) into dir[cap]. */
static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, cap, ".");
    else
        snprintf(dir, cap, "%.*s", (int)(slash - path + (slash == path)), path);
}

int cli_link_target(const char *path, char *out)
{
    /* at most 40 links, as Linux's path walk (path_resolution(7): ELOOP) */
    char cur[PATH_MAX], tgt[PATH_MAX];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
        return -1;
    for (int hops = 0; hops <= 40; hops++) {
        struct stat ls;
        if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode)) {
            memcpy(out, cur, strlen(cur) + 1);
            return 0;
        }
        ssize_t n = readlink(cur, tgt, sizeof tgt - 1);
        if (n < 0 || n >= (ssize_t)sizeof tgt - 1)
            return -1;
        tgt[n] = '\0';
        /* a relative target is relative to the link's folder */
        char dir[PATH_MAX], next[PATH_MAX];
        dir_of(cur, dir, sizeof dir);
        int k = tgt[0] == '/' ? snprintf(next, sizeof next, "%s", tgt)
                              : snprintf(next, sizeof next, "%s/%s", dir, tgt);
        if (k < 0 || k >= (int)sizeof next)
            return -1;
        memcpy(cur, next, (size_t)k + 1);
    }
    errno = ELOOP;
    return -1;
}

/* Canonical spelling of path whether or not the file exists yet: its
 * realpath, else the realpath of the folder plus the last component of
 * what its symbolic links name (a dangling link names the file a write
 * through it would create). 0 on success. */
static int canon(const char *path0, char out[PATH_MAX])
{
    if (realpath(path0, out))
        return 0;
    char path[PATH_MAX];
    if (cli_link_target(path0, path) != 0)
        return -1;
    char dir[PATH_MAX], rd[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    if (!realpath(dir, rd))
        return -1;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int k = snprintf(out, PATH_MAX, "%s/%s", strcmp(rd, "/") ? rd : "", base);
    return k < 0 || k >= PATH_MAX ? -1 : 0;
}

int cli_same_path(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[PATH_MAX], cb[PATH_MAX];
    return canon(a, ca) == 0 && canon(b, cb) == 0 && !strcmp(ca, cb);
}

int cli_check_dash(int cmd, const char *path, const char *flag, const char *hint)
{
    /* Many tools write standard output for '-'; nanaudit's reports and
     * copies are files only, so '-' would silently become ./- (an input
     * '-' is refused alike, formats/sniff.c). */
    if (!path)
        return 0;
    if (!strcmp(path, "-"))
        return cli_usage(cmd, "%s: '-' is not standard output: give a file name (./- for a "
                         "file named '-'%s%s)", flag, hint ? "; " : "", hint ? hint : "");
    /* /dev/stdout (or /dev/fd/1, /proc/self/fd/2) when standard output
     * or error is a regular file, a CI log: a report opened with O_TRUNC
     * through it cut the log, --save-params and -o --force renamed a new
     * file over it or over /dev/stdout itself (eighteenth fresh-user
     * round). A pipe or terminal there is no file to lose: a report
     * through it is read by whatever is on the other end. */
    struct stat sp, sf;
    for (int fd = 1; fd <= 2 && stat(path, &sp) == 0; fd++)
        if (fstat(fd, &sf) == 0 && S_ISREG(sf.st_mode) && sp.st_dev == sf.st_dev &&
            sp.st_ino == sf.st_ino)
            return cli_usage(cmd, "%s: '%s' is this run's standard %s, a file that writing "
                             "it would %s; give a file name of its own", flag, path,
                             fd == 1 ? "output" : "error",
                             strcmp(flag, "--report") ? "replace" : "truncate");
    return 0;
}

void cli_warn_out_format(const char *out, const char *format)
{
    /* extension, the format clean writes for it, and how to say both */
    static const struct {
        const char *ext, *format, *says;
    } kind[] = {{".safetensors", "safetensors", "a safetensors file"},
                {".npy", "npy", "a NumPy .npy file"},
                {".npz", "npz", "a NumPy .npz file"},
                {".h5", "hdf5", "an HDF5 file"},
                {".hdf5", "hdf5", "an HDF5 file"},
                {".nc", "hdf5", "an HDF5 file"},
                {".raw", "raw", "a raw file"}};
    const char *named = NULL, *is = NULL;
    size_t n = out ? strlen(out) : 0;
    for (size_t i = 0; i < sizeof kind / sizeof kind[0]; i++) {
        size_t k = strlen(kind[i].ext);
        if (n > k && !strcasecmp(out + n - k, kind[i].ext) && strcmp(kind[i].format, format))
            named = kind[i].says;
        if (!strcmp(kind[i].format, format))
            is = kind[i].says;
    }
    if (named && is)
        cli_warn(out, "named like %s, but clean writes the input's format: this is %s",
                 named, is);
    /* gzip raw input is read inflated; clean writes no gzip (round 37b) */
    if (n > 3 && !strcasecmp(out + n - 3, ".gz"))
        cli_warn(out, "named like a gzip file, but clean writes it uncompressed");
}

/* Why an existing, non-empty regular file at path is data ("holds
 * safetensors data", "is named like a data file"), else NULL. Reports
 * and parameter files are overwritten; data never is (tester round 27b:
 * `scan --report shards/model-*.safetensors`, the report name left out, made
 * the first shard the report: it was not audited, the gate said exit 0
 * and the shard became JSON). Content by na_sniff over the first 4 KiB
 * (an HDF5 user block up to 2 KiB is seen), names by na_name_claims_data
 * (raw data has no signature). */
static const char *data_kind(const char *path)
{
    static char said[64];
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block */
    struct stat st;
    if (fd < 0)
        return NULL;
    uint8_t head[4096];
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0
                    ? read(fd, head, sizeof head) : -1;
    close(fd);
    if (n <= 0)
        return NULL;
    na_kind_of_file_t k = na_sniff(head, (size_t)n, (uint64_t)st.st_size);
    /* JSON is a report unless it is a sharded checkpoint's index, whose
     * "weight_map" follows a short "metadata" (transformers' save_pretrained) */
    if (k == NA_FILE_JSON && memmem(head, (size_t)n, "\"weight_map\"", 12))
        k = NA_FILE_INDEX;
    if (k != NA_FILE_UNKNOWN && k != NA_FILE_JSON && k != NA_FILE_EMPTY) {
        snprintf(said, sizeof said, "holds %s data", na_kind_of_file_str(k));
        return said;
    }
    return na_name_claims_data(path) ? "is named like a data file" : NULL;
}

int cli_check_not_data(const char *path, const char *flag)
{
    const char *data = data_kind(path);
    if (!data)
        return 0;
    cli_error(path, "%s: the file exists and %s, which %s never replaces%s; nothing done: "
              "give another name, or remove the file first", flag, data, flag,
              strcmp(flag, "--report") ? "" : " (a report name left out before a glob?)");
    return 2;
}

int cli_check_side_output(const char *path, const char *flag, const char *const *inputs,
                          size_t n_inputs, const char *output, int creatable)
{
    for (size_t i = 0; i < n_inputs; i++) {
        struct stat si;
        if (stat(inputs[i], &si) == 0 && S_ISREG(si.st_mode) && cli_same_path(path, inputs[i])) {
            cli_error(path, "%s would overwrite an input file (%s); the input is never modified",
                      flag, inputs[i]);
            return 2;
        }
    }
    if (output && cli_same_path(path, output)) {
        cli_error(path, "%s would overwrite the -o output", flag);
        return 2;
    }
    struct stat sp;
    if (stat(path, &sp) == 0 && S_ISDIR(sp.st_mode)) {
        cli_error(path, "%s: is a directory", flag);
        return 2;
    }
    char dir[PATH_MAX];
    int e = creatable ? cli_cannot_write(path, dir) : 0;
    if (e && dir[0])
        cli_error(path, "%s: cannot create the file in '%s': %s", flag, dir, strerror(e));
    else if (e)
        cli_error(path, "%s: cannot write: %s", flag, strerror(e));
    return e ? 4 : 0;
}

int cli_cannot_write(const char *path, char *dir)
{
    struct stat sp;
    dir[0] = '\0';
    if (stat(path, &sp) == 0)
        return access(path, W_OK) != 0 ? errno : 0;
    char tgt[PATH_MAX];
    dir_of(cli_link_target(path, tgt) == 0 ? tgt : path, dir, PATH_MAX); /* a dangling link */
    if (stat(dir, &sp) == 0 && !S_ISDIR(sp.st_mode))
        return ENOTDIR; /* access(2) of a writable file says yes (tester round 23a) */
    return access(dir, W_OK) != 0 ? errno : 0;
}

/* The temporary file cli_write_file is writing, removed by a signal that
 * ends the run meanwhile; then the handler the run had takes the signal
 * (clean's removes its own temporary file and exits). */
static char g_wtmp[PATH_MAX];
static struct sigaction g_wold[CLI_END_SIGNALS];

const int cli_end_signals[CLI_END_SIGNALS] = {SIGINT,  SIGTERM, SIGHUP,    SIGQUIT,
                                              SIGUSR1, SIGUSR2, SIGALRM,   SIGVTALRM,
                                              SIGXCPU, SIGSYS,  SIGTRAP,   SIGIO,
                                              SIGPWR,  SIGSTKFLT};

static void wtmp_signal(int sig)
{
    if (g_wtmp[0])
        unlink(g_wtmp);
    for (int i = 0; i < CLI_END_SIGNALS; i++)
        if (cli_end_signals[i] == sig)
            sigaction(sig, &g_wold[i], NULL);
    raise(sig);
}

/* A signal the run ignores (nohup, trap '' TERM) stays ignored: the
 * handler removed the temporary file, the rename failed and the report
 * was gone, exit 4 (nineteenth fresh-user round). */
static void wtmp_guard(int on)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = wtmp_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < CLI_END_SIGNALS; i++) {
        if (on) {
            sigaction(cli_end_signals[i], NULL, &g_wold[i]);
            if (g_wold[i].sa_handler != SIG_IGN)
                sigaction(cli_end_signals[i], &sa, NULL);
        } else {
            sigaction(cli_end_signals[i], &g_wold[i], NULL);
        }
    }
}

/* cli_write_file's write into the file itself (O_TRUNC); with drop, a
 * regular file is removed after a failure. 0 or the errno. */
static int write_in_place(const char *real, int (*write)(void *ctx, FILE *fp), void *ctx,
                          int drop)
{
    /* A FIFO nobody reads would block the run for ever (eighteenth
     * fresh-user round): opened without waiting, it is ENXIO, "No such
     * device or address", instead; with a reader it is written as a
     * pipe. */
    struct stat sb;
    FILE *fp;
    if (stat(real, &sb) == 0 && S_ISFIFO(sb.st_mode)) {
        drop = 0;
        /* a reader that opens it a moment late (cat fifo started after
         * the run) is waited for, 10 s at most */
        int fd = -1;
        for (int tries = 0; tries < 200; tries++) {
            fd = open(real, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
            if (fd >= 0 || errno != ENXIO)
                break;
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (fd < 0)
            return errno;
        int fl = fcntl(fd, F_GETFL);
        fp = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "w") : NULL;
        if (!fp) {
            int e = errno;
            close(fd);
            return e;
        }
    } else {
        fp = fopen(real, "w");
    }
    int bad = !fp || write(ctx, fp) != 0 || fflush(fp) != 0;
    int e = errno;
    if (fp && fclose(fp) != 0 && !bad) { /* buffered: often only fclose fails */
        bad = 1;
        e = errno;
    }
    if (bad && drop)
        unlink(real);
    return bad ? (e > 0 ? e : -1) : 0;
}

int cli_write_file(const char *path, int (*write)(void *ctx, FILE *fp), void *ctx, int stale)
{
    /* A symbolic link (report.json -> runs/42.json) is written through,
     * as a shell's '>' writes it: its target is replaced, not the link;
     * a dangling link's target is created. */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) /* a pipe, /dev/null, a FIFO: */
        return write_in_place(path, write, ctx, 0);    /* as given (/proc's links too) */
    char real[PATH_MAX];
    if (cli_link_target(path, real) != 0)
        return errno > 0 ? errno : -1;
    int exists = stat(real, &sb) == 0;
    /* A regular file: written beside it and renamed over it, so that a
     * full disk, a signal or a crash leaves the old file (or none), never
     * a truncated one that a CI step would upload or parse (eighteenth
     * fresh-user round: a SIGTERM left 70 MB of cut-off JSON). */
    const char *slash = strrchr(real, '/');
    int dl = slash ? (int)(slash - real) + 1 : 0;
    if (snprintf(g_wtmp, sizeof g_wtmp, "%.*s.nanaudit-tmp-XXXXXX", dl, real) >=
        (int)sizeof g_wtmp)
        return ENAMETOOLONG;
    wtmp_guard(1);
    int fd = mkstemp(g_wtmp);
    if (fd < 0) {
        int e = errno;
        g_wtmp[0] = '\0';
        wtmp_guard(0);
        /* a writable file in a folder that is not: written in place, as
         * before (a signal may then cut it) */
        if (exists && (e == EACCES || e == EPERM || e == EROFS) && access(real, W_OK) == 0)
            return write_in_place(real, write, ctx, stale);
        return e;
    }
    mode_t um = umask(0); /* mkstemp makes 0600; a report is shared */
    umask(um);
    /* a file replaced keeps its permission bits (an 0600 one stays private) */
    mode_t mode = exists ? sb.st_mode & 07777 : 0666 & ~um;
    FILE *fp = fchmod(fd, mode) == 0 ? fdopen(fd, "w") : NULL;
    int bad = !fp || write(ctx, fp) != 0 || fflush(fp) != 0 || fsync(fd) != 0;
    int e = errno;
    if ((fp ? fclose(fp) : close(fd)) != 0 && !bad) { /* buffered: often only fclose fails */
        bad = 1;
        e = errno;
    }
    /* Test hook (tests/cli/gate_reports.sh): a SIGTERM with the file
     * written but not yet renamed, as a CI cancellation may send it. */
    if (!bad && getenv("NANAUDIT_TEST_WRITE_SIGTERM"))
        raise(SIGTERM);
    int inplace = 0;
    if (!bad && rename(g_wtmp, real) != 0) {
        bad = 1;
        e = errno;
        /* a file bind-mounted on its own (docker -v $PWD/audit.json:/out/
         * audit.json, a Kubernetes subPath) cannot be renamed over:
         * written in place, as before (twentieth fresh-user round) */
        inplace = exists && (e == EBUSY || e == EXDEV);
    }
    if (bad)
        unlink(g_wtmp);
    if (inplace) {
        g_wtmp[0] = '\0';
        wtmp_guard(0);
        return write_in_place(real, write, ctx, stale);
    }
    if (bad && stale && exists) /* an earlier run's report is not this run's */
        unlink(real);
    g_wtmp[0] = '\0';
    wtmp_guard(0);
    return bad ? (e > 0 ? e : -1) : 0;
}
