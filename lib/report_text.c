/*
 * report_text.c - the text report for people: per file an aligned table
 * (tensor, dtype, shape, elements, nan, inf, [missing,] min, max, mean,
 * std, outliers), then one line per finding or error, then one summary
 * line. The missing column (CF _FillValue / missing_value matches, HDF5)
 * appears only in the table of a file where some tensor has missing
 * values, so tables of other files keep their width.
 *
 * Every string that came from a file or the command line (paths, tensor
 * names, messages) is printed through na_escape_text, so a hostile name
 * such as "\x1b[31m" or one holding a newline cannot drive the terminal
 * or forge report lines. Colour (ANSI SGR) only when the caller asks for
 * it; the CLI decides from isatty, --color and NO_COLOR (no-color.org).
 */
#include "nanaudit.h"

#include <inttypes.h> /* PRIu64 */
#include <math.h>     /* isfinite */
#include <stdlib.h>   /* malloc, free */
#include <string.h>   /* strlen, strstr */

#define NCOL 12
#define CELL 64 /* bytes for a numeric cell */
#define COL_MISSING 11 /* printed after "inf" when shown */

static const char *const col_title[NCOL] = {"tensor", "dtype", "shape", "elements",
                                            "nan", "inf", "min", "max",
                                            "mean", "std", "outliers", "missing"};

#define C_RED "\x1b[1;31m"
#define C_YEL "\x1b[33m"
#define C_GRN "\x1b[32m"
#define C_OFF "\x1b[0m"

static int put_escaped(FILE *out, const char *s)
{
    char *e = na_escape_text_dup(s);
    if (!e)
        return -1;
    int rc = fputs(e, out);
    free(e);
    return rc < 0 ? -1 : 0;
}

static void fmt_real(char *b, int have, double v)
{
    if (have && isfinite(v))
        snprintf(b, CELL, "%.6g", v);
    else
        snprintf(b, CELL, "-");
}

static void fmt_shape(char *b, const na_tensor_report_t *e)
{
    size_t n = (size_t)snprintf(b, CELL, "[");
    for (int d = 0; d < e->ndim && n < CELL; d++)
        n += (size_t)snprintf(b + n, CELL - n, "%s%" PRIu64, d ? "," : "", e->shape[d]);
    if (n < CELL)
        snprintf(b + n, CELL - n, "]");
}

/* Format column col (1..NCOL-1; 0 is the name) of entry e into b. */
static void cell(char *b, const na_tensor_report_t *e, int col)
{
    const na_result_t *r = &e->res;
    int have = e->scanned && r->st.finite > 0;
    b[0] = '\0';
    switch (col) {
    case 1: snprintf(b, CELL, "%s", e->dtype ? na_dtype_name(e->dtype) : "?"); break;
    case 2: fmt_shape(b, e); break;
    case 3: snprintf(b, CELL, e->elements_overflow ? "-" : "%" PRIu64, e->elements); break;
    case 4: snprintf(b, CELL, e->scanned ? "%" PRIu64 : "-", r->st.nan); break;
    case 5: snprintf(b, CELL, e->scanned ? "%" PRIu64 : "-", r->st.pos_inf + r->st.neg_inf); break;
    case 6: fmt_real(b, have, r->st.min); break;
    case 7: fmt_real(b, have, r->st.max); break;
    case 8: fmt_real(b, have, r->st.mean); break;
    case 9: fmt_real(b, have, r->std); break;
    case COL_MISSING:
        snprintf(b, CELL, e->scanned && e->report_missing ? "%" PRIu64 : "-", r->st.missing);
        break;
    default:
        if (e->scanned && r->outliers_checked)
            snprintf(b, CELL, "%" PRIu64, r->outliers);
        else
            snprintf(b, CELL, "-");
    }
}

/* A count cell (nan, inf, outliers) above zero is highlighted. */
static int hot(const na_tensor_report_t *e, int col)
{
    if (!e->scanned)
        return 0;
    const na_result_t *r = &e->res;
    return (col == 4 && r->st.nan) || (col == 5 && (r->st.pos_inf || r->st.neg_inf)) ||
           (col == 10 && r->outliers);
}

