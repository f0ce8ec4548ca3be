/*
 * clean_params.c - --save-params / --apply-params of `nanaudit clean`:
 * every statistic a step used, per tensor and per feature, as JSON
 * (jansson; strict parsing with duplicate keys rejected, DESIGN.md).
 *
 * Schema (schema_version 1):
 *   {"schema_version": 1, "kind": "nanaudit-clean-params",
 *    "tensors": {NAME: {"features": N, "passthrough": [bool x N],
 *       "nf_fill": [...], "center": [...], "scale": [...], "meanad": [...],
 *       "lo_bound": [...], "hi_bound": [...], "fill2": [...],
 *       "n_min": [...], "n_max": [...], "n_mean": [...], "n_std": [...]}}}
 * Each array has N numbers, null where a statistic is not defined (a
 * feature without finite values). The steps themselves come from the
 * command line; the file gives only their statistics.
 */
#include "cli.h"
#include "clean_params.h"

#include <jansson.h>
#include <math.h>   /* isfinite, NAN */
#include <string.h> /* strcmp */

#define NFIELDS 11
static const char *const fields[NFIELDS] = {"nf_fill", "center", "scale", "meanad", "lo_bound",
                                            "hi_bound", "fill2", "n_min", "n_max", "n_mean",
                                            "n_std"};

static double *field(na_clean_feat_t *f, int i)
{
    double *p[NFIELDS] = {&f->nf_fill, &f->center, &f->scale, &f->meanad, &f->lo_bound,
                          &f->hi_bound, &f->fill2, &f->n_min, &f->n_max, &f->n_mean, &f->n_std};
    return p[i];
}

json_t *cli_params_new(void)
{
    json_t *root = json_object();
    if (root) {
        json_object_set_new(root, "schema_version", json_integer(1));
        json_object_set_new(root, "kind", json_string("nanaudit-clean-params"));
        json_object_set_new(root, "tensors", json_object());
    }
    return root;
}

int cli_params_add(json_t *root, const char *name, const na_clean_tensor_t *ct)
{
    json_t *e = json_object(), *pt = json_array();
    if (!e || !pt)
        return -1;
    json_object_set_new(e, "features", json_integer((json_int_t)ct->nfeat));
    for (uint64_t f = 0; f < ct->nfeat; f++)
        json_array_append_new(pt, json_boolean(ct->feat[f].passthrough));
    json_object_set_new(e, "passthrough", pt);
    for (int i = 0; i < NFIELDS; i++) {
        json_t *a = json_array();
        for (uint64_t f = 0; a && f < ct->nfeat; f++) {
            double v = *field(&ct->feat[f], i);
            json_array_append_new(a, isfinite(v) ? json_real(v) : json_null());
        }
        json_object_set_new(e, fields[i], a);
    }
    return json_object_set_new(json_object_get(root, "tensors"), name, e);
}

int cli_params_save(json_t *root, const char *path)
{
    return json_dump_file(root, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
                                          JSON_REAL_PRECISION(17));
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
    enum { NF_FILL, CENTER, SCALE, MEANAD, LO, HI, FILL2, N_MIN, N_MAX, N_MEAN, N_STD };
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
            if (rule) {
                snprintf(why, cap, "tensor '%s': \"%s\"[%zu] = %.17g %s", name, fields[i], j, v,
                         rule);
                return -1;
            }
        }
    }
    return 0;
}

json_t *cli_params_load(const char *path, char *why, size_t cap)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(why, cap, "%s (line %d)", je.text, je.line);
        return NULL;
    }
    json_t *ts = json_object_get(root, "tensors");
    json_t *kind = json_object_get(root, "kind");
    if (!json_is_object(root) || !json_is_object(ts) || !json_is_string(kind) ||
        strcmp(json_string_value(kind), "nanaudit-clean-params") ||
        !json_is_integer(json_object_get(root, "schema_version")) ||
        json_integer_value(json_object_get(root, "schema_version")) != 1) {
        snprintf(why, cap, "not a nanaudit clean parameter file (schema_version 1)");
        json_decref(root);
        return NULL;
    }
    const char *name;
    json_t *e;
    json_object_foreach(ts, name, e) {
        json_t *n = json_object_get(e, "features");
        if (!json_is_integer(n) || json_integer_value(n) < 1) {
            snprintf(why, cap, "tensor '%s': \"features\" must be an integer >= 1", name);
            json_decref(root);
            return NULL;
        }
        size_t nf = (size_t)json_integer_value(n);
        json_t *pt = json_object_get(e, "passthrough");
        int bad = !json_is_array(pt) || json_array_size(pt) != nf;
        for (int i = 0; !bad && i < NFIELDS; i++) {
            json_t *a = json_object_get(e, fields[i]);
            bad = !json_is_array(a) || json_array_size(a) != nf;
            for (size_t j = 0; !bad && j < nf; j++) {
                json_t *v = json_array_get(a, j);
                bad = !json_is_number(v) && !json_is_null(v);
            }
            if (bad)
                snprintf(why, cap, "tensor '%s': \"%s\" must be %zu numbers or nulls", name,
                         fields[i], nf);
        }
        if (bad) {
            if (!json_is_array(pt) || json_array_size(pt) != nf)
                snprintf(why, cap, "tensor '%s': \"passthrough\" must be %zu booleans", name, nf);
        }
        if (bad || check_values(name, e, nf, why, cap)) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}

int cli_params_apply(json_t *root, const char *name, na_clean_tensor_t *ct, char *why, size_t cap)
{
    json_t *e = json_object_get(json_object_get(root, "tensors"), name);
    if (!e) {
        snprintf(why, cap, "no parameters for tensor '%s'", name);
        return -1;
    }
    size_t nf = (size_t)json_integer_value(json_object_get(e, "features"));
    if (nf != ct->nfeat) {
        snprintf(why, cap, "tensor '%s': parameters for %zu features, the data has %llu", name,
                 nf, (unsigned long long)ct->nfeat);
        return -1;
    }
    json_t *pt = json_object_get(e, "passthrough");
    for (size_t j = 0; j < nf; j++) {
        ct->feat[j].passthrough = json_is_true(json_array_get(pt, j));
        for (int i = 0; i < NFIELDS; i++) {
            json_t *v = json_array_get(json_object_get(e, fields[i]), j);
            *field(&ct->feat[j], i) = json_is_null(v) ? NAN : json_number_value(v);
        }
    }
    ct->fixed = 1;
    return 0;
}
