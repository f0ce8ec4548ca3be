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
#include <stdio.h>  /* printf */
#include <stdlib.h> /* strtoull, malloc */
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
    double k;
    /* scan: 0 switches the test off; clean: there is no test to switch off */
    if (o->cmd == CLI_CLEAN && (na_parse_double(a, &k) || k <= 0))
        return BAD(o, n, a, "a number > 0");
    if (na_parse_double(a, &k) || k < 0)
        return BAD(o, n, a, "a number >= 0");
    o->zscore = k;
    o->zscore_given = 1;
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
    o->open.threads = (int)v; /* HDF5 chunk inflate */
    return 0;
}

static int set_fail_on(cli_opts_t *o, const char *a, const char *n)
{
    na_err_t err = {{0}};
    if (na_parse_fail_on(a, &o->fail_mask, &err) != NA_OK)
        return cli_usage(o->cmd, "%s", err.msg[0] ? err.msg : "--fail-on: bad list");
    o->checks_given |= NA_CK_FAIL_ON; /* beats a --policy file's defaults */
    return 0;
}

static int set_format(cli_opts_t *o, const char *a, const char *n)
{
    if (o->cmd == CLI_SCAN && !strcmp(a, "github")) { /* annotations (gate.c) */
        o->github = 1;
        o->json = 0;
        return 0;
    }
    if (strcmp(a, "text") && strcmp(a, "json"))
        return BAD(o, n, a, o->cmd == CLI_SCAN ? "text, json or github" : "text or json");
    o->json = !strcmp(a, "json");
    o->github = 0;
    return 0;
}

static int set_report(cli_opts_t *o, const char *a, const char *n)
{
    if (!*a)
        return BAD(o, n, a, "a file name");
    /* clean writes one change report, always JSON (cli/clean_report.c):
     * a second file or scan's XML/Markdown/SARIF names would be silently
     * ignored or hold JSON, so both are usage errors. */
    if (o->cmd == CLI_CLEAN && o->report)
        return cli_usage(o->cmd, "--report given twice ('%s', '%s'): clean writes one JSON "
                         "change report", o->report, a);
    if (o->cmd == CLI_CLEAN && cli_report_kind(o, a) != CLI_RF_JSON)
        return cli_usage(o->cmd, "--report %s: clean's change report is JSON only (.xml, .md "
                         "and .sarif are scan's report formats)", a);
    o->report = a;
    return cli_add_report(o, a); /* scan: any number of them (gate.c) */
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
    if (!na_raw_dtype_ok(dt))
        return BAD(o, n, a, "a dtype raw data can be read as (F4's values are 4 bits, not "
                   "whole bytes)");
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
    if (v == NA_RAW_TO_EOF) /* the "not given" value: it read to the end of the file */
        return cli_usage(o->cmd, "--%s: '%s' bytes is more than any file holds", n, a);
    o->open.raw_length = v;
    o->raw_only_given = 1;
    o->raw_only_name = "--length";
    return 0;
}

/* HDF5 reader: seconds one answer of the libhdf5 process may take. The
 * limit is counted in milliseconds (poll, formats/hdf5.c): a value under
 * 0.001 other than 0 would round to 0 ms and stop every reader at once,
 * so it is refused rather than reported as "within 0 s". */
static int set_hdf5_timeout(cli_opts_t *o, const char *a, const char *n)
{
    double v;
    if (na_parse_double(a, &v) || v < 0 || (v > 0 && v < 0.001) || v > 86400)
        return BAD(o, n, a, "0 (no limit) or a number of seconds from 0.001 to 86400");
    o->open.hdf5_timeout = v;
    return 0;
}

static int set_missing(cli_opts_t *o, const char *a, const char *n)
{
    if (strcmp(a, "auto") && strcmp(a, "none"))
        return BAD(o, n, a, "auto or none");
    o->open.missing_mode = strcmp(a, "none") ? NA_MISSING_AUTO : NA_MISSING_NONE;
    return 0;
}

static int set_attributes(cli_opts_t *o, const char *a, const char *n)
{
    (void)a;
    (void)n;
    o->open.attributes = 1;
    return 0;
}

static int set_device(cli_opts_t *o, const char *a, const char *n)
{
    if (cli_device_parse(a, &o->device, &o->device_ordinal))
        return BAD(o, n, a, "auto, cpu, cuda or cuda:N");
    return 0;
}

