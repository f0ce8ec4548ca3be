/*
 * clean_report.c - the change report of `nanaudit clean`: text for
 * people on stdout, JSON (--format json, --report FILE) for programs.
 *
 * JSON (schema_version 1), one object:
 *   {"schema_version", "command": "clean", "version", "input", "output"
 *    (null for --dry-run), "format", "input_sha256", "written" (bool),
 *    "dry_run", "refused" (why nothing was written, or null), "error"
 *    (why nothing was written when no tensor is the cause, or null),
 *    "warnings" (the run's stderr warnings, not a tensor's), "device"
 *    (what ran the write pass, as scan's), "device_note" (only when set),
 *    "tensors": [{"name", "status" ("cleaned" | "copied" | "error"),
 *      "reason", "dtype", "out_dtype", "shape", "out_shape", "samples",
 *      "features", "passes", "nonfinite_replaced", "outliers_replaced",
 *      "clipped", "set_nan", "overflow", "missing_collisions", "samples_dropped": {"nonfinite",
 *      "outliers", "together", "total", "first"}, "before": STATS, "after": STATS,
 *      "warnings": [..]}],
 *    "exit_code"}
 * STATS: {"elements", "finite", "nan", "missing", "pos_inf", "neg_inf", "min",
 * "max", "mean", "std"} with null for undefined values. Documented in
 * docs/json-schema.md, "Clean report" (tests/cli/clean_report_schema.sh
 * keeps the two in step).
 */
#include "cli.h"
#include "clean_report.h"

#include <jansson.h>
#include <math.h>   /* isfinite */
#include <stdlib.h> /* free */
#include <string.h> /* strlen */

static json_t *jreal(double v) { return isfinite(v) ? json_real(v) : json_null(); }
static json_t *juint(uint64_t v) { return json_integer((json_int_t)v); }

static json_t *jstr(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    char buf[1024];
    na_escape_text(s, buf, sizeof buf);
    return json_string(buf);
}

static json_t *jstats(const na_stats_t *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "elements", juint(s->elements));
    json_object_set_new(o, "finite", juint(s->finite));
    json_object_set_new(o, "nan", juint(s->nan));
    json_object_set_new(o, "missing", juint(s->missing)); /* CF markers, not in nan */
    json_object_set_new(o, "pos_inf", juint(s->pos_inf));
    json_object_set_new(o, "neg_inf", juint(s->neg_inf));
    json_object_set_new(o, "min", jreal(s->finite ? s->min : NAN));
    json_object_set_new(o, "max", jreal(s->finite ? s->max : NAN));
    json_object_set_new(o, "mean", jreal(s->finite ? s->mean : NAN));
    json_object_set_new(o, "std", jreal(na_stats_std(s)));
    return o;
}

static json_t *jshape(int ndim, const uint64_t *shape)
{
    json_t *a = json_array();
    for (int i = 0; i < ndim; i++)
        json_array_append_new(a, juint(shape[i]));
    return a;
}

static json_t *warnings(const cli_clean_entry_t *e)
{
    json_t *w = json_array();
    for (size_t i = 0; i < e->n_warn; i++)
        json_array_append_new(w, jstr(e->warn[i]));
    return w;
}

/* "samples_dropped" of entry e's rows. */
static json_t *jdropped(const na_clean_tensor_t *ct)
{
    json_t *d = json_object(), *first = json_array();
    json_object_set_new(d, "nonfinite", juint(ct->dropped_nf));
    json_object_set_new(d, "outliers", juint(ct->dropped_out));
    json_object_set_new(d, "together", juint(ct->dropped_joint));
    json_object_set_new(d, "total", juint(ct->dropped_nf + ct->dropped_out + ct->dropped_joint));
    for (size_t i = 0; i < ct->n_drop_idx; i++)
        json_array_append_new(first, juint(ct->drop_idx[i]));
    json_object_set_new(d, "first", first);
    return d;
}

