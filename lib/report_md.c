/*
 * report_md.c - the report as a Markdown summary, for a CI job page
 * (GitHub Actions: append it to $GITHUB_STEP_SUMMARY).
 *
 * A heading with the verdict, the totals, then one table row per finding
 * and per error (clean tensors are not listed: a summary of a thousand
 * clean tensors helps nobody; the JSON report has everything).
 *
 * Escaping (GitHub Flavored Markdown, https://github.github.com/gfm/:
 * "Backslash escapes", "Tables (extension)"): every ASCII punctuation
 * character is written with a backslash in front, which CommonMark reads
 * as the literal character -- this covers | (which would end a table
 * cell), <, & (HTML), * _ ` [ ] (emphasis, code, links). Line breaks and
 * other control characters, which would end a table row, and bytes that
 * are not UTF-8 become the text \xHH (itself escaped).
 */
#include "nanaudit.h"

#include <string.h> /* strlen, strchr */

static void md_put(FILE *out, const char *s)
{
    static const char punct[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = na_utf8_seq_len(s + i, n - i);
        if (len == 0 || c < 0x20 || c == 0x7f ||
            (len == 2 && c == 0xC2 && (unsigned char)s[i + 1] < 0xA0)) {
            for (size_t k = 0; k < (len ? len : 1); k++)
                fprintf(out, "\\\\x%02X", (unsigned char)s[i + k]);
            i += len ? len : 1;
            continue;
        }
        if (len == 1 && strchr(punct, c))
            fputc('\\', out);
        fwrite(s + i, 1, len, out);
        i += len;
    }
}

na_status_t na_report_write_markdown(const na_report_t *r, FILE *out)
{
    const na_summary_t *s = &r->summary;
    const char *verdict = s->exit_code == 0 ? "passed" : s->exit_code == 1 ? "FAILED"
                                                                          : "ERROR";
    fprintf(out, "## nanaudit: %s (exit %d)\n\n", verdict, s->exit_code);
    fprintf(out, "%llu file%s, %llu tensor%s, %llu elements: %llu NaN, %llu +Inf, %llu -Inf, "
            "%llu outliers, %llu error%s.\n\n",
            (unsigned long long)s->files, s->files == 1 ? "" : "s",
            (unsigned long long)s->tensors, s->tensors == 1 ? "" : "s",
            (unsigned long long)s->elements, (unsigned long long)s->nan,
            (unsigned long long)s->pos_inf, (unsigned long long)s->neg_inf,
            (unsigned long long)s->outliers, (unsigned long long)s->errors,
            s->errors == 1 ? "" : "s");
    size_t rows = 0;
    for (size_t i = 0; i < r->n_files; i++) {
        const na_file_report_t *f = &r->files[i];
        for (size_t j = 0; j < f->n_tensors + 1; j++) {
            const na_tensor_report_t *e = j < f->n_tensors ? &f->tensors[j] : NULL;
            size_t nf = e ? e->n_findings : 0;
            int err = e ? e->status == NA_TS_ERROR : !f->ok;
            /* the outlier test's note (not a finding: never fails) */
            const char *note = e && e->scanned ? na_outliers_note(&e->res) : NULL;
            for (size_t k = 0; k < nf + (size_t)err + (note != NULL); k++) {
                if (rows++ == 0)
                    fputs("| File | Tensor | Kind | Count | Fails | Finding |\n"
                          "|---|---|---|---:|---|---|\n", out);
                fputs("| ", out);
                md_put(out, f->path);
                fputs(" | ", out);
                md_put(out, e ? e->name : "(file)");
                if (k < nf) {
                    const na_finding_t *fd = &e->findings[k];
                    fprintf(out, " | %s | %llu | %s | ", na_kind_name(fd->kind),
                            (unsigned long long)fd->count, fd->fails ? "**yes**" : "no");
                    md_put(out, fd->message);
                } else if (note && k == nf) {
                    fputs(" | outliers | | no | ", out);
                    md_put(out, note);
                } else {
                    fputs(" | error | | **yes** | ", out);
                    md_put(out, e ? (e->reason ? e->reason : "error")
                                  : (f->error ? f->error : "error"));
                }
                fputs(" |\n", out);
            }
        }
    }
    if (rows == 0)
        fputs("No findings.\n", out);
    return ferror(out) ? NA_E_WRITE : NA_OK;
}
