/*
 * report_json.c - the JSON report (schema: docs/json-schema.md; the keys
 * are the contract of issue 2 section 6 and are never renamed).
 *
 * Written as it is walked (the streaming writer below), with jansson
 * (https://jansson.readthedocs.io) formatting each string and real:
 * JSON_REAL_PRECISION(17), so every double round-trips exactly. JSON has
 * no NaN or Inf: a statistic with no finite values behind it is null.
 * Keys are in a fixed order and nothing depends on the thread count, so
 * the output is byte-identical for any --threads.
 */
#include "nanaudit.h"

#include "report_util.h"
#include <jansson.h>
#include <math.h>   /* isfinite */
#include <stdlib.h> /* malloc, free */
#include <string.h> /* strlen, memcpy */

/* 1 when s is well-formed UTF-8 (escape.c's rules), which jansson takes. */
static int utf8_ok(const char *s, size_t n)
{
    size_t i = 0, len;
    while (i < n && (len = na_utf8_seq_len(s + i, n - i)) > 0)
        i += len;
    return i == n;
}

char *na_json_form(const char *s)
{
    size_t n = strlen(s);
    if (!utf8_ok(s, n))
        return na_escape_text_dup(s);
    char *c = malloc(n + 1);
    if (c)
        memcpy(c, s, n + 1);
    return c;
}

/* A JSON string for arbitrary bytes. jansson refuses invalid UTF-8, and a
 * path or name from a file may hold any bytes: those go through
 * na_escape_text, which turns invalid sequences into \xHH, the form
 * na_json_form gives the baseline for the names it compares. */
json_t *na_json_text(const char *s)
{
    if (!s)
        return json_null();
    if (utf8_ok(s, strlen(s))) /* the common case: no copy */
        return json_string(s);
    char *f = na_escape_text_dup(s);
    json_t *j = f ? json_string(f) : NULL;
    free(f);
    return j;
}

/* ------------------------------------------------------------------ */
/* A streaming writer. The document is written as it is walked, one
 * value at a time, so memory does not grow with the number of files,
 * tensors or locations (a tree of 1M tensor entries took 6.9 GB). The
 * bytes are those of json_dumpf(tree, JSON_INDENT(2) |
 * JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)): two spaces a level,
 * ": " after a key, ",\n" between members, "[]" and "{}" when empty;
 * strings and reals are formatted by jansson itself (its escaping and
 * its shortest-17-digit reals), integers, booleans and null here. */

#define JW_DEPTH 16 /* the report nests 9 deep */
#define JW_FLAGS (JSON_ENCODE_ANY | JSON_REAL_PRECISION(17))

typedef struct jw {
    FILE *out;
    int depth;
    int empty[JW_DEPTH]; /* the container open at each depth has no member yet */
    int keyed;           /* a key was written: the value follows it */
    int err;             /* a write failed (NA_E_WRITE) or memory ran out */
    int oom;
} jw_t;

/* Before a value (or a key) inside the open container: the separator and
 * the indentation; nothing after a key. */
static void jw_item(jw_t *w)
{
    if (w->keyed) {
        w->keyed = 0;
        return;
    }
    if (w->depth == 0)
        return;
    if (fputs(w->empty[w->depth] ? "\n" : ",\n", w->out) == EOF ||
        fprintf(w->out, "%*s", 2 * w->depth, "") < 0)
        w->err = 1;
    w->empty[w->depth] = 0;
}

static void jw_open(jw_t *w, char c)
{
    jw_item(w);
    if (fputc(c, w->out) == EOF)
        w->err = 1;
    if (w->depth + 1 < JW_DEPTH)
        w->empty[++w->depth] = 1;
}

static void jw_close(jw_t *w, char c)
{
    int had = !w->empty[w->depth];
    w->depth--;
    if (had && fprintf(w->out, "\n%*s", 2 * w->depth, "") < 0)
        w->err = 1;
    if (fputc(c, w->out) == EOF)
        w->err = 1;
}