static json_t *jentry(const cli_clean_entry_t *e)
{
    json_t *o = json_object();
    const na_clean_tensor_t *ct = &e->ct;
    json_object_set_new(o, "name", jstr(e->name));
    json_object_set_new(o, "status", json_string(e->status));
    json_object_set_new(o, "reason", jstr(e->reason[0] ? e->reason : NULL));
    json_object_set_new(o, "dtype", e->dtype == NA_DT_INVALID /* strings: as scan's null */
                                        ? json_null()
                                        : json_string(na_dtype_name(e->dtype)));
    json_object_set_new(o, "shape", jshape(e->ndim, e->shape));
    if (!e->cleaned) {
        if (e->rowfollow) { /* copied without its partners' samples */
            json_object_set_new(o, "out_shape", jshape(ct->ndim, ct->out_shape));
            json_object_set_new(o, "samples_dropped", jdropped(ct));
        }
        json_object_set_new(o, "warnings", warnings(e));
        return o;
    }
    json_object_set_new(o, "out_dtype", json_string(na_dtype_name(ct->out_dtype)));
    json_object_set_new(o, "out_shape", jshape(ct->ndim, ct->out_shape));
    json_object_set_new(o, "samples", json_boolean(e->samples));
    json_object_set_new(o, "features", juint(ct->nfeat));
    json_object_set_new(o, "passes", juint(ct->passes));
    json_object_set_new(o, "nonfinite_replaced", juint(ct->replaced_nf));
    json_object_set_new(o, "outliers_replaced", juint(ct->replaced_out));
    json_object_set_new(o, "clipped", juint(ct->clipped));
    json_object_set_new(o, "set_nan", juint(ct->nanned));
    json_object_set_new(o, "overflow", juint(ct->overflow));
    json_object_set_new(o, "missing_collisions", juint(ct->collisions));
    json_object_set_new(o, "samples_dropped", jdropped(ct));
    json_object_set_new(o, "before", jstats(&ct->before));
    json_object_set_new(o, "after", e->emitted ? jstats(&ct->after) : json_null());
    json_object_set_new(o, "warnings", warnings(e));
    return o;
}

int cli_clean_report_json(const cli_clean_run_t *r, FILE *out)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(1));
    json_object_set_new(o, "command", json_string("clean"));
    json_object_set_new(o, "version", json_string(NA_VERSION));
    json_object_set_new(o, "input", jstr(r->input));
    json_object_set_new(o, "output", jstr(r->dry_run ? NULL : r->output));
    json_object_set_new(o, "format", jstr(r->format));
    json_object_set_new(o, "input_sha256", jstr(r->sha[0] ? r->sha : NULL));
    json_object_set_new(o, "written", json_boolean(r->written));
    json_object_set_new(o, "dry_run", json_boolean(r->dry_run));
    json_object_set_new(o, "refused", jstr(r->refused[0] ? r->refused : NULL));
    json_object_set_new(o, "error", jstr(r->error[0] ? r->error : NULL));
    json_t *w = json_array(); /* the run's warnings, as on stderr: the first CLI_CLEAN_RUN_WARN */
    for (size_t i = 0; i < r->n_warn && i < CLI_CLEAN_RUN_WARN; i++)
        json_array_append_new(w, jstr(r->warn[i]));
    if (r->n_warn > CLI_CLEAN_RUN_WARN) {
        char more[64];
        snprintf(more, sizeof more, "... and %zu more on standard error",
                 r->n_warn - CLI_CLEAN_RUN_WARN);
        json_array_append_new(w, json_string(more));
    }
    json_object_set_new(o, "warnings", w);
    json_object_set_new(o, "device", json_string(r->device ? r->device : "cpu"));
    if (r->device_note) /* only when there is something to say, as in scan's report */
        json_object_set_new(o, "device_note", jstr(r->device_note));
    json_t *a = json_array();
    for (size_t i = 0; i < r->n; i++)
        json_array_append_new(a, jentry(&r->e[i]));
    json_object_set_new(o, "tensors", a);
    json_object_set_new(o, "exit_code", json_integer(r->exit_code));
    int rc = json_dumpf(o, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (rc == 0 && fputc('\n', out) == EOF)
        rc = -1;
    return rc;
}

