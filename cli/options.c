/*
 * options.c - the one option table of nanaudit (after curl's
 * src/tool_getparam.c aliases[] and src/tool_listhelp.c): every flag's
 * name, argument, help text and subcommands live in opts[] below. The
 * parser and --help both read it, and tests/cli/cli_help.sh checks that
 * every flag of --help also appears in man/nanaudit.1.
 *
 * Values are checked here, before any input is opened, so a bad flag is
 * always exit 2 (DESIGN.md, "Exit codes").
 */
#include "cli.h"

#include <errno.h>  /* errno */
#include <math.h>   /* isfinite */
#include <stdio.h>  /* printf */
#include <stdlib.h> /* strtod, strtoull, malloc */
#include <string.h> /* strcmp, strchr, strncmp */

typedef int (*setter_t)(cli_opts_t *o, const char *arg, const char *name);

typedef struct cli_option {
    const char *name; /* without the leading "--" */
    char short_name;  /* 0 when none */
    const char *arg;  /* metavariable; NULL for a flag without value */
    int cmds;         /* CLI_SCAN | CLI_INFO | CLI_GLOBAL */
    setter_t set;
    const char *help;
} cli_option_t;

/* Whole-string unsigned decimal; rejects signs, blanks and overflow. */
static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

#define BAD(o, name, arg, what) \
    cli_usage((o)->cmd, "--%s: '%s' is not %s", name, arg, what)

static int set_zscore(cli_opts_t *o, const char *a, const char *n)
{
    char *end;
    errno = 0;
    double k = strtod(a, &end);
    if (!*a || *end || errno || !isfinite(k) || k < 0)
        return BAD(o, n, a, "a number >= 0");
    o->zscore = k;
    return 0;
}

static int set_max_locations(cli_opts_t *o, const char *a, const char *n)
{
    uint64_t v;
    if (parse_u64(a, &v) || v > 1000000)
        return BAD(o, n, a, "a count from 0 to 1000000");
    o->max_locations = (size_t)v;
    return 0;
}

static int set_threads(cli_opts_t *o, const char *a, const char *n)
{
    uint64_t v;
    if (parse_u64(a, &v) || v < 1 || v > 4096)
        return BAD(o, n, a, "a thread count from 1 to 4096");
    o->threads = (int)v;
    return 0;
}

static int set_fail_on(cli_opts_t *o, const char *a, const char *n)
{
    na_err_t err = {{0}};
    if (na_parse_fail_on(a, &o->fail_mask, &err) != NA_OK)
        return cli_usage(o->cmd, "%s", err.msg[0] ? err.msg : "--fail-on: bad list");
    return 0;
}

static int set_format(cli_opts_t *o, const char *a, const char *n)
{
    if (strcmp(a, "text") && strcmp(a, "json"))
        return BAD(o, n, a, "text or json");
    o->json = !strcmp(a, "json");
    return 0;
}

static int set_report(cli_opts_t *o, const char *a, const char *n)
{
    if (!*a)
        return BAD(o, n, a, "a file name");
    o->report = a;
    return 0;
}

static int set_quiet(cli_opts_t *o, const char *a, const char *n) { o->quiet = 1; return 0; }
static int set_progress(cli_opts_t *o, const char *a, const char *n) { o->progress = CLI_ON; return 0; }
static int set_no_progress(cli_opts_t *o, const char *a, const char *n) { o->progress = CLI_OFF; return 0; }
static int set_help(cli_opts_t *o, const char *a, const char *n) { o->help = 1; return 0; }
static int set_version(cli_opts_t *o, const char *a, const char *n) { o->version = 1; return 0; }

static int set_color(cli_opts_t *o, const char *a, const char *n)
{
    if (!strcmp(a, "auto"))
        o->color = CLI_AUTO;
    else if (!strcmp(a, "always"))
        o->color = CLI_ON;
    else if (!strcmp(a, "never"))
        o->color = CLI_OFF;
    else
        return BAD(o, n, a, "auto, always or never");
    return 0;
}

static int set_max_header(cli_opts_t *o, const char *a, const char *n)
{
    uint64_t v;
    if (parse_u64(a, &v) || v < 1)
        return BAD(o, n, a, "a byte count >= 1");
    o->open.max_header_bytes = v;
    return 0;
}

static int set_dtype(cli_opts_t *o, const char *a, const char *n)
{
    na_dtype_t dt = na_dtype_from_name(a, strlen(a));
    if (dt == NA_DT_INVALID)
        return BAD(o, n, a, "a dtype (F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I8..I64 U8..U64 BOOL ...)");
    o->open.raw_dtype = dt;
    return 0;
}

