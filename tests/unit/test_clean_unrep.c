/*
 * test_clean_unrep.c - na_clean_fit's prediction of the NaN and +-Inf
 * values the write pass hands to an integer out_dtype (ct->unrep, issue
 * 4), on which na_clean_check_out refuses before anything is written.
 *
 * Reference: the same clean with out_dtype F64, whose output holds those
 * values as they are; their count in the bytes written (markers are
 * written as the marker, a finite value) must equal the prediction, for
 * every combination of --nonfinite, outlier method and action,
 * --normalize, one feature or several (a passed-through feature among
 * them, or one statistic for all), --together partner rows and CF
 * missing-value markers, with fitted parameters and with parameters
 * given (--apply-params), where step 3 can map a value beyond a double
 * and the count is left to na_clean_check_out's own write pass. The
 * write pass's check of the prediction (NA_E_INTERNAL when they differ)
 * runs on every case too.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h> /* omp_set_num_threads */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clean.h"
#include "clean_mem.h" /* mem_t, f64_tensor */

#define ROWS 48
#define MARK (-9.0)

/* The output of a clean: bytes in out[0..n). */
typedef struct outbuf {
    uint8_t *p;
    size_t n, cap;
} outbuf_t;

static na_status_t collect(void *ud, const void *buf, size_t len, na_err_t *err)
{
    outbuf_t *o = ud;
    if (o->n + len > o->cap)
        return na_err_set(err, NA_E_NOMEM, "output buffer");
    memcpy(o->p + o->n, buf, len);
    o->n += len;
    return NA_OK;
}

/* ROWS x width values: mostly small, a few outliers, NaN, +-Inf and
 * markers; column 1 all NaN/Inf when pt (a feature passed through). */
static void make_data(double *v, uint64_t width, int pt, unsigned seed)
{
    uint32_t s = 2463534242u + seed;
    for (uint64_t i = 0; i < ROWS * width; i++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        unsigned r = s % 100;
        double x = (double)(s % 2001) / 100.0 - 10.0;
        v[i] = r < 5 ? NAN : r < 7 ? INFINITY : r < 8 ? -INFINITY : r < 11 ? MARK
               : r < 14 ? x * 40.0 : x;
        if (pt && width > 1 && i % width == 1)
            v[i] = r < 50 ? NAN : INFINITY;
    }
}

static na_tensor_t tensor(mem_t *m, const double *v, uint64_t width, int markers)
{
    na_tensor_t t = f64_tensor(m, v, ROWS, width);
    if (markers) {
        t.n_missing = 1;
        t.missing[0] = MARK;
    }
    return t;
}

/* Prepare (with partner rows 3, 17, 40 when joint) and fit; params:
 * features to use instead of fitting (NULL: fit). */
static na_status_t fit(const na_tensor_t *t, const na_clean_opts_t *o, int joint,
                       const na_clean_feat_t *params, na_clean_tensor_t *ct)
{
    na_err_t err;
    na_status_t st = na_clean_prepare(t, o, ct, &err);
    assert_int_equal(st, NA_OK);
    if (params) {
        memcpy(ct->feat, params, (size_t)ct->nfeat * sizeof *ct->feat);
        ct->fixed = 1;
    }
    if (joint) {
        na_clean_row_set(ct, 3, NA_CLEAN_ROW_JOINT);
        na_clean_row_set(ct, 17, NA_CLEAN_ROW_JOINT);
        na_clean_row_set(ct, 40, NA_CLEAN_ROW_JOINT);
    }
    return na_clean_fit(t, o, ct, &err);
}

/* NaN/Inf written by the F64 clean of t under o (the reference). */
static uint64_t f64_count(const na_tensor_t *t, na_clean_opts_t o, int joint,
                          const na_clean_feat_t *params)
{
    o.out_dtype = NA_DT_F64;
    na_clean_tensor_t ct;
    na_err_t err;
    double buf[ROWS * 3];
    outbuf_t ob = {(uint8_t *)buf, 0, sizeof buf};
    assert_int_equal(fit(t, &o, joint, params, &ct), NA_OK);
    assert_int_equal(na_clean_emit(t, &o, &ct, collect, &ob, &err), NA_OK);
    uint64_t n = 0;
    for (size_t i = 0; i < ob.n / 8; i++)
        n += !isfinite(buf[i]);
    na_clean_tensor_free(&ct);
    return n;
}

typedef struct tally {
    unsigned cases, refused, unknown;
} tally_t;

/* One combination: the I32 clean's prediction against the F64 count,
 * then the write pass (its check of the prediction must hold). */