/* "key": (key is one of this file's literals: plain ASCII) */
static void jw_key(jw_t *w, const char *key)
{
    jw_item(w);
    if (fprintf(w->out, "\"%s\": ", key) < 0)
        w->err = 1;
    w->keyed = 1;
}

/* A scalar made by jansson (string, real), written and freed. */
static void jw_json(jw_t *w, json_t *v)
{
    jw_item(w);
    if (!v) {
        w->oom = 1;
        return;
    }
    if (json_dumpf(v, w->out, JW_FLAGS) != 0)
        w->err = 1;
    json_decref(v);
}

static void jw_lit(jw_t *w, const char *lit) /* null, true, false */
{
    jw_item(w);
    if (fputs(lit, w->out) == EOF)
        w->err = 1;
}

static void jw_uint(jw_t *w, uint64_t v)
{
    jw_item(w);
    /* jansson's json_int_t is signed: as json_integer((json_int_t)v) did */
    if (fprintf(w->out, "%" JSON_INTEGER_FORMAT, (json_int_t)v) < 0)
        w->err = 1;
}

static void jw_int(jw_t *w, int v)
{
    jw_item(w);
    if (fprintf(w->out, "%d", v) < 0)
        w->err = 1;
}

static void jw_str(jw_t *w, const char *s) { jw_json(w, na_json_text(s)); }
static void jw_bool(jw_t *w, int b) { jw_lit(w, b ? "true" : "false"); }
static void jw_null(jw_t *w) { jw_lit(w, "null"); }
/* A real; null when not finite (JSON has no NaN or Inf). */
static void jw_real(jw_t *w, double v)
{
    if (isfinite(v))
        jw_json(w, json_real(v));
    else
        jw_null(w);
}

static void jw_shape(jw_t *w, int ndim, const uint64_t *shape)
{
    jw_open(w, '[');
    for (int d = 0; d < ndim; d++)
        jw_uint(w, shape[d]);
    jw_close(w, ']');
}

/* [[i0, i1, ...], ...]: flat row-major indices unravelled into shape. */
static void locations(jw_t *w, const uint64_t *flat, size_t n, const na_tensor_report_t *e)
{
    uint64_t idx[NA_MAX_NDIM];
    jw_open(w, '[');
    for (size_t i = 0; i < n && !w->err; i++) {
        na_unravel(flat[i], e->ndim, e->shape, idx);
        jw_shape(w, e->ndim, idx);
    }
    jw_close(w, ']');
}

static void findings(jw_t *w, const na_tensor_report_t *e)
{
    jw_open(w, '[');
    for (size_t i = 0; i < e->n_findings; i++) {
        const na_finding_t *f = &e->findings[i];
        jw_open(w, '{');
        jw_key(w, "kind");
        jw_str(w, na_kind_name(f->kind));
        jw_key(w, "count");
        jw_uint(w, f->count);
        jw_key(w, "message");
        jw_str(w, f->message);
        jw_key(w, "fails");
        jw_bool(w, f->fails);
        if (f->in_baseline) { /* --baseline had this finding (lib/baseline.c) */
            jw_key(w, "baseline");
            jw_uint(w, f->baseline);
        }
        jw_close(w, '}');
    }
    jw_close(w, ']');
}

/* Statistics of a scanned entry; all null when it was not scanned, and
 * min..std null when it has no finite value. */
static void stats(jw_t *w, const na_tensor_report_t *e)
{
    static const char *const counts[] = {"nan", "pos_inf", "neg_inf", "zeros",
                                         "subnormal", "finite"};
    static const char *const reals[] = {"min", "max", "abs_max", "mean", "std"};
    const na_stats_t *s = &e->res.st;
    uint64_t cv[] = {s->nan, s->pos_inf, s->neg_inf, s->zeros, s->subnormal, s->finite};
    int have = e->scanned && s->finite > 0;
    double rv[] = {s->min, s->max, s->abs_max, s->mean, e->res.std};
    for (size_t i = 0; i < 6; i++) {
        jw_key(w, counts[i]);
        if (e->scanned)
            jw_uint(w, cv[i]);
        else
            jw_null(w);
    }
    for (size_t i = 0; i < 5; i++) {
        jw_key(w, reals[i]);
        jw_real(w, have ? rv[i] : NAN);
    }
}