#define S CLI_SCAN
#define I CLI_INFO
#define G CLI_GLOBAL
#define C CLI_CLEAN
static const cli_option_t opts[] = {
    {"zscore", 0, "K", S | C, set_zscore,
     "outlier when |x - mean| > K*std over finite values (std with ddof=0, "
     "population, as numpy and scipy.stats.zscore); default 6, 0 disables"},
    {"output", 'o', "FILE", C, cli_set_output,
     "write the cleaned copy to FILE (required unless --dry-run)"},
    {"samples", 0, NULL, C, cli_set_samples,
     "axis 0 is the sample axis: per-feature statistics, 'drop' allowed (default for raw, "
     "HDF5 and NumPy)"},
    {"no-samples", 0, NULL, C, cli_set_no_samples,
     "tensors are weights: one statistic per tensor, no 'drop' (default for safetensors "
     "and PyTorch)"},
    {"global", 0, NULL, C, cli_set_global,
     "with --samples: one statistic per tensor instead of one per feature (without samples, "
     "exit 2: there is one already)"},
    {"nonfinite", 0, "MODE", C, cli_set_nonfinite,
     "NaN/Inf step: drop (remove the samples; default with samples), zero, mean, value=X "
     "or keep (default for weights)"},
    {"mad", 0, "K", S | C, cli_set_mad,
     "outliers by the modified z-score of Iglewicz & Hoaglin instead of --zscore (not both): "
     "|0.6745 (x - median)/MAD| > K with the exact median and MAD of the finite values; "
     "MAD = 0: |x - median|/(1.253314*MeanAD) > K; 3.5 is the usual K; CPU only"},
    {"outliers", 0, "ACTION", C, cli_set_outliers,
     "what --zscore/--mad do to an outlier: drop (the sample; default with samples), clip, "
     "nan or mean; required for weights; needs --zscore or --mad (else exit 2)"},
    {"normalize", 0, "MODE", C, cli_set_normalize,
     "minmax (to --feature-range) or zscore (mean 0, std 1), after the other steps"},
    {"feature-range", 0, "LO:HI", C, cli_set_feature_range,
     "--normalize minmax target range (default 0:1)"},
    {"max-drop-fraction", 0, "F", C, cli_set_max_drop,
     "refuse to write (exit 1) when a step would drop more than this fraction of the "
     "samples (default 0.1)"},
    {"dry-run", 0, NULL, C, cli_set_dry_run, "compute and report everything a real run would, write no output file"},
    {"save-params", 0, "FILE", C, cli_set_save_params,
     "write every statistic used (per tensor, per feature) to FILE as JSON"},
    {"apply-params", 0, "FILE", C, cli_set_apply_params,
     "use the statistics of a --save-params FILE instead of computing them (fit on "
     "train, apply to test); its outlier method, K, --normalize and --nonfinite fill "
     "must be this run's; a bad FILE is exit 2"},
    {"out-dtype", 0, "DTYPE", C, cli_set_out_dtype,
     "dtype of the cleaned tensors (default: the input's; F32 for integers with "
     "--normalize); .npy and .npz have no BF16 (exit 2)"},
    {"force", 0, NULL, C, cli_set_force, "overwrite an existing output file"},
    {"include", 0, "GLOB", C, cli_set_include,
     "clean only tensors whose name matches GLOB (comma-separated list, repeatable; an "
     "HDF5 dataset by any of its hard-link paths); others are copied"},
    {"exclude", 0, "GLOB", C, cli_set_exclude,
     "do not clean tensors matching GLOB (comma-separated list, repeatable); they are "
     "copied"},
    {"no-fsync", 0, NULL, C, cli_set_no_fsync,
     "skip fsync of the output and its directory (faster; after a power loss the renamed "
     "file may be empty or partial)"},
    {"together", 0, "LIST", C, cli_set_together,
     "tensors that share the sample axis (comma-separated names or globs; repeatable, one "
     "group each), cleaned as one dataset of their columns would be: a sample dropped from "
     "one is dropped from all, and each one's statistics leave out the samples its partners' "
     "earlier steps drop (nanaudit(1)); all need the same number of rows; a member not cleaned (left out by --include/--exclude, a BOOL mask, HDF5 or "
     ".npz strings) only loses those samples"},
    {"allow-misaligned", 0, NULL, C, cli_set_allow_misaligned,
     "allow dropping samples from a tensor when another tensor has the same number of "
     "rows (refused by default: it would misalign them), except one on the same HDF5 "
     "dimension scale (a netCDF dimension)"},
    {"max-locations", 0, "N", S | C, set_max_locations,
     "report the first N row-major indices of NaN, Inf and outliers per tensor (0 to "
     "1000000; default 5)"},
    {"threads", 0, "N", S | C, set_threads,
     "scan (clean: fit, write and verify) with N threads, 1 to 4096 (default: all cores, or "
     "OMP_NUM_THREADS)"},
    {"fail-on", 0, "LIST", S, set_fail_on,
     "finding kinds that make the exit code 1 (default nan,inf; a list replaces it, so keep "
     "nan,inf in it: nan,inf,outliers; none). "
     "Kinds: nan, inf (pos_inf, neg_inf), outliers, subnormal, zero_tensor, range, max_abs, "
     "cast_overflow, cast_underflow, negative (reported for *running_var* and *exp_avg_sq* "
     "tensors, which must be >= 0)"},
    {"policy", 0, "FILE", S, cli_set_policy,
     "YAML gate policy: defaults and per-tensor rules by glob (see nanaudit(1), POLICY); "
     "flags beat its defaults (a limit there stays a gate), its matching rules beat flags"},
    {"baseline", 0, "FILE", S, cli_set_baseline,
     "JSON report of an earlier scan: findings it already has, keyed by (file path as given, "
     "relative to the working directory when under it, tensor, kind), fail only when their "
     "count grew"},
    {"range", 0, "LO:HI", S, cli_set_range,
     "finding 'range' for finite values outside [LO, HI] (e.g. 0:255 for pixels; "
     "LO: or :HI leave one side open); it fails only with range in --fail-on (or a --policy)"},
    {"max-abs", 0, "X", S, cli_set_max_abs,
     "finding 'max_abs' for finite values with |x| > X (weights blowing up)"},
    {"cast-check", 0, "DTYPE", S, cli_set_cast_check,
     "findings 'cast_overflow' (finite values that round to Inf, or to NaN for F8_E4M3: "
     "|x| > 464) and 'cast_underflow' (nonzero values that round to 0) for a cast to "
     "F16, BF16, F8_E4M3 or F8_E5M2 under round-to-nearest-even"},
    {"max-nan-fraction", 0, "F", S, cli_set_max_fraction,
     "tolerance: nan fails only when more than F (0..1) of a tensor's elements are NaN"},
    {"max-inf-fraction", 0, "F", S, cli_set_max_fraction,
     "tolerance: pos_inf/neg_inf fail only when +Inf and -Inf together exceed F of the elements"},
    {"max-outlier-fraction", 0, "F", S, cli_set_max_fraction,
     "tolerance: outliers fail only when more than F of the elements are outliers"},
    {"format", 0, "FMT", S | I | C, set_format,
     "report on stdout as text (default) or json; scan also github (GitHub Actions "
     "::error/::warning annotations, one per finding)"},
    {"report", 0, "FILE", S | C, set_report,
     "also write the report to FILE (overwritten if it exists); scan: repeatable, the format "
     "from the extension: .json JSON, .xml JUnit XML, .md Markdown, .sarif SARIF 2.1.0"},
    {"report-format", 0, "FMT", S, cli_set_report_format,
     "format of --report files whose extension is none of those: json (default), junit, "
     "markdown or sarif"},
    {"device", 0, "DEV", S | C, set_device,
     "where to scan: auto (default: the GPU when a usable one exists and the run is large "
     "enough to repay CUDA's start-up - about 2.4 GB with 2 threads, 74 GB with 16 - for "
     "tensors of 32 MiB or more; else the CPU), cpu, cuda or cuda:N (GPU N; exit 4 when "
     "unusable)"},
    {"quiet", 'q', NULL, S | C, set_quiet,
     "print only findings, errors and the summary; clean: only the tensors it dropped samples "
     "from, replaced, clipped or set values in, warned about, failed on or left with NaN/Inf, "
     "and the written/refused/dry run line"},
    {"progress", 0, NULL, S, set_progress, "always show progress on stderr"},
    {"no-progress", 0, NULL, S, set_no_progress,
     "never show progress (default: on a terminal, for scans over ~1 s)"},
    {"color", 0, "WHEN", S, set_color,
     "colour the text report: auto (default: on a terminal, unless NO_COLOR is set), always, never"},
    {"max-header-bytes", 0, "N", S | I | C, set_max_header,
     "accept safetensors headers up to N bytes (default 100000000)"},
    {"dtype", 0, "DTYPE", S | I | C, set_dtype,
     "read every input as raw data of this safetensors dtype (F32, BF16, I16, ...)"},
    {"shape", 0, "DIMS", S | I | C, set_shape,
     "raw: shape as 15x10x22 or 15,10,22 (default 1-D from the size)"},
    {"endian", 0, "ORDER", S | I | C, set_endian, "raw: byte order little (default) or big"},
    {"offset", 0, "BYTES", S | I | C, set_offset, "raw: skip BYTES at the start of each file"},
    {"length", 0, "BYTES", S | I | C, set_length,
     "raw: BYTES of data after --offset (default: up to the end of the file)"},
    {"missing", 0, "MODE", S | C, set_missing,
     "HDF5/netCDF: auto (default) counts finite values equal to a dataset's _FillValue or "
     "missing_value attribute as 'missing', outside the statistics (clean leaves them "
     "alone and writes them back); none ignores them"},
    {"attributes", 0, NULL, S, set_attributes,
     "HDF5: also audit numeric attributes, each as OBJECT_PATH@NAME (/grp/ds@scale, "
     "/@version for the root group); string attributes are listed as skipped"},
    {"hdf5-timeout", 0, "SECONDS", S | I | C, set_hdf5_timeout,
     "HDF5: stop the libhdf5 reader process when one answer takes longer than SECONDS "
     "(0.001 to 86400; default 60, 0 = no limit); that file is then an error (exit 3)"},
    {"help", 'h', NULL, S | I | G | C, set_help, "show this help and exit"},
    {"version", 'V', NULL, S | I | G | C, set_version, "show the version and exit"},
};
#undef C
#undef S
/* `clean --help` texts of shared options whose meaning differs there. */
static const struct {
    const char *name, *help;
} clean_help[] = {
    {"zscore", "outlier step: flag |x - mean| > K*std (ddof=0), K > 0; no outlier step "
               "without --zscore or --mad"},
    {"max-locations", "report the first N dropped sample indices per tensor (0 to 1000000; "
                      "default 5)"},
    {"device", "where the write pass runs (the fit is on the CPU): auto (default: the GPU when a "
               "usable one exists and the tensors to clean are large enough to repay CUDA's "
               "start-up, as for scan; else the CPU), cpu, cuda or cuda:N (GPU N; exit 4 "
               "before anything is written when unusable); the same output bytes on either; "
               "tensors with missing values or unwritten chunks are cleaned on the CPU"},
    {"report", "also write the change report to FILE (overwritten if it exists): given once, "
               "always JSON (a .xml, .md or .sarif FILE is refused)"},
    {"hdf5-timeout", "HDF5: stop the libhdf5 reader or writer process when one answer takes "
                     "longer than SECONDS (0.001 to 86400; default 60, 0 = no limit; the "
                     "writer's copy of the input's structure gets 1 s more per 20 MiB of "
                     "input): exit 3 or 4"},
};

