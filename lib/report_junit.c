/*
 * report_junit.c - the report as JUnit XML, for CI systems that show test
 * results (Jenkins, GitLab, GitHub test reporters).
 *
 * Shape (the JUnit XML that Jenkins' junit plugin and GitLab read; valid
 * against tests/data/junit/junit-10.xsd, from
 * https://github.com/jenkinsci/xunit-plugin/blob/master/src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/junit-10.xsd):
 * <testsuites> holds one <testsuite> per file (name = the path as given),
 * each with one <testcase> per tensor (classname = path, name = tensor).
 * A tensor with failing findings has one <failure> (type = the first
 * failing kind, message = its text, body = every failing finding on its
 * own line); a tensor that could not be audited has <error>; a skipped
 * one <skipped>; non-failing findings go to <system-out>. A file that
 * could not be read is one <testcase name="(file)"> with <error>. An exit
 * code that no test case explains (4: a report or standard output could
 * not be written; 3 with nothing audited) is one more <testsuite
 * name="nanaudit"> whose <testcase name="exit code"> has <error>, so a CI
 * test view is never green for a failed run (round 27b: it was, where
 * the SARIF, Markdown and JSON reports said exit 4).
 *
 * Escaping (XML 1.0, https://www.w3.org/TR/xml/ sections 2.2 and 2.4): &,
 * <, >, " and ' become entities; in attributes \t \n \r become character
 * references so parsers keep them; characters XML 1.0 cannot hold (C0
 * controls other than \t \n \r, U+FFFE, U+FFFF) and bytes that are not
 * UTF-8 are written as the text \xHH, so any name stays well-formed.
 */
#include "nanaudit.h"

#include <string.h> /* strlen */

/* Write s escaped for XML text (attr = 0) or an attribute value. */
static void xml_put(FILE *out, const char *s, int attr)
{
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = na_utf8_seq_len(s + i, n - i);
        if (len == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
            (len == 3 && c == 0xEF && (unsigned char)s[i + 1] == 0xBF &&
             (unsigned char)s[i + 2] >= 0xBE) ||
            (len > 1 && na_escape_dangerous(s + i, len))) {
            /* not representable in XML 1.0, or a bidi override, line
             * separator or C1 control that would make a name display as
             * another (tester round 22b): kept visible as \xHH */
            for (size_t k = 0; k < (len ? len : 1); k++)
                fprintf(out, "\\x%02X", (unsigned char)s[i + k]);
            i += len ? len : 1;
            continue;
        }
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        case '\\': fputs("\\\\", out); break; /* so \x01 escaped and a literal "\x01" differ */
        case '\t': fputs(attr ? "&#9;" : "\t", out); break;
        case '\n': fputs(attr ? "&#10;" : "\n", out); break;
        case '\r': fputs("&#13;", out); break;
        default: fwrite(s + i, 1, len, out);
        }
        i += len;
    }
}

typedef struct counts {
    size_t tests, failures, errors, skipped;
} counts_t;

static int tensor_fails(const na_tensor_report_t *e)
{
    for (size_t k = 0; k < e->n_findings; k++)
        if (e->findings[k].fails)
            return 1;
    return 0;
}

static void count_file(const na_file_report_t *f, counts_t *c)
{
    memset(c, 0, sizeof *c);
    c->tests = f->n_tensors + !f->ok;
    c->errors = !f->ok;
    for (size_t j = 0; j < f->n_tensors; j++) {
        const na_tensor_report_t *e = &f->tensors[j];
        c->errors += e->status == NA_TS_ERROR;
        c->skipped += e->status == NA_TS_SKIPPED;
        c->failures += e->status == NA_TS_OK && tensor_fails(e);
    }
}

static void findings_lines(FILE *out, const na_tensor_report_t *e, int failing)
{
    for (size_t k = 0; k < e->n_findings; k++) {
        const na_finding_t *f = &e->findings[k];
        if ((f->fails != 0) != failing)
            continue;
        fprintf(out, "%s: ", na_kind_name(f->kind));
        xml_put(out, f->message, 0);
        fputc('\n', out);
    }
}

