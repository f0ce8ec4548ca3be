/*
 * gate.c - the CI-gate flags of `nanaudit scan` (issue 5): --range,
 * --max-abs, --cast-check and the tolerances --max-nan-fraction,
 * --max-inf-fraction, --max-outlier-fraction. The option table in
 * options.c points at these setters; they only check and store values
 * (exit 2 on a bad one, before any input is opened).
 */
#include "cli.h"

#include <errno.h>  /* errno */
#include <stdio.h>  /* fopen, fread */
#include <stdlib.h> /* malloc, free */
#include <string.h> /* strchr, strcmp, strerror */
#include <strings.h> /* strcasecmp */

/* Whole-string finite number. */
static int parse_num(const char *s, size_t len, double *v)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return na_parse_double(buf, v);
}

/* "LO:HI", "LO:" or ":HI" (an empty side is unbounded), LO <= HI. */
int cli_set_range(cli_opts_t *o, const char *a, const char *n)
{
    const char *colon = strchr(a, ':');
    double lo = 0, hi = 0;
    int has_lo = colon && colon > a, has_hi = colon && colon[1];
    if (!colon || strchr(colon + 1, ':') || (!has_lo && !has_hi) ||
        (has_lo && parse_num(a, (size_t)(colon - a), &lo)) ||
        (has_hi && parse_num(colon + 1, strlen(colon + 1), &hi)) ||
        (has_lo && has_hi && lo > hi))
        return cli_usage(o->cmd, "--%s: '%s' is not a range LO:HI of finite numbers with "
                         "LO <= HI (either side may be empty)", n, a);
    o->checks_given |= NA_CK_RANGE_LO | NA_CK_RANGE_HI;
    o->checks.range_lo_set = has_lo;
    o->checks.range_hi_set = has_hi;
    o->checks.range_lo = lo;
    o->checks.range_hi = hi;
    return 0;
}

int cli_set_max_abs(cli_opts_t *o, const char *a, const char *n)
{
    double v;
    if (parse_num(a, strlen(a), &v) || v < 0)
        return cli_usage(o->cmd, "--%s: '%s' is not a finite number >= 0", n, a);
    o->checks_given |= NA_CK_MAX_ABS;
    o->checks.max_abs_set = 1;
    o->checks.max_abs = v;
    return 0;
}

int cli_set_cast_check(cli_opts_t *o, const char *a, const char *n)
{
    double ovf, unf;
    int strict;
    na_dtype_t dt = na_dtype_from_name(a, strlen(a));
    if (na_cast_limits(dt, &ovf, &strict, &unf) != NA_OK)
        return cli_usage(o->cmd, "--%s: '%s' is not F16, BF16, F8_E4M3 or F8_E5M2", n, a);
    o->checks_given |= NA_CK_CAST;
    o->checks.cast = dt;
    return 0;
}

/* --max-nan-fraction / --max-inf-fraction / --max-outlier-fraction F,
 * 0 <= F <= 1: the kind fails only when count > F * elements. */
int cli_set_max_fraction(cli_opts_t *o, const char *a, const char *n)
{
    double v;
    if (parse_num(a, strlen(a), &v) || v < 0 || v > 1)
        return cli_usage(o->cmd, "--%s: '%s' is not a fraction from 0 to 1", n, a);
    if (!strcmp(n, "max-nan-fraction")) {
        o->checks.max_fraction[NA_K_NAN] = v;
        o->checks_given |= NA_CK_FRAC_NAN;
    } else if (!strcmp(n, "max-inf-fraction")) {
        o->checks.max_fraction[NA_K_POS_INF] = v;
        o->checks.max_fraction[NA_K_NEG_INF] = v;
        o->checks_given |= NA_CK_FRAC_INF;
    } else {
        o->checks.max_fraction[NA_K_OUTLIERS] = v;
        o->checks_given |= NA_CK_FRAC_OUT;
    }
    return 0;
}

/* Whole file into memory, NUL-terminated; at most `cap` bytes (the
 * buffer grows as it is read, so a pipe works too). 0, or -1 with errno
 * (EFBIG when larger than cap). */