/* A statistic as scan's text prints it: %.6g, or "-" when it is not
 * finite (a mean or std that overflowed, a std whose variance underflowed). */
static const char *stat6(char *buf, size_t cap, double v)
{
    if (!isfinite(v))
        return "-";
    snprintf(buf, cap, "%.6g", v);
    return buf;
}

static void pstat(FILE *out, const char *what, const na_stats_t *s)
{
    fprintf(out, "    %-6s finite %llu  nan %llu  inf %llu", what, (unsigned long long)s->finite,
            (unsigned long long)s->nan, (unsigned long long)(s->pos_inf + s->neg_inf));
    if (s->missing) /* CF markers (--missing auto): left out of the statistics */
        fprintf(out, "  missing %llu", (unsigned long long)s->missing);
    char m[32], d[32];
    if (s->finite)
        fprintf(out, "  min %.6g  max %.6g  mean %s  std %s", s->min, s->max,
                stat6(m, sizeof m, s->mean), stat6(d, sizeof d, na_stats_std(s)));
    fputc('\n', out);
}

/* NaN and Inf in what was (or would be) written: scan's default policy
 * finding, the reason for exit 1 after a write. */
static uint64_t nonfinite_left(const cli_clean_entry_t *e)
{
    const na_stats_t *a = &e->ct.after;
    return e->cleaned && e->emitted ? a->nan + a->pos_inf + a->neg_inf : 0;
}

/* What --quiet keeps (as scan -q keeps findings and errors only): a
 * tensor clean failed on, warned about, changed beyond the requested
 * normalization (samples dropped, values replaced, clipped, set to NaN,
 * overflowed or colliding with a missing-value marker), or left with NaN
 * or Inf. Copied tensors and ones only normalized stay out: a CI log then
 * lists only what needs a look. */
int cli_clean_no_values(const cli_clean_entry_t *e)
{
    for (int d = 0; d < e->ndim; d++)
        if (e->shape[d] == 0)
            return 1;
    return 0;
}

/* Samples and elements per sample as the shape gives them. They are
 * ct->rows and ct->width except for a tensor with nothing to read, where
 * width is at least 1 (na_clean_prepare): (5, 0) has 5 samples of 0
 * elements. Its product fits 64 bits (prepare refuses the others). */
static void sample_dims(const cli_clean_entry_t *e, uint64_t *rows, uint64_t *width)
{
    *rows = e->ct.rows;
    *width = e->ct.width;
    if (e->ndim < 1 || !cli_clean_no_values(e))
        return;
    *rows = e->shape[0];
    *width = 1;
    for (int d = 1; d < e->ndim; d++)
        *width *= e->shape[d];
}

static int quiet_shows(const cli_clean_entry_t *e)
{
    const na_clean_tensor_t *ct = &e->ct;
    if (!strcmp(e->status, "error") || e->n_warn)
        return 1;
    if (!e->cleaned)
        return e->rowfollow && ct->dropped_joint > 0;
    return ct->dropped_nf + ct->dropped_out + ct->dropped_joint + ct->replaced_nf +
                   ct->replaced_out + ct->clipped + ct->nanned + ct->overflow + ct->collisions >
               0 ||
           nonfinite_left(e) > 0;
}

/* s escaped for the terminal, in *keep (the previous one freed); "?"
 * without memory. Whole, however long (a path is not cut). */
static const char *esc(char **keep, const char *s)
{
    free(*keep);
    *keep = na_escape_text_dup(s);
    return *keep ? *keep : "?";
}

/* Entry e's warnings, one line each (cleaned and copied entries alike). */
static void put_warnings(FILE *out, char **keep, const cli_clean_entry_t *e)
{
    for (size_t k = 0; k < e->n_warn; k++)
        fprintf(out, "    warning: %s\n", esc(keep, e->warn[k]));
}