static void outliers(jw_t *w, const na_tensor_report_t *e)
{
    if (!e->scanned || !e->res.outliers_checked) {
        jw_null(w);
        return;
    }
    int mad = e->res.method == NA_OUTLIER_MAD; /* scan --mad: centre median, scale MAD */
    jw_open(w, '{');
    jw_key(w, "method");
    jw_str(w, mad ? "mad" : "zscore");
    jw_key(w, "threshold");
    jw_real(w, e->res.threshold);
    if (mad) {
        jw_key(w, "median");
        jw_real(w, e->res.median);
        jw_key(w, "mad");
        jw_real(w, e->res.mad);
        jw_key(w, "meanad");
        jw_real(w, e->res.meanad);
    }
    jw_key(w, "count");
    jw_uint(w, e->res.outliers);
    jw_key(w, "locations");
    locations(w, e->res.out_locs, e->res.n_out_locs, e);
    const char *note = na_outliers_note(&e->res);
    if (note) { /* only when the test could flag nothing (docs/json-schema.md) */
        jw_key(w, "note");
        jw_str(w, note);
    }
    jw_close(w, '}');
}

static const char *tstatus_name(na_tstatus_t s)
{
    return s == NA_TS_OK ? "ok" : (s == NA_TS_ERROR ? "error" : "skipped");
}

static void tensor(jw_t *w, const na_tensor_report_t *e)
{
    jw_open(w, '{');
    jw_key(w, "name");
    jw_str(w, e->name);
    jw_key(w, "status");
    jw_str(w, tstatus_name(e->status));
    if (e->status != NA_TS_OK || e->reason) {
        jw_key(w, "reason");
        jw_str(w, e->reason ? e->reason : "");
    }
    jw_key(w, "dtype");
    if (e->dtype)
        jw_str(w, na_dtype_name(e->dtype));
    else
        jw_null(w);
    if (e->stored && e->stored != e->dtype) { /* extra key: C64 parts */
        jw_key(w, "stored_dtype");
        jw_str(w, na_dtype_name(e->stored));
    }
    jw_key(w, "byte_order");
    jw_str(w, e->byte_order == NA_BIG ? "big" : "little");
    jw_key(w, "shape");
    jw_shape(w, e->ndim, e->shape);
    jw_key(w, "elements");
    if (e->elements_overflow)
        jw_null(w);
    else
        jw_uint(w, e->elements);
    stats(w, e);
    if (e->report_missing) { /* HDF5 datasets (docs/json-schema.md) */
        jw_key(w, "missing");
        if (e->scanned)
            jw_uint(w, e->res.st.missing);
        else
            jw_null(w);
        jw_key(w, "unallocated_chunks");
        if (e->unallocated_chunks >= 0)
            jw_uint(w, (uint64_t)e->unallocated_chunks);
        else
            jw_null(w);
    }
    if (e->vlen) { /* HDF5 variable-length data (docs/json-schema.md) */
        jw_key(w, "variable_length");
        jw_open(w, '{');
        jw_key(w, "sequences");
        jw_uint(w, e->sequences);
        jw_key(w, "shape");
        jw_shape(w, e->vndim, e->vshape);
        jw_close(w, '}');
    }
    jw_key(w, "outliers");
    outliers(w, e);
    jw_key(w, "nan_locations");
    if (e->scanned)
        locations(w, e->res.nan_locs, e->res.n_nan_locs, e);
    else
        jw_null(w);
    jw_key(w, "inf_locations");
    if (e->scanned)
        locations(w, e->res.inf_locs, e->res.n_inf_locs, e);
    else
        jw_null(w);
    jw_key(w, "findings");
    findings(w, e);
    jw_close(w, '}');
}

