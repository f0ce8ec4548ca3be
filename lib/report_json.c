/*
 * report_json.c - the JSON report (schema: docs/json-schema.md; the keys
 * are the contract of issue 2 section 6 and are never renamed).
 *
 * Built with jansson (https://jansson.readthedocs.io) and dumped with
 * JSON_REAL_PRECISION(17), so every double round-trips exactly. JSON has
 * no NaN or Inf: a statistic with no finite values behind it is null.
 * Keys keep insertion order (JSON_PRESERVE_ORDER) and nothing depends on
 * the thread count, so the output is byte-identical for any --threads.
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

static json_t *jstr(const char *s) { return na_json_text(s); }

static json_t *jreal(double v) { return isfinite(v) ? json_real(v) : json_null(); }
static json_t *juint(uint64_t v) { return json_integer((json_int_t)v); }

/* Set key to v; a NULL v (out of memory) marks the whole build failed. */
static void put(json_t *o, const char *key, json_t *v, int *oom)
{
    if (!v || json_object_set_new(o, key, v))
        *oom = 1;
}

static void append(json_t *a, json_t *v, int *oom)
{
    if (!v || json_array_append_new(a, v))
        *oom = 1;
}

/* [[i0, i1, ...], ...]: flat row-major indices unravelled into shape. */
static json_t *locations(const uint64_t *flat, size_t n, const na_tensor_report_t *e,
                         int *oom)
{
    json_t *a = json_array();
    uint64_t idx[NA_MAX_NDIM];
    if (!a) {
        *oom = 1;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *one = json_array();
        na_unravel(flat[i], e->ndim, e->shape, idx);
        for (int d = 0; d < e->ndim && one; d++)
            append(one, juint(idx[d]), oom);
        append(a, one, oom);
    }
    return a;
}

static json_t *findings(const na_tensor_report_t *e, int *oom)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < e->n_findings; i++) {
        const na_finding_t *f = &e->findings[i];
        json_t *o = json_object();
        if (o) {
            put(o, "kind", jstr(na_kind_name(f->kind)), oom);
            put(o, "count", juint(f->count), oom);
            put(o, "message", jstr(f->message), oom);
            put(o, "fails", json_boolean(f->fails), oom);
            if (f->in_baseline) /* --baseline had this finding (lib/baseline.c) */
                put(o, "baseline", juint(f->baseline), oom);
        }
        append(a, o, oom);
    }
    if (!a)
        *oom = 1;
    return a;
}

/* Statistics of a scanned entry; all null when it was not scanned, and
 * min..std null when it has no finite value. */
static void stats(json_t *o, const na_tensor_report_t *e, int *oom)
{
    static const char *const counts[] = {"nan", "pos_inf", "neg_inf", "zeros",
                                         "subnormal", "finite"};
    static const char *const reals[] = {"min", "max", "abs_max", "mean", "std"};
    const na_stats_t *s = &e->res.st;
    uint64_t cv[] = {s->nan, s->pos_inf, s->neg_inf, s->zeros, s->subnormal, s->finite};
    int have = e->scanned && s->finite > 0;
    double rv[] = {s->min, s->max, s->abs_max, s->mean, e->res.std};
    for (size_t i = 0; i < 6; i++)
        put(o, counts[i], e->scanned ? juint(cv[i]) : json_null(), oom);
    for (size_t i = 0; i < 5; i++)
        put(o, reals[i], have ? jreal(rv[i]) : json_null(), oom);
}

static json_t *outliers(const na_tensor_report_t *e, int *oom)
{
    if (!e->scanned || !e->res.outliers_checked)
        return json_null();
    json_t *o = json_object();
    if (!o)
        return NULL;
    int mad = e->res.method == NA_OUTLIER_MAD; /* scan --mad: centre median, scale MAD */
    put(o, "method", json_string(mad ? "mad" : "zscore"), oom);
    put(o, "threshold", jreal(e->res.threshold), oom);
    if (mad) {
        put(o, "median", jreal(e->res.median), oom);
        put(o, "mad", jreal(e->res.mad), oom);
        put(o, "meanad", jreal(e->res.meanad), oom);
    }
    put(o, "count", juint(e->res.outliers), oom);
    put(o, "locations", locations(e->res.out_locs, e->res.n_out_locs, e, oom), oom);
    const char *note = na_outliers_note(&e->res);
    if (note) /* only when the test could flag nothing (docs/json-schema.md) */
        put(o, "note", json_string(note), oom);
    return o;
}

static const char *tstatus_name(na_tstatus_t s)
{
    return s == NA_TS_OK ? "ok" : (s == NA_TS_ERROR ? "error" : "skipped");
}