/* Pad to w columns; the numeric columns are right-aligned. */
static void print_cell(FILE *out, const char *s, size_t w, int col, const char *color)
{
    size_t sw = na_text_columns(s);
    int right = col >= 3;
    fputs("  ", out);
    for (size_t i = 0; right && i + sw < w; i++)
        fputc(' ', out);
    fprintf(out, "%s%s%s", color ? color : "", s, color ? C_OFF : "");
    for (size_t i = 0; !right && i + sw < w; i++)
        fputc(' ', out);
}

static int print_table(FILE *out, const na_file_report_t *f, int color)
{
    size_t w[NCOL];
    char b[CELL];
    /* Display order: the missing column after inf, only when some tensor
     * of this file has missing values (JSON "missing" > 0). */
    int show_missing = 0;
    for (size_t i = 0; i < f->n_tensors; i++)
        show_missing |= f->tensors[i].scanned && f->tensors[i].report_missing &&
                        f->tensors[i].res.st.missing > 0;
    int order[NCOL], ncol = 0;
    for (int c = 0; c < NCOL - 1; c++) {
        order[ncol++] = c;
        if (c == 5 && show_missing)
            order[ncol++] = COL_MISSING;
    }
    for (int c = 0; c < NCOL; c++)
        w[c] = strlen(col_title[c]);
    for (size_t i = 0; i < f->n_tensors; i++) {
        char *name = na_escape_text_dup(f->tensors[i].name);
        if (!name)
            return -1;
        size_t nw = na_text_columns(name);
        w[0] = nw > w[0] ? nw : w[0];
        free(name);
        for (int c = 1; c < NCOL; c++) {
            cell(b, &f->tensors[i], c);
            size_t bw = na_text_columns(b);
            w[c] = bw > w[c] ? bw : w[c];
        }
    }
    for (int k = 0; k < ncol; k++)
        print_cell(out, col_title[order[k]], w[order[k]], order[k], NULL);
    fputc('\n', out);
    for (size_t i = 0; i < f->n_tensors; i++) {
        const na_tensor_report_t *e = &f->tensors[i];
        char *name = na_escape_text_dup(e->name);
        if (!name)
            return -1;
        print_cell(out, name, w[0], 0, NULL);
        free(name);
        for (int k = 1; k < ncol; k++) {
            int c = order[k];
            cell(b, e, c);
            print_cell(out, b, w[c], c, color && hot(e, c) ? C_RED : NULL);
        }
        fputc('\n', out);
    }
    return 0;
}

/* Finding, error and skipped-tensor lines of one file. */
static int print_problems(FILE *out, const na_file_report_t *f, int color)
{
    if (!f->ok) {
        fprintf(out, "  %serror:%s ", color ? C_RED : "", color ? C_OFF : "");
        if (put_escaped(out, f->error ? f->error : "error") < 0)
            return -1;
        fputc('\n', out);
    }
    for (size_t i = 0; i < f->n_tensors; i++) {
        const na_tensor_report_t *e = &f->tensors[i];
        /* A read that failed part way is the file's error and this
         * tensor's, and the file's line says it all ("...; 1 later tensor
         * not audited"): one line, not the same text twice. */
        int said = !f->ok && f->error && e->reason && e->status == NA_TS_ERROR &&
                   strstr(f->error, e->reason) != NULL;
        if (e->status != NA_TS_OK && !said) {
            int err = e->status == NA_TS_ERROR;
            fprintf(out, "  %s%s:%s ", color ? (err ? C_RED : C_YEL) : "",
                    err ? "error" : "skipped", color ? C_OFF : "");
            /* A reader's message often names the tensor already (it is
             * also the stderr line, "nanaudit: FILE: NAME: problem"). */
            const char *why = e->reason ? e->reason : "";
            int named = na_reason_names(why, e->name);
            if ((!named && (put_escaped(out, e->name) < 0 || fputs(": ", out) < 0)) ||
                put_escaped(out, why) < 0)
                return -1;
            fputc('\n', out);
        }
        for (size_t k = 0; k < e->n_findings; k++) {
            const na_finding_t *fd = &e->findings[k];
            fprintf(out, "  %s%s%s ", color ? (fd->fails ? C_RED : C_YEL) : "",
                    fd->fails ? "FAIL" : "note", color ? C_OFF : "");
            if (put_escaped(out, e->name) < 0 || fputs(": ", out) < 0 ||
                put_escaped(out, fd->message) < 0)
                return -1;
            fputc('\n', out);
        }
        const char *note = e->scanned ? na_outliers_note(&e->res) : NULL;
        if (note) { /* not a finding: the exit code stays */
            fprintf(out, "  %snote%s ", color ? C_YEL : "", color ? C_OFF : "");
            if (put_escaped(out, e->name) < 0 || fprintf(out, ": %s\n", note) < 0)
                return -1;
        }
    }
    return 0;
}

