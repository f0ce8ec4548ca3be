/*
 * report_md.c - the report as a Markdown summary, for a CI job page
 * (GitHub Actions: append it to $GITHUB_STEP_SUMMARY).
 *
 * A heading with the verdict, the totals, then one table row per finding
 * and per error (clean tensors are not listed: a summary of a thousand
 * clean tensors helps nobody; the JSON report has everything), up to
 * MD_ROWS_BUDGET bytes of rows, then a line counting the rows left out.
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

#include <stdio.h>  /* fopen, FILE */
#include <string.h> /* strlen, strchr, memset */

/* Bytes of table rows written before the rest are counted instead:
 * GitHub refuses a step summary over 1 MiB ("$GITHUB_STEP_SUMMARY upload
 * aborted, supports content up to a size of 1024k"), and a checkpoint
 * with 8000 failing tensors made 4 MB, so the summary was lost in the
 * run that failed (fifteenth fresh-user round). One row may pass it. */
#define MD_ROWS_BUDGET ((size_t)768 << 10)

/* s escaped onto out; the bytes written. */
static size_t md_put(FILE *out, const char *s)
{
    static const char punct[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    size_t n = s ? strlen(s) : 0, w = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = na_utf8_seq_len(s + i, n - i);
        /* (and bidi overrides, line separators: na_escape_dangerous, so a
         * name cannot display as another in the step summary) */
        if (len == 0 || c < 0x20 || c == 0x7f || (len > 1 && na_escape_dangerous(s + i, len))) {
            for (size_t k = 0; k < (len ? len : 1); k++)
                fprintf(out, "\\\\x%02X", (unsigned char)s[i + k]);
            w += 6 * (len ? len : 1);
            i += len ? len : 1;
            continue;
        }
        if (c == '\\') { /* shown doubled, as the text report does, so that a
                         * name's "\xE2" differs from an escaped byte */
            fputs("\\\\\\\\", out);
            w += 4;
            i++;
            continue;
        }
        if (len == 1 && strchr(punct, c)) {
            fputc('\\', out);
            w++;
        }
        fwrite(s + i, 1, len, out);
        w += len;
        i += len;
    }
    return w;
}

static size_t md_str(FILE *out, const char *s)
{
    fputs(s, out);
    return strlen(s);
}

/* The table's rows so far: how many were written, their bytes, and those
 * left out past MD_ROWS_BUDGET (and how many of those fail). */
typedef struct md_rows {
    size_t rows, used, more, more_fail;
} md_rows_t;

/* The rows of r onto out: every one (pick 0), only failing ones (1) or
 * only the others (2), in file and tensor order, while the budget lasts. */
static void md_rows(const na_report_t *r, FILE *out, int pick, md_rows_t *m)
{
    for (size_t i = 0; i < r->n_files; i++) {
        const na_file_report_t *f = &r->files[i];
        for (size_t j = 0; j < f->n_tensors + 1; j++) {
            const na_tensor_report_t *e = j < f->n_tensors ? &f->tensors[j] : NULL;
            size_t nf = e ? e->n_findings : 0;
            int err = e ? e->status == NA_TS_ERROR : !f->ok;
            /* the outlier test's note (not a finding: never fails) */
            const char *note = e && e->scanned ? na_outliers_note(&e->res) : NULL;
            for (size_t k = 0; k < nf + (size_t)err + (note != NULL); k++) {
                int fails = k < nf ? e->findings[k].fails != 0 : !(note && k == nf);
                if ((pick == 1 && !fails) || (pick == 2 && fails))
                    continue;
                if (m->used > MD_ROWS_BUDGET) {
                    m->more++;
                    m->more_fail += (size_t)fails;
                    continue;
                }
                if (m->rows++ == 0)
                    fputs("| File | Tensor | Kind | Count | Fails | Finding |\n"
                          "|---|---|---|---:|---|---|\n", out);
                m->used += md_str(out, "| ");
                m->used += md_put(out, f->path);
                m->used += md_str(out, " | ");
                m->used += md_put(out, e ? e->name : "(file)");
                if (k < nf) {
                    const na_finding_t *fd = &e->findings[k];
                    int w = fprintf(out, " | %s | %llu | %s | ", na_kind_name(fd->kind),
                                    (unsigned long long)fd->count,
                                    fd->fails ? "**yes**" : "no");
                    m->used += w > 0 ? (size_t)w : 0;
                    m->used += md_put(out, fd->message);
                } else if (note && k == nf) {
                    m->used += md_str(out, " | outliers | | no | ");
                    m->used += md_put(out, note);
                } else {
                    m->used += md_str(out, " | error | | **yes** | ");
                    m->used += md_put(out, e ? (e->reason ? e->reason : "error")
                                            : (f->error ? f->error : "error"));
                }
                m->used += md_str(out, " |\n");
            }
        }
    }
}

na_status_t na_report_write_markdown(const na_report_t *r, FILE *out)
{
    const na_summary_t *s = &r->summary;
    const char *verdict = s->exit_code == 0 ? "passed" : s->exit_code == 1 ? "FAILED"
                                                                          : "ERROR";
    fprintf(out, "## nanaudit: %s (exit %d)\n\n", verdict, s->exit_code);
    char tn[64];
    fprintf(out, "%llu file%s, %s, %llu elements: %llu NaN, %llu +Inf, %llu -Inf, "
            "%llu outlier%s, %llu error%s.\n\n",
            (unsigned long long)s->files, s->files == 1 ? "" : "s",
            na_summary_tensors(s, tn, sizeof tn),
            (unsigned long long)s->elements, (unsigned long long)s->nan,
            (unsigned long long)s->pos_inf, (unsigned long long)s->neg_inf,
            (unsigned long long)s->outliers, s->outliers == 1 ? "" : "s",
            (unsigned long long)s->errors, s->errors == 1 ? "" : "s");
    /* Rows in file and tensor order when they all fit; otherwise the
     * failing ones first, as SARIF does, so that the summary a failed run
     * shows lists why it failed (8717 of 10000 failing rows were cut for
     * harmless notes: tester round 22b). Measured on /dev/null first. */
    md_rows_t m = {0, 0, 0, 0};
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        md_rows(r, null, 0, &m);
        fclose(null);
    }
    int split = null != NULL && m.more > 0;
    memset(&m, 0, sizeof m);
    md_rows(r, out, split ? 1 : 0, &m);
    if (split)
        md_rows(r, out, 2, &m);
    size_t rows = m.rows, more = m.more, more_fail = m.more_fail;
    if (rows == 0)
        fputs("No findings.\n", out);
    if (more)
        fprintf(out, "\n%zu more row%s (%zu of them failing) left out to keep this summary "
                "under 1 MiB (failing rows first); the JSON report (--report FILE.json) lists "
                "everything.\n",
                more, more == 1 ? "" : "s", more_fail);
    /* what a walk passed over (round 29a: the summary a reviewer reads did
     * not say; the text and JSON reports list each) */
    if (r->n_skipped)
        fprintf(out, "\n%zu path%s skipped as not data, hidden or audited under another name "
                "(the text and JSON reports list %s).\n", r->n_skipped,
                r->n_skipped == 1 ? "" : "s", r->n_skipped == 1 ? "it" : "each");
    return ferror(out) ? NA_E_WRITE : NA_OK;
}
