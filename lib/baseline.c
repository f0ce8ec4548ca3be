/*
 * baseline.c - --baseline old.json: fail only on findings that are new.
 *
 * The baseline is a JSON report of an earlier scan (docs/json-schema.md).
 * A finding is identified by (file path as given, tensor name, kind); it
 * is new when that triple is absent from the baseline or its count grew.
 * Paths are compared as written, after dropping "." components and
 * repeated slashes ("./m.safetensors", "ck//m.safetensors" and
 * "ck/./m.safetensors" are "m.safetensors", "ck/m.safetensors"), so the
 * spelling a CI job happens to use does not make every finding new; ".."
 * is kept (through a symlink it names another directory). An absolute
 * path under the working directory (getcwd(3) when the baseline is read,
 * or $PWD naming it through a link) is compared relative to it, on both
 * sides: a job that scans "$PWD/ckpt" matches a baseline of "ckpt" and
 * the reverse (README round 24); one made elsewhere with absolute paths
 * does not, while a relative one is taken as relative to this run's
 * directory. In a Hugging
 * Face hub cache path (.../models--ORG--NAME/snapshots/REV/FILE, also
 * datasets-- and spaces--) the revision, a 40-digit commit hash, is
 * compared as "*": a file that two revisions share is audited once, under
 * whichever revision sorts first, and a new revision that shares the old
 * one's weights must not make their findings new (tester round 23a);
 * a relative path is put under the working directory before that, so
 * that the revision is found from any directory of the cache (round 26).
 * A finding the baseline already has, with a count no larger, does not
 * fail; it is still reported, with its baseline count ("baseline" in the
 * JSON report).
 *
 * Parsed with jansson, strictly (duplicate keys rejected, as every JSON
 * nanaudit reads): a baseline that is not a nanaudit report is a usage
 * error (exit 2), decided before any input is opened. Lookups are a
 * binary search over the triples sorted once.
 */
#include "nanaudit.h"
#include "report_util.h" /* na_json_form */

#include <jansson.h>
#include <limits.h>   /* PATH_MAX */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free, qsort, bsearch, getenv */
#include <string.h>   /* strcmp, strlen */
#include <sys/stat.h> /* stat */
#include <unistd.h>   /* getcwd */

/* lib/ is built without _GNU_SOURCE, where strict C (clang's TSan build)
 * leaves PATH_MAX undeclared: Linux's value */
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

typedef struct entry {
    const char *path;   /* normalized copy (norm_path), owned */
    const char *tensor; /* points into the kept jansson tree */
    int kind;
    uint64_t count;
} entry_t;

struct na_baseline {
    json_t *root;      /* owns the strings the entries point to */
    char *cwd[2];      /* the working directory: getcwd(3) and $PWD when it
                        * names the same directory by another path (a
                        * symbolic link), in the reports' form, clean_path;
                        * NULL when unknown or the same */
    char *cwd_star[2]; /* the same with a hub cache revision starred */
    entry_t *e;
    size_t n;
};

static int cmp(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    if (!c)
        c = strcmp(x->tensor, y->tensor);
    return c ? c : (x->kind > y->kind) - (x->kind < y->kind);
}

static int kind_of(const char *name)
{
    for (int k = 0; k < NA_K_COUNT; k++)
        if (!strcmp(name, na_kind_name((na_kind_t)k)))
            return k;
    return -1;
}

#define BAD(err, fname, ...) na_err_set(err, NA_E_USAGE, __VA_ARGS__)

