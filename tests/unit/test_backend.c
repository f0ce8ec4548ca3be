/*
 * test_backend.c - the backend table of lib/nanaudit.h (na_backend_t):
 * the CPU backend gives na_scan_tensor's result bit for bit (it is the
 * same engine behind the table the CUDA backend also fills), with the same
 * error and message for a bad dtype, and na_backend_close is NULL-safe and
 * idempotent. The CUDA backend is checked on a GPU by tests/gpu/run.sh.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "nanaudit.h"

typedef struct mem {
    const unsigned char *p;
    size_t len;
} mem_t;

static na_status_t mem_read(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                            na_err_t *err)
{
    mem_t *m = ctx;
    if (off > m->len || len > m->len - off)
        return na_err_set(err, NA_E_IO, "read past the end");
    *ptr = m->p + off;
    return NA_OK;
}

static void tensor(na_tensor_t *t, mem_t *m, na_dtype_t dt, size_t n, unsigned es)
{
    memset(t, 0, sizeof *t);
    t->name = "w";
    t->dtype = t->stored = dt;
    t->ndim = 1;
    t->shape[0] = t->elements = n;
    t->elem_stride = es;
    t->src.read = mem_read;
    t->src.ctx = m;
}

static void test_cpu_is_na_scan_tensor(void **state)
{
    (void)state;
    enum { N = 40000 }; /* three blocks, the last one partial */
    static float v[N];
    for (int i = 0; i < N; i++)
        v[i] = (float)((i * 7919) % 1000) * 0.001f;
    v[17] = 1e6f; /* an outlier, so pass 2 runs */
    uint32_t nanbits = 0x7fc00000u;
    memcpy(&v[30001], &nanbits, 4);
    mem_t m = {(const unsigned char *)v, sizeof v};
    na_tensor_t t;
    tensor(&t, &m, NA_DT_F32, N, 4);
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    o.threads = 2;
    na_backend_t b;
    na_backend_cpu(&b);
    assert_string_equal(b.name, "cpu");
    na_result_t r1, r2;
    na_err_t err = {{0}};
    assert_int_equal(na_scan_tensor(&t, &o, &r1, &err), NA_OK);
    assert_int_equal(b.scan_tensor(b.self, &t, &o, &r2, &err), NA_OK);
    assert_memory_equal(&r1.st, &r2.st, sizeof r1.st);
    assert_int_equal(r1.st.nan, 1);
    assert_int_equal(r2.outliers, r1.outliers);
    assert_int_equal(r2.outliers, 1);
    assert_int_equal(r2.n_nan_locs, 1);
    assert_int_equal(r2.nan_locs[0], 30001);
    assert_int_equal(r2.n_out_locs, 1);
    assert_int_equal(r2.out_locs[0], 17);
    na_result_free(&r1);
    na_result_free(&r2);
    na_backend_close(&b);
    assert_null(b.scan_tensor);
    na_backend_close(&b); /* twice: nothing left to free */
    na_backend_close(NULL);
}

static void test_cpu_errors(void **state)
{
    (void)state;
    unsigned char byte = 0;
    mem_t m = {&byte, 1};
    na_tensor_t t;
    tensor(&t, &m, NA_DT_F4, 2, 1);
    na_backend_t b;
    na_backend_cpu(&b);
    na_result_t r;
    na_err_t err = {{0}};
    assert_int_equal(b.scan_tensor(b.self, &t, NULL, &r, &err), NA_E_UNSUPPORTED);
    assert_string_equal(err.msg, "w: unsupported dtype F4");
    na_result_free(&r);
    na_backend_close(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_is_na_scan_tensor),
        cmocka_unit_test(test_cpu_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
