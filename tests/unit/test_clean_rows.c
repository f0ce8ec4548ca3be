/*
 * test_clean_rows.c - the per-sample drop states of the clean engine
 * (lib/clean.h: 2 bits per row, na_clean_row / na_clean_row_set) and the
 * width-1 block driver of lib/clean.c (run_tiles): drops on both sides of
 * a block boundary (blocks are 16384 rows), partner (--together) rows,
 * the count and first indices of drops, the rows written and their
 * statistics, and the same results for 1 and 4 threads. References are
 * computed here from the input by the definitions (numpy-free: the
 * kept values are known exactly).
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "clean.h"

typedef struct mem {
    uint8_t *p;
    size_t n, cap;
} mem_t;

static na_status_t mread(void *ctx, uint64_t off, size_t len, const uint8_t **ptr, na_err_t *err)
{
    mem_t *m = ctx;
    if (off + len > m->n)
        return na_err_set(err, NA_E_IO, "past end");
    *ptr = m->p + off;
    return NA_OK;
}

static na_status_t collect(void *ud, const void *buf, size_t len, na_err_t *err)
{
    mem_t *m = ud;
    if (m->n + len > m->cap)
        return na_err_set(err, NA_E_WRITE, "sink full");
    memcpy(m->p + m->n, buf, len);
    m->n += len;
    return NA_OK;
}

/* Every row's state survives its neighbours' writes (4 rows a byte). */
static void test_row_states(void **state)
{
    (void)state;
    uint8_t bytes[4] = {0};
    na_clean_tensor_t ct;
    memset(&ct, 0, sizeof ct);
    ct.row_state = bytes;
    ct.rows = 13;
    for (uint64_t r = 0; r < 13; r++)
        na_clean_row_set(&ct, r, (unsigned)(r * 7 % 4));
    for (uint64_t r = 0; r < 13; r++)
        assert_int_equal(na_clean_row(&ct, r), r * 7 % 4);
    na_clean_row_set(&ct, 5, 0);
    assert_int_equal(na_clean_row(&ct, 4), 0);
    assert_int_equal(na_clean_row(&ct, 5), 0);
    assert_int_equal(na_clean_row(&ct, 6), 2);
    assert_int_equal(bytes[3], 0x00); /* rows 12..15: 12*7%4 = 0 */
}

#define ROWS 40003 /* two full blocks and a short one */

typedef struct run {
    uint64_t dropped_nf, dropped_out, dropped_joint, out_rows, n_idx, idx[4];
    na_stats_t after;
    double *out;
} run_t;

/* Clean v (ROWS F64 samples) with nonfinite drop and --zscore 3 drop,
 * rows 16383 and 16384 dropped by a partner, using `threads` threads. */
static void run_clean(const double *v, int threads, run_t *R)
{
    mem_t m = {(uint8_t *)(void *)v, ROWS * 8, ROWS * 8};
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = "x";
    t.dtype = t.stored = NA_DT_F64;
    t.byte_order = NA_LITTLE;
    t.ndim = 1;
    t.shape[0] = ROWS;
    t.elements = ROWS;
    t.elem_stride = 8;
    t.src.read = mread;
    t.src.ctx = &m;
    na_clean_opts_t o;
    na_clean_opts_init(&o);
    o.samples = 1;
    o.nonfinite = NA_NF_DROP;
    o.method = NA_OM_ZSCORE;
    o.k = 3;
    o.action = NA_OA_DROP;
    o.max_locations = 4;
    omp_set_num_threads(threads);
    na_clean_tensor_t ct;
    na_err_t err;
    assert_int_equal(na_clean_prepare(&t, &o, &ct, &err), NA_OK);
    na_clean_row_set(&ct, 16383, NA_CLEAN_ROW_JOINT);
    na_clean_row_set(&ct, 16384, NA_CLEAN_ROW_JOINT);
    assert_int_equal(na_clean_fit(&t, &o, &ct, &err), NA_OK);
    R->out = malloc(ROWS * 8);
    assert_non_null(R->out);
    mem_t sink = {(uint8_t *)(void *)R->out, 0, ROWS * 8};
    assert_int_equal(na_clean_emit(&t, &o, &ct, collect, &sink, &err), NA_OK);
    assert_int_equal(sink.n, ct.out_rows * 8);
    R->dropped_nf = ct.dropped_nf;
    R->dropped_out = ct.dropped_out;
    R->dropped_joint = ct.dropped_joint;
    R->out_rows = ct.out_rows;
    R->n_idx = ct.n_drop_idx;
    for (size_t i = 0; i < ct.n_drop_idx; i++)
        R->idx[i] = ct.drop_idx[i];
    R->after = ct.after;
    na_clean_tensor_free(&ct);
}

/* Values in [-1, 1) (a deterministic sequence), NaN at rows 5 and 32770,
 * +Inf at 16385 (just after the partners' rows), outliers 1e6 at 16382
 * and 40002 (the last row). Uniform values never pass 3 std (1.73 std at
 * most), so exactly the planted rows go. */
static void test_width1_drops(void **state)
{
    (void)state;
    double *v = malloc(ROWS * 8);
    assert_non_null(v);
    uint64_t s = 12345;
    for (uint64_t i = 0; i < ROWS; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
    }
    v[5] = v[32770] = NAN;
    v[16385] = INFINITY;
    v[16382] = v[40002] = 1e6;
    run_t a, b;
    run_clean(v, 1, &a);
    run_clean(v, 4, &b);
    assert_int_equal(a.dropped_nf, 3);
    assert_int_equal(a.dropped_out, 2);
    assert_int_equal(a.dropped_joint, 2);
    assert_int_equal(a.out_rows, ROWS - 7);
    assert_int_equal(a.n_idx, 4);
    assert_int_equal(a.idx[0], 5);
    assert_int_equal(a.idx[1], 16382);
    assert_int_equal(a.idx[2], 16383);
    assert_int_equal(a.idx[3], 16384);
    /* the rows written are the input's kept rows, unchanged (F64, no
     * normalization), and the predicted statistics are theirs */
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    uint64_t q = 0;
    for (uint64_t i = 0; i < ROWS; i++) {
        if (i == 5 || i == 32770 || i == 16385 || i == 16382 || i == 40002 || i == 16383 ||
            i == 16384)
            continue;
        assert_true(a.out[q] == v[i]);
        q++;
        sum += v[i];
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
    }
    assert_int_equal(q, a.out_rows);
    assert_int_equal(a.after.finite, q);
    assert_true(a.after.min == mn && a.after.max == mx);
    assert_true(fabs(a.after.mean - sum / (double)q) <= 1e-15);
    /* 4 threads: the same bits */
    assert_int_equal(b.out_rows, a.out_rows);
    assert_memory_equal(b.out, a.out, a.out_rows * 8);
    assert_memory_equal(&b.after, &a.after, sizeof a.after);
    assert_memory_equal(b.idx, a.idx, sizeof a.idx);
    free(a.out);
    free(b.out);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_states),
        cmocka_unit_test(test_width1_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