static const char *help_for(int cmd, size_t i)
{
    for (size_t k = 0; cmd == CLI_CLEAN && k < sizeof clean_help / sizeof clean_help[0]; k++)
        if (!strcmp(clean_help[k].name, opts[i].name))
            return clean_help[k].help;
    return opts[i].help;
}
#undef I
#undef G
#define NOPTS (sizeof opts / sizeof opts[0])

const char *cli_cmd_name(int cmd)
{
    return cmd == CLI_SCAN ? "scan" : (cmd == CLI_INFO ? "info" : (cmd == CLI_CLEAN ? "clean" : ""));
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
    na_checks_init(&o->checks);
    cli_clean_opts_init(&o->clean);
}

static const cli_option_t *lookup(const char *name, size_t len, char c);

/* Options given twice in this command line, by table index (cli_parse). */
static unsigned char g_seen[sizeof opts / sizeof opts[0]];

/* A value option given a second time replaced the first without a word:
 * `--fail-on nan --fail-on outliers` stopped failing on NaN, a second
 * --policy dropped the first (eighteenth fresh-user round). Only the
 * options that collect values (--include, --exclude, --together, scan's
 * --report) and those with a message of their own (-o, clean's
 * --report) may repeat; a flag may, but not beside its opposite
 * (--samples --no-samples). 0, or 2 after the usage message. */
