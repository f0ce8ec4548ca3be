/*
 * paths.c - the files nanaudit writes besides -o (--report, --save-params)
 * are checked before any work starts (issue 4, "Safety: nothing lost"):
 * none may be an input file (the input is never modified) or the -o
 * output, and each must be creatable, so that a typo costs a usage error
 * and not a finished clean whose report then fails.
 */
#include "cli.h"

#include <errno.h>    /* errno */
#include <limits.h>   /* PATH_MAX */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* realpath, free */
#include <string.h>   /* strrchr, strcmp, strerror */
#include <strings.h>  /* strcasecmp */
#include <sys/stat.h> /* stat, S_ISDIR */
#include <unistd.h>   /* access */

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
    for (int fd = 1; fd <= 2; fd++)
        if (stat(path, &sp) == 0 && fstat(fd, &sf) == 0 && S_ISREG(sf.st_mode) &&
            sp.st_dev == sf.st_dev && sp.st_ino == sf.st_ino)
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
    if (stat(path, &sp) == 0) {
        if (S_ISDIR(sp.st_mode)) {
            cli_error(path, "%s: is a directory", flag);
            return 2;
        }
        if (creatable && access(path, W_OK) != 0) {
            cli_error(path, "%s: cannot write: %s", flag, strerror(errno));
            return 4;
        }
        return 0;
    }
    char dir[PATH_MAX], tgt[PATH_MAX];
    dir_of(cli_link_target(path, tgt) == 0 ? tgt : path, dir, sizeof dir); /* a dangling link */
    if (creatable && access(dir, W_OK) != 0) {
        cli_error(path, "%s: cannot create the file in '%s': %s", flag, dir, strerror(errno));
        return 4;
    }
    return 0;
}