/* "15x10x22" or "15,10,22": up to NA_MAX_NDIM non-negative sizes. */
static int set_shape(cli_opts_t *o, const char *a, const char *n)
{
    int nd = 0;
    const char *p = a;
    while (1) {
        char num[32];
        size_t len = strcspn(p, "x,");
        uint64_t v;
        if (len == 0 || len >= sizeof num || nd == NA_MAX_NDIM)
            return BAD(o, n, a, "a shape like 15x10x22 or 15,10,22");
        memcpy(num, p, len);
        num[len] = '\0';
        if (parse_u64(num, &v))
            return BAD(o, n, a, "a shape like 15x10x22 or 15,10,22");
        o->open.raw_shape[nd++] = v;
        if (!p[len])
            break;
        p += len + 1;
    }
    o->open.raw_ndim = nd;
    o->raw_only_given = 1;
    o->raw_only_name = "--shape";
    return 0;
}

static int set_endian(cli_opts_t *o, const char *a, const char *n)
{
    if (strcmp(a, "little") && strcmp(a, "big"))
        return BAD(o, n, a, "little or big");
    o->open.raw_endian = strcmp(a, "big") ? NA_LITTLE : NA_BIG;
    o->raw_only_given = 1;
    o->raw_only_name = "--endian";
    return 0;
}

static int set_offset(cli_opts_t *o, const char *a, const char *n)
{
    uint64_t v;
    if (parse_u64(a, &v))
        return BAD(o, n, a, "a byte count");
    o->open.raw_offset = v;
    o->raw_only_given = 1;
    o->raw_only_name = "--offset";
    return 0;
}

static int set_length(cli_opts_t *o, const char *a, const char *n)
{
    uint64_t v;
    if (parse_u64(a, &v))
        return BAD(o, n, a, "a byte count");
    o->open.raw_length = v;
    o->raw_only_given = 1;
    o->raw_only_name = "--length";
    return 0;
}

#define S CLI_SCAN
#define I CLI_INFO
#define G CLI_GLOBAL
static const cli_option_t opts[] = {
    {"zscore", 0, "K", S, set_zscore,
     "outlier when |x - mean| > K*std over finite values (std with ddof=0, "
     "population, as numpy and scipy.stats.zscore); default 6, 0 disables"},
    {"max-locations", 0, "N", S, set_max_locations,
     "report the first N row-major indices of NaN, Inf and outliers per tensor (default 5)"},
    {"threads", 0, "N", S, set_threads, "scan with N threads (default: all cores)"},
    {"fail-on", 0, "LIST", S, set_fail_on,
     "finding kinds that make the exit code 1 (default nan,inf; e.g. nan,inf,outliers; none)"},
    {"format", 0, "FMT", S, set_format, "report on stdout as text (default) or json"},
    {"report", 0, "FILE", S, set_report,
     "also write the JSON report to FILE (overwritten if it exists)"},
    {"quiet", 'q', NULL, S, set_quiet, "print only findings, errors and the summary"},
    {"progress", 0, NULL, S, set_progress, "always show progress on stderr"},
    {"no-progress", 0, NULL, S, set_no_progress,
     "never show progress (default: on a terminal, for scans over ~1 s)"},
    {"color", 0, "WHEN", S, set_color,
     "colour the text report: auto (default: on a terminal, unless NO_COLOR is set), always, never"},
    {"max-header-bytes", 0, "N", S | I, set_max_header,
     "accept safetensors headers up to N bytes (default 100000000)"},
    {"dtype", 0, "DTYPE", S | I, set_dtype,
     "read every input as raw data of this safetensors dtype (F32, BF16, I16, ...)"},
    {"shape", 0, "DIMS", S | I, set_shape,
     "raw: shape as 15x10x22 or 15,10,22 (default 1-D from the size)"},
    {"endian", 0, "ORDER", S | I, set_endian, "raw: byte order little (default) or big"},
    {"offset", 0, "BYTES", S | I, set_offset, "raw: skip BYTES at the start of each file"},
    {"length", 0, "BYTES", S | I, set_length,
     "raw: BYTES of data after --offset (default: up to the end of the file)"},
    {"help", 'h', NULL, S | I | G, set_help, "show this help and exit"},
    {"version", 'V', NULL, S | I | G, set_version, "show the version and exit"},
};
#undef S
#undef I
#undef G
#define NOPTS (sizeof opts / sizeof opts[0])

const char *cli_cmd_name(int cmd)
{
    return cmd == CLI_SCAN ? "scan" : (cmd == CLI_INFO ? "info" : "");
}

void cli_opts_init(cli_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->zscore = NA_DEFAULT_ZSCORE;
    o->max_locations = NA_DEFAULT_MAX_LOCATIONS;
    o->fail_mask = NA_DEFAULT_FAIL_MASK;
    o->progress = CLI_AUTO;
    o->color = CLI_AUTO;
    na_open_opts_init(&o->open);
}

