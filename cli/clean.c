/*
 * clean.c - `nanaudit clean` (issue 4): fit the steps of lib/clean.h on
 * each selected tensor, refuse what would lose data silently, then write
 * a cleaned copy through a format writer (formats/write.h) into a hidden
 * temporary file beside the output, re-read and verify it, fsync it and
 * rename it into place. Other tensors and the metadata are copied.
 *
 * Safety (DESIGN.md "Conventions", issue 4 "Safety"): the input is only
 * ever opened read-only; -o may not be the input (same st_dev/st_ino,
 * which catches symlinks and hard links); an existing output needs
 * --force; the temporary file '.nanaudit-tmp-XXXXXX-NAME' is removed on
 * every error and by the SIGINT/SIGTERM/SIGHUP handler, which only calls
 * unlink(2) and re-raises (both async-signal-safe, POSIX.1-2017 2.4.3);
 * SIGXFSZ is ignored so that a file-size limit is a write error (EFBIG)
 * we can clean up after. SIGKILL can leave the temporary file, never a
 * partial file under the output's name, since that name only appears by
 * rename(2) of a verified, fsync'ed file.
 */
#include "cli.h"
#include "clean_params.h"
#include "clean_report.h"
#include "write.h"

#include <dirent.h>   /* opendir, readdir */
#include <errno.h>    /* errno */
#include <stdarg.h>   /* va_list */
#include <stdatomic.h> /* atomic_int: g_commit */
#include <fcntl.h>    /* open, O_DIRECTORY */
#include <limits.h>   /* PATH_MAX */
#include <math.h>     /* fabs */
#include <signal.h>   /* sigaction, raise */
#include <stdlib.h>   /* mkstemps, calloc */
#include <string.h>   /* strrchr, strerror */
#include <sys/stat.h> /* stat, fchmod, umask */
#include <unistd.h>   /* unlink, fsync, close */

/* The temporary file the signal handler removes (the only global state
 * of the CLI: a signal handler has no other way to find it). */
static char g_tmp[PATH_MAX];
static volatile sig_atomic_t g_tmp_live;
/* The rename that publishes the copy: 1 while it runs, 2 once done. A
 * signal then no longer ends the run: during the rename it is kept for
 * after it (g_deferred: acted on if the rename fails), after it dropped -
 * the copy is complete and in place, and an exit status "killed by
 * SIGTERM" over it made a wrapper rerun without --force and fail on the
 * existing output (round 32b: 2-4 of 50 HDF5 runs, in the ~4 ms between
 * the rename and exit). Atomics: the handler may run on any thread (a
 * signal sent to the process reaches an OpenMP worker as well; TSan). */
static atomic_int g_commit, g_deferred;

