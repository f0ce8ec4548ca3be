/*
 * clean_opts.c - value parsing for the options of `nanaudit clean`
 * (their table entries and help texts are in options.c). Values are
 * checked here, before the input is opened: a bad value is exit 2.
 */
#include "cli.h"

#include <stdlib.h> /* realloc, free */
#include <string.h> /* strcmp, strncmp, strchr */

#define BAD(o, name, arg, what) \
    cli_usage((o)->cmd, "--%s: '%s' is not %s", name, arg, what)

void cli_clean_opts_init(cli_clean_opts_t *c)
{
    memset(c, 0, sizeof *c);
    na_clean_opts_init(&c->eng);
    c->samples = CLI_AUTO;
    c->max_drop = 0.1;
}

void cli_clean_opts_free(cli_clean_opts_t *c)
{
    free(c->include);
    free(c->exclude);
    free(c->together);
    c->include = c->exclude = NULL;
    c->together = NULL;
}

/* Whole-string finite double. */
static int num(const char *a, double *v) { return na_parse_double(a, v); }

int cli_set_output(cli_opts_t *o, const char *a, const char *n)
{
    if (!*a)
        return BAD(o, n, a, "a file name");
    /* one output: a second -o silently replacing the first wrote where
     * the user did not look (fourth fresh-user round) */
    if (o->clean.output)
        return cli_usage(o->cmd, "-o given twice ('%s' and '%s'): clean writes one output",
                         o->clean.output, a);
    o->clean.output = a;
    return 0;
}

int cli_set_samples(cli_opts_t *o, const char *a, const char *n) { o->clean.samples = CLI_ON; return 0; }
int cli_set_no_samples(cli_opts_t *o, const char *a, const char *n) { o->clean.samples = CLI_OFF; return 0; }
int cli_set_global(cli_opts_t *o, const char *a, const char *n) { o->clean.eng.global = 1; return 0; }
int cli_set_dry_run(cli_opts_t *o, const char *a, const char *n) { o->clean.dry_run = 1; return 0; }
int cli_set_force(cli_opts_t *o, const char *a, const char *n) { o->clean.force = 1; return 0; }
int cli_set_no_fsync(cli_opts_t *o, const char *a, const char *n) { o->clean.no_fsync = 1; return 0; }
int cli_set_allow_misaligned(cli_opts_t *o, const char *a, const char *n) { o->clean.allow_misaligned = 1; return 0; }

int cli_set_nonfinite(cli_opts_t *o, const char *a, const char *n)
{
    na_clean_opts_t *e = &o->clean.eng;
    if (!strcmp(a, "drop"))
        e->nonfinite = NA_NF_DROP;
    else if (!strcmp(a, "zero"))
        e->nonfinite = NA_NF_ZERO;
    else if (!strcmp(a, "mean"))
        e->nonfinite = NA_NF_MEAN;
    else if (!strcmp(a, "keep"))
        e->nonfinite = NA_NF_KEEP;
    else if (!strncmp(a, "value=", 6) && num(a + 6, &e->nf_value) == 0)
        e->nonfinite = NA_NF_VALUE;
    else
        return BAD(o, n, a, "drop, zero, mean, value=X (X finite) or keep");
    o->clean.nonfinite_given = 1;
    return 0;
}

int cli_set_mad(cli_opts_t *o, const char *a, const char *n)
{
    double k;
    if (num(a, &k) || k <= 0)
        return BAD(o, n, a, "a number > 0");
    o->clean.eng.method = NA_OM_MAD;
    o->clean.eng.k = k;
    o->clean.method_given++;
    return 0;
}

int cli_set_outliers(cli_opts_t *o, const char *a, const char *n)
{
    na_clean_opts_t *e = &o->clean.eng;
    if (!strcmp(a, "drop"))
        e->action = NA_OA_DROP;
    else if (!strcmp(a, "clip"))
        e->action = NA_OA_CLIP;
    else if (!strcmp(a, "nan"))
        e->action = NA_OA_NAN;
    else if (!strcmp(a, "mean"))
        e->action = NA_OA_MEAN;
    else
        return BAD(o, n, a, "drop, clip, nan or mean");
    o->clean.action_given = 1;
    return 0;
}

