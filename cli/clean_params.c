/*
 * clean_params.c - --save-params / --apply-params of `nanaudit clean`:
 * every statistic a step used, per tensor and per feature, as JSON
 * (jansson; strict parsing with duplicate keys rejected, DESIGN.md).
 *
 * Schema (schema_version 2; 1 is the same without "options"):
 *   {"schema_version": 2, "kind": "nanaudit-clean-params",
 *    "options": {"samples": bool, "global": bool,
 *       "nonfinite": "keep"|"drop"|"zero"|"mean"|"value",
 *       "nonfinite_value": X|null, "outlier_method": "zscore"|"mad"|null,
 *       "k": K|null, "outliers": "drop"|"clip"|"nan"|"mean"|null,
 *       "normalize": "minmax"|"zscore"|null, "feature_range": [LO, HI]|null},
 *    "tensors": {NAME: {"features": N, "feature_shape": [D1, ...],
 *       "passthrough": [bool x N],
 *       "nf_fill": [...], "center": [...], "scale": [...], "meanad": [...],
 *       "lo_bound": [...], "hi_bound": [...], "fill2": [...],
 *       "n_min": [...], "n_max": [...], "n_mean": [...], "n_std": [...],
 *       "n_mean_lo": [...]}}}
 * "n_mean_lo" (the mean's rounding error, na_clean_feat_t) is optional
 * when read (0).
 * "feature_shape" (the shape after axis 0, product N) is written for
 * per-feature statistics (N > 1) and optional when read (older files).
 * Each array has N numbers, null where a statistic is not defined (a
 * feature without finite values, or a statistic of a step the fit did
 * not run). The steps themselves come from the command line; "options"
 * records the fit's, so that a run which would read the numbers with
 * another meaning (mean/std as median/MAD, a min/max as mean/std, the
 * mean as the fill of --nonfinite zero) is refused (cli_params_check).
 */
#include "cli.h"
#include "clean_params.h"

#include <errno.h>    /* errno, ENOMEM */
#include <jansson.h>
#include <math.h>     /* isfinite, fabs, fmax, NAN */
#include <stdint.h>   /* UINT64_MAX */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* free */
#include <string.h>   /* strcmp, strlen */
#include <sys/stat.h> /* stat, S_ISDIR */

/* The fields, in the order of fields[] and field() */
enum {
    NF_FILL, CENTER, SCALE, MEANAD, LO, HI, FILL2,
    N_MIN, N_MAX, N_MEAN, N_STD, N_MEAN_LO, NFIELDS
};
static const char *const fields[NFIELDS] = {"nf_fill", "center", "scale", "meanad", "lo_bound",
                                            "hi_bound", "fill2", "n_min", "n_max", "n_mean",
                                            "n_std", "n_mean_lo"};
/* n_mean_lo (na_clean_feat_t) is optional when read: files of an older
 * nanaudit lack it, and its null or absence is 0 */

static double *field(na_clean_feat_t *f, int i)
{
    double *p[NFIELDS] = {&f->nf_fill, &f->center, &f->scale, &f->meanad, &f->lo_bound,
                          &f->hi_bound, &f->fill2, &f->n_min, &f->n_max, &f->n_mean, &f->n_std,
                          &f->n_mean_lo};
    return p[i];
}

/* Names of the engine's enums in "options", indexed by their values
 * (lib/clean.h); NULL (JSON null) for "no such step". */
#define N_NF 5
static const char *const nf_names[N_NF] = {"keep", "drop", "zero", "mean", "value"};
static const char *const om_names[3] = {NULL, "zscore", "mad"};
static const char *const oa_names[5] = {NULL, "drop", "clip", "nan", "mean"};
static const char *const norm_names[3] = {NULL, "minmax", "zscore"};

static json_t *jname(const char *s) { return s ? json_string(s) : json_null(); }
static json_t *jnum_if(int on, double v) { return on ? json_real(v) : json_null(); }