/* The table entry for "--name" (name without dashes, len bytes) or -c. */
static const cli_option_t *lookup(const char *name, size_t len, char c)
{
    for (size_t i = 0; i < NOPTS; i++) {
        if (c ? opts[i].short_name == c
              : strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len))
            return &opts[i];
    }
    return NULL;
}

/* One option at argv[*i]; advances *i past its value. 0 or 2. */
static int parse_one(int argc, char **argv, int *i, cli_opts_t *o)
{
    const char *a = argv[*i], *eq = NULL, *val = NULL;
    const cli_option_t *opt;
    if (a[1] == '-') {
        eq = strchr(a + 2, '=');
        opt = lookup(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2), 0);
    } else {
        opt = a[2] ? NULL : lookup(NULL, 0, a[1]);
    }
    int cmd = o->cmd ? o->cmd : CLI_GLOBAL;
    if (!opt || !(opt->cmds & cmd))
        return cli_usage(o->cmd, "unknown option '%s'", a);
    if (opt->arg && eq) {
        val = eq + 1;
    } else if (opt->arg) {
        if (*i + 1 >= argc)
            return cli_usage(o->cmd, "--%s needs an argument %s", opt->name, opt->arg);
        val = argv[++*i];
    } else if (eq) {
        return cli_usage(o->cmd, "--%s takes no argument", opt->name);
    }
    return opt->set(o, val, opt->name);
}

int cli_parse(int argc, char **argv, int first, cli_opts_t *o)
{
    int only_files = 0;
    o->inputs = calloc((size_t)argc + 1, sizeof *o->inputs);
    if (!o->inputs) {
        cli_error(NULL, "out of memory");
        return 4;
    }
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (!only_files && !strcmp(a, "--")) {
            only_files = 1;
        } else if (!only_files && a[0] == '-' && a[1]) {
            int rc = parse_one(argc, argv, &i, o);
            if (rc)
                return rc;
        } else {
            o->inputs[o->n_inputs++] = a;
        }
    }
    if (o->help || o->version)
        return 0;
    if (o->raw_only_given && o->open.raw_dtype == NA_DT_INVALID)
        return cli_usage(o->cmd, "%s needs --dtype (it describes raw files)", o->raw_only_name);
    if (o->n_inputs == 0)
        return cli_usage(o->cmd, "no input files");
    return 0;
}

/* Print text word-wrapped to `width` columns, continuation lines
 * indented to `indent`; the cursor is at column `indent` - 1 on entry. */
static void print_wrapped(const char *text, int indent, int width)
{
    int col = indent;
    const char *p = text;
    while (*p) {
        int len = (int)strcspn(p, " ");
        if (col > indent && col + 1 + len > width) {
            printf("\n%*s", indent, "");
            col = indent;
        } else {
            putchar(' ');
            col++;
        }
        printf("%.*s", len, p);
        col += len;
        p += len;
        while (*p == ' ')
            p++;
    }
    putchar('\n');
}

void cli_print_help(int cmd)
{
    if (cmd == CLI_GLOBAL) {
        printf("Usage: nanaudit COMMAND [options] ...\n"
               "Audit checkpoints and datasets for NaN, Inf and outliers.\n\n"
               "Commands:\n"
               "  scan [options] FILE|DIR|INDEX...  scan every tensor; report; exit code for CI\n"
               "  info [options] FILE...            list tensors, dtypes, shapes, metadata\n\n"
               "Options:\n");
    } else if (cmd == CLI_SCAN) {
        printf("Usage: nanaudit scan [options] FILE|DIR|INDEX...\n"
               "Scan every tensor for NaN, Inf and z-score outliers. Statistics are over\n"
               "finite values, in double; std is the population std (ddof=0).\n\n"
               "Options:\n");
    } else {
        printf("Usage: nanaudit info [options] FILE...\n"
               "List tensors, dtypes, shapes, bytes and metadata (headers only).\n\n"
               "Options:\n");
    }
    for (size_t i = 0; i < NOPTS; i++) {
        char left[64];
        if (!(opts[i].cmds & cmd))
            continue;
        snprintf(left, sizeof left, "%s%c%s--%s%s%s", opts[i].short_name ? "-" : "",
                 opts[i].short_name ? opts[i].short_name : ' ',
                 opts[i].short_name ? ", " : " ", opts[i].name, opts[i].arg ? " " : "",
                 opts[i].arg ? opts[i].arg : "");
        printf("  %-26s", left);
        print_wrapped(opts[i].help, 29, 79);
    }
    printf("\nExit status: 0 clean, 1 findings fail the policy, 2 usage error,\n"
           "3 an input could not be read or audited, 4 internal error (highest wins).\n"
           "See nanaudit(1).\n");
}