static void file(jw_t *w, const na_file_report_t *f)
{
    jw_open(w, '{');
    jw_key(w, "path");
    jw_str(w, f->path);
    jw_key(w, "format");
    if (f->format)
        jw_str(w, f->format);
    else
        jw_null(w);
    jw_key(w, "status");
    jw_str(w, f->ok ? "ok" : "error");
    jw_key(w, "error");
    if (f->ok)
        jw_null(w);
    else
        jw_str(w, f->error ? f->error : "error");
    jw_key(w, "notes");
    jw_open(w, '[');
    for (size_t i = 0; i < f->n_notes; i++)
        jw_str(w, f->notes[i]);
    jw_close(w, ']');
    jw_key(w, "tensors");
    jw_open(w, '[');
    for (size_t i = 0; i < f->n_tensors && !w->err; i++)
        tensor(w, &f->tensors[i]);
    jw_close(w, ']');
    jw_close(w, '}');
}

static void summary(jw_t *w, const na_summary_t *s)
{
    static const char *const keys[] = {"files", "tensors", "skipped_tensors", "elements",
                                       "nan", "pos_inf", "neg_inf", "outliers", "errors"};
    uint64_t v[] = {s->files, s->tensors, s->skipped, s->elements, s->nan,
                    s->pos_inf, s->neg_inf, s->outliers, s->errors};
    jw_open(w, '{');
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        jw_key(w, keys[i]);
        jw_uint(w, v[i]);
    }
    jw_key(w, "failed");
    jw_bool(w, s->failed);
    jw_key(w, "exit_code");
    jw_int(w, s->exit_code);
    jw_close(w, '}');
}

/* Run settings (extra keys): what the numbers mean depends on them. The
 * thread count is deliberately absent so reports compare across runs. */
static void settings(jw_t *w, const na_report_t *r)
{
    jw_key(w, "zscore");
    jw_real(w, r->zscore);
    if (r->mad > 0) {
        jw_key(w, "mad");
        jw_real(w, r->mad);
    }
    jw_key(w, "max_locations");
    jw_uint(w, r->max_locations);
    jw_key(w, "fail_on");
    jw_open(w, '[');
    for (int k = 0; k < NA_K_COUNT; k++)
        if (r->fail_mask & NA_KIND_BIT(k))
            jw_str(w, na_kind_name((na_kind_t)k));
    jw_close(w, ']');
}

static void skipped(jw_t *w, const na_report_t *r)
{
    jw_open(w, '[');
    for (size_t i = 0; i < r->n_skipped; i++) {
        jw_open(w, '{');
        jw_key(w, "path");
        jw_str(w, r->skipped_paths[i]);
        jw_key(w, "reason");
        jw_str(w, r->skipped_reasons[i]);
        jw_close(w, '}');
    }
    jw_close(w, ']');
}

na_status_t na_report_write_json(const na_report_t *r, FILE *out)
{
    jw_t w = {.out = out};
    jw_open(&w, '{');
    jw_key(&w, "schema_version");
    jw_int(&w, NA_SCHEMA_VERSION);
    jw_key(&w, "tool");
    jw_open(&w, '{');
    jw_key(&w, "name");
    jw_str(&w, "nanaudit");
    jw_key(&w, "version");
    jw_str(&w, NA_VERSION);
    jw_close(&w, '}');
    jw_key(&w, "device");
    jw_str(&w, r->device ? r->device : "cpu");
    if (r->device_note) { /* only when there is something to say (auto's fallback) */
        jw_key(&w, "device_note");
        jw_str(&w, r->device_note);
    }
    settings(&w, r);
    jw_key(&w, "files");
    jw_open(&w, '[');
    for (size_t i = 0; i < r->n_files && !w.err; i++)
        file(&w, &r->files[i]);
    jw_close(&w, ']');
    jw_key(&w, "skipped");
    skipped(&w, r);
    jw_key(&w, "summary");
    summary(&w, &r->summary);
    jw_close(&w, '}');
    if (w.oom)
        return NA_E_NOMEM;
    if (w.err || fputc('\n', out) == EOF || fflush(out) != 0 || ferror(out))
        return NA_E_WRITE;
    return NA_OK;
}