static void on_signal(int sig)
{
    int commit = atomic_load(&g_commit);
    if (commit) {
        int none = 0;
        if (commit == 1)
            atomic_compare_exchange_strong(&g_deferred, &none, sig);
        return;
    }
    na_writer_stop_child(); /* first: it would create the file again */
    if (g_tmp_live)
        unlink(g_tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* A signal the caller ignores stays ignored (a background job started
     * with SIGINT ignored, `trap '' INT`), as sh and make do. */
    for (int k = 0; k < CLI_END_SIGNALS; k++) {
        struct sigaction old;
        if (sigaction(cli_end_signals[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(cli_end_signals[k], &sa, NULL);
    }
    cli_sigbus_unlink(g_tmp, &g_tmp_live); /* a truncated input: sigbus.c */
}

static void drop_tmp(void)
{
    if (g_tmp_live) {
        unlink(g_tmp);
        g_tmp_live = 0;
    }
}

/* The 64 zeros stand for the hash until it is known; the placeholder as
 * it appears inside the JSON-in-JSON of the header (quotes escaped). */
#define SHA_ZEROS "0000000000000000000000000000000000000000000000000000000000000000"
#define SHA_MARK "input_sha256\\\":\\\""

typedef struct crun {
    const cli_opts_t *o;
    int no_text;            /* failed before the input was opened: the stderr
                             * line says it all; the --report and JSON too */
    na_clean_opts_t eng;
    na_clean_opts_t follow_eng; /* eng without steps: followers (eng_of) */
    int samples;
    cli_clean_run_t r;
    na_input_t *in;
    json_t *params;
    json_t *params_used;    /* keys of params applied (warn_unused_params) */
    char cmdline[2048];
    na_sha_job_t *sha;      /* the input's SHA-256, on its own thread */
    size_t *group;          /* per entry: 1 + its --together group, or 0 */
    struct stat in_st;      /* the input when opened (input_unchanged) */
    int have_in_st;
    int probe_dir;          /* check_output passed: probe -o's directory */
    cli_device_t dev;       /* --device: where the write pass runs (device.c) */
    uint64_t shrinks;       /* na_map_shrinks when the run began (shrank) */
    char state_dir[PATH_MAX]; /* -o's directory: eng.state_dir */
} crun_t;

/* Whether a mapped file shrank since the run began (formats/mapfile.c):
 * a read of it failed, or a SIGBUS was resumed with zero pages
 * (cli/sigbus.c), and what was read since is not the file's data. */
static int shrank(const crun_t *c)
{
    return na_map_shrinks() != c->shrinks;
}

/* The input shrank while entry e was read: e is an error (unless its own
 * read error said so already, with its line) and the line names the
 * input and the tensor. Exit 3. */
static int entry_shrank(crun_t *c, cli_clean_entry_t *e)
{
    e->cleaned = 0;
    if (e->status && !strcmp(e->status, "error"))
        return 3;
    e->status = "error";
    snprintf(e->reason, sizeof e->reason, "%s", NA_MAP_SHRANK_MSG);
    cli_error(c->r.input, "%s: %s; nothing written", e->name ? e->name : "?", NA_MAP_SHRANK_MSG);
    return 3;
}

/* The input's SHA-256 into c->r.sha: the thread cli_clean started
 * before fitting (it read the file while the passes ran), or a read of
 * its own when no thread could be started. */
static na_status_t hash_input(crun_t *c, na_err_t *err)
{
    na_sha_job_t *j = c->sha;
    c->sha = NULL;
    return j ? na_sha256_file_join(j, c->r.sha, err) : na_sha256_file(c->r.input, c->r.sha, err);
}

/* The hash of the input, into c->r.sha; then, for safetensors, put it in
 * place of the zeros in the written header. 0, or -1 with err set. */
static int hash_end(crun_t *c, na_writer_t *w, int fd, na_err_t *err)
{
    if (!c->r.sha[0] && hash_input(c, err) != NA_OK)
        return -1;
    if (strcmp(c->r.format, "safetensors"))
        return 0;
    uint64_t at = na_writer_header_find(w, SHA_MARK SHA_ZEROS, strlen(SHA_MARK SHA_ZEROS));
    if (at == UINT64_MAX) {
        na_err_set(err, NA_E_INTERNAL, "no SHA-256 placeholder in the written header");
        return -1;
    }
    at += strlen(SHA_MARK);
    if (pwrite(fd, c->r.sha, 64, (off_t)at) != 64) {
        na_err_set(err, NA_E_WRITE, "write error: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* The next element of a comma-separated list at *p into el (cap bytes),
 * *p moved past it: 1, or 0 at the list's end. A comma inside a bracket
 * expression ('[' ... ']', fnmatch(3); a ']' first in it, after an
 * optional '!' or '^', is one of its characters) belongs to the pattern:
 * '/a[,]b' names "/a,b" (round 39a: it became '/a[' and ']b'). */
static int list_next(const char **p, char *el, size_t cap)
{
    if (!**p)
        return 0;
    const char *s = *p;
    size_t L = 0;
    while (s[L] && s[L] != ',') {
        if (s[L] == '[') {
            size_t e = L + 1;
            e += s[e] == '!' || s[e] == '^';
            e += s[e] == ']';
            while (s[e] && s[e] != ']')
                e++;
            if (s[e] == ']') { /* a whole bracket: commas in it are its own */
                L = e + 1;
                continue;
            }
        }
        L++;
    }
    snprintf(el, cap, "%.*s", (int)L, *p);
    *p += L + ((*p)[L] == ',');
    return 1;
}

/* 1 when an element of spec, a comma-separated list of names or globs
 * (--include, --exclude, --together), names entry i of in (named name):
 * cli_name_match, which tries an HDF5 dataset's other hard links too. */
static int list_match(const na_input_t *in, size_t i, const char *spec, const char *name)
{
    char el[1024];
    for (const char *p = spec; list_next(&p, el, sizeof el);)
        if (cli_name_match(in, i, name, el))
            return 1;
    return 0;
}

/* Whether entry k (named name) of in is selected by --include and
 * --exclude (list_match). */
static int selected(const cli_clean_opts_t *c, const na_input_t *in, size_t k, const char *name)
{
    int sel = c->n_include == 0;
    for (size_t i = 0; i < c->n_include && !sel; i++)
        sel = list_match(in, k, c->include[i], name);
    for (size_t i = 0; i < c->n_exclude && sel; i++)
        sel = !list_match(in, k, c->exclude[i], name);
    return sel;
}

static void warn(cli_clean_entry_t *e, unsigned long long v, const char *what)
{
    if (e->n_warn < CLI_CLEAN_MAX_WARN)
        snprintf(e->warn[e->n_warn++], sizeof e->warn[0], "%llu %s", v, what);
}

/* e->reason = msg without its leading "NAME: " (the report names it). */
static void set_reason(cli_clean_entry_t *e, const char *msg)
{
    int named = e->name && e->name[0] && na_reason_names(msg, e->name);
    snprintf(e->reason, sizeof e->reason, "%s", msg + (named ? strlen(e->name) + 2 : 0));
}

/* Entry e could not be cleaned: status "error", and as reason the
 * engine's message without its leading "TENSOR: " (the report names the
 * tensor already). */
static void entry_failed(cli_clean_entry_t *e, const char *msg)
{
    e->status = "error";
    set_reason(e, msg);
}

/* The warnings the emit pass decides (na_clean_emit counts them), for a
 * real run and --dry-run alike: the same report either way. eng: entry
 * e's engine options (eng_of). */
static void warn_emitted(cli_clean_entry_t *e, const na_clean_opts_t *eng)
{
    /* a follower (--together) keeps its NaN/Inf: exit 1 says so, and so
     * does its entry (-q lists it) */
    const na_stats_t *a = &e->ct.after;
    uint64_t left = a->nan + a->pos_inf + a->neg_inf;
    if (e->follower && left)
        warn(e, (unsigned long long)left,
             "NaN/Inf value(s) left as they are (it follows its --together partners; no step "
             "runs on it)");
    /* --nonfinite keep (the default for weights) writes them back: exit
     * 1, which a plain `clean model.safetensors -o out` gave with no word
     * of why (round 31b). Outliers set NaN and features without a finite
     * value have warnings of their own. */
    left = left > e->ct.nanned ? left - e->ct.nanned : 0;
    if (!e->follower && eng->nonfinite == NA_NF_KEEP && left && !e->ct.passthrough)
        warn(e, (unsigned long long)left,
             "NaN/Inf value(s) kept (--nonfinite keep, the default for weights; --nonfinite "
             "zero, mean or value=X replaces them)");
    if (e->ct.overflow)
        warn(e, (unsigned long long)e->ct.overflow, "value(s) overflowed the output dtype");
    if (e->ct.collisions)
        warn(e, (unsigned long long)e->ct.collisions,
             "cleaned value(s) equal a missing-value marker and read back as missing");
}

/* The engine options of entry e: the run's, or for a follower (named by
 * --together, and not selected or an HDF5 dimension scale:
 * cli_clean_entry_t.follower) none of the steps, so it only loses the rows
 * its partners drop. */
static const na_clean_opts_t *eng_of(const crun_t *c, const cli_clean_entry_t *e)
{
    return e->follower ? &c->follow_eng : &c->eng;
}

/* 1 when entry e's values are written normalized. CF readers unpack
 * stored * scale_factor + add_offset (CF 1.11 section 8.1): on normalized
 * values that would undo the normalization, so the writer leaves out the
 * packing attributes (na_wtensor_t.normalized, na_h5_packing_attr). */
static int normalizes(const crun_t *c, const cli_clean_entry_t *e)
{
    return e->cleaned && eng_of(c, e)->normalize != NA_NORM_NONE;
}

/* The report's warning for those attributes, decided at fit time so that
 * --dry-run warns as a real run does (t: entry e's tensor). */
static void warn_packing(const crun_t *c, cli_clean_entry_t *e, const na_tensor_t *t)
{
    static const char *const name[] = NA_PACKING_ATTRS;
    if (!normalizes(c, e) || !t->packed || e->n_warn >= CLI_CLEAN_MAX_WARN)
        return;
    char *w = e->warn[e->n_warn++];
    size_t n = 0, cap = sizeof e->warn[0];
    /* the attributes this dataset has (round 28a: it named
     * scale_factor/add_offset for a dataset with only valid_range) */
    for (size_t i = 0; i < sizeof name / sizeof name[0]; i++)
        if (t->packed & (1 << i) && n < cap)
            n += (size_t)snprintf(w + n, cap - n, "%s%s", n ? ", " : "", name[i]);
    if (n < cap)
        snprintf(w + n, cap - n, " dropped: values are normalized");
}

/* Patterns match every hard-link path of an HDF5 dataset the reader
 * kept (cli_name_match), but it keeps NA_HDF5_MAX_ALIASES per tensor: a
 * pattern written for a path beyond them matches nothing, which the
 * message should say when the input has such a tensor. */
_Static_assert(NA_HDF5_MAX_ALIASES == 64, "the hint below says 64");
static const char *unmatched_hint(const na_input_t *in, const cli_clean_entry_t *e, size_t n,
                                  const char *pat)
{
    /* HDF5 paths start with '/': 'temp' names nothing where '/temp' is a
     * dataset (fourth fresh-user round), so say which was meant */
    static char slash[1200];
    if (pat[0] != '/' && !strcmp(na_input_format(in), "hdf5")) {
        char full[1100];
        snprintf(full, sizeof full, "/%s", pat);
        for (size_t i = 0; i < n; i++) {
            if (cli_name_match(in, i, e[i].name, full)) {
                snprintf(slash, sizeof slash, " (HDF5 paths start with '/': did you mean '%s'?)",
                         full);
                return slash;
            }
        }
    }
    /* other formats' names have no leading '/' (round 39a: '/x' for the
     * .npz member 'x'), and blanks around a list element are part of it
     * (round 39a: '/y, /x') */
    char alt[1100];
    size_t b = strspn(pat, " \t"), L = strlen(pat + b);
    while (L > 0 && (pat[b + L - 1] == ' ' || pat[b + L - 1] == '\t'))
        L--;
    int blanks = b > 0 || b + L != strlen(pat); /* leading, trailing */
    if (blanks)
        snprintf(alt, sizeof alt, "%.*s", (int)L, pat + b);
    else if (pat[0] == '/' && strcmp(na_input_format(in), "hdf5"))
        snprintf(alt, sizeof alt, "%s", pat + 1);
    else
        alt[0] = '\0';
    for (size_t i = 0; alt[0] && i < n; i++) {
        if (cli_name_match(in, i, e[i].name, alt)) {
            snprintf(slash, sizeof slash, " (%s: did you mean '%s'?)",
                     blanks ? "blanks are part of a name" : "only HDF5 paths start with '/'", alt);
            return slash;
        }
    }
    /* a compound dataset is a tensor per numeric field (/comp.a), a
     * complex one two (/cx.real, /cx.imag): the dataset's own path names
     * none of them (round 36b) */
    size_t pl = strlen(pat);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(e[i].name, pat, pl) == 0 && e[i].name[pl] == '.') {
            snprintf(slash, sizeof slash, " (its fields or parts are tensors of their own: did "
                     "you mean '%s.*'?)", pat);
            return slash;
        }
    }
    for (size_t i = 0; i < na_input_count(in); i++) {
        const char *const *alias;
        uint64_t more = 0;
        na_hdf5_aliases(in, i, &alias, &more);
        if (more)
            return " (an HDF5 dataset is matched by at most 64 of its other hard-link "
                   "paths: see `nanaudit info`)";
    }
    return "";
}

static int refuse_run(crun_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 when list element el names an entry of the input (cli_name_match). */
static int any_named(const crun_t *c, const char *el)
{
    for (size_t i = 0; i < c->r.n; i++)
        if (cli_name_match(c->in, i, c->r.e[i].name, el))
            return 1;
    return 0;
}

/* One warning per element of an --include/--exclude list that names no
 * tensor of the input: a misspelt --exclude would otherwise clean what it
 * meant to keep with no sign of it. A warning, not an error (--together's
 * is exit 2): the same pattern list is often reused across files that
 * differ. But a near miss of a tensor of this input ('data/y' for the
 * HDF5 path '/data/y', '/comp' for its fields '/comp.*') is a typo
 * (round 38b: an --exclude'd label was z-scored, exit 0): refused, 2,
 * before anything is read (no entry listed). 0 otherwise. */
static int warn_unmatched(crun_t *c, const char *flag, const char *const *pat, size_t n_pat)
{
    char el[1024];
    for (size_t k = 0; k < n_pat; k++) {
        for (const char *p = pat[k]; list_next(&p, el, sizeof el);) {
            if (any_named(c, el))
                continue;
            const char *hint = unmatched_hint(c->in, c->r.e, c->r.n, el);
            if (strstr(hint, "did you mean")) {
                int r = refuse_run(c, "%s '%s' matches no tensor%s", flag, el, hint);
                c->r.n = 0;
                return r;
            }
            cli_warn(c->r.input, "%s '%s' matches no tensor%s", flag, el, hint);
        }
    }
    return 0;
}

static const char *out_dir(const char *outp, char *dir, size_t n);

/* 1 when path starts with a MATLAB v7.3 MAT-file's header (its HDF5
 * user block: "MATLAB 7.3 MAT-file", MathWorks' MAT-file format notes). */
static int is_matlab73(const char *path)
{
    char head[19];
    FILE *fp = fopen(path, "rb");
    int yes = fp && fread(head, 1, sizeof head, fp) == sizeof head &&
              memcmp(head, "MATLAB 7.3 MAT-file", sizeof head) == 0;
    if (fp)
        fclose(fp);
    return yes;
}

/* Decide defaults that depend on the format; 0 or 2. */
static int settle_options(crun_t *c)
{
    const cli_clean_opts_t *co = &c->o->clean;
    const char *fmt = na_input_format(c->in);
    int weights = !strcmp(fmt, "safetensors") || !strcmp(fmt, "pytorch"); /* torch.c's name */
    /* MATLAB stores arrays column-major: a 1000x20 matrix is the HDF5
     * dataset (20, 1000), whose axis 0 is MATLAB's columns. Samples along
     * it deleted a feature for a NaN (round 37b, HIGH): off unless asked */
    int matlab = !strcmp(fmt, "hdf5") && is_matlab73(c->r.input);
    if (matlab && co->samples == CLI_ON)
        cli_warn(c->r.input, "a MATLAB v7.3 file stores arrays transposed: axis 0 here is "
                 "MATLAB's last dimension (a 1000x20 matrix is 20 samples of 1000), so "
                 "--samples drops MATLAB columns");
    c->samples = co->samples == CLI_AUTO ? !weights && !matlab : co->samples == CLI_ON;
    c->eng = co->eng;
    /* Large row states go to a file beside the output (a dry run without
     * -o: $TMPDIR); NANAUDIT_CLEAN_STATE_FILE_MIN (bytes) moves the
     * threshold, for the tests (man page ENVIRONMENT) */
    if (c->r.output) {
        out_dir(c->r.output, c->state_dir, sizeof c->state_dir);
        c->eng.state_dir = c->state_dir;
    }
    const char *smin = getenv("NANAUDIT_CLEAN_STATE_FILE_MIN");
    if (smin && *smin >= '0' && *smin <= '9')
        c->eng.state_file_min = strtoull(smin, NULL, 10);
    c->eng.samples = c->samples;
    c->eng.max_locations = c->o->max_locations;
    if (c->o->zscore_given) { /* its usage errors: early_usage */
        c->eng.method = NA_OM_ZSCORE;
        c->eng.k = c->o->zscore;
    }
    if (!co->nonfinite_given)
        c->eng.nonfinite = c->samples ? NA_NF_DROP : NA_NF_KEEP;
    if (c->eng.method != NA_OM_NONE && !co->action_given) {
        if (!c->samples && matlab)
            return cli_usage(CLI_CLEAN, "%s on a MATLAB v7.3 file needs --outliers clip|nan|mean "
                             "(it has no sample axis by default: HDF5 axis 0 is MATLAB's last "
                             "dimension)", c->eng.method == NA_OM_ZSCORE ? "--zscore" : "--mad");
        if (!c->samples)
            return cli_usage(CLI_CLEAN, "%s on weights (%s tensors are not samples) needs "
                             "--outliers clip|nan|mean",
                             c->eng.method == NA_OM_ZSCORE ? "--zscore" : "--mad", fmt);
        c->eng.action = NA_OA_DROP;
    }
    if (!c->samples && (c->eng.nonfinite == NA_NF_DROP || c->eng.action == NA_OA_DROP))
        return cli_usage(CLI_CLEAN, "%s drop needs --samples (%s); use %s, or --samples if "
                         "axis 0 is a sample axis",
                         c->eng.nonfinite == NA_NF_DROP ? "--nonfinite" : "--outliers",
                         matlab ? "a MATLAB v7.3 array's axis 0 here is its last dimension"
                                : "axis 0 of a weight would change shape",
                         c->eng.nonfinite == NA_NF_DROP ? "--nonfinite zero" : "--outliers clip");
    if (co->n_together && !c->samples)
        return cli_usage(CLI_CLEAN, "--together needs --samples (%s tensors are weights, "
                         "without a sample axis)", fmt);
    /* --global only merges per-feature statistics: without samples it
     * would do nothing, which must not pass for having done something */
    if (c->eng.global && !c->samples)
        return co->samples == CLI_OFF
                   ? cli_usage(CLI_CLEAN, "--global needs --samples (--no-samples: one "
                               "statistic per tensor already)")
                   : cli_usage(CLI_CLEAN, "--global needs --samples (%s tensors are weights: "
                               "one statistic per tensor already)", fmt);
    /* before the fit, not when the writer meets the dtype after it */
    if (c->eng.out_dtype != NA_DT_INVALID && !na_writer_dtype_ok(fmt, c->eng.out_dtype))
        return cli_usage(CLI_CLEAN, "--out-dtype %s: a .%s file has no such type (numpy has "
                         "no bfloat16 or float8); use F16, F32 or F64",
                         na_dtype_name(c->eng.out_dtype), fmt);
    c->follow_eng = c->eng;
    c->follow_eng.nonfinite = NA_NF_KEEP;
    c->follow_eng.method = NA_OM_NONE;
    c->follow_eng.k = 0.0;
    c->follow_eng.action = NA_OA_NONE;
    c->follow_eng.normalize = NA_NORM_NONE;
    c->follow_eng.out_dtype = NA_DT_INVALID;
    return 0;
}

/* Usage errors that do not depend on the input's format: decided before
 * the input is opened (exit 2 whatever the input is). */
static int early_usage(const cli_opts_t *o)
{
    const cli_clean_opts_t *co = &o->clean;
    if (o->zscore_given && co->method_given)
        return cli_usage(CLI_CLEAN, "give one of --zscore and --mad");
    if (co->range_given && co->eng.normalize != NA_NORM_MINMAX)
        return cli_usage(CLI_CLEAN, "--feature-range needs --normalize minmax");
    if (co->action_given && !o->zscore_given && !co->method_given)
        return cli_usage(CLI_CLEAN, "--outliers needs --zscore K or --mad K (without one "
                         "there is no outlier step)");
    return 0;
}

/* Output checks before any work: 0 or 2. */
/* The directory of output path outp into dir (n bytes) and its base
 * name (a pointer into outp): the temporary file goes there. */
static const char *out_dir(const char *outp, char *dir, size_t n)
{
    const char *slash = strrchr(outp, '/');
    if (slash)
        snprintf(dir, n, "%.*s", (int)(slash - outp + (slash == outp)), outp);
    else
        snprintf(dir, n, ".");
    return slash ? slash + 1 : outp;
}

#define TMP_PREFIX ".nanaudit-tmp-XXXXXX-" /* + the output's base name */

/* Temporary files of earlier cleans to the same OUT name in dir, which
 * SIGKILL (the OOM killer, a preemption) leaves behind: one warning with
 * their count and size, since nothing else would ever mention them (round
 * 32b: an 85 MB one stayed unseen). Never removed: a clean running now
 * owns its own. */
static void warn_leftovers(const char *outp, const char *dir, const char *base)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t pl = strlen(TMP_PREFIX), n = 0;
    unsigned long long bytes = 0;
    char first[NAME_MAX + 1] = "";
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        struct stat sb;
        if (strlen(nm) != pl + strlen(base) || strncmp(nm, TMP_PREFIX, pl - 8) ||
            nm[pl - 1] != '-' || strcmp(nm + pl, base) ||
            fstatat(dirfd(d), nm, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (n++ == 0 || strcmp(nm, first) < 0) /* the first in name order */
            snprintf(first, sizeof first, "%s", nm);
        bytes += (unsigned long long)sb.st_size;
    }
    closedir(d);
    if (n)
        cli_warn(outp, "%zu temporary file(s) of an earlier clean to this name in '%s' (%s%s; "
                 "%llu bytes): left by a clean that was killed, or one running now; remove "
                 "them if none is", n, dir, first, n > 1 ? ", ..." : "", bytes);
}

/* What would make the write fail only after all the fitting: a base
 * name too long for the temporary file's, a path too long, and a
 * directory where the temporary file cannot be made (missing, not one,
 * read-only, or refusing files, as sysfs does even to root): one is made
 * and removed, the only test that holds for all of them. 0, or 4 after
 * one line. */
static int check_output_dir(const char *outp)
{
    char dir[PATH_MAX], probe[PATH_MAX];
    const char *base = out_dir(outp, dir, sizeof dir);
    long name_max = pathconf(dir, _PC_NAME_MAX);
    if (name_max > 0 && strlen(TMP_PREFIX) + strlen(base) > (size_t)name_max) {
        cli_error(outp, "the name is too long for clean's temporary file (%s%s: %zu bytes, "
                  "the file system allows %ld); use a shorter -o name", TMP_PREFIX, "NAME",
                  strlen(TMP_PREFIX) + strlen(base), name_max);
        return 4;
    }
    if (snprintf(probe, sizeof probe, "%s/" TMP_PREFIX "%s", dir, base) >= (int)sizeof probe) {
        cli_error(outp, "path too long");
        return 4;
    }
    int fd = mkstemps(probe, (int)strlen(base) + 1);
    if (fd < 0) {
        cli_error(outp, "cannot create a temporary file in '%s': %s", dir, strerror(errno));
        return 4;
    }
    close(fd);
    unlink(probe);
    warn_leftovers(outp, dir, base);
    return 0;
}

/* 1 when paths a and b name the same directory entry (./x and x, d/../x):
 * their directories resolve alike and their last components are equal. */
static int same_name(const char *a, const char *b)
{
    char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
    const char *ba = out_dir(a, da, sizeof da), *bb = out_dir(b, db, sizeof db);
    return !strcmp(ba, bb) && realpath(da, ra) && realpath(db, rb) && !strcmp(ra, rb);
}

static int check_output(crun_t *c)
{
    const cli_clean_opts_t *co = &c->o->clean;
    /* the --apply-params file is an input too (never replaced by a report) */
    const char *in[2] = {c->r.input, co->apply_params};
    size_t n_in = co->apply_params ? 2 : 1;
    const char *out = co->output;
    int rc = early_usage(c->o);
    if (!rc)
        rc = cli_check_dash(CLI_CLEAN, c->o->report, "--report",
                            "--format json prints the JSON report on standard output");
    if (!rc)
        rc = cli_check_dash(CLI_CLEAN, co->save_params, "--save-params", NULL);
    if (!rc)
        rc = cli_check_dash(CLI_CLEAN, out, "-o", NULL);
    if (rc)
        return rc;
    /* --report and --save-params first: neither may replace the input or
     * the output, and both must be writable before any work is done. */
    if (c->o->report)
        rc = cli_check_side_output(c->o->report, "--report", in, n_in, out, 1);
    if (!rc && co->save_params)
        rc = cli_check_side_output(co->save_params, "--save-params", in, 1, out, 1);
    if (!rc && c->o->report)
        rc = cli_check_not_data(c->o->report, "--report");
    if (!rc && co->save_params)
        rc = cli_check_not_data(co->save_params, "--save-params");
    if (!rc && c->o->report && co->save_params && cli_same_path(c->o->report, co->save_params)) {
        cli_error(co->save_params, "--save-params and --report name the same file");
        rc = 2;
    }
    /* A dry run with -o checks it as the real run would. */
    if (rc || (co->dry_run && !co->output))
        return rc;
    if (!co->output)
        return cli_usage(CLI_CLEAN, "-o FILE is required (or --dry-run)");
    struct stat si, so, sl;
    if (stat(c->r.input, &si) != 0)
        return 0; /* the open reports it */
    if (co->apply_params && cli_same_path(co->output, co->apply_params)) {
        cli_error(co->output, "is the --apply-params file; -o never replaces an input");
        return 2;
    }
    if (stat(co->output, &so) == 0) {
        if (so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
            cli_error(co->output, "is the input file%s; the input is never modified",
                      same_name(co->output, c->r.input) ? "" : " (same file through a link)");
            return 2;
        }
        if (S_ISDIR(so.st_mode)) {
            cli_error(co->output, "is a directory; -o takes a file name");
            return 2;
        }
        /* rename(2) would replace a device node or FIFO with a file */
        if (!S_ISREG(so.st_mode)) {
            cli_error(co->output, "is not a regular file (a device, FIFO or socket); -o takes "
                      "a file name");
            return 2;
        }
    }
    if (lstat(co->output, &sl) == 0 && !co->force) {
        cli_error(co->output, "exists%s; use --force to replace it",
                  S_ISLNK(sl.st_mode) ? " (a symbolic link)" : "");
        return 2;
    }
    c->probe_dir = 1;
    return 0;
}

/* The warnings a fit of entry e decides, replacing those of an earlier
 * fit (refit_joint fits again without a partner's rows). */
static void warn_fit(const crun_t *c, cli_clean_entry_t *e, const na_tensor_t *t)
{
    e->n_warn = 0;
    /* An integer dtype cannot hold the NaN: the emit refuses (exit 2), so
     * the report must not say it passed unchanged. */
    char pt[96] = "feature(s) without any finite value passed through unchanged";
    if (!na_dtype_is_float(e->ct.out_dtype))
        snprintf(pt, sizeof pt, "feature(s) without any finite value (%s cannot hold NaN)",
                 na_dtype_name(e->ct.out_dtype));
    if (e->ct.passthrough)
        warn(e, (unsigned long long)e->ct.passthrough, pt);
    /* With --apply-params the constant is the fit's, not this data's: a
     * varied column mapped to one value must not read as constant data
     * (eighteenth fresh-user round). */
    int mm = eng_of(c, e)->normalize == NA_NORM_MINMAX;
    if (e->ct.constant)
        warn(e, (unsigned long long)e->ct.constant,
             e->ct.fixed ? (mm ? "feature(s) constant in the fitted parameters (n_max == n_min) "
                                 "mapped to LO, whatever their values here"
                               : "feature(s) constant in the fitted parameters (n_std 0) mapped "
                                 "to 0, whatever their values here")
             : mm ? "constant feature(s) (max == min) mapped to LO"
                  : "constant feature(s) (std 0) mapped to 0");
    warn_packing(c, e, t);
}

/* Scan t for counts and statistics only (no z-score test, no locations),
 * with the run's --threads: the verification's re-scan and the count of
 * what a copied tensor keeps. */
static na_status_t count_scan(const crun_t *c, const na_tensor_t *t, na_result_t *res,
                              na_err_t *err)
{
    na_scan_opts_t so;
    na_scan_opts_init(&so);
    so.zscore = 0;
    so.max_locations = 0;
    so.threads = c->o->threads;
    return na_scan_tensor(t, &so, res, err);
}

/* A numeric tensor copied unchanged because clean cannot write its dtype
 * back (F8_*, F80, the parts of a complex tensor) or does not transform
 * (HDF5 variable-length sequences): its NaN and Inf go to
 * the output as they are, which is a finding of scan's default policy
 * (issue 4, exit 1), so the entry says how many (a warning: -q lists it).
 * Returns 0, 1, or the exit code of a read error (the entry failed).
 * copied_left: the warning and 0 or 1 from a scan already made. */
static int copied_left(cli_clean_entry_t *e, const na_result_t *res)
{
    uint64_t left = res->st.nan + res->st.pos_inf + res->st.neg_inf;
    if (left)
        warn(e, (unsigned long long)left, "NaN/Inf value(s) left as they are (copied unchanged)");
    return left ? 1 : 0;
}

static int copied_nonfinite(crun_t *c, cli_clean_entry_t *e, const na_tensor_t *t)
{
    na_result_t res;
    na_err_t err = {{0}};
    na_status_t st = count_scan(c, t, &res, &err);
    if (st != NA_OK) {
        entry_failed(e, err.msg);
        cli_error(c->r.input, "%s", err.msg);
        return cli_exit_for_status(st);
    }
    int rc = copied_left(e, &res);
    na_result_free(&res);
    return rc;
}

/* An HDF5 dataset with no storage written (na_tensor_t.constant) reads
 * as its fill value everywhere and may declare 2^40 rows: the fit, the
 * write and the verification took time in proportion (audit 25a: a
 * 1.4 KB file of 2^34 rows kept clean busy for minutes). No step changes
 * a constant (std 0 and MAD 0 flag nothing; drop keeps a feature without
 * finite values) except normalization of a finite value, a --nonfinite
 * fill (zero, value=X) of a NaN or Inf, and an --out-dtype other
 * than its own (round 26: both were skipped for a NaN fill); the caller
 * leaves out --apply-params, whose fixed statistics may, and --together,
 * which drops rows. Then it is copied as it is (the HDF5 writer keeps it
 * unallocated): 1 with e's reason set and its NaN/Inf counted as
 * copied_nonfinite counts them (*rc merged); else 0, and the full path
 * runs. */
static int constant_copied(crun_t *c, cli_clean_entry_t *e, const na_tensor_t *t, int *rc)
{
    na_result_t res;
    na_err_t err = {{0}};
    if (count_scan(c, t, &res, &err) != NA_OK)
        return 0; /* the fit meets the error and reports it */
    const na_clean_opts_t *o = &c->o->clean.eng;
    int finite = res.st.finite > 0;
    char v[48];
    if (finite)
        snprintf(v, sizeof v, "%.17g", res.st.min);
    else
        snprintf(v, sizeof v, "%s", res.st.nan ? "NaN" : res.st.pos_inf ? "Inf"
                                    : res.st.neg_inf ? "-Inf" : "a missing value");
    int nonfinite = res.st.nan + res.st.pos_inf + res.st.neg_inf > 0;
    int copy = !(o->out_dtype != NA_DT_INVALID && o->out_dtype != t->dtype) &&
               /* integers normalize to F32 (clean.h): a new dtype, missing markers too */
               !(o->normalize != NA_NORM_NONE && (finite || !na_dtype_is_float(t->dtype))) &&
               /* mean: no finite value to take it from, passed through */
               !(nonfinite && (o->nonfinite == NA_NF_ZERO || o->nonfinite == NA_NF_VALUE));
    if (copy) {
        snprintf(e->reason, sizeof e->reason, "no storage written: every value is the fill "
                 "value (%s), which no step changes; copied unchanged", v);
        *rc = cli_exit_merge(*rc, copied_left(e, &res));
    }
    na_result_free(&res);
    return copy;
}

/* 1 when a --together value names entry i (named name). */
static int named_together(const crun_t *c, size_t i, const char *name)
{
    for (size_t g = 0; name && g < c->o->clean.n_together; g++)
        if (list_match(c->in, i, c->o->clean.together[g], name))
            return 1;
    return 0;
}

/* --apply-params: the parameter file's tensors that no cleaned tensor of
 * the input used (a file fitted on other data, a tensor renamed or left
 * out): one warning naming the first three, since their statistics were
 * meant for something this run does not clean. */
static void warn_unused_params(const crun_t *c)
{
    json_t *ts = json_object_get(c->params, "tensors");
    const char *key;
    json_t *v;
    size_t n = 0;
    char names[400] = "";
    json_object_foreach(ts, key, v) {
        if (c->params_used && json_object_get(c->params_used, key))
            continue;
        size_t L = strlen(names);
        if (n < 3)
            snprintf(names + L, sizeof names - L, "%s'%.100s'", n ? ", " : "", key);
        n++;
    }
    if (n)
        cli_warn(c->o->clean.apply_params, "--apply-params: %zu tensor%s of the file %s not "
                 "cleaned in %s, %s parameters unused: %s%s", n, n == 1 ? "" : "s",
                 n == 1 ? "is" : "are", c->r.input, n == 1 ? "its" : "their", names,
                 n > 3 ? ", ..." : "");
}

/* The entries, named (for the pattern checks before the fit): 0, or 4
 * out of memory. */
static int list_entries(crun_t *c)
{
    size_t n = na_input_count(c->in);
    c->r.e = calloc(n ? n : 1, sizeof *c->r.e);
    if (!c->r.e) {
        cli_error(c->r.input, "out of memory");
        return 4;
    }
    c->r.n = n;
    for (size_t i = 0; i < n; i++) {
        na_tensor_t t;
        na_err_t err = {{0}};
        (void)na_input_tensor(c->in, i, &t, &err); /* an error entry keeps its name */
        c->r.e[i].name = t.name ? t.name : "";
    }
    return 0;
}

/* Per entry (list_entries made them): select, prepare, fit. Returns the
 * exit code so far. */
static int fit_all(crun_t *c)
{
    int rc = 0;
    size_t n = c->r.n;
    for (size_t i = 0; i <= n; i++) {
        /* The input shrank while entry i - 1 was read: it is an error, and
         * the report lists what was looked at (the later entries' bytes
         * are gone) */
        if (i > 0 && shrank(c)) {
            c->r.n = i;
            return cli_exit_merge(rc, entry_shrank(c, &c->r.e[i - 1]));
        }
        if (i == n)
            break;
        cli_clean_entry_t *e = &c->r.e[i];
        na_tensor_t t;
        na_err_t err = {{0}};
        na_status_t st = na_input_tensor(c->in, i, &t, &err);
        e->name = t.name;
        e->dtype = t.stored;
        memcpy(e->scale0, t.scale0, sizeof e->scale0);
        e->scale_other_axis = t.scale_other_axis;
        e->ndim = t.ndim;
        memcpy(e->shape, t.shape, sizeof e->shape);
        if (t.vlen) { /* the dataset's shape: its rows are what --together drops */
            e->ndim = t.vndim;
            memcpy(e->shape, t.vshape, sizeof e->shape);
        }
        e->status = "copied";
        e->samples = c->samples;
        int sel = selected(&c->o->clean, c->in, i, t.name ? t.name : "");
        int together = t.name && named_together(c, i, t.name);
        /* what clean cannot transform: unreadable, not numeric, a dtype
         * or a record/complex part it cannot write back, variable-length
         * sequences (HDF5) */
        int fixed = st != NA_OK || !t.src.read || t.stored != t.dtype || t.part || t.vlen;
        /* Not selected but named by --together (labels beside features:
         * --together /x,/y --exclude /y): a follower, which loses the
         * samples its partners drop and keeps its values (e->follower). */
        int follow = !sel && together && !fixed;
        /* BOOL named by --together (a mask beside the data) follows even
         * when selected: it never runs a step (na_clean_prepare) */
        int bool_follow = together && !fixed && t.dtype == NA_DT_BOOL;
        if ((fixed || !sel) && !follow) {
            e->fixed = fixed;
            if (st != NA_OK && sel && (t.stored != NA_DT_INVALID || st != NA_E_UNSUPPORTED)) {
                /* Fail closed (DESIGN.md): a selected numeric tensor that
                 * cannot be read (an HDF5 filter this libhdf5 lacks), or
                 * an entry whose header cannot be read at all (no dtype,
                 * NA_E_FORMAT: scan's exit 3), is not copied as if it had
                 * been cleaned. Object arrays and ragged sequences (no
                 * dtype, NA_E_UNSUPPORTED) are copied as stored, below. */
                entry_failed(e, err.msg);
                cli_error(c->r.input, "%s; clean cannot read it, nothing written (--exclude '%s' "
                          "copies it unchanged)", err.msg, t.name ? t.name : "?");
                rc = cli_exit_merge(rc, cli_exit_for_status(st));
                continue;
            }
            if (t.part) /* the writers cannot put one part back (nanaudit.h) */
                snprintf(e->reason, sizeof e->reason, "%s",
                         t.part == NA_PART_FIELD
                             ? "a field of a structured array: copied unchanged (clean cannot "
                               "write fields back into its records)"
                             : "a part of a complex array: copied unchanged (clean does not "
                               "transform complex numbers)");
            else if (t.stored != t.dtype)
                snprintf(e->reason, sizeof e->reason, "%s: copied unchanged", na_dtype_name(t.stored));
            else if (st == NA_OK && t.vlen)
                snprintf(e->reason, sizeof e->reason, "variable-length sequences: copied unchanged "
                         "(clean does not transform them)");
            else if (st != NA_OK || !t.src.read)
                set_reason(e, err.msg);
            else
                snprintf(e->reason, sizeof e->reason, "not selected");
            if (st == NA_OK && t.src.read && sel && (t.stored != t.dtype || t.part || t.vlen))
                rc = cli_exit_merge(rc, copied_nonfinite(c, e, &t));
            /* Values clean does not read (strings beside the data; HDF5
             * ragged sequences, which have no dtype; not a .npz object
             * array, whose rows are pickles), whose rows the writer can
             * copy selectively: --together can name it, and it then loses
             * its partners' samples (join_groups). */
            int hdf5 = !strcmp(c->r.format, "hdf5");
            e->regrefs = hdf5 && st == NA_OK && !t.src.read &&
                         !strcmp(err.msg, NA_HDF5_REASON_REGREFS); /* finish warns */
            /* references of either kind: rows_copy refuses them */
            int refs = hdf5 && st == NA_OK && !t.src.read &&
                       (e->regrefs || !strcmp(err.msg, NA_HDF5_REASON_REFS));
            e->rowcopy = !refs && ((st == NA_OK && (!t.src.read || t.vlen)) ||
                          (st == NA_E_UNSUPPORTED && t.stored == NA_DT_INVALID &&
                           !strcmp(c->r.format, "hdf5"))) &&
                         !t.part && e->ndim >= 1 && c->samples && na_writer_rowcopy(c->r.format);
            if (e->rowcopy && together) {
                na_status_t rs = na_clean_rows_prepare(t.name, e->ndim, e->shape, &c->follow_eng,
                                                       &e->ct, &err);
                if (rs != NA_OK) {
                    entry_failed(e, err.msg);
                    cli_error(c->r.input, "%s", err.msg);
                    rc = cli_exit_merge(rc, cli_exit_for_status(rs));
                    continue;
                }
                e->rowfollow = 1;
                char why[sizeof e->reason];
                snprintf(why, sizeof why, "%s", e->reason);
                snprintf(e->reason, sizeof e->reason,
                         "%.400s, named by --together: loses the samples its partners drop, "
                         "values copied", why);
            }
            /* .npz members are copied as stored (npz_write.c), and a .npy
             * whose array is not cleaned is copied whole (npy_write.c),
             * object arrays included: their pickles are copied, never
             * loaded */
            int raw_copy = !strcmp(c->r.format, "hdf5") || !strcmp(c->r.format, "npz") ||
                           !strcmp(c->r.format, "npy");
            if (e->dtype == NA_DT_INVALID && !raw_copy) {
                /* No dtype to write it with, in a format whose writer
                 * needs one (HDF5 copies by H5Ocopy, .npz and .npy copy
                 * stored bytes; safetensors and raw have no such
                 * entries): a guard. */
                e->status = "error";
                cli_error(c->r.input, "%s: %s; clean can neither clean nor copy it, nothing written",
                          e->name, e->reason);
                rc = cli_exit_merge(rc, 3);
            }
            continue;
        }
        /* A scalar (rank 0: a training step, a netCDF grid-mapping or
         * time variable) has no feature axis: normalized it would become
         * LO or 0, and it is never an outlier. An HDF5 dimension scale
         * (a netCDF-4 coordinate: /time, /lat) holds coordinates, not
         * data: normalized, the grid would be lost. Copied unless
         * --include or --together names them (a coordinate that loses
         * rows with its data); their NaN/Inf are counted as any copied
         * tensor's. */
        if ((t.ndim == 0 || t.dim_scale) && c->o->clean.n_include == 0 && !together) {
            snprintf(e->reason, sizeof e->reason, "%s: copied unchanged (--include it to clean it)",
                     t.dim_scale ? "an HDF5 dimension scale (coordinates)" : "a scalar (rank 0)");
            rc = cli_exit_merge(rc, copied_nonfinite(c, e, &t));
            continue;
        }
        if (t.constant && !together && !c->params && constant_copied(c, e, &t, &rc))
            continue;
        /* Followers lose the rows their partners drop and keep their
         * values (no step runs on them: eng_of): a tensor the selection
         * leaves out, or a coordinate that --together names and
         * --include does not (--include cleans it as data). */
        e->follower = follow || bool_follow ||
                      (t.dim_scale && together && c->o->clean.n_include == 0);
        st = na_clean_prepare(&t, eng_of(c, e), &e->ct, &err);
        if (st == NA_E_UNSUPPORTED && (c->o->clean.n_include == 0 || e->follower)) {
            set_reason(e, err.msg);
            e->fixed = t.dtype != NA_DT_BOOL; /* BOOL can follow: --together is the fix */
            e->follower = 0; /* copied: --together refuses it as a partner */
            /* not a dtype clean writes: copied, as not selected */
            rc = cli_exit_merge(rc, copied_nonfinite(c, e, &t));
            continue;
        }
        if (st == NA_OK && c->params && !e->follower) { /* followers: no statistics */
            char why[NA_ERR_LEN];
            const char *key = cli_params_key(c->params, c->in, i, t.name);
            if (key && c->params_used)
                json_object_set_new(c->params_used, key, json_true());
            if (cli_params_apply(c->params, key, &c->eng, &e->ct, &e->pnull, why, sizeof why)) {
                cli_error(c->o->clean.apply_params, "%s", why);
                na_clean_tensor_free(&e->ct);
                entry_failed(e, why);
                c->r.n = i + 1; /* the report lists what was looked at */
                return 2;
            }
        }
        if (st == NA_OK)
            st = na_clean_fit(&t, eng_of(c, e), &e->ct, &err);
        /* 64-bit integers go through double: beyond 2^53 a value could
         * come back rounded even where no step changes it */
        if (st == NA_OK && (e->dtype == NA_DT_I64 || e->dtype == NA_DT_U64) &&
            e->ct.before.finite &&
            (e->ct.before.max >= 0x1p53 || e->ct.before.min <= -0x1p53))
            st = na_err_set(&err, NA_E_UNSUPPORTED,
                            "%s: %s values reach 2^53 or beyond, which clean's double "
                            "arithmetic cannot carry exactly; --exclude '%s' copies it unchanged",
                            t.name, na_dtype_name(e->dtype), t.name);
        /* the input cut while this tensor was read: its line names the
         * tensor and says nothing is written, as for the write pass (it
         * said only "in.safetensors: the file shrank ..."; round 32b) */
        if (st == NA_E_IO && !strcmp(err.msg, NA_MAP_SHRANK_MSG)) {
            c->r.n = i + 1;
            return cli_exit_merge(rc, entry_shrank(c, e));
        }
        if (st != NA_OK) {
            entry_failed(e, err.msg);
            cli_error(c->r.input, "%s", err.msg);
            rc = cli_exit_merge(rc, cli_exit_for_status(st));
            continue;
        }
        e->cleaned = 1;
        e->status = "cleaned";
        if (e->follower)
            snprintf(e->reason, sizeof e->reason, "%s named by --together: loses the samples "
                     "its partners drop, values unchanged",
                     follow ? "not selected,"
                     : bool_follow ? "BOOL" : "an HDF5 dimension scale (coordinates)");
        warn_fit(c, e, &t);
    }
    return rc;
}

/* A group's samples (join_groups): G_STEP1 some member drops in step 1,
 * G_STEP2 some member drops in step 2 (NA_CLEAN_LATE's bit: a refit's
 * mask passes it on). */
#define G_STEP1 1u
#define G_STEP2 NA_CLEAN_LATE

/* Fit entry i again with the group's step 1 drops (u & G_STEP1) gone
 * before step 1 (NA_CLEAN_ROW_JOINT), but those its own step 1 drops
 * (left to it, so its report says why), and with late, the group's step
 * 2 drops (u & G_STEP2) that its own step 2 does not make, gone after
 * step 2's statistics (clean.h, na_clean_tensor_t.late). 0, or an exit
 * code. */
static int refit_joint(crun_t *c, size_t i, const uint8_t *u, int late)
{
    cli_clean_entry_t *e = &c->r.e[i];
    na_tensor_t t;
    na_err_t err = {{0}};
    uint64_t rows = e->ct.rows, nf = e->ct.nfeat;
    uint8_t *own = malloc(rows ? (size_t)rows : 1), *pass = malloc(nf ? (size_t)nf : 1);
    if (!own || !pass) {
        free(own);
        free(pass);
        cli_error(c->r.input, "out of memory");
        return 4;
    }
    /* own: G_STEP1 for the rows that go before step 1, NA_CLEAN_LATE for
     * those that go after step 2 (its own step 2 drops stay its own: the
     * refit flags them again, from the same statistics) */
    for (uint64_t r = 0; r < rows; r++) {
        unsigned s = na_clean_row(&e->ct, r);
        own[r] = (uint8_t)(((u[r] & G_STEP1) && s != 1 ? G_STEP1 : 0) |
                           (late && (u[r] & G_STEP2) && s == 0 ? NA_CLEAN_LATE : 0));
    }
    /* whether a feature has finite values is the input's (first fit) */
    for (uint64_t f = 0; f < nf; f++)
        pass[f] = e->ct.feat[f].passthrough;
    na_clean_tensor_free(&e->ct);
    memset(&e->ct, 0, sizeof e->ct);
    na_status_t st = na_input_tensor(c->in, i, &t, &err);
    if (st == NA_OK)
        st = na_clean_prepare(&t, eng_of(c, e), &e->ct, &err);
    if (st == NA_OK && c->params && !e->follower) {
        char why[NA_ERR_LEN];
        if (cli_params_apply(c->params, cli_params_key(c->params, c->in, i, t.name), &c->eng,
                             &e->ct, &e->pnull, why, sizeof why)) {
            cli_error(c->o->clean.apply_params, "%s", why);
            free(own);
            free(pass);
            return 2;
        }
    }
    if (st == NA_OK && !e->ct.fixed && e->ct.nfeat == nf) {
        for (uint64_t f = 0; f < nf; f++)
            e->ct.feat[f].passthrough = pass[f];
        e->ct.pass_known = 1;
    }
    free(pass);
    if (st == NA_OK) {
        for (uint64_t r = 0; r < rows; r++)
            if (own[r] & G_STEP1)
                na_clean_row_set(&e->ct, r, NA_CLEAN_ROW_JOINT);
        e->ct.late = late ? own : NULL;
        st = na_clean_fit(&t, eng_of(c, e), &e->ct, &err);
        e->ct.late = NULL;
    }
    free(own);
    if (st != NA_OK) {
        cli_error(c->r.input, "%s", err.msg);
        return cli_exit_for_status(st);
    }
    if (shrank(c))
        return entry_shrank(c, e);
    warn_fit(c, e, &t);
    return 0;
}

/* A run refused after the fit (a --together group that cannot be used,
 * a drop that would misalign tensors): its line on stderr, and the same
 * text as the report's "refused:" line, so that the report, printed after
 * the fit, does not end without one (sixteenth fresh-user round; round
 * 29b for the misalignment). Returns 2. */
static int refuse_run(crun_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->r.refused, sizeof c->r.refused, fmt, ap);
    va_end(ap);
    cli_error(c->r.input, "%s", c->r.refused);
    return 2;
}

/* Every element of every --together group must name a tensor: checked
 * on the names alone, before the fit reads anything (round 37a: a typo
 * was reported after minutes of fitting). 0, or 2 with c->r.refused set
 * and no entry listed (none was examined). */
static int together_names(crun_t *c)
{
    const cli_clean_opts_t *co = &c->o->clean;
    for (size_t g = 0; g < co->n_together; g++) {
        char el[1024];
        for (const char *p = co->together[g]; list_next(&p, el, sizeof el);) {
            if (!any_named(c, el)) {
                int r = refuse_run(c, "--together: '%s' matches no tensor%s", el,
                                   unmatched_hint(c->in, c->r.e, c->r.n, el));
                c->r.n = 0;
                return r;
            }
        }
    }
    return 0;
}

/* --together (issue 4): check the groups, then clean each group as one
 * dataset of its members' columns would be (man page): a sample any
 * member drops is dropped from all, each member's step 2 statistics
 * leave out the group's step 1 drops and its step 3 statistics all the
 * group's drops. At most two refits per member. 0 or an exit code (2 for
 * a bad group). */
static int join_groups(crun_t *c)
{
    const cli_clean_opts_t *co = &c->o->clean;
    if (!co->n_together)
        return 0;
    c->group = calloc(c->r.n ? c->r.n : 1, sizeof *c->group);
    if (!c->group) {
        cli_error(c->r.input, "out of memory");
        return 4;
    }
    for (size_t g = 0; g < co->n_together; g++) {
        const char *spec = co->together[g];
        size_t first = SIZE_MAX, count = 0;
        for (size_t i = 0; i < c->r.n; i++) {
            cli_clean_entry_t *e = &c->r.e[i];
            if (!list_match(c->in, i, spec, e->name))
                continue;
            if (c->group[i]) {
                return refuse_run(c, "--together: '%s' is in two groups ('%s' and '%s')",
                                       e->name, co->together[c->group[i] - 1], spec);
            }
            if (!e->cleaned && !e->rowfollow && e->ndim == 0) {
                return refuse_run(c, "--together: '%s' is a scalar (%s): it has no "
                                       "sample axis to lose samples from", e->name, e->reason);
            }
            if (!e->cleaned && !e->rowfollow) {
                return refuse_run(c, "--together: '%s' is not cleaned (%s), so it cannot "
                                       "lose samples with its partners", e->name, e->reason);
            }
            /* a dimension scale without records (netCDF-C's scale of an
             * unlimited dimension without a variable): none to lose */
            if (e->rowfollow && e->ct.rows == 0 && e->scale0[0])
                continue;
            if (first != SIZE_MAX && e->ct.rows != c->r.e[first].ct.rows) {
                return refuse_run(c, "--together: '%s' has %llu samples and '%s' %llu; "
                                       "grouped tensors must share the sample axis",
                                       c->r.e[first].name,
                                       (unsigned long long)c->r.e[first].ct.rows, e->name,
                                       (unsigned long long)e->ct.rows);
            }
            if (first == SIZE_MAX)
                first = i;
            c->group[i] = g + 1;
            count++;
        }
        if (count < 2) {
            return refuse_run(c, "--together '%s' names one tensor ('%s'); give the "
                                   "tensors that share its sample axis", spec,
                                   c->r.e[first].name);
        }
        uint64_t rows = c->r.e[first].ct.rows;
        uint8_t *u = calloc(rows ? (size_t)rows : 1, 1);
        if (!u) {
            cli_error(c->r.input, "out of memory");
            return 4;
        }
        /* As one dataset of the group's columns (round 38b: the members
         * were fitted without their partners' drops until that settled,
         * which kept other samples than numpy on np.hstack of them): the
         * samples some member drops in step 1 (non-finite values: no
         * statistic decides them) leave every member before step 2's
         * statistics; those some member's step 2 then drops leave the
         * others after theirs. */
        for (size_t i = 0; i < c->r.n; i++)
            for (uint64_t r = 0; c->group[i] == g + 1 && !c->r.e[i].rowfollow && r < rows; r++)
                u[r] |= na_clean_row(&c->r.e[i].ct, r) == 1 ? G_STEP1 : 0;
        for (int late = 0; late < 2; late++) {
            if (late)
                for (size_t i = 0; i < c->r.n; i++)
                    for (uint64_t r = 0; c->group[i] == g + 1 && r < rows; r++)
                        u[r] |= na_clean_row(&c->r.e[i].ct, r) == 2 ? G_STEP2 : 0;
            for (size_t i = 0; i < c->r.n; i++) {
                cli_clean_entry_t *e = &c->r.e[i];
                if (c->group[i] != g + 1 || e->rowfollow)
                    continue;
                /* refit only when the rows it loses differ from its fit's */
                int any = 0;
                for (uint64_t r = 0; r < rows && !any; r++) {
                    unsigned s = na_clean_row(&e->ct, r);
                    any = late ? (u[r] & G_STEP2) && s == 0
                               : ((u[r] & G_STEP1) && s != 1) != (s == NA_CLEAN_ROW_JOINT);
                }
                int rc = any ? refit_joint(c, i, u, late) : 0;
                if (rc) {
                    free(u);
                    return rc;
                }
            }
        }
        for (size_t i = 0; i < c->r.n; i++) {
            if (c->group[i] != g + 1 || !c->r.e[i].rowfollow)
                continue;
            for (uint64_t r = 0; r < rows; r++) /* no values, no steps: only rows */
                na_clean_row_set(&c->r.e[i].ct, r, u[r] ? NA_CLEAN_ROW_JOINT : 0);
            na_clean_rows_done(&c->follow_eng, &c->r.e[i].ct);
        }
        free(u);
    }
    return 0;
}

/* The drops of entry i's --together group, per step: n1 samples some
 * member drops in step 1, n2 others some member drops in step 2. A
 * group drops the union of its members' samples, so --max-drop-fraction
 * applies to the union, as to one tensor's steps: two members losing a
 * different 10 % each lose 20 % together. */
static void group_drops(const crun_t *c, size_t i, uint64_t *n1, uint64_t *n2)
{
    uint64_t rows = c->r.e[i].ct.rows; /* every member's (join_groups) */
    *n1 = *n2 = 0;
    for (uint64_t r = 0; r < rows; r++) {
        int s1 = 0, s2 = 0;
        for (size_t j = 0; j < c->r.n; j++) {
            if (c->group[j] != c->group[i])
                continue;
            unsigned s = na_clean_row(&c->r.e[j].ct, r);
            s1 |= s == 1;
            s2 |= s == 2;
        }
        *n1 += (uint64_t)s1;
        *n2 += (uint64_t)(!s1 && s2);
    }
}

/* 1 when entries a and b share an HDF5 dimension scale along axis 0
 * (na_tensor_t.scale0); *apart: both have scales, none in common. */
static int share_scale(const cli_clean_entry_t *a, const cli_clean_entry_t *b, int *apart)
{
    int any_a = 0, any_b = 0;
    for (int i = 0; i < NA_SCALES0; i++) {
        any_a |= a->scale0[i] != 0;
        any_b |= b->scale0[i] != 0;
        for (int j = 0; a->scale0[i] && j < NA_SCALES0; j++)
            if (a->scale0[i] == b->scale0[j])
                return 1;
    }
    if (apart)
        *apart = any_a && any_b;
    return 0;
}

/* Samples entry e loses: a cleaned tensor's drops, a row follower's rows
 * gone (na_clean_row). */
static uint64_t entry_drops(const cli_clean_entry_t *e)
{
    uint64_t n = 0;
    if (e->cleaned)
        return e->ct.dropped_nf + e->ct.dropped_out + e->ct.dropped_joint;
    for (uint64_t r = 0; e->rowfollow && r < e->ct.rows; r++)
        n += na_clean_row(&e->ct, r) != 0;
    return n;
}

/* --apply-params: a null statistic a step would apply to the samples a
 * cleaned tensor keeps (cli_params_null_t) refuses the run: 0 or 2. */
static int params_nulls(crun_t *c)
{
    for (size_t i = 0; c->params && i < c->r.n; i++) {
        cli_clean_entry_t *e = &c->r.e[i];
        if (!e->cleaned || !e->pnull.field || e->ct.out_rows == 0)
            continue;
        char why[NA_ERR_LEN];
        cli_params_null_msg(&e->pnull, e->name, &c->eng, e->ct.out_rows, why, sizeof why);
        cli_error(c->o->clean.apply_params, "%s", why);
        entry_failed(e, why);
        return 2;
    }
    return 0;
}

/* --max-drop-fraction and misalignment: 0, 1 (refused) or 2. */
static int guard_rails(crun_t *c)
{
    /* a scale some dataset uses on another axis: its rows are that
     * axis's coordinates (round 39a: --together /w,/f shortened f and
     * a(time, f) read as (10, 3) in netCDF, a column hidden) */
    for (size_t i = 0; i < c->r.n; i++) {
        const cli_clean_entry_t *e = &c->r.e[i];
        uint64_t nd = e->scale_other_axis ? entry_drops(e) : 0;
        if (nd)
            return refuse_run(c, "dropping %llu sample%s from '%s' would shorten an HDF5 "
                              "dimension scale that a dataset uses on an axis other than 0 (in a "
                              "netCDF-4 file, a dimension of a variable's later axis), which "
                              "would no longer match it; leave it out of --together",
                              (unsigned long long)nd, nd == 1 ? "" : "s", e->name);
    }
    for (size_t i = 0; i < c->r.n; i++) {
        const cli_clean_entry_t *e = &c->r.e[i];
        const na_clean_tensor_t *ct = &e->ct;
        if (!e->cleaned || ct->rows == 0)
            continue;
        uint64_t d1 = ct->dropped_nf, d2 = ct->dropped_out;
        int grouped = c->group && c->group[i];
        /* a group's union is the same for every member: checked at its
         * first member only (a refusal there returns) */
        int seen = 0;
        for (size_t j = 0; grouped && j < i && !seen; j++)
            seen = c->group[j] == c->group[i];
        if (grouped && !seen)
            group_drops(c, i, &d1, &d2);
        double f1 = (double)d1 / (double)ct->rows;
        uint64_t left = ct->rows - d1;
        double f2 = left ? (double)d2 / (double)left : 0.0;
        if (!seen && (f1 > c->o->clean.max_drop || f2 > c->o->clean.max_drop)) {
            int nf = f1 > c->o->clean.max_drop;
            snprintf(c->r.refused, sizeof c->r.refused,
                     "tensor '%.200s'%s: the %s step would drop %llu of %llu samples (%.1f%%), more "
                     "than --max-drop-fraction %g",
                     e->name, grouped ? " with its --together partners" : "",
                     nf ? "non-finite" : "outlier", (unsigned long long)(nf ? d1 : d2),
                     (unsigned long long)(nf ? ct->rows : left), 100.0 * (nf ? f1 : f2),
                     c->o->clean.max_drop);
            cli_error(c->r.input, "%s; nothing written", c->r.refused);
            return 1;
        }
        if (ct->dropped_nf + ct->dropped_out + ct->dropped_joint == 0)
            continue;
        /* --allow-misaligned says same-length tensors are unrelated, which
         * those that share a dimension scale are not (round 37b: a
         * netCDF-4 variable shortened without its dimension is a file
         * netCDF cannot read) */
        int allow = c->o->clean.allow_misaligned;
        /* every tensor it would misalign, in one line (round 31b: one
         * per run took four runs to get --together right) */
        const cli_clean_entry_t *p[3] = {NULL, NULL, NULL};
        const cli_clean_entry_t *shorter = NULL; /* on its scale, another length */
        size_t np = 0, nrel = 0;
        for (size_t j = 0; j < c->r.n; j++) {
            const cli_clean_entry_t *o2 = &c->r.e[j];
            if (j == i || o2->ndim < 1 || e->ndim < 1)
                continue;
            /* Dimension scales say which tensors share axis 0, whatever
             * their lengths: a netCDF variable on an unlimited dimension
             * may hold fewer records than it (round 38a: --together
             * /A,/time shifted /B's 25 of 30 records by one step), and
             * tensors on two scales of one length are unrelated (round
             * 38a: tas(time) was refused beside plev(lev)). */
            int apart = 0, related = share_scale(e, o2, &apart);
            if (!related && (allow || apart || o2->shape[0] != ct->rows))
                continue;
            /* no records on the dimension (netCDF-C's scale of an
             * unlimited dimension without a variable has extent 0): none
             * to shift (round 39a) */
            if (related && o2->shape[0] == 0)
                continue;
            if (c->group && c->group[i] && c->group[i] == c->group[j])
                continue; /* dropped jointly by join_groups */
            if (o2->shape[0] != ct->rows && !shorter)
                shorter = o2;
            nrel += related;
            if (np < 3)
                p[np] = o2;
            np++;
        }
        if (np > 0) {
            uint64_t nd = ct->dropped_nf + ct->dropped_out + ct->dropped_joint;
            size_t shown = np < 3 ? np : 3, nl = 0;
            const cli_clean_entry_t *fixed = NULL; /* one clean copies unchanged: named */
            char hint[NA_ERR_LEN + 400], names[600], more[48] = "";
            for (size_t k = 0; k < shown; k++) { /* 'a', 'b' and 'c'; 'a', 'b', 'c' and 2 more */
                nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s'%.150s'",
                                       k == 0 ? "" : k + 1 == np ? " and " : ", ", p[k]->name);
                if (!fixed && p[k]->fixed && !p[k]->rowcopy)
                    fixed = p[k];
            }
            if (np > 3)
                snprintf(more, sizeof more, " and %zu more", np - 3);
            if (shorter) /* --together would refuse it: not the same length */
                snprintf(hint, sizeof hint, "; '%.150s' has %llu rows on that dimension, so no "
                         "sample can go without shifting it (--nonfinite zero or mean, "
                         "--outliers clip keep every row)", shorter->name,
                         (unsigned long long)shorter->shape[0]);
            else if (nrel == np) /* all on its dimension scale */
                snprintf(hint, sizeof hint, "; %s its HDF5 dimension scale (in a netCDF-4 "
                         "file, a dimension), which --allow-misaligned does not cover: --together "
                         "to drop from %s", np == 1 ? "it shares" : "they share",
                         np == 1 ? "both" : "all");
            else if (fixed) /* --together would refuse it */
                snprintf(hint, sizeof hint, ", %s%.150s%s clean copies unchanged (%.300s); use "
                         "--allow-misaligned if they are unrelated", np == 1 ? "which" : "'",
                         np == 1 ? "" : fixed->name, np == 1 ? "" : "'", fixed->reason);
            else
                snprintf(hint, sizeof hint, "; use --allow-misaligned if they are unrelated, "
                         "--together to drop from %s", np == 1 ? "both" : "all");
            char rows[120];
            if (shorter)
                snprintf(rows, sizeof rows, "(%s on its HDF5 dimension scale)",
                         np == 1 ? "both" : "all");
            else
                snprintf(rows, sizeof rows, "(%s %llu rows)", np == 1 ? "both have" : "all have",
                         (unsigned long long)ct->rows);
            return refuse_run(c, "dropping %llu sample%s from '%s' would misalign it with %s%s "
                              "%s%s", (unsigned long long)nd, nd == 1 ? "" : "s", e->name, names,
                              more, rows, hint);
        }
    }
    return 0;
}

/* NaN or +-Inf bound for an integer --out-dtype (na_clean_check_out):
 * refused before the temporary file is made, and in --dry-run with the
 * same line. Every such tensor is named, one line each. 0 or 2. */
static int check_out_dtype(crun_t *c)
{
    int rc = 0;
    for (size_t i = 0; i < c->r.n; i++) {
        cli_clean_entry_t *e = &c->r.e[i];
        if (!e->cleaned)
            continue;
        na_tensor_t t;
        na_err_t err = {{0}};
        na_status_t st = na_input_tensor(c->in, i, &t, &err);
        if (st == NA_OK)
            st = na_clean_check_out(&t, eng_of(c, e), &e->ct, &err);
        if (st != NA_OK) {
            entry_failed(e, err.msg);
            if (!c->r.refused[0]) /* the report's "refused:" line: the first one */
                snprintf(c->r.refused, sizeof c->r.refused, "%s", err.msg);
            cli_error(c->r.input, "%s; nothing written", err.msg);
            rc = cli_exit_merge(rc, cli_exit_for_status(st));
        }
    }
    return rc;
}

static na_status_t sink(void *ud, const void *buf, size_t len, na_err_t *err)
{
    na_writer_t *w = ud;
    na_status_t st = na_writer_write(w, buf, len, err);
    /* Test hook (tests/cli/clean_safety.sh): a signal after the first
     * bytes, so the handler's cleanup is tested deterministically. */
    const char *sig = getenv("NANAUDIT_TEST_SIGNAL");
    if (st == NA_OK && sig && *sig) {
        na_writer_flush(w, err);
        raise(!strcmp(sig, "INT")    ? SIGINT
              : !strcmp(sig, "USR1") ? SIGUSR1
              : !strcmp(sig, "XCPU") ? SIGXCPU
              : !strcmp(sig, "SYS")  ? SIGSYS
              : !strcmp(sig, "PWR")  ? SIGPWR
              : !strcmp(sig, "IO")   ? SIGIO
              : !strcmp(sig, "STKFLT") ? SIGSTKFLT
              : !strcmp(sig, "KILL") ? SIGKILL
              : !strcmp(sig, "BUS")  ? SIGBUS
              : !strcmp(sig, "STOP") ? SIGSTOP /* clean_races.sh acts, then continues it */
                                     : SIGTERM);
    }
    return st;
}

/* Copy an unselected tensor's bytes. */
static na_status_t copy_tensor(crun_t *c, size_t i, na_writer_t *w, uint64_t bytes,
                               na_err_t *err)
{
    na_tensor_t t;
    na_status_t st = na_input_tensor(c->in, i, &t, err);
    if (!t.src.read)
        return st != NA_OK ? st : na_err_set(err, NA_E_INTERNAL, "no data source");
    for (uint64_t off = 0; off < bytes;) {
        size_t len = bytes - off < (16u << 20) ? (size_t)(bytes - off) : (16u << 20);
        const uint8_t *p;
        st = t.src.read(t.src.ctx, off, len, &p, err);
        if (st == NA_OK)
            st = sink(w, p, len, err);
        if (st != NA_OK)
            return st;
        off += len;
    }
    return NA_OK;
}

/* The rows entry e (a --together follower copied row by row) loses, as
 * na_wtensor_t.drop wants them: one bit per row. NULL without memory. */
static uint8_t *drop_bits(const cli_clean_entry_t *e)
{
    uint64_t rows = e->ct.rows;
    uint8_t *b = calloc((size_t)(rows / 8) + 1, 1);
    for (uint64_t r = 0; b && r < rows; r++)
        if (na_clean_row(&e->ct, r))
            b[r / 8] |= (uint8_t)(1u << (r % 8));
    return b;
}

/* The cleaned value of entry i's fill value (na_clean_fill_out) when
 * part or all of its storage was never written (an HDF5 dataset: fill
 * runs, or no storage at all), for na_wtensor_t.fill_set; 0 otherwise. */
static int fill_out(crun_t *c, const cli_clean_entry_t *e, size_t i, uint8_t out[8])
{
    na_tensor_t t;
    na_err_t err;
    if (!e->cleaned || e->dtype == NA_DT_C64 || cli_clean_no_values(e) ||
        na_input_tensor(c->in, i, &t, &err) != NA_OK || t.elements == 0 || !t.src.read)
        return 0;
    size_t es = t.elem_stride;
    uint64_t skip = 0, run = 0;
    const uint8_t *elem = NULL;
    if (t.src.fill && t.src.fill(t.src.ctx, 0, t.elements * es, &skip, &run, &elem, &err) != NA_OK)
        elem = NULL;
    if (!elem && t.constant && t.src.read(t.src.ctx, 0, es, &elem, &err) != NA_OK)
        elem = NULL;
    return elem && na_clean_fill_out(&t, eng_of(c, e), &e->ct, elem, out);
}

/* The writer's tensor list: one per stored tensor (a C64 tensor's
 * NAME.imag entry is skipped; NAME.real carries all its bytes). drops
 * gets the bitmaps it makes (drop_bits), one slot per entry. NA_E_NOMEM. */
static na_status_t out_list(crun_t *c, na_wtensor_t *wt, size_t *src, char **names,
                            uint8_t **drops, size_t *m_out, na_err_t *err)
{
    size_t m = 0;
    for (size_t i = 0; i < c->r.n; i++) {
        cli_clean_entry_t *e = &c->r.e[i];
        na_wtensor_t *w = &wt[m];
        if (e->dtype == NA_DT_C64) {
            size_t L = strlen(e->name);
            if (L < 5 || strcmp(e->name + L - 5, ".real"))
                continue;
            names[m] = strndup(e->name, L - 5);
            w->name = names[m];
            w->bytes = na_input_tensor_bytes(c->in, i) * 2;
        } else {
            w->name = e->name;
            w->bytes = e->cleaned ? e->ct.out_rows * e->ct.width *
                                        (na_dtype_bits(e->ct.out_dtype) / 8)
                                  : na_input_tensor_bytes(c->in, i);
            if (e->cleaned && cli_clean_no_values(e))
                w->bytes = 0; /* (5, 0) has 5 rows of width 1 in ct (clean.h) */
        }
        w->dtype = e->cleaned ? e->ct.out_dtype : e->dtype;
        w->copied = !e->cleaned;
        na_tensor_t t; /* copied bytes keep the input's byte order (npy_write.c) */
        na_err_t terr;
        if (!e->cleaned && na_input_tensor(c->in, i, &t, &terr) == NA_OK)
            w->byte_order = t.byte_order;
        w->normalized = normalizes(c, e); /* its warning: warn_packing */
        w->computes = e->cleaned && na_clean_computes(eng_of(c, e));
        /* raw has no header: the copy keeps the input's --endian */
        w->big_out = e->cleaned && !strcmp(c->r.format, "raw") &&
                     c->o->open.raw_endian == NA_BIG;
        w->ndim = e->ndim;
        memcpy(w->shape, e->cleaned ? e->ct.out_shape : e->shape, sizeof w->shape);
        w->index = i;
        w->width = e->cleaned ? e->ct.width : 0;
        w->nfeat = e->cleaned ? e->ct.nfeat : 0;
        w->fill_set = fill_out(c, e, i, w->fill);
        if (e->cleaned && e->ct.out_rows != e->ct.rows && e->ct.row_state) {
            w->in_rows = e->ct.rows;
            w->row_state = e->ct.row_state;
        }
        if (e->rowfollow && e->ct.out_rows != e->ct.rows) {
            w->shape[0] = e->ct.out_rows;
            w->in_rows = e->ct.rows;
            w->drop = drops[m] = drop_bits(e);
            if (!w->drop)
                return na_err_set(err, NA_E_NOMEM, "out of memory");
        }
        src[m++] = i;
        *m_out = m;
    }
    return NA_OK;
}

/* The writer's tensor list (out_list) and the memory that holds it. */
typedef struct wlist {
    na_wtensor_t *wt;
    size_t *src;  /* the entry of each listed tensor */
    char **names; /* names out_list made (C64 tensors), one slot per entry */
    uint8_t **drops; /* row bitmaps out_list made (na_wtensor_t.drop), likewise */
    size_t m;     /* tensors listed */
} wlist_t;

static na_status_t wlist_make(crun_t *c, wlist_t *l, na_err_t *err)
{
    size_t n = c->r.n ? c->r.n : 1;
    l->wt = calloc(n, sizeof *l->wt);
    l->src = calloc(n, sizeof *l->src);
    l->names = calloc(n, sizeof *l->names);
    l->drops = calloc(n, sizeof *l->drops);
    l->m = 0;
    if (!l->wt || !l->src || !l->names || !l->drops)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    return out_list(c, l->wt, l->src, l->names, l->drops, &l->m, err);
}

static void wlist_free(const crun_t *c, wlist_t *l)
{
    for (size_t j = 0; l->names && j < c->r.n; j++)
        free(l->names[j]);
    for (size_t j = 0; l->drops && j < c->r.n; j++)
        free(l->drops[j]);
    free(l->drops);
    free(l->names);
    free(l->wt);
    free(l->src);
}

/* For writers that store metadata at finish (HDF5): the input's SHA-256
 * in place of the zeros of prov, then the provenance entry. */
static na_status_t late_meta(crun_t *c, na_writer_t *w, char *prov, na_err_t *err)
{
    na_status_t st = hash_input(c, err);
    char *z = strstr(prov, "\"input_sha256\":\"" SHA_ZEROS);
    if (st == NA_OK && z)
        memcpy(z + strlen("\"input_sha256\":\""), c->r.sha, 64);
    return st == NA_OK ? na_writer_set_meta(w, "nanaudit", prov, err) : st;
}

/* The input as it was when opened (cli_clean), against its state now: a
 * file modified or replaced while it was read gave the passes (and the
 * SHA-256 thread) different bytes, so nothing is written. NA_E_IO. */
static na_status_t input_unchanged(const crun_t *c, na_err_t *err)
{
    struct stat now;
    const struct stat *was = &c->in_st;
    if (!c->have_in_st)
        return NA_OK;
    if (stat(c->r.input, &now) != 0 || now.st_dev != was->st_dev || now.st_ino != was->st_ino ||
        now.st_size != was->st_size || now.st_mtim.tv_sec != was->st_mtim.tv_sec ||
        now.st_mtim.tv_nsec != was->st_mtim.tv_nsec || now.st_ctim.tv_sec != was->st_ctim.tv_sec ||
        now.st_ctim.tv_nsec != was->st_ctim.tv_nsec)
        return na_err_set(err, NA_E_IO, "the input '%s' changed while it was being cleaned "
                          "(modified or replaced)", c->r.input);
    return NA_OK;
}

/* Give the verified temporary file tmp the output's name. Without
 * --force an output that appeared meanwhile (another process, a second
 * clean) is not replaced: renameat2's RENAME_NOREPLACE, or where the
 * file system lacks it link(2), which fails on an existing name too. */
static na_status_t publish(const char *tmp, const char *outp, int force, na_err_t *err)
{
    if (force) {
        if (rename(tmp, outp) != 0)
            return na_err_set(err, NA_E_WRITE, "rename to the output: %s", strerror(errno));
        return NA_OK;
    }
    int r = renameat2(AT_FDCWD, tmp, AT_FDCWD, outp, RENAME_NOREPLACE);
    if (r != 0 && (errno == EINVAL || errno == ENOSYS)) {
        r = link(tmp, outp);
        if (r == 0)
            unlink(tmp);
    }
    if (r != 0 && errno == EEXIST)
        return na_err_set(err, NA_E_WRITE, "appeared while cleaning and is not replaced "
                          "without --force");
    if (r != 0)
        return na_err_set(err, NA_E_WRITE, "rename to the output: %s", strerror(errno));
    return NA_OK;
}

/* Re-open the temporary file and compare it with what was predicted. */
static na_status_t verify(crun_t *c, const na_wtensor_t *wt, const size_t *src, size_t m,
                          na_err_t *err)
{
    na_open_opts_t oo = c->o->open;
    oo.no_measure = 1; /* variable-length sequences are copied, never cleaned */
    if (!strcmp(c->r.format, "raw")) {
        oo.raw_dtype = wt[0].dtype;
        oo.raw_endian = c->o->open.raw_endian; /* copied bytes and big_out alike */
        oo.raw_offset = 0;
        oo.raw_length = NA_RAW_TO_EOF;
        oo.raw_ndim = wt[0].ndim;
        memcpy(oo.raw_shape, wt[0].shape, sizeof oo.raw_shape);
    }
    na_input_t *out;
    na_status_t st = na_input_open(g_tmp, &oo, &out, err);
    if (st != NA_OK) {
        char why[sizeof err->msg]; /* err->msg is also the destination */
        snprintf(why, sizeof why, "%s", err->msg);
        return na_err_set(err, NA_E_WRITE, "verification: the written file does not re-open: %s",
                          why);
    }
    size_t k = 0;
    for (size_t j = 0; j < m && st == NA_OK; j++, k++) {
        na_tensor_t t;
        if (k >= na_input_count(out)) {
            st = na_err_set(err, NA_E_WRITE, "verification: tensor '%s' missing", wt[j].name);
            break;
        }
        st = na_input_tensor(out, k, &t, err);
        if (t.stored == NA_DT_C64)
            k++; /* NAME.real and NAME.imag */
        if (st != NA_OK && !c->r.e[src[j]].cleaned) {
            /* A copied entry the input could not give either (an HDF5
             * dataset whose filter is missing): copied as it was. */
            na_tensor_t ti;
            na_err_t ei = {{0}};
            if (na_input_tensor(c->in, src[j], &ti, &ei) != NA_OK) {
                st = NA_OK;
                continue;
            }
        }
        if (st != NA_OK)
            break;
        int nd = t.vlen ? t.vndim : t.ndim; /* a dataset's shape, as fit_all's */
        const uint64_t *sh = t.vlen ? t.vshape : t.shape;
        if (t.stored != wt[j].dtype || nd != wt[j].ndim ||
            memcmp(sh, wt[j].shape, sizeof(uint64_t) * (size_t)nd)) {
            st = na_err_set(err, NA_E_WRITE, "verification: tensor '%s' has another dtype or shape",
                            wt[j].name);
            break;
        }
        cli_clean_entry_t *e = &c->r.e[src[j]];
        if (!e->cleaned || cli_clean_no_values(e))
            continue;
        /* Missing values (CF markers, --missing auto) are honoured as
         * lib/clean.c honours them: the written file carries the markers
         * in its own dtype (formats/hdf5_wchild.c converts them), and a
         * value equal to one is predicted as missing in `after`. */
        na_result_t res;
        st = count_scan(c, &t, &res, err);
        if (st != NA_OK)
            break;
        const na_stats_t *a = &res.st, *p = &e->ct.after;
        /* a std that is unknown (its variance underflowed, or overflowed)
         * gives way to the spread: NaN made every such tensor fail here,
         * exit 4, whatever the steps (tester round 22a) */
        double sd = na_stats_std(p), spread = isfinite(sd) ? sd : p->max - p->min;
        double tol = 1e-11 * (fabs(p->mean) + spread) + 1e-300;
        int same = a->finite == p->finite && a->nan == p->nan && a->missing == p->missing &&
                   a->pos_inf == p->pos_inf &&
                   a->neg_inf == p->neg_inf &&
                   (a->finite == 0 || (a->min == p->min && a->max == p->max &&
                                       (a->mean == p->mean || /* both inf: overflowed sums */
                                        /* or NaN, Inf: the order of a sum of +Inf
                                         * and -Inf parts decides which */
                                        (!isfinite(a->mean) && !isfinite(p->mean)) ||
                                        fabs(a->mean - p->mean) <= tol)));
        na_result_free(&res);
        if (!same)
            st = na_err_set(err, NA_E_WRITE, "verification: tensor '%s' statistics differ from "
                            "the prediction", wt[j].name);
    }
    if (st == NA_OK && k != na_input_count(out))
        st = na_err_set(err, NA_E_WRITE, "verification: the file has %zu entries, expected %zu",
                        na_input_count(out), k);
    na_input_close(out);
    return st;
}

static void corrupt_last_byte(const char *p)
{
    int fd = open(p, O_RDWR | O_CLOEXEC);
    struct stat sb;
    unsigned char b;
    if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 0 &&
        pread(fd, &b, 1, sb.st_size - 1) == 1) {
        b ^= 0x40; /* an exponent bit of the last little-endian float */
        if (pwrite(fd, &b, 1, sb.st_size - 1) != 1)
            b = 0;
    }
    if (fd >= 0)
        close(fd);
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int r = fsync(fd);
    close(fd);
    return r;
}

/* "PATH: msg" into buf, cut to fit: stderr has it whole. msg alone when
 * path is NULL, or is the input's and bare_input is set ("error" names
 * the input only in its text, as for a file clean cannot open). */
static void path_msg(const cli_clean_run_t *r, const char *path, const char *msg,
                     int bare_input, char *buf, size_t cap)
{
    char line[NA_ERR_LEN + 256];
    int own = !path || (bare_input && r->input && !strcmp(path, r->input));
    snprintf(line, sizeof line, "%s%s%s", own ? "" : path, own ? "" : ": ", msg);
    size_t len = strlen(line);
    len = len < cap ? len : cap - 1;
    memcpy(buf, line, len);
    buf[len] = '\0';
}

/* A writer's refusal that names a tensor ("b: a non-contiguous view,
 * which clean cannot write back ...") is that entry's error in the
 * report too: it said "cleaned" beside exit 3 (eighteenth fresh-user
 * round). The longest name that msg starts with, followed by ": ". */
static int blame_entry(crun_t *c, const char *msg)
{
    cli_clean_entry_t *best = NULL;
    size_t blen = 0;
    for (size_t i = 0; i < c->r.n; i++) {
        cli_clean_entry_t *e = &c->r.e[i];
        size_t n = e->name ? strlen(e->name) : 0;
        if (n > blen && !strncmp(msg, e->name, n) && msg[n] == ':' && msg[n + 1] == ' ') {
            best = e;
            blen = n;
        }
    }
    if (best) {
        best->emitted = 0;
        entry_failed(best, msg);
    }
    return best != NULL;
}

/* Write, verify, fsync, rename. Returns the exit code (0 or 4). */
static int write_output(crun_t *c)
{
    const char *outp = c->o->clean.output;
    const na_writer_format_t *wf = na_writer_for(c->r.format); /* checked in cli_clean */
    char dir[PATH_MAX];
    const char *base = out_dir(outp, dir, sizeof dir);
    if (snprintf(g_tmp, sizeof g_tmp, "%s/" TMP_PREFIX "%s", dir, base) >= (int)sizeof g_tmp) {
        cli_error(outp, "path too long");
        return 4;
    }
    install_handlers();
    int fd = mkstemps(g_tmp, (int)strlen(base) + 1);
    if (fd < 0) {
        cli_error(outp, "cannot create a temporary file in '%s': %s", dir, strerror(errno));
        return 4;
    }
    g_tmp_live = 1;
    /* Permission bits as cp(1) gives them: a replaced OUT's (--force),
     * else the input's less the umask - a private 0600 checkpoint made a
     * 0644 copy (round 32b). Set just before the rename: the file stays
     * 0600 while it is written and read back (a 0444 input's mode made the
     * HDF5 writer's open of it by name fail; round 34b). */
    mode_t um = umask(0);
    umask(um);
    struct stat ob;
    mode_t mode = stat(outp, &ob) == 0 && S_ISREG(ob.st_mode) ? ob.st_mode
                  : c->have_in_st                             ? c->in_st.st_mode & ~um
                                                              : 0666 & ~um;

    wlist_t wl;
    na_err_t err = {{0}};
    na_status_t st = wlist_make(c, &wl, &err);
    const na_wtensor_t *wt = wl.wt;
    const size_t *src = wl.src;
    size_t m = wl.m;

    /* Metadata: the input's, then "nanaudit" (replacing an older one). */
    size_t nm = na_input_metadata_count(c->in);
    na_wmeta_t *meta = calloc(nm + 1, sizeof *meta);
    char prov[4096];
    size_t k = 0;
    for (size_t i = 0; meta && i < nm; i++) {
        na_input_metadata(c->in, i, &meta[k].key, &meta[k].value);
        if (meta[k].key && strcmp(meta[k].key, "nanaudit"))
            k++;
    }
    json_t *pj = json_object();
    json_object_set_new(pj, "version", json_string(NA_VERSION));
    json_object_set_new(pj, "command", json_string(c->cmdline));
    json_object_set_new(pj, "input_sha256", json_string(SHA_ZEROS)); /* hash_end */
    char *pjs = json_dumps(pj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(pj);
    snprintf(prov, sizeof prov, "%s", pjs ? pjs : "{}");
    free(pjs);
    if (meta) {
        meta[k].key = "nanaudit";
        meta[k].value = prov;
        k++;
    }

    na_writer_t *w = NULL;
    na_wopts_t wo = {c->r.input, g_tmp, c->o->open.hdf5_timeout, c->in};
    na_sha256_file_quiesce(c->sha); /* the HDF5 writer forks (write.h) */
    /* A writer's refusal at open is about the input's structure (a .npy
     * of several tensors, a compound dataset's records), and NA_E_FORMAT
     * is an input it cannot copy (an HDF5 object libhdf5 cannot read):
     * it names the input, as the same refusal in --dry-run does
     * (dry_open). */
    const char *who = outp;
    if (st == NA_OK) {
        st = wf->open(fd, &wo, wt, m, meta, k, &w, &err);
        if (st == NA_E_UNSUPPORTED || st == NA_E_USAGE || st == NA_E_FORMAT)
            who = c->r.input;
    }
    for (size_t j = 0; j < m && st == NA_OK; j++) {
        cli_clean_entry_t *e = &c->r.e[src[j]];
        st = na_writer_begin(w, j, &err);
        if (st != NA_OK)
            break;
        if (e->cleaned && !cli_clean_no_values(e)) {
            na_tensor_t t;
            st = na_input_tensor(c->in, src[j], &t, &err);
            if (st == NA_OK)
                st = cli_device_clean(&c->dev, &t, eng_of(c, e), &e->ct, sink, w, &err);
            if (st == NA_OK && shrank(c)) /* before its warnings: of zeros (below) */
                st = na_err_set(&err, NA_E_IO, "%s", NA_MAP_SHRANK_MSG);
            e->emitted = st == NA_OK;
            if (e->emitted)
                warn_emitted(e, eng_of(c, e));
            else
                entry_failed(e, err.msg);
        } else {
            e->emitted = e->cleaned;
            if (na_writer_wants(w, j))
                st = copy_tensor(c, src[j], w, wt[j].bytes, &err);
        }
        /* a failed write (a full disk) names the tensor whose bytes were
         * going out, as the HDF5 writer's lines do already */
        size_t nl = e->name ? strlen(e->name) : 0;
        if (st == NA_E_WRITE && nl && !(strncmp(err.msg, e->name, nl) == 0 && err.msg[nl] == ':')) {
            char why[NA_ERR_LEN];
            snprintf(why, sizeof why, "%s", err.msg);
            na_err_set(&err, st, "%s: %s", e->name, why);
        }
        /* zeros stood in for what the input lost (cli/sigbus.c), or a
         * copy straight from its mapping found the bytes gone (write.c) */
        if ((st == NA_OK && shrank(c)) ||
            (st == NA_E_IO && !strcmp(err.msg, NA_MAP_SHRANK_MSG))) {
            st = na_err_set(&err, NA_E_IO, "%s: %s", e->name ? e->name : "?", NA_MAP_SHRANK_MSG);
            e->emitted = 0;
            entry_failed(e, err.msg); /* a copied entry too: its copy failed */
        }
    }
    /* NA_E_IO here is a read of the input that failed (it shrank while
     * being read: formats/mapfile.c), NA_E_FORMAT one its reader refused
     * (libhdf5 crashed or stopped reading it: "crashed reading this file"
     * named OUT; round 32b); the line names the input, not OUT. Writers
     * fail with NA_E_WRITE, NOMEM, INTERNAL or USAGE (write.h). */
    if (st == NA_E_IO || st == NA_E_FORMAT)
        who = c->r.input;
    if (st == NA_OK && na_writer_late_meta(w))
        st = late_meta(c, w, prov, &err);
    if (st == NA_OK)
        st = na_writer_finish(w, &err);
    if (st == NA_OK && hash_end(c, w, fd, &err) != 0)
        st = err.msg[0] ? NA_E_WRITE : NA_E_INTERNAL;
    na_writer_free(w);
    if (st == NA_OK && !c->o->clean.no_fsync && fsync(fd) != 0)
        st = na_err_set(&err, NA_E_WRITE, "fsync: %s", strerror(errno));
    if (close(fd) != 0 && st == NA_OK)
        st = na_err_set(&err, NA_E_WRITE, "close: %s", strerror(errno));
    /* Test hook (tests/cli/clean_safety.sh): damage the last byte of the
     * written file, so that the verification's failure path runs. */
    if (st == NA_OK && getenv("NANAUDIT_TEST_CORRUPT"))
        corrupt_last_byte(g_tmp);
    if (st == NA_OK)
        st = input_unchanged(c, &err); /* the line names OUT, the text the input */
    /* the input again, whatever read it (shrank): never published */
    if (st == NA_OK && shrank(c)) {
        st = na_err_set(&err, NA_E_IO, "%s", NA_MAP_SHRANK_MSG);
        who = c->r.input;
    }
    uint64_t before_verify = na_map_shrinks();
    if (st == NA_OK)
        st = verify(c, wt, src, m, &err);
    /* the temporary file, cut by another process while read back */
    if (st == NA_OK && na_map_shrinks() != before_verify)
        st = na_err_set(&err, NA_E_WRITE, "verification: the written file shrank while it was "
                        "read back (truncated by another process?)");
    if (st == NA_OK && chmod(g_tmp, mode & 0777) != 0)
        st = na_err_set(&err, NA_E_WRITE, "chmod: %s", strerror(errno));
    if (st == NA_OK) {
        atomic_store(&g_commit, 1);
        st = publish(g_tmp, outp, c->o->clean.force, &err);
        atomic_store(&g_commit, st == NA_OK ? 2 : 0);
    }
    if (st == NA_OK) {
        g_tmp_live = 0;
        if (!c->o->clean.no_fsync)
            fsync_dir(dir);
        c->r.written = 1;
        /* Test hook (tests/cli/clean_races.sh): stop right after the
         * rename, for a signal there. */
        if (getenv("NANAUDIT_TEST_STOP_PUBLISHED"))
            raise(SIGSTOP);
    } else {
        int sig = atomic_load(&g_deferred);
        if (sig) { /* a signal during a rename that failed: as the handler does */
            drop_tmp();
            signal(sig, SIG_DFL);
            raise(sig);
        }
        drop_tmp();
        /* a reader that failed because the input changed under it
         * (libhdf5: "/?: cannot read the object header"; round 41a) says
         * that; a read error (NA_E_IO: "file shrank from ...") says more */
        na_err_t ce = {{0}};
        if (st == NA_E_FORMAT && who == c->r.input && input_unchanged(c, &ce) != NA_OK) {
            err = ce;
            who = outp;
        }
        /* The report says why (round 40b: an input changed while cleaned
         * left every field null but exit_code): one tensor's reason, or
         * the run's error; no SHA-256 of bytes nothing was written from. */
        if (who != c->r.input || !blame_entry(c, err.msg))
            path_msg(&c->r, who, err.msg, 1, c->r.error, sizeof c->r.error);
        c->r.sha[0] = '\0';
        cli_error(who, "%s; nothing written", err.msg);
    }
    wlist_free(c, &wl);
    free(meta);
    return st == NA_OK ? 0 : cli_exit_for_status(st == NA_E_WRITE ? NA_E_WRITE : st);
}

static na_status_t discard(void *ud, const void *buf, size_t len, na_err_t *err)
{
    (void)ud, (void)buf, (void)len, (void)err;
    return NA_OK;
}

/* --dry-run: open the output format's writer on /dev/null with the
 * tensor list a real run gives it, so that the writer's refusals (a .npy
 * file holds one array; an .npz member's records cannot take cleaned
 * fields; HDF5: a user-defined link, a lossy scale-offset filter, a
 * compound dataset whose records cannot be rewritten) end a dry run as
 * they end a real one, with the same message and exit code. No path
 * (write.h): the HDF5 writer then checks the structure in memory and
 * creates no file (hdf5_wchild.c). 0, or the exit code after an error
 * message. */
static int dry_open(crun_t *c)
{
    const na_writer_format_t *wf = na_writer_for(c->r.format);
    if (!wf)
        return 0;
    wlist_t wl;
    na_err_t err = {{0}};
    na_status_t st = wlist_make(c, &wl, &err);
    int fd = st == NA_OK ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
    if (st == NA_OK && fd < 0)
        st = na_err_set(&err, NA_E_IO, "/dev/null: %s", strerror(errno));
    if (st == NA_OK) {
        na_wopts_t wo = {c->r.input, NULL, c->o->open.hdf5_timeout, c->in};
        na_writer_t *w = NULL;
        st = wf->open(fd, &wo, wl.wt, wl.m, NULL, 0, &w, &err);
        na_writer_free(w);
    }
    if (fd >= 0)
        close(fd);
    wlist_free(c, &wl);
    if (st == NA_OK)
        return 0;
    blame_entry(c, err.msg);
    cli_error(c->r.input, "%s; nothing written", err.msg);
    return cli_exit_for_status(st);
}

/* --dry-run: the write pass without a file, so that the report has what
 * a real run would (values replaced and clipped, statistics after,
 * overflow). One more read of each cleaned tensor. 0, or the exit code
 * after an error message (a read error: 3; NaN/Inf bound for an integer
 * --out-dtype: 2, as in a real run). */
static int dry_emit(crun_t *c)
{
    for (size_t i = 0; i < c->r.n; i++) {
        cli_clean_entry_t *e = &c->r.e[i];
        if (!e->cleaned || cli_clean_no_values(e)) {
            e->emitted = e->cleaned; /* no values: nothing to emit, as in write_output */
            continue;
        }
        na_tensor_t t;
        na_err_t err = {{0}};
        na_status_t st = na_input_tensor(c->in, i, &t, &err);
        if (st == NA_OK)
            st = cli_device_clean(&c->dev, &t, eng_of(c, e), &e->ct, discard, NULL, &err);
        if (st == NA_OK && shrank(c))
            return entry_shrank(c, e);
        if (st != NA_OK) {
            cli_error(c->r.input, "%s", err.msg[0] ? err.msg : na_status_str(st));
            entry_failed(e, err.msg[0] ? err.msg : na_status_str(st));
            return cli_exit_for_status(st);
        }
        e->emitted = 1;
        warn_emitted(e, eng_of(c, e));
    }
    return 0;
}

static void build_cmdline(crun_t *c)
{
    /* The command as given, arguments separated by spaces. */
    size_t len = 0;
    c->cmdline[0] = '\0';
    for (int i = 0; i < c->o->argc; i++) {
        int k = snprintf(c->cmdline + len, sizeof c->cmdline - len, "%s%s", i ? " " : "",
                         c->o->argv[i]);
        if (k < 0 || (size_t)k >= sizeof c->cmdline - len)
            break;
        len += (size_t)k;
    }
}

/* cli_msg_sink: a run warning, for the report's "warnings" (round 39a:
 * the raw output's were on stderr only, where a CI job does not look),
 * and the last error line, the report's "error" when nothing else says
 * why nothing was written (finish; round 42a: an output directory that
 * vanished or was missing left it null). */
static void keep_msg(void *ud, int warning, const char *path, const char *msg)
{
    cli_clean_run_t *r = ud;
    if (!warning)
        path_msg(r, path, msg, 1, r->last_error, sizeof r->last_error);
    else if (r->n_warn++ < CLI_CLEAN_RUN_WARN) /* the path as stderr's line has it */
        path_msg(r, path, msg, 0, r->warn[r->n_warn - 1], sizeof r->warn[0]);
}

static int clean_report_write(void *ctx, FILE *fp)
{
    return cli_clean_report_json(ctx, fp);
}

/* Region references are made anew on the copies, except those into a
 * dataset that lost samples, whose selection would name other elements:
 * NULL (hdf5_wchild.c region_ref). When a dataset loses samples, each
 * dataset of region references says so (round 36b: a user's annotations
 * became NULL unseen, "copied: references", exit 0). */
static void region_refs_warn(crun_t *c)
{
    int lost = 0;
    for (size_t i = 0; i < c->r.n && !lost; i++)
        lost = c->r.e[i].ct.out_rows != c->r.e[i].ct.rows;
    for (size_t i = 0; i < c->r.n && lost; i++) {
        cli_clean_entry_t *e = &c->r.e[i];
        if (e->regrefs && e->n_warn < CLI_CLEAN_MAX_WARN)
            snprintf(e->warn[e->n_warn++], sizeof e->warn[0],
                     "its region references into a dataset that loses samples are written as "
                     "NULL (the others point at the copies)");
    }
}

static int finish(crun_t *c, int rc)
{
    /* A read the steps above did not check (they all do): exit 3 all the
     * same, never a result computed from the zeros (cli/sigbus.c) */
    if ((rc == 0 || rc == 1) && !c->r.written && shrank(c)) {
        cli_error(c->r.input, "%s; nothing written", NA_MAP_SHRANK_MSG);
        rc = 3;
    }
    c->r.exit_code = rc;
    /* nothing written, and no tensor or refusal says why: the run's last
     * error line (an output directory missing or removed meanwhile) */
    int tensor_err = 0;
    for (size_t i = 0; i < c->r.n; i++)
        tensor_err |= c->r.e[i].status && !strcmp(c->r.e[i].status, "error");
    if (!c->r.written && rc >= 3 && !c->r.error[0] && !tensor_err && c->r.last_error[0])
        snprintf(c->r.error, sizeof c->r.error, "%s", c->r.last_error);
    const cli_opts_t *o = c->o;
    region_refs_warn(c);
    cli_device_names(&c->dev);
    c->r.device = c->dev.name;
    c->r.device_note = c->dev.note[0] ? c->dev.note : NULL;
    int usage = rc == 2 && c->r.n == 0; /* a usage error before any work: its message only */
    /* The --report file first: when it cannot be written (a full disk,
     * /dev/full: buffered, so often only fclose fails) the run is exit 4
     * with one line, and the report on stdout says exit_code 4. A
     * regular file left half written is removed, not left to be read. */
    if (o->report && !usage) {
        int e = cli_write_file(o->report, clean_report_write, &c->r, 1);
        if (e && c->r.written) /* exit 4 must not read as "nothing written" (round 25b) */
            cli_error(o->report, "cannot write the report: %s; %s was written and verified",
                      e > 0 ? strerror(e) : "out of memory", c->r.output);
        else if (e)
            cli_error(o->report, "cannot write the report: %s",
                      e > 0 ? strerror(e) : "out of memory");
        if (e) {
            rc = cli_exit_merge(rc, 4);
            c->r.exit_code = rc;
        }
    }
    if (!usage && o->json)
        cli_clean_report_json(&c->r, stdout);
    else if (!usage && !c->no_text)
        cli_clean_report_text(&c->r, o->quiet, stdout);
    /* A full standard output, found only now that OUT is in place: the
     * line says so, once (main.c would say "write error on standard
     * output" again for the same error, so stdout is left to /dev/null) */
    int out_bad = !usage && cli_stdout_failed();
    if (out_bad && c->r.written) {
        cli_error(NULL, "write error on standard output: the report is lost, but %s was "
                  "written and verified", c->r.output);
        if (freopen("/dev/null", "w", stdout) == NULL)
            clearerr(stdout);
    }
    /* ... and the --report file, written first, says exit 4 too (main.c
     * says "write error on standard output" when OUT was not written) */
    if (out_bad && cli_exit_merge(rc, 4) != rc) {
        rc = cli_exit_merge(rc, 4);
        c->r.exit_code = rc;
        if (o->report && cli_write_file(o->report, clean_report_write, &c->r, 1))
            cli_error(o->report, "cannot write the report");
    }
    na_sha256_file_cancel(c->sha); /* an error or a refusal came first */
    for (size_t i = 0; i < c->r.n; i++)
        na_clean_tensor_free(&c->r.e[i].ct);
    free(c->r.e);
    na_input_close(c->in);
    json_decref(c->params);
    json_decref(c->params_used);
    free(c->group);
    cli_device_close(&c->dev);
    return rc;
}

static int clean_main(const cli_opts_t *o)
{
    crun_t c;
    memset(&c, 0, sizeof c);
    c.o = o;
    /* A file-size limit is a write error (EFBIG) for every file clean
     * writes, --save-params (before the output) included */
    signal(SIGXFSZ, SIG_IGN);
    if (o->n_inputs != 1)
        return cli_usage(CLI_CLEAN, "clean takes exactly one input file (got %zu)", o->n_inputs);
    c.r.input = o->inputs[0];
    c.r.output = o->clean.output;
    c.r.dry_run = o->clean.dry_run;
    cli_msg_sink(keep_msg, &c.r);
    if (o->clean.apply_params) {
        char why[NA_ERR_LEN];
        c.params = cli_params_load(o->clean.apply_params, why, sizeof why);
        if (!c.params) {
            cli_error(o->clean.apply_params, "bad --apply-params file: %s", why);
            return 2;
        }
    }
    int rc = check_output(&c);
    /* The report goes to standard output after OUT is in place: a closed
     * one (`>&-`) would make a run that wrote OUT exit 4, so it is refused
     * before any work (a full one is only found by writing: finish()) */
    if (!rc && cli_stdout_closed) {
        cli_error(NULL, "standard output is closed: clean writes its report there (give "
                  ">/dev/null to discard it); nothing written");
        rc = 4;
        cli_stdout_closed = 0; /* said: main.c adds no second line */
    }
    /* --device: a GPU that cannot be used is exit 4 with one line before
     * the input is opened or anything written, as for scan: also before
     * the output directory's probe file */
    if (!rc)
        rc = cli_device_open(&c.dev, o->device, o->device_ordinal);
    /* the line alone for those (a usage error, a closed standard output,
     * a GPU that cannot be used: nothing written, no report) ... */
    if (rc) {
        json_decref(c.params);
        cli_device_close(&c.dev);
        return rc;
    }
    /* ... but an output directory that cannot take the file is the
     * output's failure, which the --report says (round 42a: none) */
    if (c.probe_dir && (rc = check_output_dir(o->clean.output)) != 0) {
        c.no_text = 1;
        return finish(&c, rc);
    }
    c.dev.verb = "cleaned";
    na_err_t err = {{0}};
    /* before the open: a file replaced from here on is seen as changed */
    c.have_in_st = stat(c.r.input, &c.in_st) == 0;
    cli_sigbus_input(c.r.input); /* a truncation names it (sigbus.c) */
    c.shrinks = na_map_shrinks();
    na_status_t st = na_input_open(c.r.input, &o->open, &c.in, &err);
    if (st != NA_OK) {
        /* the --report and --format json say it too: a CI job keeps the
         * report as its artifact (round 36a: none was written) */
        cli_error(c.r.input, "%s", err.msg);
        snprintf(c.r.error, sizeof c.r.error, "%s", err.msg);
        return finish(&c, cli_exit_for_status(st));
    }
    c.r.format = na_input_format(c.in);
    cli_warn_out_format(c.r.output, c.r.format);
    /* bytes left out: before --offset, or after --length when that ends
     * before the file does (round 39a: a --length up to the end warned;
     * a gzip file's length is not its data's, so there it warns) */
    na_probe_t pr;
    na_err_t pe;
    uint64_t in_size = c.have_in_st ? (uint64_t)c.in_st.st_size : 0;
    int tail = 0;
    if (o->open.raw_length != NA_RAW_TO_EOF && !strcmp(c.r.format, "raw"))
        tail = o->open.raw_offset > in_size || o->open.raw_length < in_size - o->open.raw_offset ||
               (na_probe_path(c.r.input, 0, &pr, NULL, &pe) == NA_OK && pr.kind == NA_FILE_GZIP);
    if (!strcmp(c.r.format, "raw") && c.r.output && (o->open.raw_offset > 0 || tail))
        cli_warn(c.r.output, "holds only the data: any bytes of the input before --offset or after "
                 "--length are not copied");
    if (!o->clean.dry_run && !na_writer_for(c.r.format)) {
        snprintf(c.r.error, sizeof c.r.error, "clean cannot write %s files yet (safetensors, "
                 "raw, HDF5, NumPy .npy/.npz and PyTorch only; --dry-run reports what it "
                 "would do)", c.r.format);
        cli_error(c.r.input, "%s", c.r.error);
        return finish(&c, 3);
    }
    rc = settle_options(&c);
    if (rc)
        return finish(&c, rc);
    if (c.params) { /* against the settled options, before any read */
        char why[NA_ERR_LEN];
        if (cli_params_check(c.params, o->clean.apply_params, &c.eng, why, sizeof why)) {
            cli_error(o->clean.apply_params, "%s", why);
            return finish(&c, 2);
        }
    }
    /* the patterns against the names, before the hash thread reads */
    rc = list_entries(&c);
    if (!rc)
        rc = together_names(&c);
    if (!rc)
        rc = warn_unmatched(&c, "--include", o->clean.include, o->clean.n_include);
    if (!rc)
        rc = warn_unmatched(&c, "--exclude", o->clean.exclude, o->clean.n_exclude);
    if (rc)
        return finish(&c, rc);
    build_cmdline(&c);
    if (!o->clean.dry_run) /* a dry run reports no hash */
        c.sha = na_sha256_file_start(c.r.input);
    c.params_used = c.params ? json_object() : NULL;
    rc = fit_all(&c);
    if (rc >= 2)
        return finish(&c, rc);
    warn_unused_params(&c);
    int jg = join_groups(&c);
    if (jg)
        return finish(&c, jg);
    jg = params_nulls(&c);
    if (jg)
        return finish(&c, jg);
    int g = guard_rails(&c);
    if (g)
        return finish(&c, cli_exit_merge(rc, g));
    g = check_out_dtype(&c);
    if (g)
        return finish(&c, cli_exit_merge(rc, g));
    if (o->clean.save_params) {
        json_t *pj = cli_params_new(&c.eng);
        for (size_t i = 0; pj && i < c.r.n; i++)
            if (c.r.e[i].cleaned && !c.r.e[i].follower) /* followers: no statistics */
                cli_params_add(pj, c.r.e[i].name, &c.r.e[i].ct, eng_of(&c, &c.r.e[i]));
        errno = 0;
        int bad = !pj || cli_params_save(pj, o->clean.save_params) != 0;
        int why = pj ? errno : ENOMEM;
        json_decref(pj);
        /* Before the output: a failed run leaves nothing under OUT, and
         * cleaned training data without its parameters cannot be
         * reproduced on the test set (the fourth fresh-user round) */
        if (bad) {
            cli_error(o->clean.save_params, "cannot write the parameters: %s",
                      why ? strerror(why) : "write error");
            return finish(&c, cli_exit_merge(rc, 4));
        }
    }
    uint64_t clean_bytes = 0; /* --device auto decides on the bytes to clean */
    for (size_t i = 0; i < c.r.n; i++)
        if (c.r.e[i].cleaned)
            clean_bytes += c.r.e[i].ct.rows * c.r.e[i].ct.width *
                           (na_dtype_bits(c.r.e[i].dtype) / 8);
    cli_device_plan(&c.dev, clean_bytes, o->threads);
    if (!o->clean.dry_run) {
        int w = write_output(&c);
        rc = cli_exit_merge(rc, w);
        if (w)
            return finish(&c, rc);
    } else {
        int d = dry_open(&c);
        if (d)
            return finish(&c, cli_exit_merge(rc, d));
        d = dry_emit(&c);
        if (d)
            return finish(&c, cli_exit_merge(rc, d));
        na_err_t ue = {{0}};
        if (input_unchanged(&c, &ue) != NA_OK) {
            cli_error(c.r.input, "%s", ue.msg);
            return finish(&c, cli_exit_merge(rc, 3));
        }
    }
    /* NaN or Inf left in a cleaned tensor is a finding of scan's default
     * policy: exit 1 (issue 4, "Exit codes"). */
    for (size_t i = 0; i < c.r.n; i++) {
        const cli_clean_entry_t *e = &c.r.e[i];
        if (!e->cleaned)
            continue;
        const na_stats_t *s = e->emitted ? &e->ct.after : &e->ct.before;
        uint64_t left = s->nan + s->pos_inf + s->neg_inf;
        if (!e->emitted && eng_of(&c, e)->nonfinite != NA_NF_KEEP)
            left = e->ct.passthrough ? left : 0;
        if (left)
            rc = cli_exit_merge(rc, 1);
    }
    return finish(&c, rc);
}

int cli_clean(const cli_opts_t *o)
{
    int rc = clean_main(o); /* its run's lines went to its report too (keep_msg) */
    cli_msg_sink(NULL, NULL);
    return rc;
}