int cli_set_normalize(cli_opts_t *o, const char *a, const char *n)
{
    if (!strcmp(a, "minmax"))
        o->clean.eng.normalize = NA_NORM_MINMAX;
    else if (!strcmp(a, "zscore"))
        o->clean.eng.normalize = NA_NORM_ZSCORE;
    else
        return BAD(o, n, a, "minmax or zscore");
    return 0;
}

/* LO:HI with LO < HI; a leading '-' is a sign (-1:1). */
int cli_set_feature_range(cli_opts_t *o, const char *a, const char *n)
{
    const char *colon = strchr(a + (a[0] == '-'), ':');
    char lo_s[64];
    double lo, hi;
    if (!colon || (size_t)(colon - a) >= sizeof lo_s)
        return BAD(o, n, a, "LO:HI with LO < HI (e.g. 0:1 or -1:1)");
    memcpy(lo_s, a, (size_t)(colon - a));
    lo_s[colon - a] = '\0';
    if (num(lo_s, &lo) || num(colon + 1, &hi) || !(lo < hi))
        return BAD(o, n, a, "LO:HI with LO < HI (e.g. 0:1 or -1:1)");
    o->clean.eng.lo = lo;
    o->clean.eng.hi = hi;
    o->clean.range_given = 1;
    return 0;
}

int cli_set_max_drop(cli_opts_t *o, const char *a, const char *n)
{
    double f;
    if (num(a, &f) || f < 0 || f > 1)
        return BAD(o, n, a, "a fraction from 0 to 1");
    o->clean.max_drop = f;
    return 0;
}

int cli_set_save_params(cli_opts_t *o, const char *a, const char *n)
{
    if (!*a)
        return BAD(o, n, a, "a file name");
    o->clean.save_params = a;
    return 0;
}

int cli_set_apply_params(cli_opts_t *o, const char *a, const char *n)
{
    if (!*a)
        return BAD(o, n, a, "a file name");
    o->clean.apply_params = a;
    return 0;
}

int cli_set_out_dtype(cli_opts_t *o, const char *a, const char *n)
{
    na_dtype_t dt = na_dtype_from_name(a, strlen(a));
    if (!na_clean_dtype_ok(dt))
        return BAD(o, n, a, "an output dtype (F64 F32 F16 BF16 I8..I64 U8..U64)");
    o->clean.eng.out_dtype = dt;
    return 0;
}

static int add_glob(cli_opts_t *o, const char ***v, size_t *cnt, const char *a, const char *n)
{
    if (!*a)
        return BAD(o, n, a, "a glob");
    const char **p = realloc(*v, (*cnt + 1) * sizeof *p);
    if (!p) {
        cli_error(NULL, "out of memory");
        return 4;
    }
    p[(*cnt)++] = a;
    *v = p;
    return 0;
}

/* A comma-separated list of names or globs (fnmatch) into v: empty
 * elements are refused. --include and --exclude take lists as --together
 * does (round 38a: '--include /a,/b' matched nothing and cleaned nothing,
 * exit 0). */
static int add_list(cli_opts_t *o, const char ***v, size_t *cnt, const char *a, const char *n)
{
    size_t L = strlen(a);
    if (!L || a[0] == ',' || a[L - 1] == ',' || strstr(a, ",,"))
        return BAD(o, n, a, "a comma-separated list of tensor names or globs");
    return add_glob(o, v, cnt, a, n);
}

int cli_set_include(cli_opts_t *o, const char *a, const char *n)
{
    return add_list(o, &o->clean.include, &o->clean.n_include, a, n);
}

int cli_set_exclude(cli_opts_t *o, const char *a, const char *n)
{
    return add_list(o, &o->clean.exclude, &o->clean.n_exclude, a, n);
}

/* --together NAME,NAME..: one group per occurrence (add_list); elements
 * that match nothing are refused once the input is open (cli/clean.c). */
