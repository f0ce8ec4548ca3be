/*
 * report_github.c - the report as GitHub Actions workflow commands
 * (--format github): one annotation per finding and per error, shown on
 * the run's summary page.
 *
 *   ::error file=PATH,title=nanaudit nan: TENSOR::3 NaN values (first at [0])
 *
 * A failing finding or an input that could not be audited is ::error, a
 * finding the policy does not fail on is ::warning, and a final ::notice
 * gives the totals and the exit code.
 *
 * Escaping, as GitHub's own toolkit does it (actions/toolkit,
 * packages/core/src/command.ts, escapeData and escapeProperty): in the
 * message, % -> %25, \r -> %0D, \n -> %0A; in a property value (file,
 * title) also : -> %3A and , -> %2C. Other control characters (C0, DEL,
 * C1), line separators and bidi overrides (U+202E, which reorders what
 * the annotation shows: eighteenth fresh-user round; na_escape_dangerous,
 * as the text report) and bytes that are not UTF-8 are written as the text \xhh, so one
 * annotation stays one line and a name cannot start a new command. That
 * escape is ours, not GitHub's (a backslash means nothing to the runner),
 * so a backslash of the text itself is written \\, as the text report
 * writes it (lib/escape.c): else the name 'a\x01' would read as "a" and
 * byte 0x01.
 */
#include "nanaudit.h"

#include <string.h> /* strlen */

static void gh_put(FILE *out, const char *s, int property)
{
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = na_utf8_seq_len(s + i, n - i);
        if (c == '%' || c == '\r' || c == '\n' || (property && (c == ':' || c == ','))) {
            fprintf(out, "%%%02X", c);
        } else if (c == '\\') {
            fputs("\\\\", out);
        } else if (len == 0 || c < 0x20 || c == 0x7f || na_escape_dangerous(s + i, len)) {
            for (size_t k = 0; k < (len ? len : 1); k++) /* as na_escape_text */
                fprintf(out, "\\x%02x", (unsigned char)s[i + k]);
        } else {
            fwrite(s + i, 1, len, out);
        }
        i += len ? len : 1;
    }
}

static void annotation(FILE *out, const char *level, const char *path, const char *what,
                       const char *tensor, const char *message)
{
    char title[128];
    fprintf(out, "::%s file=", level);
    gh_put(out, path, 1);
    snprintf(title, sizeof title, "nanaudit %s: ", what);
    fputs(",title=", out);
    gh_put(out, title, 1);
    gh_put(out, tensor, 1);
    fputs("::", out);
    gh_put(out, message, 0);
    fputc('\n', out);
}

na_status_t na_report_write_github(const na_report_t *r, FILE *out)
{
    for (size_t i = 0; i < r->n_files; i++) {
        const na_file_report_t *f = &r->files[i];
        if (!f->ok)
            annotation(out, "error", f->path, "error", "(file)", f->error ? f->error : "error");
        for (size_t j = 0; j < f->n_tensors; j++) {
            const na_tensor_report_t *e = &f->tensors[j];
            if (e->status == NA_TS_ERROR)
                annotation(out, "error", f->path, "error", e->name,
                           e->reason ? e->reason : "error");
            for (size_t k = 0; k < e->n_findings; k++) {
                const na_finding_t *fd = &e->findings[k];
                annotation(out, fd->fails ? "error" : "warning", f->path,
                           na_kind_name(fd->kind), e->name, fd->message);
            }
            /* the outlier test could not run (a statistic overflowed):
             * not a finding, so a notice, as in the text report's "note" */
            const char *note = e->scanned ? na_outliers_note(&e->res) : NULL;
            if (note)
                annotation(out, "notice", f->path, "outliers", e->name, note);
        }
    }
    const na_summary_t *s = &r->summary;
    char tn[64];
    fprintf(out, "::notice title=nanaudit::%llu file%s, %s: %llu NaN, %llu Inf, "
            "%llu outlier%s, %llu error%s; exit %d\n",
            (unsigned long long)s->files, s->files == 1 ? "" : "s",
            na_summary_tensors(s, tn, sizeof tn),
            (unsigned long long)s->nan, (unsigned long long)(s->pos_inf + s->neg_inf),
            (unsigned long long)s->outliers, s->outliers == 1 ? "" : "s",
            (unsigned long long)s->errors, s->errors == 1 ? "" : "s", s->exit_code);
    return ferror(out) ? NA_E_WRITE : NA_OK;
}