static json_t *tensor(const na_tensor_report_t *e, int *oom)
{
    json_t *o = json_object(), *shape = json_array();
    if (!o || !shape) {
        json_decref(o);
        json_decref(shape);
        return NULL;
    }
    put(o, "name", jstr(e->name), oom);
    put(o, "status", json_string(tstatus_name(e->status)), oom);
    if (e->status != NA_TS_OK || e->reason)
        put(o, "reason", jstr(e->reason ? e->reason : ""), oom);
    put(o, "dtype", e->dtype ? json_string(na_dtype_name(e->dtype)) : json_null(), oom);
    if (e->stored && e->stored != e->dtype) /* extra key: C64 parts */
        put(o, "stored_dtype", json_string(na_dtype_name(e->stored)), oom);
    put(o, "byte_order", json_string(e->byte_order == NA_BIG ? "big" : "little"), oom);
    for (int d = 0; d < e->ndim; d++)
        append(shape, juint(e->shape[d]), oom);
    put(o, "shape", shape, oom);
    put(o, "elements", e->elements_overflow ? json_null() : juint(e->elements), oom);
    stats(o, e, oom);
    if (e->report_missing) { /* HDF5 datasets (docs/json-schema.md) */
        put(o, "missing", e->scanned ? juint(e->res.st.missing) : json_null(), oom);
        put(o, "unallocated_chunks",
            e->unallocated_chunks >= 0 ? juint((uint64_t)e->unallocated_chunks) : json_null(),
            oom);
    }
    if (e->vlen) { /* HDF5 variable-length data (docs/json-schema.md) */
        json_t *v = json_object(), *vs = json_array();
        if (!v || !vs) {
            json_decref(v);
            json_decref(vs);
            *oom = 1;
        } else {
            put(v, "sequences", juint(e->sequences), oom);
            for (int d = 0; d < e->vndim; d++)
                append(vs, juint(e->vshape[d]), oom);
            put(v, "shape", vs, oom);
            put(o, "variable_length", v, oom);
        }
    }
    put(o, "outliers", outliers(e, oom), oom);
    put(o, "nan_locations",
        e->scanned ? locations(e->res.nan_locs, e->res.n_nan_locs, e, oom) : json_null(), oom);
    put(o, "inf_locations",
        e->scanned ? locations(e->res.inf_locs, e->res.n_inf_locs, e, oom) : json_null(), oom);
    put(o, "findings", findings(e, oom), oom);
    return o;
}

static json_t *file(const na_file_report_t *f, int *oom)
{
    json_t *o = json_object(), *notes = json_array(), *ts = json_array();
    if (!o || !notes || !ts) {
        json_decref(o);
        json_decref(notes);
        json_decref(ts);
        return NULL;
    }
    put(o, "path", jstr(f->path), oom);
    put(o, "format", f->format ? json_string(f->format) : json_null(), oom);
    put(o, "status", json_string(f->ok ? "ok" : "error"), oom);
    put(o, "error", f->ok ? json_null() : jstr(f->error ? f->error : "error"), oom);
    for (size_t i = 0; i < f->n_notes; i++)
        append(notes, jstr(f->notes[i]), oom);
    put(o, "notes", notes, oom);
    for (size_t i = 0; i < f->n_tensors; i++)
        append(ts, tensor(&f->tensors[i], oom), oom);
    put(o, "tensors", ts, oom);
    return o;
}

static json_t *summary(const na_summary_t *s, int *oom)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    put(o, "files", juint(s->files), oom);
    put(o, "tensors", juint(s->tensors), oom);
    put(o, "skipped_tensors", juint(s->skipped), oom);
    put(o, "elements", juint(s->elements), oom);
    put(o, "nan", juint(s->nan), oom);
    put(o, "pos_inf", juint(s->pos_inf), oom);
    put(o, "neg_inf", juint(s->neg_inf), oom);
    put(o, "outliers", juint(s->outliers), oom);
    put(o, "errors", juint(s->errors), oom);
    put(o, "failed", json_boolean(s->failed), oom);
    put(o, "exit_code", json_integer(s->exit_code), oom);
    return o;
}

/* Run settings (extra keys): what the numbers mean depends on them. The
 * thread count is deliberately absent so reports compare across runs. */
static void settings(json_t *root, const na_report_t *r, int *oom)
{
    json_t *fail_on = json_array();
    for (int k = 0; fail_on && k < NA_K_COUNT; k++)
        if (r->fail_mask & NA_KIND_BIT(k))
            append(fail_on, json_string(na_kind_name((na_kind_t)k)), oom);
    put(root, "zscore", jreal(r->zscore), oom);
    if (r->mad > 0)
        put(root, "mad", jreal(r->mad), oom);
    put(root, "max_locations", juint(r->max_locations), oom);
    put(root, "fail_on", fail_on, oom);
}

static json_t *skipped(const na_report_t *r, int *oom)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->n_skipped; i++) {
        json_t *o = json_object();
        if (o) {
            put(o, "path", jstr(r->skipped_paths[i]), oom);
            put(o, "reason", jstr(r->skipped_reasons[i]), oom);
        }
        append(a, o, oom);
    }
    return a;
}

static json_t *build(const na_report_t *r, int *oom)
{
    json_t *root = json_object(), *tool = json_object(), *files = json_array();
    if (!root || !tool || !files) {
        json_decref(root);
        json_decref(tool);
        json_decref(files);
        return NULL;
    }
    put(root, "schema_version", json_integer(NA_SCHEMA_VERSION), oom);
    put(tool, "name", json_string("nanaudit"), oom);
    put(tool, "version", json_string(NA_VERSION), oom);
    put(root, "tool", tool, oom);
    put(root, "device", json_string(r->device ? r->device : "cpu"), oom);
    if (r->device_note) /* only when there is something to say (auto's fallback) */
        put(root, "device_note", json_string(r->device_note), oom);
    settings(root, r, oom);
    for (size_t i = 0; i < r->n_files; i++)
        append(files, file(&r->files[i], oom), oom);
    put(root, "files", files, oom);
    put(root, "skipped", skipped(r, oom), oom);
    put(root, "summary", summary(&r->summary, oom), oom);
    return root;
}

na_status_t na_report_write_json(const na_report_t *r, FILE *out)
{
    int oom = 0;
    json_t *root = build(r, &oom);
    if (!root || oom) {
        json_decref(root);
        return NA_E_NOMEM;
    }
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                       JSON_REAL_PRECISION(17));
    json_decref(root);
    if (rc != 0 || fputc('\n', out) == EOF || fflush(out) != 0 || ferror(out))
        return NA_E_WRITE;
    return NA_OK;
}
