/*
 * clean_check.c - the refusal of `nanaudit clean` to write NaN or +-Inf
 * to an integer --out-dtype (issue 4), decided before the write pass.
 *
 * An integer has neither: a NaN would come back as 0 and an infinity as
 * the type's bound, values the input did not have. na_clean_fit predicts
 * how many such values the write pass would produce (ct->unrep, see
 * fit_unrep in clean.c); na_clean_check_out turns that count into the
 * refusal, so that the CLI refuses before it creates the temporary file,
 * and a dry run refuses with the same words. na_clean_emit keeps its own
 * count as a check on the prediction. Also na_clean_computes, which the
 * HDF5 writer's refusal of reduced-precision float types needs.
 */
#include "clean.h"

#include <stdio.h> /* snprintf */

na_status_t na_clean_unrep_error(const na_tensor_t *t, const na_clean_tensor_t *ct, uint64_t n,
                                 na_err_t *err)
{
    /* A feature without finite values keeps its NaN whatever the steps
     * say: then only a float dtype or --exclude helps. */
    char why[96];
    snprintf(why, sizeof why, "%llu feature(s) have no finite value and keep theirs through "
             "every step: ", (unsigned long long)ct->passthrough);
    return na_err_set(err, NA_E_USAGE,
                      "%s: %llu NaN/Inf value(s) would be written as %s, which has no NaN or "
                      "Inf; %suse %sa float --out-dtype, or --exclude '%s'",
                      t->name, (unsigned long long)n, na_dtype_name(ct->out_dtype),
                      ct->passthrough ? why : "",
                      ct->passthrough ? "" : "--nonfinite zero|mean|value=X|drop, "
                                             "--outliers clip|mean|drop, ",
                      t->name);
}

int na_clean_computes(const na_clean_opts_t *o)
{
    return o->normalize != NA_NORM_NONE || o->nonfinite == NA_NF_MEAN ||
           o->nonfinite == NA_NF_VALUE ||
           (o->method != NA_OM_NONE && (o->action == NA_OA_CLIP || o->action == NA_OA_MEAN));
}

static na_status_t discard(void *ud, const void *buf, size_t len, na_err_t *err)
{
    (void)ud, (void)buf, (void)len, (void)err;
    return NA_OK;
}

na_status_t na_clean_check_out(const na_tensor_t *t, const na_clean_opts_t *o,
                               na_clean_tensor_t *ct, na_err_t *err)
{
    if (na_dtype_is_float(ct->out_dtype) || ct->rows == 0)
        return NA_OK;
    /* Not predicted: a write pass into nothing counts them, and sets
     * ct->unrep (na_clean_emit_finish); it refuses with the same words. */
    if (!ct->unrep_known)
        return na_clean_emit(t, o, ct, discard, NULL, err);
    return ct->unrep ? na_clean_unrep_error(t, ct, ct->unrep, err) : NA_OK;
}