static int has_problems(const na_file_report_t *f)
{
    if (!f->ok)
        return 1;
    for (size_t i = 0; i < f->n_tensors; i++)
        if (f->tensors[i].status == NA_TS_ERROR || f->tensors[i].n_findings ||
            (f->tensors[i].scanned && na_outliers_note(&f->tensors[i].res)))
            return 1;
    return 0;
}

static void print_summary(FILE *out, const na_report_t *r, int color)
{
    const na_summary_t *s = &r->summary;
    /* every count exact, the element total too: "4.1e6 elements" beside
     * "13 NaN" could not be checked against it */
    char tn[64];
    fprintf(out, "%" PRIu64 " file%s, %s, %" PRIu64 " element%s: %" PRIu64
                 " NaN, %" PRIu64 " Inf, %" PRIu64 " outlier%s",
            s->files, s->files == 1 ? "" : "s", na_summary_tensors(s, tn, sizeof tn),
            s->elements,
            s->elements == 1 ? "" : "s", s->nan, s->pos_inf + s->neg_inf, s->outliers,
            s->outliers == 1 ? "" : "s");
    if (r->mad > 0) /* scan --mad: the outliers column counts modified z-scores */
        fprintf(out, " (modified z-score > %g: median, MAD)", r->mad);
    if (s->errors)
        fprintf(out, ", %" PRIu64 " error%s", s->errors, s->errors == 1 ? "" : "s");
    int ok = s->exit_code == 0;
    fprintf(out, "; %s%s%s (exit %d)\n", color ? (ok ? C_GRN : C_RED) : "",
            ok ? "OK" : "FAILED", color ? C_OFF : "", s->exit_code);
}

na_status_t na_report_write_text(const na_report_t *r, const na_text_opts_t *o, FILE *out)
{
    int color = o && o->color, quiet = o && o->quiet;
    for (size_t i = 0; i < r->n_files; i++) {
        const na_file_report_t *f = &r->files[i];
        if (quiet && !has_problems(f))
            continue;
        if (put_escaped(out, f->path) < 0)
            return NA_E_NOMEM;
        if (f->format)
            fprintf(out, " (%s)", f->format);
        fputc('\n', out);
        for (size_t n = 0; !quiet && n < f->n_notes; n++) {
            fputs("  note: ", out);
            if (put_escaped(out, f->notes[n]) < 0)
                return NA_E_NOMEM;
            fputc('\n', out);
        }
        if (!quiet && f->n_tensors && print_table(out, f, color) < 0)
            return NA_E_NOMEM;
        if (print_problems(out, f, color) < 0)
            return NA_E_NOMEM;
    }
    for (size_t i = 0; !quiet && i < r->n_skipped; i++) {
        fputs("skipped: ", out);
        if (put_escaped(out, r->skipped_paths[i]) < 0 || fputs(" (", out) < 0 ||
            put_escaped(out, r->skipped_reasons[i]) < 0)
            return NA_E_NOMEM;
        fputs(")\n", out);
    }
    if (r->device_note) { /* e.g. --device auto fell back to the CPU */
        fputs("note: ", out);
        if (put_escaped(out, r->device_note) < 0)
            return NA_E_NOMEM;
        fputc('\n', out);
    }
    print_summary(out, r, color);
    return fflush(out) != 0 || ferror(out) ? NA_E_WRITE : NA_OK;
}