/* The options that give the statistics their meaning, and those applied
 * from the command line (recorded for the reader, not compared). */
static json_t *options_json(const na_clean_opts_t *o)
{
    json_t *op = json_object();
    if (!op)
        return NULL;
    int m = o->method != NA_OM_NONE, mm = o->normalize == NA_NORM_MINMAX;
    json_object_set_new(op, "samples", json_boolean(o->samples));
    json_object_set_new(op, "global", json_boolean(o->global));
    json_object_set_new(op, "nonfinite", json_string(nf_names[o->nonfinite]));
    json_object_set_new(op, "nonfinite_value", jnum_if(o->nonfinite == NA_NF_VALUE, o->nf_value));
    json_object_set_new(op, "outlier_method", jname(om_names[o->method]));
    json_object_set_new(op, "k", jnum_if(m, o->k));
    json_object_set_new(op, "outliers", jname(m ? oa_names[o->action] : NULL));
    json_object_set_new(op, "normalize", jname(norm_names[o->normalize]));
    json_object_set_new(op, "feature_range",
                        mm ? json_pack("[ff]", o->lo, o->hi) : json_null());
    return op;
}

json_t *cli_params_new(const na_clean_opts_t *o)
{
    json_t *root = json_object();
    if (root) {
        json_object_set_new(root, "schema_version", json_integer(2));
        json_object_set_new(root, "kind", json_string("nanaudit-clean-params"));
        json_object_set_new(root, "options", options_json(o));
        json_object_set_new(root, "tensors", json_object());
    }
    return root;
}

/* The layout of ct's features: its shape after axis 0 (the sample axis),
 * as a JSON array of integers. */
static json_t *feature_shape(const na_clean_tensor_t *ct)
{
    json_t *fs = json_array();
    for (int d = 1; fs && d < ct->ndim; d++)
        json_array_append_new(fs, json_integer((json_int_t)ct->out_shape[d]));
    return fs;
}

int cli_params_add(json_t *root, const char *name, const na_clean_tensor_t *ct,
                   const na_clean_opts_t *o)
{
    json_t *e = json_object(), *pt = json_array();
    if (!e || !pt)
        return -1;
    json_object_set_new(e, "features", json_integer((json_int_t)ct->nfeat));
    /* Per-feature statistics only (a --global or weight fit has one,
     * which fits any layout): so that --apply-params can refuse data with
     * as many features in another layout, (M, 2, 2) for a fit of (N, 4),
     * where each statistic would land on another feature. */
    if (ct->nfeat > 1)
        json_object_set_new(e, "feature_shape", feature_shape(ct));
    for (uint64_t f = 0; f < ct->nfeat; f++)
        json_array_append_new(pt, json_boolean(ct->feat[f].passthrough));
    json_object_set_new(e, "passthrough", pt);
    for (int i = 0; i < NFIELDS; i++) {
        json_t *a = json_array();
        /* null for a step the run does not have (docs/json-schema.md;
         * round 41b: fill2 of --outliers clip, n_mean_lo without step 3) */
        int unused = (i == FILL2 && !(o->method != NA_OM_NONE && o->action == NA_OA_MEAN)) ||
                     (i == N_MEAN_LO && o->normalize == NA_NORM_NONE);
        for (uint64_t f = 0; a && f < ct->nfeat; f++) {
            double v = *field(&ct->feat[f], i);
            json_array_append_new(a, isfinite(v) && !unused ? json_real(v) : json_null());
        }
        json_object_set_new(e, fields[i], a);
    }
    return json_object_set_new(json_object_get(root, "tensors"), name, e);
}