static void one_case(const na_tensor_t *t, const na_clean_opts_t *o0, int joint,
                     const na_clean_feat_t *params, tally_t *k)
{
    na_clean_opts_t o = *o0;
    o.out_dtype = NA_DT_I32;
    na_clean_tensor_t ct;
    na_err_t err;
    char what[160];
    snprintf(what, sizeof what, "nf %d method %d action %d norm %d nfeat-width %d joint %d "
             "markers %d params %d", o.nonfinite, o.method, o.action, o.normalize,
             (int)t->shape[1] * !o.global, joint, t->n_missing, params != NULL);
    na_status_t st = fit(t, &o, joint, params, &ct);
    if (st != NA_OK) { /* an overflowed statistic: refused by the fit */
        na_clean_tensor_free(&ct);
        return;
    }
    uint64_t want = f64_count(t, o, joint, params);
    k->cases++;
    if (!ct.unrep_known) {
        if (!params)
            fail_msg("not predicted with fitted parameters: %s", what);
        k->unknown++;
    } else if (ct.unrep != want) {
        fail_msg("predicted %llu, the F64 output has %llu: %s", (unsigned long long)ct.unrep,
                 (unsigned long long)want, what);
    }
    st = na_clean_check_out(t, &o, &ct, &err);
    if (st != (want ? NA_E_USAGE : NA_OK))
        fail_msg("na_clean_check_out %d for %llu: %s", st, (unsigned long long)want, what);
    if (want) {
        char head[96];
        snprintf(head, sizeof head, "t: %llu NaN/Inf value(s) would be written as I32",
                 (unsigned long long)want);
        assert_memory_equal(err.msg, head, strlen(head));
        k->refused++;
    }
    /* the write pass agrees (NA_E_INTERNAL if it did not) */
    int32_t buf[ROWS * 3];
    outbuf_t ob = {(uint8_t *)buf, 0, sizeof buf};
    st = na_clean_emit(t, &o, &ct, collect, &ob, &err);
    if (st != (want ? NA_E_USAGE : NA_OK))
        fail_msg("na_clean_emit %d (%s): %s", st, err.msg, what);
    na_clean_tensor_free(&ct);
}

static const na_outlier_method_t METHODS[] = {NA_OM_NONE, NA_OM_ZSCORE, NA_OM_MAD};
static const na_outlier_action_t ACTIONS[] = {NA_OA_DROP, NA_OA_CLIP, NA_OA_NAN, NA_OA_MEAN};

/* Every combination on one layout (width, global, a passed-through
 * feature); params: fit once with F64 output, then apply those. */
static void sweep(uint64_t width, int global, int pt, int with_params, tally_t *k)
{
    static double v[ROWS * 3];
    make_data(v, width, pt, (unsigned)(width * 7 + (unsigned)pt));
    for (int markers = 0; markers < 2; markers++)
        for (int nf = NA_NF_KEEP; nf <= NA_NF_VALUE; nf++)
            for (int m = 0; m < 3 && nf != NA_NF_ZERO; m++) /* zero: value=X's path */
                for (int a = 0; a < (m ? 4 : 1); a++)
                    for (int norm = NA_NORM_NONE; norm <= NA_NORM_ZSCORE; norm++)
                        for (int joint = 0; joint < 2; joint++) {
                            mem_t mem;
                            na_tensor_t t = tensor(&mem, v, width, markers);
                            na_clean_opts_t o;
                            na_clean_opts_init(&o);
                            o.samples = 1;
                            o.global = global;
                            /* buffers for 48 rows, not for 64 MiB windows */
                            o.window_bytes = 4096;
                            o.nonfinite = (na_nonfinite_t)nf;
                            o.nf_value = 7.0;
                            o.method = METHODS[m];
                            o.k = 1.5;
                            o.action = m ? ACTIONS[a] : NA_OA_NONE;
                            o.normalize = (na_normalize_t)norm;
                            if (!with_params) {
                                one_case(&t, &o, joint, NULL, k);
                                continue;
                            }
                            na_clean_tensor_t ct;
                            na_clean_opts_t of = o;
                            of.out_dtype = NA_DT_F64;
                            if (fit(&t, &of, 0, NULL, &ct) == NA_OK) {
                                na_clean_feat_t p[3];
                                memcpy(p, ct.feat, (size_t)ct.nfeat * sizeof *p);
                                /* minmax over 0..1e-307: values beyond
                                 * +-1.8e-307 map beyond a double, as with an
                                 * --apply-params file fitted on other data */
                                if (norm == NA_NORM_MINMAX && joint)
                                    for (uint64_t f = 0; f < ct.nfeat; f++) {
                                        p[f].n_min = 0.0;
                                        p[f].n_max = 1e-307;
                                    }
                                one_case(&t, &o, joint, p, k);
                            }
                            na_clean_tensor_free(&ct);
                        }
}

static void test_fitted(void **state)
{
    (void)state;
    tally_t k = {0, 0, 0};
    sweep(1, 0, 0, 0, &k);
    sweep(3, 0, 0, 0, &k);
    sweep(3, 0, 1, 0, &k);
    sweep(3, 1, 1, 0, &k);
    /* most combinations run, and many are refused */
    assert_true(k.cases > 1000);
    assert_true(k.refused > 300 && k.refused < k.cases);
    assert_int_equal(k.unknown, 0);
}

static void test_params(void **state)
{
    (void)state;
    tally_t k = {0, 0, 0};
    sweep(1, 0, 0, 1, &k);
    sweep(3, 0, 1, 1, &k);
    assert_true(k.cases > 500);
    assert_true(k.unknown > 0); /* the 1e-300 spans */
}

/* A float out_dtype holds NaN: nothing to predict or refuse. */
static void test_float_out(void **state)
{
    (void)state;
    static double v[ROWS];
    make_data(v, 1, 0, 3);
    mem_t mem;
    na_tensor_t t = tensor(&mem, v, 1, 0);
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    o.samples = 1;
    o.out_dtype = NA_DT_F16;
    na_clean_tensor_t ct;
    na_err_t err;
    assert_int_equal(fit(&t, &o, 0, NULL, &ct), NA_OK);
    assert_int_equal(ct.unrep_known, 1);
    assert_int_equal(ct.unrep, 0);
    assert_int_equal(na_clean_check_out(&t, &o, &ct, &err), NA_OK);
    na_clean_tensor_free(&ct);
}

int main(void)
{
    /* thousands of 48-row passes: threads would only add barriers */
    omp_set_num_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fitted),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_float_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