static int slurp(const char *path, size_t cap, char **buf, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    size_t n = 0, size = 0;
    char *b = NULL;
    int e = 0;
    for (;;) {
        if (n == size) {
            size_t ns = size ? 2 * size : 65536;
            char *nb = n > cap ? NULL : realloc(b, ns + 1);
            if (!nb) {
                e = n > cap ? EFBIG : ENOMEM;
                break;
            }
            b = nb;
            size = ns;
        }
        errno = 0;
        size_t got = fread(b + n, 1, size - n, fp);
        n += got;
        if (got == 0) {
            /* the read's errno when it set one: a directory opens and
             * then fails with EISDIR, which says more than EIO */
            e = ferror(fp) ? (errno ? errno : EIO) : n > cap ? EFBIG : 0;
            break;
        }
    }
    fclose(fp);
    if (e) {
        free(b);
        errno = e;
        return -1;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

#define NA_POLICY_MAX_BYTES (1u << 20)

/* Read an option file (--policy, --baseline) of at most max bytes
 * (max_text says it in words); a file that cannot be read is a usage
 * error (exit 2), decided before any input is opened. */
static int read_option_file(cli_opts_t *o, const char *a, const char *n, size_t max,
                            const char *max_text, char **text, size_t *len)
{
    if (slurp(a, max, text, len) != 0)
        return cli_usage(o->cmd, "--%s: cannot read '%s': %s", n, a,
                         errno == EFBIG ? max_text : strerror(errno));
    return 0;
}

/* Exit code for the parse status of an option file: 0, 4 (out of
 * memory) or 2 (bad content, with the parser's FILE:LINE message). */
static int option_file_result(cli_opts_t *o, const char *a, const char *n, na_status_t st,
                              const na_err_t *err)
{
    if (st == NA_E_NOMEM) {
        cli_error(a, "out of memory");
        return 4;
    }
    if (st != NA_OK)
        return cli_usage(o->cmd, "--%s: %s", n, err->msg);
    return 0;
}

/* --policy FILE: read and parse now, so a bad policy is exit 2 before any
 * input is opened (DESIGN.md, "Exit codes"). */
int cli_set_policy(cli_opts_t *o, const char *a, const char *n)
{
    char *text;
    size_t len;
    na_err_t err = {{0}};
    int rc = read_option_file(o, a, n, NA_POLICY_MAX_BYTES, "larger than 1 MiB", &text, &len);
    if (rc != 0)
        return rc;
    na_policy_free(o->policy);
    o->policy = NULL;
    o->policy_path = a;
    na_status_t st = na_policy_parse(text, len, a, &o->policy, &err);
    free(text);
    return option_file_result(o, a, n, st, &err);
}

void cli_gate_checks(const cli_opts_t *o, const char *name, na_checks_t *c)
{
    na_checks_t flags = o->checks;
    flags.fail_mask = o->fail_mask;
    na_policy_checks(o->policy, &flags, o->checks_given, name, c);
}

#define NA_BASELINE_MAX_BYTES (1u << 30)

/* --baseline FILE: read and parse now (exit 2 before any input). */
int cli_set_baseline(cli_opts_t *o, const char *a, const char *n)
{
    char *text;
    size_t len;
    na_err_t err = {{0}};
    int rc = read_option_file(o, a, n, NA_BASELINE_MAX_BYTES, "larger than 1 GiB", &text, &len);
    if (rc != 0)
        return rc;
    na_baseline_free(o->baseline);
    o->baseline = NULL;
    na_status_t st = na_baseline_parse(text, len, a, &o->baseline, &err);
    free(text);
    return option_file_result(o, a, n, st, &err);
}

static const char *const rf_names[] = {"json", "junit", "markdown", "sarif"};

int cli_set_report_format(cli_opts_t *o, const char *a, const char *n)
{
    for (int k = 0; k < 4; k++)
        if (!strcmp(a, rf_names[k])) {
            o->report_format = k;
            o->report_format_given = 1;
            return 0;
        }
    return cli_usage(o->cmd, "--%s: '%s' is not json, junit, markdown or sarif", n, a);
}

int cli_add_report(cli_opts_t *o, const char *path)
{
    const char **r = realloc(o->reports, (o->n_reports + 1) * sizeof *r);
    if (!r) {
        cli_error(NULL, "out of memory");
        return 4;
    }
    r[o->n_reports++] = path;
    o->reports = r;
    return 0;
}

/* Format of a --report path by its extension (ASCII case ignored), -1
 * for another. */
static int ext_kind(const char *path)
{
    static const struct { const char *ext; int kind; } ext[] = {
        {".json", CLI_RF_JSON}, {".xml", CLI_RF_JUNIT}, {".md", CLI_RF_MARKDOWN},
        {".markdown", CLI_RF_MARKDOWN}, {".sarif", CLI_RF_SARIF}};
    size_t len = strlen(path);
    for (size_t k = 0; k < sizeof ext / sizeof ext[0]; k++) {
        size_t el = strlen(ext[k].ext);
        if (len > el && !strcasecmp(path + len - el, ext[k].ext))
            return ext[k].kind;
    }
    return -1;
}

int cli_report_kind(const cli_opts_t *o, const char *path)
{
    int k = ext_kind(path);
    return k >= 0 ? k : o->report_format;
}

int cli_report_format_idle(const cli_opts_t *o)
{
    for (size_t k = 0; k < o->n_reports; k++)
        if (ext_kind(o->reports[k]) < 0)
            return 0;
    return o->report_format_given;
}

typedef struct gate_report {
    const cli_opts_t *o;
    na_report_t *r;
    const char *path;
} gate_report_t;

static int gate_write(void *ctx, FILE *fp)
{
    const gate_report_t *g = ctx;
    switch (cli_report_kind(g->o, g->path)) {
    case CLI_RF_JUNIT: return na_report_write_junit(g->r, fp) == NA_OK ? 0 : -1;
    case CLI_RF_MARKDOWN: return na_report_write_markdown(g->r, fp) == NA_OK ? 0 : -1;
    case CLI_RF_SARIF: return na_report_write_sarif(g->r, fp) == NA_OK ? 0 : -1;
    default: return na_report_write_json(g->r, fp) == NA_OK ? 0 : -1;
    }
}

/* One --report file: 0, or -1 after its line. */
static int write_report(const cli_opts_t *o, na_report_t *r, const char *path)
{
    gate_report_t g = {o, r, path};
    int e = cli_write_file(path, gate_write, &g, 1);
    if (e)
        cli_error(path, "cannot write report: %s", e > 0 ? strerror(e) : "out of memory");
    return e ? -1 : 0;
}

int cli_gate_write_reports(const cli_opts_t *o, na_report_t *r, int exit_code)
{
    r->summary.exit_code = exit_code;
    int rc = exit_code;
    unsigned char *ok = calloc(o->n_reports + 1, 1);
    for (size_t i = 0; i < o->n_reports; i++) {
        int w = write_report(o, r, o->reports[i]) == 0;
        if (ok)
            ok[i] = (unsigned char)w;
        if (!w)
            rc = cli_exit_merge(rc, 4); /* NA_E_WRITE and NA_E_NOMEM are both exit 4 */
    }
    /* A report that failed made the run exit 4: the ones written say so
     * too (they said the exit code before it, 1). */
    if (rc != exit_code && ok) {
        r->summary.exit_code = rc;
        for (size_t i = 0; i < o->n_reports; i++)
            if (ok[i])
                write_report(o, r, o->reports[i]);
    }
    free(ok);
    return rc;
}

uint32_t cli_gate_fail_mask(const cli_opts_t *o)
{
    na_checks_t c;
    cli_gate_checks(o, NULL, &c);
    return c.fail_mask;
}

void cli_gate_free(cli_opts_t *o)
{
    na_policy_free(o->policy);
    o->policy = NULL;
    na_baseline_free(o->baseline);
    o->baseline = NULL;
    free(o->reports);
    o->reports = NULL;
    o->n_reports = 0;
}