static int dump_params(void *ctx, FILE *fp)
{
    /* stdio, not json_dumpfd: jansson takes a short write (a full disk, a
     * file-size limit) as a failure and leaves errno as it was; fwrite
     * retries it, and the retry's write(2) says why */
    return json_dumpf(ctx, fp, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
}

int cli_params_save(json_t *root, const char *path)
{
    /* written beside it and renamed over it (a symbolic link's target),
     * so that a full disk or an interruption leaves the old file, never a
     * truncated one that --apply-params would refuse later */
    int e = cli_write_file(path, dump_params, root, 0);
    if (e)
        errno = e > 0 ? e : ENOMEM;
    return e ? -1 : 0;
}

/* Feature j's value of field i, NaN for null (a statistic not defined). */
static double value_at(json_t *e, int i, size_t j)
{
    json_t *v = json_array_get(json_object_get(e, fields[i]), j);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Values no --save-params writes and no step can use (a hand-edited or
 * corrupt file): a negative scale, MeanAD or n_std (a std or MAD is >= 0,
 * and each divides x - center), n_std 0 for a feature that is not
 * constant (n_min < n_max: step 3 would divide by 0, clean.c maps only a
 * constant feature to 0), lo_bound > hi_bound or n_min > n_max (clip and
 * minmax need an interval). jansson itself refuses 1e999 ("real number
 * overflow") and NaN/Infinity are not JSON, so every number is finite.
 * Zero scale and MeanAD stay valid: a constant feature saves them, and
 * the outlier step then flags nothing (--help). 0 or -1 with why. */
static int check_values(const char *name, json_t *e, size_t nf, char *why, size_t cap)
{
    for (size_t j = 0; j < nf; j++) {
        for (int i = 0; i < NFIELDS; i++) {
            double v = value_at(e, i, j);
            const char *rule = NULL;
            if ((i == SCALE || i == MEANAD || i == N_STD) && v < 0)
                rule = "is negative (a standard deviation or MAD is >= 0)";
            else if (i == N_STD && v == 0 && value_at(e, N_MIN, j) < value_at(e, N_MAX, j))
                rule = "is 0 while n_min < n_max (only a constant feature has std 0)";
            else if (i == HI && value_at(e, LO, j) > v)
                rule = "is below lo_bound";
            else if (i == N_MAX && value_at(e, N_MIN, j) > v)
                rule = "is below n_min";
            else if (i == N_MEAN_LO && isfinite(v) && isfinite(value_at(e, N_MEAN, j)) &&
                     value_at(e, N_MEAN, j) + v != value_at(e, N_MEAN, j))
                rule = "is not a rounding error of n_mean (n_mean + n_mean_lo must round to "
                       "n_mean)";
            if (rule) {
                snprintf(why, cap, "tensor '%s': \"%s\"[%zu] = %.17g %s", name, fields[i], j, v,
                         rule);
                return -1;
            }
        }
    }
    return 0;
}

/* Index of string v in names[0..n), -1 when absent; NULL names (no such
 * step) match JSON null. */
static int name_index(json_t *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (names[i] ? json_is_string(v) && !strcmp(json_string_value(v), names[i])
                     : json_is_null(v))
            return i;
    return -1;
}

/* The "options" of schema_version 2, as options_json writes them: the
 * keys cli_params_check compares must be there with their types (the
 * others are only recorded). 0 or -1 with why. */
static int check_options(json_t *op, char *why, size_t cap)
{
    const char *bad = NULL;
    if (!json_is_object(op)) {
        snprintf(why, cap, "\"options\" must be an object (schema_version 2)");
        return -1;
    }
    int nf = name_index(json_object_get(op, "nonfinite"), nf_names, N_NF);
    int om = name_index(json_object_get(op, "outlier_method"), om_names, 3);
    int oa = name_index(json_object_get(op, "outliers"), oa_names, 5);
    int nm = name_index(json_object_get(op, "normalize"), norm_names, 3);
    json_t *x = json_object_get(op, "nonfinite_value"), *k = json_object_get(op, "k");
    json_t *fr = json_object_get(op, "feature_range");
    static const char *const keys[] = {"samples", "global", "nonfinite", "nonfinite_value",
                                       "outlier_method", "k", "outliers", "normalize",
                                       "feature_range"};
    const char *key;
    json_t *kv;
    json_object_foreach(op, key, kv) { /* what options_json writes, nothing else */
        size_t i = 0;
        while (i < sizeof keys / sizeof keys[0] && strcmp(key, keys[i]))
            i++;
        if (i == sizeof keys / sizeof keys[0]) {
            snprintf(why, cap, "\"options\": unknown key \"%s\"", key);
            return -1;
        }
    }
    if (!json_is_boolean(json_object_get(op, "samples")) ||
        !json_is_boolean(json_object_get(op, "global")))
        bad = "\"samples\" and \"global\" must be true or false";
    else if (nf < 0)
        bad = "\"nonfinite\" must be \"keep\", \"drop\", \"zero\", \"mean\" or \"value\"";
    else if (nf == NA_NF_VALUE ? !json_is_number(x) : !json_is_null(x))
        bad = "\"nonfinite_value\" must be a number with \"nonfinite\": \"value\", else null";
    else if (om < 0)
        bad = "\"outlier_method\" must be \"zscore\", \"mad\" or null";
    else if (om ? !json_is_number(k) || !(json_number_value(k) > 0) : !json_is_null(k))
        bad = "\"k\" must be a number > 0 with an outlier method, else null";
    else if (oa < 0 || (oa == 0) != (om == 0))
        bad = "\"outliers\" must be \"drop\", \"clip\", \"nan\" or \"mean\" with an outlier "
              "method, else null";
    else if (nm < 0)
        bad = "\"normalize\" must be \"minmax\", \"zscore\" or null";
    else if (nm == NA_NORM_MINMAX
                 ? !json_is_array(fr) || json_array_size(fr) != 2 ||
                       !json_is_number(json_array_get(fr, 0)) ||
                       !json_is_number(json_array_get(fr, 1)) ||
                       !(json_number_value(json_array_get(fr, 0)) <
                         json_number_value(json_array_get(fr, 1)))
                 : !json_is_null(fr))
        bad = "\"feature_range\" must be [LO, HI] with LO < HI with \"normalize\": \"minmax\", "
              "else null";
    if (bad)
        snprintf(why, cap, "\"options\": %s", bad);
    return bad ? -1 : 0;
}

/* Whether fs, an optional "feature_shape" (NULL: absent, a file written
 * before it existed), is an array of integers >= 0 whose product is nf. */
static int shape_holds(json_t *fs, size_t nf)
{
    if (!fs)
        return 1;
    if (!json_is_array(fs))
        return 0;
    uint64_t p = 1;
    size_t i;
    json_t *d;
    json_array_foreach(fs, i, d) {
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return 0;
        uint64_t v = (uint64_t)json_integer_value(d);
        if (v && p > UINT64_MAX / v)
            return 0;
        p *= v;
    }
    return p == nf;
}

json_t *cli_params_load(const char *path, char *why, size_t cap)
{
    json_error_t je;
    struct stat sb;
    /* jansson opens a directory and reports its failed read as JSON
     * ("'[' or '{' expected near end of file") */
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(why, cap, "is a directory");
        return NULL;
    }
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line > 0) /* -1 when the file could not be opened or read */
            snprintf(why, cap, "%s (line %d)", je.text, je.line);
        else
            snprintf(why, cap, "%s", je.text);
        return NULL;
    }
    json_t *ts = json_object_get(root, "tensors");
    json_t *kind = json_object_get(root, "kind");
    if (!json_is_object(root) || !json_is_object(ts) || !json_is_string(kind) ||
        strcmp(json_string_value(kind), "nanaudit-clean-params") ||
        !json_is_integer(json_object_get(root, "schema_version")) ||
        json_integer_value(json_object_get(root, "schema_version")) < 1 ||
        json_integer_value(json_object_get(root, "schema_version")) > 2) {
        snprintf(why, cap, "not a nanaudit clean parameter file (schema_version 1 or 2)");
        json_decref(root);
        return NULL;
    }
    if (json_integer_value(json_object_get(root, "schema_version")) == 2 &&
        check_options(json_object_get(root, "options"), why, cap)) {
        json_decref(root);
        return NULL;
    }
    const char *name;
    json_t *e;
    json_object_foreach(ts, name, e) {
        json_t *n = json_object_get(e, "features");
        /* 0: a tensor whose samples are empty, (5, 0) */
        if (!json_is_integer(n) || json_integer_value(n) < 0) {
            snprintf(why, cap, "tensor '%s': \"features\" must be an integer >= 0", name);
            json_decref(root);
            return NULL;
        }
        size_t nf = (size_t)json_integer_value(n);
        if (!shape_holds(json_object_get(e, "feature_shape"), nf)) {
            snprintf(why, cap, "tensor '%s': \"feature_shape\" must be integers >= 0 whose "
                     "product is \"features\" (%zu)", name, nf);
            json_decref(root);
            return NULL;
        }
        json_t *pt = json_object_get(e, "passthrough");
        int bad = !json_is_array(pt) || json_array_size(pt) != nf;
        for (size_t j = 0; !bad && j < nf; j++) /* a 1 read as false was a silent change */
            bad = !json_is_boolean(json_array_get(pt, j));
        if (bad) {
            snprintf(why, cap, "tensor '%s': \"passthrough\" must be %zu booleans", name, nf);
            json_decref(root);
            return NULL;
        }
        const char *key;
        json_t *kv;
        json_object_foreach(e, key, kv) { /* what cli_params_add writes, nothing else */
            int known = !strcmp(key, "features") || !strcmp(key, "feature_shape") ||
                        !strcmp(key, "passthrough");
            for (int i = 0; !known && i < NFIELDS; i++)
                known = !strcmp(key, fields[i]);
            if (!known) {
                snprintf(why, cap, "tensor '%s': unknown key \"%s\"", name, key);
                json_decref(root);
                return NULL;
            }
        }
        for (int i = 0; !bad && i < NFIELDS; i++) {
            json_t *a = json_object_get(e, fields[i]);
            if (i == N_MEAN_LO && !a)
                continue; /* optional */
            bad = !json_is_array(a) || json_array_size(a) != nf;
            for (size_t j = 0; !bad && j < nf; j++) {
                json_t *v = json_array_get(a, j);
                bad = !json_is_number(v) && !json_is_null(v);
            }
            if (bad)
                snprintf(why, cap, "tensor '%s': \"%s\" must be %zu numbers or nulls", name,
                         fields[i], nf);
        }
        if (bad || check_values(name, e, nf, why, cap)) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}

/* A number as the user would type it (na_fmt_num; JSON keeps 17 digits,
 * so K compares exactly). */
static void put_num(char *buf, size_t cap, double v) { na_fmt_num(buf, cap, v); }

/* The options of one run, as command-line text, for the messages. */
static void desc_method(char *buf, size_t cap, int om, double k)
{
    char n[32];
    put_num(n, sizeof n, k);
    if (om == NA_OM_NONE)
        snprintf(buf, cap, "no --zscore or --mad");
    else
        snprintf(buf, cap, "--%s %s", om_names[om], n);
}

static void desc_normalize(char *buf, size_t cap, int nm)
{
    snprintf(buf, cap, "%s%s", nm ? "--normalize " : "no --normalize", nm ? norm_names[nm] : "");
}

static void desc_nonfinite(char *buf, size_t cap, int nf, double x)
{
    char n[32] = "";
    if (nf == NA_NF_VALUE) {
        n[0] = '=';
        put_num(n + 1, sizeof n - 1, x);
    }
    snprintf(buf, cap, "--nonfinite %s%s", nf_names[nf], n);
}

static int is_fill(int nf) { return nf == NA_NF_ZERO || nf == NA_NF_MEAN || nf == NA_NF_VALUE; }

/* The fit's options (schema_version 2, checked by check_options) against
 * the run's o: the outlier method and K (the clip bounds are center +-
 * K*scale of the fit, and center/scale are mean/std or median/MAD by
 * method), the normalization (which of n_min..n_std step 3 reads) and a
 * non-finite fill (nf_fill is the fit's 0, mean or X) must be equal. The
 * --outliers action and --feature-range are applied from the run's
 * command line and may differ; so may drop/keep of non-finite values.
 * 0, or -1 with the message in why. */
static int compare_options(json_t *op, const na_clean_opts_t *o, char *why, size_t cap)
{
    int nf = name_index(json_object_get(op, "nonfinite"), nf_names, N_NF);
    int om = name_index(json_object_get(op, "outlier_method"), om_names, 3);
    int nm = name_index(json_object_get(op, "normalize"), norm_names, 3);
    double k = json_number_value(json_object_get(op, "k"));
    double x = json_number_value(json_object_get(op, "nonfinite_value"));
    char fit[64], run[64];
    int samples = json_is_true(json_object_get(op, "samples"));
    int global = json_is_true(json_object_get(op, "global"));
    if (samples != (o->samples != 0) || global != (o->global != 0)) {
        /* one statistic per tensor or per feature, over which axis: the
         * numbers mean something else (a 1-D fit's one statistic would
         * scale every column of a --global run) */
        snprintf(fit, sizeof fit, "%s%s", samples ? "--samples" : "--no-samples",
                 global ? " --global" : "");
        snprintf(run, sizeof run, "%s%s", o->samples ? "--samples" : "--no-samples",
                 o->global ? " --global" : "");
    } else if (om != (int)o->method || (om && k != o->k)) {
        desc_method(fit, sizeof fit, om, k);
        desc_method(run, sizeof run, o->method, o->k);
    } else if (nm != (int)o->normalize) {
        desc_normalize(fit, sizeof fit, nm);
        desc_normalize(run, sizeof run, o->normalize);
    } else if ((is_fill(nf) || is_fill(o->nonfinite)) &&
               (nf != (int)o->nonfinite || (nf == NA_NF_VALUE && x != o->nf_value))) {
        desc_nonfinite(fit, sizeof fit, nf, x);
        desc_nonfinite(run, sizeof run, o->nonfinite, o->nf_value);
    } else {
        return 0;
    }
    snprintf(why, cap, "--apply-params: the file was fitted with %s, this run has %s (the "
             "sample axis and --global, the outlier method and K, --normalize and a "
             "--nonfinite fill must be those of the fit)",
             fit, run);
    return -1;
}

/* Whether the run o reads field i (clean_params.h fields[]) of a feature
 * that is not passthrough, and the option that reads it (for the message). */
static int field_used(int i, const na_clean_opts_t *o, char *opt, size_t cap)
{
    if (i == NF_FILL && is_fill(o->nonfinite)) {
        desc_nonfinite(opt, cap, o->nonfinite, o->nf_value);
        return 1;
    }
    if (i >= CENTER && i <= FILL2 && o->method != NA_OM_NONE &&
        (i != MEANAD || o->method == NA_OM_MAD) && (i != FILL2 || o->action == NA_OA_MEAN)) {
        desc_method(opt, cap, o->method, o->k);
        return 1;
    }
    /* minmax reads n_min and n_max, zscore n_mean and n_std (na_ce_step3):
     * a minmax fit of values whose variance overflows saves n_std null
     * (round 36b) */
    if ((o->normalize == NA_NORM_MINMAX && (i == N_MIN || i == N_MAX)) ||
        (o->normalize == NA_NORM_ZSCORE && (i == N_MEAN || i == N_STD))) {
        desc_normalize(opt, cap, o->normalize);
        return 1;
    }
    return 0;
}

/* What a fit computes from other numbers of the file must be what they
 * give (a hand-edited or corrupt file): step 2's bounds are
 * na_clean_bounds of center, scale and MeanAD, bit for bit (--outliers
 * clip moves values to them: a lo_bound lowered by 100 wrote values 100
 * below the data, exit 0, eighteenth fresh-user round); a --nonfinite
 * zero or value=X fill is 0 or X; the mean that --normalize zscore
 * subtracts lies within [n_min, n_max] (1.7e308 made every value -Inf).
 * A scale of 0 with bounds apart, or one whose bounds overflow, fails
 * the first rule. 0 or -1 with why. */
static int derived_ok(const char *name, size_t j, const na_clean_opts_t *o,
                      const na_clean_feat_t *f, char *why, size_t cap)
{
    int i = -1;
    double want = 0;
    char how[96] = "";
    na_clean_feat_t b = *f;
    if (o->method != NA_OM_NONE && isfinite(f->center)) {
        na_clean_bounds(o, &b);
        if (!(b.lo_bound == f->lo_bound && b.hi_bound == f->hi_bound)) {
            i = b.lo_bound == f->lo_bound ? HI : LO;
            want = i == LO ? b.lo_bound : b.hi_bound;
            snprintf(how, sizeof how, "center, scale%s and k %.17g give",
                     o->method == NA_OM_MAD ? ", meanad" : "", o->k);
        }
    }
    if (i < 0 && (o->nonfinite == NA_NF_ZERO || o->nonfinite == NA_NF_VALUE) &&
        f->nf_fill != (o->nonfinite == NA_NF_ZERO ? 0.0 : o->nf_value)) {
        i = NF_FILL;
        want = o->nonfinite == NA_NF_ZERO ? 0.0 : o->nf_value;
        desc_nonfinite(how, sizeof how, o->nonfinite, o->nf_value);
        snprintf(how + strlen(how), sizeof how - strlen(how), " fills with");
    }
    /* a computed mean may pass a bound by rounding (3 x 0.1 / 3) */
    double slack = 1e-9 * fmax(fabs(f->n_min), fabs(f->n_max));
    if (i < 0 && o->normalize == NA_NORM_ZSCORE && isfinite(f->n_mean) &&
        (f->n_mean < f->n_min - slack || f->n_mean > f->n_max + slack)) {
        i = N_MEAN;
        want = f->n_mean < f->n_min ? f->n_min : f->n_max;
        snprintf(how, sizeof how, "a mean lies within n_min .. n_max, here %s",
                 f->n_mean < f->n_min ? "from" : "up to");
    }
    if (i < 0)
        return 0;
    snprintf(why, cap, "bad --apply-params file: tensor '%s': \"%s\"[%zu] = %.17g, but %s "
             "%.17g (no --save-params writes that: an edited or damaged file)",
             name, fields[i], j, *field((na_clean_feat_t *)f, i), how, want);
    return -1;
}

int cli_params_check(json_t *root, const char *path, const na_clean_opts_t *o, char *why,
                     size_t cap)
{
    /* "options" as validated by check_options: from schema_version 2 */
    json_t *op = json_integer_value(json_object_get(root, "schema_version")) >= 2
                     ? json_object_get(root, "options")
                     : NULL;
    if (!op)
        cli_warn(path, "schema_version 1 records no options; the outlier method, K, "
                 "--normalize and --nonfinite of this run are taken as the fit's");
    else if (compare_options(op, o, why, cap))
        return -1;
    return 0;
}

void cli_params_null_msg(const cli_params_null_t *p, const char *name, const na_clean_opts_t *o,
                         uint64_t rows, char *why, size_t cap)
{
    char opt[64] = "";
    field_used(p->field - 1, o, opt, sizeof opt);
    snprintf(why, cap, "bad --apply-params file: tensor '%s': \"%s\"[%zu] is null, but feature "
             "%zu is not passthrough and %s uses it (%llu sample(s) kept here; null: the fit "
             "had no value of the feature at that step)",
             name, fields[p->field - 1], p->feat, p->feat, opt, (unsigned long long)rows);
}

int cli_params_apply(json_t *root, const char *name, const na_clean_opts_t *o,
                     na_clean_tensor_t *ct, cli_params_null_t *pend, char *why, size_t cap)
{
    pend->field = 0;
    json_t *e = json_object_get(json_object_get(root, "tensors"), name);
    if (!e) {
        snprintf(why, cap, "no parameters for tensor '%s'", name);
        return -1;
    }
    size_t nf = (size_t)json_integer_value(json_object_get(e, "features"));
    if (nf != ct->nfeat) {
        /* the usual cause: a --global fit applied without --global, or
         * the reverse (schema_version 2 records it) */
        json_t *g = json_object_get(json_object_get(root, "options"), "global");
        int fit_global = json_is_true(g);
        snprintf(why, cap, "tensor '%s': parameters for %zu features, the data has %llu%s", name,
                 nf, (unsigned long long)ct->nfeat,
                 json_is_boolean(g) && fit_global != (o->global != 0)
                     ? (fit_global ? " (the file was fitted with --global: give it here too)"
                                   : " (the file was fitted without --global: leave it out here)")
                     : "");
        return -1;
    }
    json_t *fs = json_object_get(e, "feature_shape"), *mine = feature_shape(ct);
    if (fs && nf > 1 && !json_equal(fs, mine)) {
        char *a = json_dumps(fs, JSON_COMPACT), *b = json_dumps(mine, JSON_COMPACT);
        snprintf(why, cap, "tensor '%s': parameters for features of shape %s, the data's are "
                 "%s (after axis 0, the sample axis)", name, a ? a : "?", b ? b : "?");
        free(a);
        free(b);
        json_decref(mine);
        return -1;
    }
    json_decref(mine);
    /* --save-params writes null for a statistic of a feature only when the
     * fit had no finite value for it at that step: a passthrough feature,
     * a step the fit did not run (refused by cli_params_check when the run
     * has it), or a feature whose every sample was gone before the step
     * (none to begin with, all dropped, or all made NaN by --outliers
     * nan). Applied to values, the last would write NaN for every finite
     * value of the feature, so it is refused as a hand-edited null is
     * when samples are kept (*pend, checked after the fit); data with no
     * samples left has no value to transform and takes it (a (0, N)
     * tensor's own parameters apply to it again, and so do those of a
     * fit that dropped every row, on the same data). */
    json_t *pt = json_object_get(e, "passthrough");
    for (size_t j = 0; j < nf; j++) {
        ct->feat[j].passthrough = json_is_true(json_array_get(pt, j));
        int used_null = 0; /* its derived numbers cannot be checked */
        for (int i = 0; i < NFIELDS; i++) {
            json_t *v = json_array_get(json_object_get(e, fields[i]), j);
            char opt[64];
            if (i == N_MEAN_LO) { /* optional: null or absent is 0 */
                ct->feat[j].n_mean_lo = json_is_number(v) ? json_number_value(v) : 0.0;
                continue;
            }
            if (json_is_null(v) && ct->rows > 0 && !ct->feat[j].passthrough &&
                field_used(i, o, opt, sizeof opt)) {
                used_null = 1;
                if (!pend->field)
                    *pend = (cli_params_null_t){i + 1, j};
            }
            *field(&ct->feat[j], i) = json_is_null(v) ? NAN : json_number_value(v);
        }
        if (!ct->feat[j].passthrough && !used_null && derived_ok(name, j, o, &ct->feat[j], why, cap))
            return -1;
    }
    ct->fixed = 1;
    return 0;
}
