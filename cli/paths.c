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

/* Canonical spelling of path whether or not the file exists yet: its
 * realpath, else the realpath of its folder plus its last component.
 * 0 on success. */
static int canon(const char *path, char out[PATH_MAX])
{
    if (realpath(path, out))
        return 0;
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
    if (!path || strcmp(path, "-"))
        return 0;
    return cli_usage(cmd, "%s: '-' is not standard output: give a file name (./- for a file "
                     "named '-'%s%s)", flag, hint ? "; " : "", hint ? hint : "");
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
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    if (creatable && access(dir, W_OK) != 0) {
        cli_error(path, "%s: cannot create the file in '%s': %s", flag, dir, strerror(errno));
        return 4;
    }
    return 0;
}