static int once(const cli_option_t *opt, const cli_opts_t *o)
{
    static const char *const many[] = {"include", "exclude", "together", "report", "output"};
    if (!opt->arg) { /* a flag again changes nothing; its opposite undid it */
        g_seen[opt - opts] = 1;
        const char *opp = !strcmp(opt->name, "samples")      ? "no-samples"
                          : !strcmp(opt->name, "no-samples") ? "samples"
                                                             : NULL;
        const cli_option_t *other = opp ? lookup(opp, strlen(opp), 0) : NULL;
        return other && g_seen[other - opts]
                   ? cli_usage(o->cmd, "--%s and --%s contradict each other: give one", opp,
                               opt->name)
                   : 0;
    }
    for (size_t k = 0; k < sizeof many / sizeof many[0]; k++)
        if (!strcmp(opt->name, many[k]))
            return 0;
    if (!g_seen[opt - opts]++)
        return 0;
    return cli_usage(o->cmd, "--%s given twice: it takes one value, which a second would "
                     "replace%s", opt->name,
                     !strcmp(opt->name, "fail-on") ? " (list every kind in one --fail-on: "
                                                     "nan,inf,outliers)"
                     : !strcmp(opt->name, "policy") ? " (one policy file holds every rule)"
                                                    : "");
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

/* A word of short options, read as getopt(3) reads it (POSIX utility
 * syntax guidelines 5 and 6): flags may be grouped ("-qV"), and the
 * first option that takes a value takes the rest of the word ("-oOUT",
 * "-qoOUT") or, when nothing follows, the next word ("-qo OUT"). An
 * unknown first letter names the whole word, as before; one after known
 * flags is named alone. Advances *i past a value taken. 0 or 2. */
static int parse_short(int argc, char **argv, int *i, cli_opts_t *o)
{
    const char *a = argv[*i];
    int cmd = o->cmd ? o->cmd : CLI_GLOBAL;
    for (const char *p = a + 1; *p; p++) {
        const cli_option_t *opt = lookup(NULL, 0, *p);
        if (!opt || !(opt->cmds & cmd)) {
            if (p == a + 1 || (unsigned char)*p < '!' || (unsigned char)*p > '~')
                return cli_usage(o->cmd, "unknown option '%s'", a);
            return cli_usage(o->cmd, "unknown option '-%c' in '%s'", *p, a);
        }
        const char *val = NULL;
        if (opt->arg && p[1])
            val = p + 1;
        else if (opt->arg && *i + 1 < argc)
            val = argv[++*i];
        else if (opt->arg)
            return cli_usage(o->cmd, "--%s needs an argument %s", opt->name, opt->arg);
        int rc = once(opt, o);
        if (rc)
            return rc;
        rc = opt->set(o, val, opt->name);
        if (rc || opt->arg)
            return rc;
    }
    return 0;
}

/* One option at argv[*i]; advances *i past its value. 0 or 2. */
static int parse_one(int argc, char **argv, int *i, cli_opts_t *o)
{
    const char *a = argv[*i], *eq = NULL, *val = NULL;
    if (a[1] != '-')
        return parse_short(argc, argv, i, o);
    eq = strchr(a + 2, '=');
    const cli_option_t *opt = lookup(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2), 0);
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
    int rc = once(opt, o);
    return rc ? rc : opt->set(o, val, opt->name);
}

