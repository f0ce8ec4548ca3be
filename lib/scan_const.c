/*
 * scan_const.c - the scan of a tensor whose every element is one value
 * (na_tensor_t.constant): an HDF5 dataset with no storage allocated reads
 * as its fill value everywhere, and may declare 2^61 elements (HDF5 test
 * file tlayouto.h5: dims 8589934592 x 268435457, never written). Reading
 * that is impossible; its statistics are known from one element.
 *
 * The results are those a full scan gives for n copies of v (DESIGN.md,
 * "Definitions"): counts n in v's class, min = max = mean = v, std exactly
 * 0 (max == min) so no outliers, locations the first indices 0, 1, ...;
 * a missing value (na_tensor_t.missing) counts n as missing. The mean is
 * v itself, which a block-by-block sum of n copies can miss by an ulp.
 */
#include "scan_kernels.h"
#include "decode.h" /* na_load_uint */

#include <math.h>   /* fabs, NAN */
#include <stdlib.h> /* malloc */

static na_status_t const_locs(uint64_t **dst, size_t *n, uint64_t count, size_t cap,
                              na_err_t *err)
{
    size_t k = count < cap ? (size_t)count : cap;
    *n = 0;
    if (k == 0)
        return NA_OK;
    *dst = malloc(k * sizeof **dst);
    if (*dst == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    for (size_t i = 0; i < k; i++)
        (*dst)[i] = i;
    *n = k;
    return NA_OK;
}

na_status_t na_scan_constant(const na_tensor_t *t, const na_scan_opts_t *o, na_result_t *r,
                             na_err_t *err)
{
    const uint8_t *p = NULL;
    uint64_t n = t->elements;
    na_status_t st = t->src.read(t->src.ctx, 0, t->elem_stride, &p, err);
    if (st != NA_OK)
        return st;
    double v;
    na_class_t c = na_decode1(t->dtype, t->byte_order, p + t->elem_offset, &v);
    int missing = 0;
    for (int i = 0; i < t->n_missing && i < 2; i++) /* missing_exact: I64/U64 only */
        missing |= c < NA_CL_NAN && v == t->missing[i] &&
                   (!((t->missing_exact >> i) & 1u) ||
                    na_load_uint(p + t->elem_offset, 8, t->byte_order == NA_BIG) ==
                        t->missing_int[i]);
    na_stats_t *s = &r->st;
    s->elements = n;
    size_t cap = o->max_locations;
    if (missing) {
        s->missing = n;
    } else if (c == NA_CL_NAN) {
        s->nan = n;
        st = const_locs(&r->nan_locs, &r->n_nan_locs, n, cap, err);
    } else if (c == NA_CL_POS_INF || c == NA_CL_NEG_INF) {
        if (c == NA_CL_POS_INF)
            s->pos_inf = n;
        else
            s->neg_inf = n;
        if (cap > 0)
            *(c == NA_CL_POS_INF ? &r->first_pos_inf : &r->first_neg_inf) = 0;
        st = const_locs(&r->inf_locs, &r->n_inf_locs, n, cap, err);
    } else {
        s->finite = n;
        s->zeros = c == NA_CL_ZERO ? n : 0;
        s->subnormal = c == NA_CL_SUBNORMAL ? n : 0;
        s->min = s->max = s->mean = v;
        s->abs_max = fabs(v);
        s->m2 = 0.0;
    }
    r->std = na_stats_std(s);
    const na_extra_t *ex = o->extra;
    for (size_t i = 0; ex != NULL && i < ex->n && i < NA_MAX_INTERVALS; i++)
        r->extra_counts[i] = !missing && c < NA_CL_NAN && v >= ex->iv[i].lo &&
                                     v <= ex->iv[i].hi
                                 ? n
                                 : 0;
    r->extra_done = ex != NULL && ex->n > 0;
    return st;
}