/* The line of the samples ct's tensor loses, and the first of them. */
static void put_dropped(FILE *out, const na_clean_tensor_t *ct)
{
    uint64_t dropped = ct->dropped_nf + ct->dropped_out + ct->dropped_joint;
    fprintf(out, "    dropped %llu sample%s (non-finite %llu, outliers %llu, together %llu)",
            (unsigned long long)dropped, dropped == 1 ? "" : "s",
            (unsigned long long)ct->dropped_nf, (unsigned long long)ct->dropped_out,
            (unsigned long long)ct->dropped_joint);
    if (ct->n_drop_idx) {
        fputs(", first", out);
        for (size_t k = 0; k < ct->n_drop_idx; k++)
            fprintf(out, " %llu", (unsigned long long)ct->drop_idx[k]);
    }
    fputc('\n', out);
}

int cli_clean_report_text(const cli_clean_run_t *r, int quiet, FILE *out)
{
    char *buf = NULL;
    const char *nm;
    int head = !quiet; /* -q: the input's line only above a tensor shown */
    for (size_t i = 0; i < r->n && !head; i++)
        head = quiet_shows(&r->e[i]);
    nm = esc(&buf, r->input);
    if (head && r->format)
        fprintf(out, "clean %s (%s)\n", nm, r->format);
    else if (head) /* the input could not be opened */
        fprintf(out, "clean %s\n", nm);
    for (size_t i = 0; i < r->n; i++) {
        const cli_clean_entry_t *e = &r->e[i];
        const na_clean_tensor_t *ct = &e->ct;
        if (quiet && !quiet_shows(e))
            continue;
        nm = esc(&buf, e->name);
        if (!e->cleaned) {
            fprintf(out, "  %s: %s%s%s\n", nm, e->status, e->reason[0] ? ": " : "", e->reason);
            if (e->rowfollow) /* copied without its partners' samples */
                put_dropped(out, ct);
            put_warnings(out, &buf, e); /* a copy's NaN/Inf left */
            continue;
        }
        uint64_t rows, width;
        sample_dims(e, &rows, &width);
        if (e->samples)
            fprintf(out, "  %s: %s -> %s, %llu sample%s x %llu, %llu feature(s), %u pass%s\n", nm,
                    na_dtype_name(e->dtype), na_dtype_name(ct->out_dtype),
                    (unsigned long long)rows, rows == 1 ? "" : "s", (unsigned long long)width,
                    (unsigned long long)ct->nfeat, ct->passes, ct->passes == 1 ? "" : "es");
        else
            fprintf(out, "  %s: %s -> %s, %llu elements (weights: one statistic), %u pass%s\n",
                    nm, na_dtype_name(e->dtype), na_dtype_name(ct->out_dtype),
                    (unsigned long long)ct->rows, ct->passes, ct->passes == 1 ? "" : "es");
        if (e->follower && !quiet) /* a --together follower: why it has no steps */
            fprintf(out, "    %s\n", esc(&buf, e->reason));
        if (e->samples) /* weights never drop */
            put_dropped(out, ct);
        if (e->emitted)
            fprintf(out, "    replaced %llu non-finite, %llu outliers; clipped %llu; set NaN %llu; "
                         "overflow %llu\n",
                    (unsigned long long)ct->replaced_nf, (unsigned long long)ct->replaced_out,
                    (unsigned long long)ct->clipped, (unsigned long long)ct->nanned,
                    (unsigned long long)ct->overflow);
        if (!quiet)
            pstat(out, "before", &ct->before);
        if (e->emitted && (!quiet || nonfinite_left(e)))
            pstat(out, "after", &ct->after);
        put_warnings(out, &buf, e);
    }
    if (r->device_note) /* e.g. --device auto fell back to the CPU */
        fprintf(out, "note: %s\n", esc(&buf, r->device_note));
    if (r->error[0]) {
        fprintf(out, "error: %s; nothing written\n", esc(&buf, r->error));
    } else if (r->refused[0]) {
        fprintf(out, "refused: %s; nothing written\n", esc(&buf, r->refused));
    } else if (r->dry_run) {
        fputs("dry run: no output written\n", out);
    } else if (r->written) {
        fprintf(out, "written: %s (verified)\n", esc(&buf, r->output));
    }
    free(buf);
    return ferror(out) ? -1 : 0;
}