int cli_parse(int argc, char **argv, int first, cli_opts_t *o)
{
    int only_files = 0;
    memset(g_seen, 0, sizeof g_seen);
    o->argc = argc;
    o->argv = argv;
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
               "  info [options] FILE...            list tensors, dtypes, shapes, metadata\n"
               "  clean [options] -o OUT FILE       write a cleaned copy and a change report\n\n"
               "Options:\n");
    } else if (cmd == CLI_SCAN) {
        printf("Usage: nanaudit scan [options] FILE|DIR|INDEX...\n"
               "Scan every tensor for NaN, Inf and z-score outliers. Statistics are over\n"
               "finite values, in double; std is the population std (ddof=0).\n\n"
               "Options:\n");
    } else if (cmd == CLI_CLEAN) {
        fputs(cli_clean_help_head, stdout);
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
        print_wrapped(help_for(cmd, i), 29, 79);
    }
    if (cmd == CLI_CLEAN) {
        printf("\nExit status: 0 written; 1 written but NaN/Inf remain (--nonfinite keep,\n"
               "--outliers nan, a feature without finite values, a --together follower,\n"
               "even one --include/--exclude left out), or refused by --max-drop-fraction;\n"
               "2 usage, or a request the data cannot honour, found before anything is\n"
               "written (samples dropped from a tensor that shares their axis, a pattern\n"
               "that nearly names a tensor, --apply-params that do not fit); 3 unreadable\n"
               "input; 4 write or verification failure. See nanaudit(1).\n");
        return;
    }
    if (cmd == CLI_INFO) { /* info judges nothing: no policy, no exit 1 */
        printf("\nExit status: 0 listed, 2 usage error, 3 an input could not be read,\n"
               "4 internal error (highest wins). See nanaudit(1).\n");
        return;
    }
    printf("\nExit status: 0 clean, 1 findings fail the policy, 2 usage error,\n"
           "3 an input could not be read or audited, 4 internal error (highest wins).\n"
           "See nanaudit(1).\n");
}