/* 1 when the n bytes at s are a 40-digit lowercase hex commit hash. */
static int is_commit(const char *s, size_t n)
{
    if (n != 40)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* In normalized path o, each hub cache revision (a commit hash after
 * "REPO/snapshots/", REPO starting models--, datasets-- or spaces--)
 * becomes "*", in place (see the top). */
static void hub_revision_star(char *o)
{
    static const char *const repo[3] = {"models--", "datasets--", "spaces--"};
    char *prev = NULL; /* start of the component before the current one */
    for (char *c = o; *c;) {
        size_t L = strcspn(c, "/");
        int hub = 0;
        for (int k = 0; prev && k < 3; k++)
            hub |= !strncmp(prev, repo[k], strlen(repo[k]));
        if (hub && L == 9 && !strncmp(c, "snapshots", 9) && c[L] == '/' &&
            is_commit(c + L + 1, strcspn(c + L + 1, "/"))) {
            char *rev = c + L + 1;
            rev[0] = '*';
            memmove(rev + 1, rev + 40, strlen(rev + 40) + 1);
        }
        prev = c;
        c += L + (c[L] == '/');
    }
}

/* Absolute normalized path o relative to normalized directory cwd when
 * it lies under it ("." for cwd itself), in place; 1 when it did. */
static int under_cwd(char *o, const char *cwd)
{
    size_t L = cwd ? strlen(cwd) : 0;
    if (L == 0 || o[0] != '/' || strncmp(o, cwd, L) != 0)
        return 0;
    if (L == 1) /* "/" itself */
        memmove(o, o + 1, strlen(o));
    else if (o[L] == '/')
        memmove(o, o + L + 1, strlen(o + L + 1) + 1);
    else if (o[L] == '\0')
        strcpy(o, ".");
    else
        return 0; /* /a/bc is not under /a/b */
    if (o[0] == '\0')
        strcpy(o, ".");
    return 1;
}

/* p without "." components and repeated slashes (see the top); a
 * malloc'd string, NULL when out of memory. "." alone stays ".". */
static char *clean_path(const char *p)
{
    size_t n = strlen(p);
    char *o = malloc(n + 2), *q = o;
    if (o == NULL)
        return NULL;
    if (*p == '/')
        *q++ = '/';
    while (*p) {
        while (*p == '/')
            p++;
        size_t L = strcspn(p, "/");
        if (L == 0)
            break;
        if (!(L == 1 && *p == '.')) {
            if (q > o && q[-1] != '/')
                *q++ = '/';
            memcpy(q, p, L);
            q += L;
        }
        p += L;
    }
    if (q == o)
        *q++ = '.';
    *q = '\0';
    return o;
}

/* The key of path p (see the top): clean_path; a relative path is put
 * under the working directory, so that a hub cache's revision is found
 * from any directory; the revision starred; then made relative to the
 * working directory (its physical or its logical name, starred alike)
 * when under it. b NULL: clean_path and the star only. malloc'd, NULL
 * when out of memory. */
static char *norm_path(const char *p, const na_baseline_t *b)
{
    char *o = clean_path(p);
    if (o && o[0] != '/' && b && b->cwd[0]) {
        size_t a = strlen(b->cwd[0]), n = strlen(o);
        char *j = malloc(a + n + 2);
        if (j) {
            memcpy(j, b->cwd[0], a);
            j[a] = '/';
            memcpy(j + a + 1, o, n + 1);
        }
        free(o);
        o = j ? clean_path(j) : NULL;
        free(j);
    }
    if (o == NULL)
        return NULL;
    hub_revision_star(o);
    /* the longer name first: $PWD/wlink is also under getcwd's /w when
     * wlink links to it */
    int first = b && b->cwd_star[1] && strlen(b->cwd_star[1]) > strlen(b->cwd_star[0]);
    if (b && !under_cwd(o, b->cwd_star[first]))
        under_cwd(o, b->cwd_star[!first]);
    return o;
}

/* Check one files[i] entry and append its findings (e may be NULL to
 * count them only). */
static na_status_t walk_file(json_t *f, size_t fi, entry_t *e, size_t *n,
                             const na_baseline_t *b, const char *fname, na_err_t *err)
{
    json_t *path = json_object_get(f, "path"), *ts = json_object_get(f, "tensors");
    if (!json_is_object(f) || !json_is_string(path) || !json_is_array(ts))
        return BAD(err, fname, "%s: files[%zu] lacks a \"path\" string or a \"tensors\" list",
                   fname, fi);
    size_t ti;
    json_t *t;
    json_array_foreach(ts, ti, t) {
        json_t *name = json_object_get(t, "name"), *fs = json_object_get(t, "findings");
        if (!json_is_object(t) || !json_is_string(name))
            return BAD(err, fname, "%s: files[%zu].tensors[%zu] lacks a \"name\" string", fname,
                       fi, ti);
        if (!fs)
            continue; /* errors and skipped tensors have no findings */
        if (!json_is_array(fs))
            return BAD(err, fname, "%s: files[%zu].tensors[%zu].findings is not a list", fname,
                       fi, ti);
        size_t k;
        json_t *x;
        json_array_foreach(fs, k, x) {
            json_t *kind = json_object_get(x, "kind"), *count = json_object_get(x, "count");
            int kd = json_is_string(kind) ? kind_of(json_string_value(kind)) : -1;
            if (kd < 0 || !json_is_integer(count) || json_integer_value(count) < 0)
                return BAD(err, fname, "%s: files[%zu].tensors[%zu].findings[%zu] needs a known "
                           "\"kind\" and a \"count\" >= 0", fname, fi, ti, k);
            if (e) {
                e[*n].path = norm_path(json_string_value(path), b);
                if (e[*n].path == NULL)
                    return na_err_set(err, NA_E_NOMEM, "%s: out of memory", fname);
                e[*n].tensor = json_string_value(name);
                e[*n].kind = kd;
                e[*n].count = (uint64_t)json_integer_value(count);
            }
            (*n)++;
        }
    }
    return NA_OK;
}

/* b->cwd and b->cwd_star (struct na_baseline): in the reports' form
 * (na_json_form), as the paths they are compared with. Unknown (a deleted
 * directory, longer than PATH_MAX, no memory): left NULL, and no path is
 * made relative. $PWD is taken when it is absolute and names the same
 * directory (a shell's logical path through a symbolic link, which
 * scripts pass as "$PWD/ckpt"; round 26). */
static void set_cwd(na_baseline_t *b)
{
    char wd[PATH_MAX];
    const char *pwd = getenv("PWD");
    struct stat a, c;
    const char *src[2] = {getcwd(wd, sizeof wd), NULL};
    if (src[0] && pwd && pwd[0] == '/' && strcmp(pwd, src[0]) && stat(pwd, &a) == 0 &&
        stat(".", &c) == 0 && a.st_dev == c.st_dev && a.st_ino == c.st_ino)
        src[1] = pwd;
    for (int k = 0; k < 2 && src[k]; k++) {
        char *j = na_json_form(src[k]);
        b->cwd[k] = j ? clean_path(j) : NULL;
        free(j);
        b->cwd_star[k] = b->cwd[k] ? norm_path(b->cwd[k], NULL) : NULL;
        if (!b->cwd[k] || !b->cwd_star[k])
            break;
    }
}

na_status_t na_baseline_parse(const char *text, size_t len, const char *fname,
                              na_baseline_t **out, na_err_t *err)
{
    json_error_t je;
    *out = NULL;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return BAD(err, fname, "%s:%d: not valid JSON: %s", fname, je.line, je.text);
    json_t *files = json_object_get(root, "files"), *sv = json_object_get(root, "schema_version");
    na_status_t st = NA_OK;
    if (!json_is_object(root) || !json_is_integer(sv) || !json_is_array(files))
        st = BAD(err, fname, "%s: not a nanaudit JSON report (needs \"schema_version\" and "
                 "\"files\")", fname);
    else if (json_integer_value(sv) != NA_SCHEMA_VERSION)
        st = BAD(err, fname, "%s: schema_version %lld is not %d", fname,
                 (long long)json_integer_value(sv), NA_SCHEMA_VERSION);
    size_t n = 0, i;
    json_t *f;
    json_array_foreach(files, i, f) {
        if (st == NA_OK)
            st = walk_file(f, i, NULL, &n, NULL, fname, err);
    }
    na_baseline_t *b = st == NA_OK ? calloc(1, sizeof *b) : NULL;
    if (st == NA_OK && (!b || !(b->e = calloc(n + 1, sizeof *b->e))))
        st = na_err_set(err, NA_E_NOMEM, "%s: out of memory", fname);
    if (st != NA_OK) {
        free(b);
        json_decref(root);
        return st;
    }
    b->root = root;
    set_cwd(b);
    json_array_foreach(files, i, f) {
        if (st == NA_OK)
            st = walk_file(f, i, b->e, &b->n, b, fname, err);
    }
    if (st != NA_OK) {
        na_baseline_free(b);
        return st;
    }
    qsort(b->e, b->n, sizeof *b->e, cmp);
    *out = b;
    return NA_OK;
}

void na_baseline_apply(const na_baseline_t *b, const char *path, const char *tensor,
                       na_finding_t *f, size_t n)
{
    /* as the reports write them: a path or name that is not UTF-8 is
     * \xHH text there (na_json_form), and never matched its own report */
    char *jp = b && path && tensor && n ? na_json_form(path) : NULL;
    char *jt = jp ? na_json_form(tensor) : NULL;
    char *np = jt ? norm_path(jp, b) : NULL;
    for (size_t i = 0; np && i < n; i++) {
        entry_t key = {np, jt, (int)f[i].kind, 0};
        const entry_t *hit = bsearch(&key, b->e, b->n, sizeof *b->e, cmp);
        if (!hit)
            continue;
        f[i].in_baseline = 1;
        f[i].baseline = hit->count;
        if (f[i].count <= hit->count)
            f[i].fails = 0;
        size_t len = strlen(f[i].message);
        snprintf(f[i].message + len, sizeof f[i].message - len, " (baseline: %llu)",
                 (unsigned long long)hit->count);
    }
    free(np);
    free(jt);
    free(jp);
}

void na_baseline_free(na_baseline_t *b)
{
    if (!b)
        return;
    json_decref(b->root);
    for (int k = 0; k < 2; k++) {
        free(b->cwd[k]);
        free(b->cwd_star[k]);
    }
    for (size_t i = 0; i < b->n; i++)
        free((char *)b->e[i].path);
    free(b->e);
    free(b);
}