int cli_set_together(cli_opts_t *o, const char *a, const char *n)
{
    return add_list(o, &o->clean.together, &o->clean.n_together, a, n);
}

const char cli_clean_help_head[] =
    "Usage: nanaudit clean [options] -o OUT FILE\n"
    "Write a cleaned copy of FILE (safetensors, raw, HDF5, .npy, .npz or a\n"
    "PyTorch checkpoint; same format) and a change report. The input is never\n"
    "modified. An .npz keeps its members' order, names and compression;\n"
    "untouched members are copied byte for byte. A PyTorch checkpoint keeps its\n"
    "pickle: cleaned bytes are replaced in place (a dtype or shape change, a\n"
    "non-contiguous view or bytes shared with a tensor cleaned otherwise: exit 3).\n\n"
    "Steps, in this order: non-finite -> outliers -> normalization. Each step's\n"
    "statistics are over the finite values of the previous step's output (a value\n"
    "replaced by zero/mean/value=X or clipped counts; one made NaN does not;\n"
    "dropped samples are gone). std is the population std (ddof=0).\n"
    "Selection: every numeric tensor, or those matching --include/--exclude\n"
    "globs; everything else (other tensors, __metadata__, dtypes, order) is copied\n"
    "unchanged, and __metadata__ gains a 'nanaudit' entry (version, command line,\n"
    "input SHA-256). HDF5: groups, attributes, links, name order and untouched\n"
    "datasets (byte-identical) are copied; a cleaned dataset keeps its creation\n"
    "properties (chunks, shrunk when it gets shorter; filters; fill value),\n"
    "attributes and byte order, with its new row count; compound fields are\n"
    "written back when no row goes or every field is cleaned --together; the\n"
    "root gains a 'nanaudit' attribute (same JSON).\n"
    "Samples: with --samples axis 0 is the sample axis (default on for raw,\n"
    "HDF5 and NumPy, off for safetensors and PyTorch, whose tensors are\n"
    "weights, and for MATLAB v7.3 files, whose axis 0 is MATLAB's last\n"
    "dimension); statistics are then per feature (every index after axis 0)\n"
    "unless --global; rank-1 data has one statistic.\n"
    "'drop' needs samples. A feature with no finite value at all is filled by\n"
    "zero and value=X; with drop, mean or keep it passes through every step\n"
    "unchanged with a warning (exit 1: NaN remains).\n"
    "Outliers (only with --zscore K or --mad K): z flags |x - mean| > K*std;\n"
    "mad flags |0.6745 (x - median) / MAD| > K (exact median; when MAD = 0,\n"
    "|x - median| / (1.253314 MeanAD) > K; when that is 0 too, nothing). clip\n"
    "moves a value to mean +- K*std, median +- K*MAD/0.6745 (or +-\n"
    "K*1.253314*MeanAD); mean replaces it by the mean after the non-finite step.\n"
    "Normalization: minmax maps to LO:HI (--feature-range, default 0:1) as\n"
    "LO + (x - min)/(max - min)*(HI - LO); zscore as (x - mean)/std. A constant\n"
    "feature (max == min) maps to LO (minmax) or 0 (zscore), with a warning.\n"
    "Output dtype: the input's, rounded to nearest even; overflows are counted.\n"
    "An integer dtype has no NaN/Inf: one that would remain is refused (exit 2).\n"
    "A mean or std that overflows a double (values near 1.8e308) is refused\n"
    "(exit 3); minmax takes halves when max - min overflows.\n"
    "Integer input with --normalize is written as F32 unless --out-dtype says.\n"
    "Safety: -o must not be the input (symlinks and hard links included); an\n"
    "existing OUT needs --force; the data goes to a hidden temporary file\n"
    "'.nanaudit-tmp-XXXXXX-NAME' beside OUT, which is re-read and checked\n"
    "against the predicted statistics, fsync'ed and renamed. On an error\n"
    "(an unreadable or truncated input: exit 3, the --report still written)\n"
    "or SIGINT/SIGTERM (the run ends by the signal, no report) the temporary\n"
    "file is removed and OUT is not created.\n\n"
    "Options:\n";