static void testcase(FILE *out, const na_file_report_t *f, const na_tensor_report_t *e)
{
    fputs("    <testcase classname=\"", out);
    xml_put(out, f->path, 1);
    fputs("\" name=\"", out);
    xml_put(out, e->name, 1);
    fputs("\" time=\"0\">\n", out);
    if (e->status == NA_TS_ERROR) {
        fputs("      <error type=\"unreadable\" message=\"", out);
        xml_put(out, e->reason ? e->reason : "error", 1);
        fputs("\"/>\n", out);
    } else if (e->status == NA_TS_SKIPPED) {
        fputs("      <skipped message=\"", out);
        xml_put(out, e->reason ? e->reason : "not numeric data", 1);
        fputs("\"/>\n", out);
    } else if (tensor_fails(e)) {
        const na_finding_t *first = NULL;
        for (size_t k = 0; k < e->n_findings && !first; k++)
            if (e->findings[k].fails)
                first = &e->findings[k];
        fprintf(out, "      <failure type=\"%s\" message=\"", na_kind_name(first->kind));
        xml_put(out, first->message, 1);
        fputs("\">", out);
        findings_lines(out, e, 1);
        fputs("</failure>\n", out);
    }
    int notes = 0;
    for (size_t k = 0; k < e->n_findings; k++)
        notes |= !e->findings[k].fails;
    /* the outlier test's note (a statistic overflowed): not a finding */
    const char *note = e->status == NA_TS_OK && e->scanned ? na_outliers_note(&e->res) : NULL;
    if (notes || note) {
        fputs("      <system-out>", out);
        findings_lines(out, e, 0);
        if (note) {
            fputs("outliers: ", out);
            xml_put(out, note, 0);
            fputc('\n', out);
        }
        fputs("</system-out>\n", out);
    }
    fputs("    </testcase>\n", out);
}

/* What exit code x means (the man page, EXIT STATUS). */
static const char *exit_meaning(int x)
{
    return x == 1 ? "findings fail the policy"
           : x == 3 ? "an input could not be read, or nothing was audited"
                    : "a report or standard output could not be written, or an internal "
                      "error: see the job's log";
}

na_status_t na_report_write_junit(const na_report_t *r, FILE *out)
{
    counts_t all = {0, 0, 0, 0}, c;
    for (size_t i = 0; i < r->n_files; i++) {
        count_file(&r->files[i], &c);
        all.tests += c.tests;
        all.failures += c.failures;
        all.errors += c.errors;
        all.skipped += c.skipped;
    }
    int x = r->summary.exit_code;
    int run_case = x >= 4 || (x != 0 && all.failures + all.errors == 0);
    all.tests += (size_t)run_case;
    all.errors += (size_t)run_case;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    /* <testsuites> has no skipped attribute in the schema; <testsuite> has */
    fprintf(out, "<testsuites name=\"nanaudit\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
            "time=\"0\">\n", all.tests, all.failures, all.errors);
    for (size_t i = 0; i < r->n_files; i++) {
        const na_file_report_t *f = &r->files[i];
        count_file(f, &c);
        fputs("  <testsuite name=\"", out);
        xml_put(out, f->path, 1);
        fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
                "time=\"0\">\n", c.tests, c.failures, c.errors, c.skipped);
        if (!f->ok) {
            fputs("    <testcase classname=\"", out);
            xml_put(out, f->path, 1);
            fputs("\" name=\"(file)\" time=\"0\">\n      <error type=\"unreadable\" message=\"", out);
            xml_put(out, f->error ? f->error : "error", 1);
            fputs("\"/>\n    </testcase>\n", out);
        }
        for (size_t j = 0; j < f->n_tensors; j++)
            testcase(out, f, &f->tensors[j]);
        fputs("  </testsuite>\n", out);
    }
    if (run_case)
        fprintf(out, "  <testsuite name=\"nanaudit\" tests=\"1\" failures=\"0\" errors=\"1\" "
                "skipped=\"0\" time=\"0\">\n    <testcase classname=\"nanaudit\" name=\"exit "
                "code\" time=\"0\">\n      <error type=\"exit\" message=\"nanaudit exited with "
                "code %d: %s\"/>\n    </testcase>\n  </testsuite>\n", x, exit_meaning(x));
    fputs("</testsuites>\n", out);
    return ferror(out) ? NA_E_WRITE : NA_OK;
}
