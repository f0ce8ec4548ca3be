/*
 * test_scan.c - na_scan_tensor end to end on in-memory tensors.
 *
 * The data come through a read callback written here that hands out a
 * fresh copy of each window at an odd address (so loads must not assume
 * alignment, and a kernel that kept a pointer past the next read would be
 * caught by ASan), and that checks the engine's side of the contract:
 * len a multiple of the stride, at most window_bytes, inside the data.
 *
 * Reference values marked "numpy" were computed with numpy 2.x in float64
 * (x.astype(np.float64).mean() / .std()), the script is in the comment.
 */
#include <setjmp.h> /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nanaudit.h"

#define assert_close(a, b, rel, scale)                                          \
    do {                                                                        \
        double a_ = (a), b_ = (b);                                              \
        if (!(fabs(a_ - b_) <= (rel) * (fabs(b_) + (scale))))                   \
            fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                 \
    } while (0)

/* ---- in-memory source ---------------------------------------------------- */

typedef struct msrc {
    const unsigned char *data;
    size_t size, max_len, stride;
    unsigned char *win;   /* the copy handed out last; freed on the next read */
    int calls, fail_call; /* fail_call: 1-based read that fails (0: none) */
    na_status_t fail_st;
    const char *fail_msg; /* NULL: fail without a message */
    int violations;       /* contract breaches seen */
    uint64_t bytes;       /* bytes handed out */
} msrc_t;

static na_status_t mread(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                         na_err_t *err)
{
    msrc_t *m = ctx;
    m->calls++;
    if (m->fail_call && m->calls == m->fail_call)
        return m->fail_msg ? na_err_set(err, m->fail_st, "%s", m->fail_msg) : m->fail_st;
    if (len == 0 || len > m->max_len || len % m->stride || off % m->stride ||
        off + len > m->size)
        m->violations++;
    free(m->win);
    m->win = malloc(len + 1);
    assert_non_null(m->win);
    memcpy(m->win + 1, m->data + off, len);
    *ptr = m->win + 1; /* odd address */
    m->bytes += len;
    return NA_OK;
}

static void msrc_init(msrc_t *m, const void *data, size_t size, size_t window, size_t stride)
{
    memset(m, 0, sizeof *m);
    m->data = data;
    m->size = size;
    m->max_len = window;
    m->stride = stride;
}

static na_tensor_t tensor(const char *name, na_dtype_t dt, na_endian_t e, uint64_t n,
                          uint32_t stride, msrc_t *m)
{
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.dtype = t.stored = dt;
    t.byte_order = e;
    t.ndim = 1;
    t.shape[0] = n;
    t.elements = n;
    t.elem_stride = stride;
    t.elem_offset = 0;
    t.src.read = mread;
    t.src.ctx = m;
    return t;
}

static na_scan_opts_t opts(int threads, size_t window, size_t maxloc)
{
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    o.threads = threads;
    o.window_bytes = window;
    o.max_locations = maxloc;
    return o;
}

/* Scan t (its source m) and check the source saw no contract breach. */
static na_status_t scan(na_tensor_t *t, const na_scan_opts_t *o, na_result_t *r,
                        na_err_t *err)
{
    msrc_t *m = t->src.ctx;
    m->max_len = o->window_bytes;
    m->calls = 0;
    na_status_t st = na_scan_tensor(t, o, r, err);
    free(m->win);
    m->win = NULL;
    assert_int_equal(m->violations, 0);
    return st;
}

static void assert_locs(const uint64_t *got, size_t n, const uint64_t *want, size_t nwant)
{
    assert_int_equal(n, nwant);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(got[i], want[i]);
}

/* ---- data ---------------------------------------------------------------- */

/* 3 blocks + 100: values in [-0.5, 0.5), +-1000 at known positions.
 * numpy:
 *   i = np.arange(3*16384+100)
 *   x = ((i*7919) % 1000).astype(np.float32) / np.float32(1000) - np.float32(0.5)
 *   x[[5, 16383, 16384, 32775, 49000]] = 1000; x[[100, 40000]] = -1000
 *   m = x.astype(np.float64).mean()  -> 0.06041787138704474
 *   s = x.astype(np.float64).std()   -> 11.925010378885748
 *   np.nonzero(abs(x - m) > 6*s)     -> [5 100 16383 16384 32775 40000 49000] */
#define OUT_N (3 * 16384 + 100)
#define OUT_MEAN 0.06041787138704474
#define OUT_STD 11.925010378885748
static const uint64_t OUT_POS[7] = {5, 100, 16383, 16384, 32775, 40000, 49000};

static float *outlier_data(void)
{
    float *x = malloc(OUT_N * sizeof *x);
    assert_non_null(x);
    for (uint32_t i = 0; i < OUT_N; i++)
        x[i] = (float)((i * 7919u) % 1000u) / 1000.0f - 0.5f;
    x[5] = x[16383] = x[16384] = x[32775] = x[49000] = 1000.0f;
    x[100] = x[40000] = -1000.0f;
    return x;
}

/* ---- tests --------------------------------------------------------------- */

/* Outliers on both sides of block (16384) and window boundaries, for a
 * window of one block, windows smaller than a block, and the default.
 * With 16 Ki-element blocks every outlier is among its block's pass-1
 * candidates, so pass 2 reads nothing; with 1000- and 3000-element blocks
 * the blocks that hold one are read again. */
static void test_outliers_across_boundaries(void **state)
{
    (void)state;
    float *x = outlier_data();
    static const size_t windows[] = {16384 * 4, 4000, 12 * 1000, NA_DEFAULT_WINDOW_BYTES};
    static const int pass1_reads[] = {4, 50, 17, 1}, pass2_reads[] = {0, 5, 5, 0};
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
        msrc_t m;
        msrc_init(&m, x, OUT_N * 4, windows[w], 4);
        na_tensor_t t = tensor("w", NA_DT_F32, NA_LITTLE, OUT_N, 4, &m);
        na_scan_opts_t o = opts(2, windows[w], 10);
        na_result_t r;
        na_err_t err;
        assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
        assert_int_equal(r.st.finite, OUT_N);
        assert_true(r.st.min == -1000.0 && r.st.max == 1000.0 && r.st.abs_max == 1000.0);
        assert_close(r.st.mean, OUT_MEAN, 1e-12, OUT_STD);
        assert_close(r.std, OUT_STD, 1e-12, fabs(OUT_MEAN));
        assert_true(r.outliers_checked && r.threshold == 6.0);
        assert_int_equal(r.pass2, pass2_reads[w] > 0);
        assert_int_equal(m.calls, pass1_reads[w] + pass2_reads[w]);
        assert_int_equal(r.outliers, 7);
        assert_locs(r.out_locs, r.n_out_locs, OUT_POS, 7);
        assert_int_equal(r.n_nan_locs + r.n_inf_locs, 0);
        na_result_free(&r);
    }
    free(x);
}

/* Pass 2 compares against precomputed bounds; the count must equal the
 * predicate |x - mean| > K*std evaluated in double on every element, also
 * for values within a few ulps of mean +- K*std. The values near the
 * bounds are placed from the previous scan's mean and std, seven rounds,
 * so that they sit at the final boundary or very close to it. */
static void test_outlier_boundary_exact(void **state)
{
    (void)state;
    enum { N = 50000, MAXNEAR = 7 };
    /* 7 values per side: too many for the pass-1 candidate lists, so the
     * kernels decide; 3 per side, in different blocks: the candidates do. */
    for (int variant = 0; variant < 4; variant++) {
        int wide = variant & 1, NEAR = variant < 2 ? MAXNEAR : 3;
        size_t lo_at = variant < 2 ? 200 : 16484;
        double *xd = malloc(N * sizeof *xd);
        float *xf = malloc(N * sizeof *xf);
        for (int i = 0; i < N; i++)
            xf[i] = (float)((i * 7919) % 1000) / 250.0f - 2.0f;
        na_result_t r;
        na_err_t err;
        uint64_t want = 0, near_out = 0;
        double hid[MAXNEAR] = {0}, lod[MAXNEAR] = {0};
        for (int round = 0; round < 7; round++) { /* converges ~400x per round */
            for (int i = 0; i < N; i++)
                xd[i] = wide ? xf[i] + 1e-9 * (i % 3) : xf[i];
            for (int k = 0; wide && round > 0 && k < NEAR; k++)
                xd[100 + k] = hid[k], xd[lo_at + k] = lod[k]; /* double ulps */
            msrc_t m;
            msrc_init(&m, wide ? (void *)xd : (void *)xf, N * (wide ? 8u : 4u), 1 << 16,
                      wide ? 8 : 4);
            na_tensor_t t = tensor("b", wide ? NA_DT_F64 : NA_DT_F32, NA_LITTLE, N,
                                   wide ? 8 : 4, &m);
            na_scan_opts_t o = opts(2, 1 << 16, 5);
            o.zscore = 3;
            assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
            double thr = 3 * r.std;
            want = 0;
            for (int i = 0; i < N; i++)
                want += fabs(xd[i] - r.st.mean) > thr;
            assert_int_equal(r.outliers, want);
            near_out = 0;
            for (int k = 0; k < NEAR; k++)
                near_out += (fabs(xd[100 + k] - r.st.mean) > thr) +
                            (fabs(xd[lo_at + k] - r.st.mean) > thr);
            /* next round: NEAR values straddling each bound */
            for (int k = 0; k < NEAR; k++) {
                float hi = (float)(r.st.mean + thr), lo = (float)(r.st.mean - thr);
                for (int step = k - NEAR / 2; step < 0; step++)
                    hi = nextafterf(hi, -INFINITY), lo = nextafterf(lo, -INFINITY);
                for (int step = 0; step < k - NEAR / 2; step++)
                    hi = nextafterf(hi, INFINITY), lo = nextafterf(lo, INFINITY);
                xf[100 + k] = hi;
                xf[lo_at + k] = lo;
                hid[k] = r.st.mean + thr + (k - NEAR / 2) * 2e-16 * fabs(r.st.mean + thr);
                lod[k] = r.st.mean - thr + (k - NEAR / 2) * 2e-16 * fabs(r.st.mean - thr);
            }
            na_result_free(&r);
        }
        /* the last round straddled both bounds: some near values are
         * outliers, some are not */
        assert_true(near_out > 0 && near_out < 2 * (uint64_t)NEAR);
        if (NEAR == 3)
            assert_int_equal(r.pass2, 0); /* decided from the candidates */
        free(xd);
        free(xf);
    }
}

/* Same input, 1/2/3/7 threads: the whole result is bit-identical. */
static void test_threads_bit_identical(void **state)
{
    (void)state;
    /* 20 blocks and a partial one, 8 blocks per window: threads share
     * every window. Outliers sit in some blocks, many at once in block 5
     * (more than its candidate list holds, so pass 2 reads it). */
    enum { N = 20 * 16384 + 7, W = 8 * 16384 * 4 };
    float *x = malloc(N * sizeof *x);
    for (uint32_t i = 0; i < N; i++)
        x[i] = (float)((i * 7919u) % 1000u) / 1000.0f - 0.5f;
    for (uint32_t i = 0; i < N; i += 23456)
        x[i] = 300.0f;
    for (uint32_t i = 5 * 16384; i < 5 * 16384 + 50; i++)
        x[i] = -250.0f;
    x[7] = NAN;
    x[20000] = INFINITY;
    x[30001] = -INFINITY;
    na_result_t ref;
    static const int threads[] = {1, 2, 3, 7};
    for (size_t k = 0; k < 4; k++) {
        msrc_t m;
        msrc_init(&m, x, N * 4, W, 4);
        na_tensor_t t = tensor("w", NA_DT_F32, NA_LITTLE, N, 4, &m);
        na_scan_opts_t o = opts(threads[k], W, 5);
        na_result_t r;
        na_err_t err;
        assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
        assert_int_equal(r.st.nan, 1);
        assert_int_equal(r.st.pos_inf, 1);
        assert_int_equal(r.st.neg_inf, 1);
        if (k == 0) {
            ref = r;
            continue;
        }
        assert_memory_equal(&r.st, &ref.st, sizeof r.st);
        assert_memory_equal(&r.std, &ref.std, sizeof r.std);
        assert_int_equal(r.outliers, ref.outliers);
        assert_locs(r.out_locs, r.n_out_locs, ref.out_locs, ref.n_out_locs);
        assert_locs(r.nan_locs, r.n_nan_locs, ref.nan_locs, ref.n_nan_locs);
        assert_locs(r.inf_locs, r.n_inf_locs, ref.inf_locs, ref.n_inf_locs);
        na_result_free(&r);
    }
    static const uint64_t inf_want[2] = {20000, 30001};
    assert_locs(ref.inf_locs, ref.n_inf_locs, inf_want, 2);
    /* 14 values 300 and 50 values -250, std ~3.7: all 64 are outliers */
    static const uint64_t out_want[5] = {0, 23456, 46912, 70368, 5 * 16384};
    assert_int_equal(ref.outliers, 64);
    assert_locs(ref.out_locs, ref.n_out_locs, out_want, 5);
    assert_int_equal(ref.pass2, 1);
    assert_int_equal(ref.first_pos_inf, 20000);
    assert_int_equal(ref.first_neg_inf, 30001);
    na_result_free(&ref);
    free(x);
}

/* F64 1e8 + N(0,1): std 1 to 1e-9 relative (DESIGN.md). The reference is
 * the two-pass std of the noise itself (x - 1e8 is exact here). */
static void test_cancellation_f64(void **state)
{
    (void)state;
    enum { N = 200003 };
    double *x = malloc(N * sizeof *x), *z = malloc(N * sizeof *z);
    assert_true(x && z);
    uint64_t s = 88172645463325252ull;
    for (int i = 0; i < N; i += 2) { /* Box-Muller on xorshift64 */
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double u1 = ((double)(s >> 11) + 1.0) / 9007199254740993.0;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double u2 = (double)(s >> 11) / 9007199254740992.0;
        double rr = sqrt(-2.0 * log(u1));
        x[i] = 1e8 + rr * cos(6.283185307179586 * u2);
        if (i + 1 < N)
            x[i + 1] = 1e8 + rr * sin(6.283185307179586 * u2);
    }
    double mz = 0, m2 = 0;
    for (int i = 0; i < N; i++)
        mz += (z[i] = x[i] - 1e8);
    mz /= N;
    for (int i = 0; i < N; i++)
        m2 += (z[i] - mz) * (z[i] - mz);
    double want = sqrt(m2 / N);
    msrc_t m;
    msrc_init(&m, x, N * 8, 1 << 20, 8);
    na_tensor_t t = tensor("w", NA_DT_F64, NA_LITTLE, N, 8, &m);
    na_scan_opts_t o = opts(3, 1 << 20, 5);
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_close(r.std, want, 1e-9, 0);
    assert_close(r.st.mean, 1e8 + mz, 1e-12, r.std); /* DESIGN.md tolerance */
    assert_true(fabs(r.std - 1.0) < 0.01);
    na_result_free(&r);
    free(x);
    free(z);
}

/* 1e9 + N(0, 1e-3) in F64 over 13 blocks: an ulp of 1e9 (1.2e-7) is a
 * hundredth of the difference between two block means (~8e-6), so block
 * means merged as plain doubles gave a std 2e-7 relative off (a tester's
 * report; numpy's own two-pass std is ~4e-9 off). With the corrected
 * two-pass block sums and the merge of the means' low parts (stats.c) the
 * std is that of the noise x - 1e9 (exact here, Sterbenz) to 1e-9, and the
 * mean is the double nearest 1e9 + mean(noise). */
static void test_offset_tiny_spread(void **state)
{
    (void)state;
    enum { N = 200003 };
    double *x = malloc(N * sizeof *x);
    assert_true(x != NULL);
    uint64_t s = 2463534242ull;
    for (int i = 0; i < N; i++) { /* sum of 4 uniforms: mean 0, std ~1e-3 */
        double u = 0;
        for (int k = 0; k < 4; k++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            u += (double)(s >> 11) / 9007199254740992.0 - 0.5;
        }
        x[i] = 1e9 + u * 1.7320508075688772e-3;
    }
    /* reference: the noise, exactly, then two-pass in long double */
    long double mz = 0, m2 = 0;
    for (int i = 0; i < N; i++)
        mz += (long double)(x[i] - 1e9);
    mz /= N;
    for (int i = 0; i < N; i++)
        m2 += ((long double)(x[i] - 1e9) - mz) * ((long double)(x[i] - 1e9) - mz);
    double want = (double)sqrtl(m2 / N);
    msrc_t m;
    msrc_init(&m, x, N * 8, 1 << 20, 8);
    na_tensor_t t = tensor("w", NA_DT_F64, NA_LITTLE, N, 8, &m);
    for (int th = 1; th <= 3; th += 2) {
        na_scan_opts_t o = opts(3, 1 << 20, 5);
        o.threads = th;
        na_result_t r;
        na_err_t err;
        assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
        assert_close(r.std, want, 1e-9, 0);
        assert_true(fabs(r.std - 1e-3) < 1e-5);
        assert_true(fabsl((long double)r.st.mean - (1e9L + mz)) <= 0.5000001L * 1.1920928955078125e-7L);
        na_result_free(&r);
    }
    free(x);
}

/* Every element NaN (quiet, negative quiet, signalling): nan 3, no value
 * statistics, no second pass. */
static void test_all_nan(void **state)
{
    (void)state;
    uint32_t bits[3] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u};
    msrc_t m;
    msrc_init(&m, bits, sizeof bits, 1 << 20, 4);
    na_tensor_t t = tensor("w", NA_DT_F32, NA_LITTLE, 3, 4, &m);
    na_scan_opts_t o = opts(0, 1 << 20, 5);
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_int_equal(r.st.nan, 3);
    assert_int_equal(r.st.finite, 0);
    assert_int_equal(r.st.elements, 3);
    assert_true(isnan(r.st.min) && isnan(r.st.max) && isnan(r.st.mean) && isnan(r.std));
    assert_int_equal(r.pass2, 0);
    assert_int_equal(r.outliers, 0);
    static const uint64_t want[3] = {0, 1, 2};
    assert_locs(r.nan_locs, r.n_nan_locs, want, 3);
    na_result_free(&r);
}

/* F16 [1.0, 65504, +Inf, -Inf] (numpy: finite mean 32752.5, std 32751.5). */
static void test_f16_inf(void **state)
{
    (void)state;
    uint16_t h[4] = {0x3C00, 0x7BFF, 0x7C00, 0xFC00};
    msrc_t m;
    msrc_init(&m, h, sizeof h, 1 << 20, 2);
    na_tensor_t t = tensor("h", NA_DT_F16, NA_LITTLE, 4, 2, &m);
    na_scan_opts_t o = opts(2, 1 << 20, 5);
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_int_equal(r.st.pos_inf, 1);
    assert_int_equal(r.st.neg_inf, 1);
    assert_int_equal(r.st.nan, 0);
    assert_int_equal(r.st.finite, 2);
    assert_true(r.st.max == 65504.0 && r.st.min == 1.0);
    assert_true(r.st.mean == 32752.5 && r.std == 32751.5);
    static const uint64_t want[2] = {2, 3};
    assert_locs(r.inf_locs, r.n_inf_locs, want, 2);
    assert_int_equal(r.first_pos_inf, 2);
    assert_int_equal(r.first_neg_inf, 3);
    na_result_free(&r);
}

/* Subnormals are counted in the tensor's own dtype, from its bits. */
static void test_subnormals(void **state)
{
    (void)state;
    struct {
        na_dtype_t dt;
        uint32_t size;
        uint64_t codes[6];
        uint64_t sub, zeros;
    } cases[] = {
        /* F16 0x0001, 0x03FF, 0x8001 subnormal; 0x0400 smallest normal */
        {NA_DT_F16, 2, {0x0001, 0x03FF, 0x0400, 0x8001, 0x0000, 0x8000}, 3, 2},
        {NA_DT_BF16, 2, {0x0001, 0x007F, 0x0080, 0x8001, 0x0000, 0x3F80}, 3, 1},
        {NA_DT_F32, 4, {0x00000001, 0x007FFFFF, 0x00800000, 0x80000001, 0, 0x80000000}, 3, 2},
        {NA_DT_F64, 8, {1, 0x000FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x8000000000000001ull,
                        0, 0x3FF0000000000000ull}, 3, 1},
        {NA_DT_F8_E4M3, 1, {0x01, 0x07, 0x08, 0x81, 0x00, 0x80}, 3, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned char buf[48];
        for (int i = 0; i < 6; i++)
            memcpy(buf + i * cases[c].size, &cases[c].codes[i], cases[c].size); /* LE host */
        msrc_t m;
        msrc_init(&m, buf, 6 * cases[c].size, 1 << 20, cases[c].size);
        na_tensor_t t = tensor("s", cases[c].dt, NA_LITTLE, 6, cases[c].size, &m);
        na_scan_opts_t o = opts(1, 1 << 20, 5);
        na_result_t r;
        na_err_t err;
        assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
        assert_int_equal(r.st.subnormal, cases[c].sub);
        assert_int_equal(r.st.zeros, cases[c].zeros);
        assert_int_equal(r.st.finite, 6);
        na_result_free(&r);
    }
}

/* Every 16-bit code once, as F16 and as BF16 (long enough for the vector
 * loops and the F16C path). numpy / ml_dtypes:
 *   x = np.arange(65536, dtype=np.uint16).view(DT).astype(np.float64)
 *   F16:  nan 2046, +inf 1, -inf 1, zeros 2, finite 63488, mean 0.0,
 *         std 10377.446380316504, min/max -+65504, first NaN 31745
 *   BF16: nan 254, zeros 2, finite 65280, mean 0.0,
 *         std 1.8745832858274596e+37, max 3.3895313892515355e+38,
 *         first NaN 32641. Subnormals: 2 * 1023 (F16), 2 * 127 (BF16).
 *   outliers: np.nonzero(np.isfinite(x) & (abs(x - m) > 6*s)): F16 204
 *   from 31642, BF16 428 from 32426. */
static void test_all_16bit_codes(void **state)
{
    (void)state;
    uint16_t *h = malloc(65536 * 2);
    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    struct {
        na_dtype_t dt;
        uint64_t nan, finite, sub, first_nan, pinf, ninf, out, first_out;
        double std, max;
    } cases[] = {
        {NA_DT_F16, 2046, 63488, 2046, 31745, 31744, 64512, 204, 31642, 10377.446380316504,
         65504.0},
        {NA_DT_BF16, 254, 65280, 254, 32641, 32640, 65408, 428, 32426, 1.8745832858274596e+37,
         3.3895313892515355e+38},
    };
    for (size_t c = 0; c < 2; c++) {
        msrc_t m;
        msrc_init(&m, h, 65536 * 2, 1 << 14, 2);
        na_tensor_t t = tensor("all", cases[c].dt, NA_LITTLE, 65536, 2, &m);
        na_scan_opts_t o = opts(2, 1 << 14, 3);
        na_result_t r;
        na_err_t err;
        assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
        assert_int_equal(r.st.nan, cases[c].nan);
        assert_int_equal(r.st.pos_inf, 1);
        assert_int_equal(r.st.neg_inf, 1);
        assert_int_equal(r.st.zeros, 2);
        assert_int_equal(r.st.subnormal, cases[c].sub);
        assert_int_equal(r.st.finite, cases[c].finite);
        assert_true(r.st.max == cases[c].max && r.st.min == -cases[c].max);
        assert_true(fabs(r.st.mean) <= 1e-12 * cases[c].std);
        assert_close(r.std, cases[c].std, 1e-12, 0);
        assert_int_equal(r.nan_locs[0], cases[c].first_nan);
        assert_int_equal(r.first_pos_inf, cases[c].pinf);
        assert_int_equal(r.first_neg_inf, cases[c].ninf);
        assert_int_equal(r.outliers, cases[c].out);
        assert_int_equal(r.out_locs[0], cases[c].first_out);
        assert_int_equal(r.out_locs[2], cases[c].first_out + 2);
        na_result_free(&r);
    }
    free(h);
}

/* NaNs written in scattered order across windows: locations ascending,
 * the first max_locations only; max_locations 0 keeps counts only. */
static void test_location_order(void **state)
{
    (void)state;
    enum { N = 40000 };
    float *x = calloc(N, sizeof *x);
    static const uint64_t pos[] = {39999, 17, 16384, 4095, 4096, 25000, 3};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        x[pos[i]] = NAN;
    for (size_t i = 0; i < N; i++)
        if (i % 1000 == 999 && !isnan(x[i]))
            x[i] = 1.0f;
    msrc_t m;
    msrc_init(&m, x, N * 4, 4096 * 4, 4);
    na_tensor_t t = tensor("n", NA_DT_F32, NA_LITTLE, N, 4, &m);
    na_scan_opts_t o = opts(3, 4096 * 4, 4);
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_int_equal(r.st.nan, 7);
    static const uint64_t want[4] = {3, 17, 4095, 4096};
    assert_locs(r.nan_locs, r.n_nan_locs, want, 4);
    na_result_free(&r);

    o.max_locations = 0;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_int_equal(r.st.nan, 7);
    assert_int_equal(r.n_nan_locs, 0);
    assert_null(r.nan_locs);
    na_result_free(&r);
    free(x);
}

/* The same values stored big-endian give the same result, for the fast
 * kernels (F32, F64, F16, BF16) and the decoded path (I32, I16). */
static void test_big_endian(void **state)
{
    (void)state;
    struct {
        na_dtype_t dt;
        unsigned size;
        uint64_t codes[5];
    } cases[] = {
        {NA_DT_F32, 4, {0x3F800000, 0xC0000000, 0x7FC00000, 0x40600000, 0x7F800000}},
        {NA_DT_F64, 8, {0x3FF0000000000000ull, 0xC000000000000000ull, 0x7FF8000000000000ull,
                        0x400C000000000000ull, 0x7FF0000000000000ull}},
        {NA_DT_F16, 2, {0x3C00, 0xC000, 0x7E00, 0x4300, 0x7C00}},
        {NA_DT_BF16, 2, {0x3F80, 0xC000, 0x7FC0, 0x4060, 0x7F80}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned char be[40];
        unsigned es = cases[c].size;
        for (int i = 0; i < 5; i++)
            for (unsigned b = 0; b < es; b++)
                be[i * es + b] = (unsigned char)(cases[c].codes[i] >> (8 * (es - 1 - b)));
        msrc_t m;
        msrc_init(&m, be, 5 * es, 1 << 20, es);
        na_tensor_t t = tensor("b", cases[c].dt, NA_BIG, 5, es, &m);
        na_scan_opts_t o = opts(1, 1 << 20, 5);
        na_result_t r;
        na_err_t err;
        assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
        /* values 1, -2, NaN, 3.5, +Inf */
        assert_int_equal(r.st.nan, 1);
        assert_int_equal(r.st.pos_inf, 1);
        assert_int_equal(r.st.finite, 3);
        assert_true(r.st.min == -2.0 && r.st.max == 3.5 && r.st.mean == 2.5 / 3);
        assert_int_equal(r.nan_locs[0], 2);
        assert_int_equal(r.inf_locs[0], 4);
        na_result_free(&r);
    }
    /* I32 big-endian {-5, 7, 0, 100000}: numpy mean 25000.5 */
    unsigned char bi[16] = {0xFF, 0xFF, 0xFF, 0xFB, 0, 0, 0, 7, 0, 0, 0, 0, 0, 1, 0x86, 0xA0};
    msrc_t m;
    msrc_init(&m, bi, 16, 1 << 20, 4);
    na_tensor_t t = tensor("i", NA_DT_I32, NA_BIG, 4, 4, &m);
    na_scan_opts_t o = opts(1, 1 << 20, 5);
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_true(r.st.min == -5.0 && r.st.max == 100000.0 && r.st.mean == 25000.5);
    assert_int_equal(r.st.zeros, 1);
    na_result_free(&r);
}

/* C64 parts: stride 8, offset 0 (real) and 4 (imag); the imaginary part
 * holds a NaN and an outlier, the real part is clean. */
static void test_c64_stride(void **state)
{
    (void)state;
    enum { N = 20000 };
    float *c = malloc(2 * N * sizeof *c);
    for (int i = 0; i < N; i++) {
        c[2 * i] = (float)(i % 10);      /* real: 0..9 */
        c[2 * i + 1] = (float)(i % 4);   /* imag: 0..3 */
    }
    c[2 * 17000 + 1] = NAN;
    c[2 * 18000 + 1] = 1e6f;
    for (uint32_t part = 0; part < 2; part++) {
        msrc_t m;
        msrc_init(&m, c, 2 * N * 4, 4096 * 8, 8);
        na_tensor_t t = tensor(part ? "z.imag" : "z.real", NA_DT_F32, NA_LITTLE, N, 8, &m);
        t.stored = NA_DT_C64;
        t.elem_offset = 4 * part;
        na_scan_opts_t o = opts(2, 4096 * 8, 5);
        na_result_t r;
        na_err_t err;
        assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
        if (part == 0) {
            assert_int_equal(r.st.finite, N);
            assert_true(r.st.min == 0.0 && r.st.max == 9.0 && r.st.mean == 4.5);
            assert_int_equal(r.outliers, 0);
            assert_int_equal(r.st.zeros, N / 10);
        } else {
            assert_int_equal(r.st.nan, 1);
            assert_int_equal(r.nan_locs[0], 17000);
            assert_true(r.st.max == 1e6);
            assert_int_equal(r.outliers, 1);
            assert_int_equal(r.out_locs[0], 18000);
        }
        na_result_free(&r);
    }
    free(c);
}

/* Constant data: std exactly 0 (0.1f repeated rounds m2 above 0 in a
 * naive sum), no outliers, no second pass. */
static void test_constant(void **state)
{
    (void)state;
    enum { N = 100003 };
    float *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++)
        x[i] = 0.1f;
    msrc_t m;
    msrc_init(&m, x, N * 4, 1 << 16, 4);
    na_tensor_t t = tensor("c", NA_DT_F32, NA_LITTLE, N, 4, &m);
    na_scan_opts_t o = opts(2, 1 << 16, 5);
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_true(r.std == 0.0 && signbit(r.std) == 0);
    assert_true(r.st.min == (double)0.1f && r.st.max == (double)0.1f);
    assert_int_equal(r.outliers, 0);
    assert_int_equal(r.pass2, 0);
    na_result_free(&r);
    free(x);
}

/* 0 elements: nothing read, counts 0, statistics NaN. */
static void test_empty(void **state)
{
    (void)state;
    msrc_t m;
    msrc_init(&m, "", 0, 1 << 20, 4);
    na_tensor_t t = tensor("e", NA_DT_F32, NA_LITTLE, 0, 4, &m);
    t.shape[0] = 0;
    na_scan_opts_t o = opts(2, 1 << 20, 5);
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_int_equal(m.calls, 0);
    assert_int_equal(r.st.elements, 0);
    assert_true(isnan(r.st.mean) && isnan(r.std) && isnan(r.st.min));
    assert_int_equal(r.n_nan_locs + r.n_inf_locs + r.n_out_locs, 0);
    na_result_free(&r);
}

/* A failing read: its status and message come back, the result is empty;
 * a source that sets no message gets one naming the tensor. */
static void test_source_error(void **state)
{
    (void)state;
    float *x = outlier_data();
    msrc_t m;
    msrc_init(&m, x, OUT_N * 4, 16384 * 4, 4);
    na_tensor_t t = tensor("w", NA_DT_F32, NA_LITTLE, OUT_N, 4, &m);
    na_scan_opts_t o = opts(2, 16384 * 4, 5);
    na_result_t r;
    na_err_t err;
    m.fail_call = 2;
    m.fail_st = NA_E_IO;
    m.fail_msg = "w: data truncated: 65536 bytes past the end";
    assert_int_equal(scan(&t, &o, &r, &err), NA_E_IO);
    assert_string_equal(err.msg, "w: data truncated: 65536 bytes past the end");
    assert_null(r.nan_locs);
    assert_int_equal(r.st.elements, 0);

    o.window_bytes = 4000; /* 1000-element blocks: pass 2 reads (see above) */
    m.fail_call = 51;      /* the first read of pass 2, after 50 in pass 1 */
    assert_int_equal(scan(&t, &o, &r, &err), NA_E_IO);
    assert_null(r.out_locs);
    assert_int_equal(m.calls, 51);

    m.fail_call = 1;
    m.fail_msg = NULL;
    assert_int_equal(scan(&t, &o, &r, &err), NA_E_IO);
    assert_non_null(strstr(err.msg, "w: read error"));
    free(x);
}

/* Unsupported dtype and bad layout fail closed before any read. */
static void test_unsupported(void **state)
{
    (void)state;
    msrc_t m;
    msrc_init(&m, "\0\0\0\0", 4, 1 << 20, 1);
    na_tensor_t t = tensor("q", NA_DT_F4, NA_LITTLE, 8, 1, &m);
    na_scan_opts_t o = opts(1, 1 << 20, 5);
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_E_UNSUPPORTED);
    assert_string_equal(err.msg, "q: unsupported dtype F4");
    t.dtype = NA_DT_F32;
    t.elem_stride = 2;
    assert_int_equal(scan(&t, &o, &r, &err), NA_E_INTERNAL);
    assert_int_equal(m.calls, 0);
}

/* 1-byte (table) and wide-integer (decoded) paths. */
static void test_lut_and_integers(void **state)
{
    (void)state;
    /* F8_E4M3: 0x38 = 1.0, 0x7F and 0xFF NaN, 0x00 zero, 0xB8 = -1.0, 0x7E = 448 */
    unsigned char e4[6] = {0x38, 0x7F, 0x00, 0xB8, 0xFF, 0x7E};
    msrc_t m;
    msrc_init(&m, e4, 6, 1 << 20, 1);
    na_tensor_t t = tensor("f8", NA_DT_F8_E4M3, NA_LITTLE, 6, 1, &m);
    na_scan_opts_t o = opts(2, 1 << 20, 5);
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_int_equal(r.st.nan, 2);
    assert_int_equal(r.st.pos_inf + r.st.neg_inf, 0);
    assert_int_equal(r.st.zeros, 1);
    assert_true(r.st.min == -1.0 && r.st.max == 448.0 && r.st.mean == 112.0);
    static const uint64_t nan_at[2] = {1, 4};
    assert_locs(r.nan_locs, r.n_nan_locs, nan_at, 2);
    na_result_free(&r);

    /* I64 {-3, 2^53 + 1, 0}: 2^53 + 1 rounds to 2^53 as astype(float64) */
    int64_t i64[3] = {-3, 9007199254740993ll, 0};
    msrc_init(&m, i64, sizeof i64, 1 << 20, 8);
    t = tensor("i", NA_DT_I64, NA_LITTLE, 3, 8, &m);
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_true(r.st.max == 9007199254740992.0 && r.st.min == -3.0);
    assert_int_equal(r.st.zeros, 1);
    assert_int_equal(r.st.finite, 3);
    na_result_free(&r);
}

static void count_progress(void *ud, uint64_t bytes) { *(uint64_t *)ud += bytes; }

/* Progress adds up to the tensor's bytes; pass 2 reads only windows that
 * can hold an outlier (here: the first of four). */
static void test_progress_and_skipping(void **state)
{
    (void)state;
    enum { N = 4 * 16384 };
    float *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 7);
    x[10] = 1e5f;
    msrc_t m;
    msrc_init(&m, x, N * 4, 16384 * 4, 4);
    na_tensor_t t = tensor("p", NA_DT_F32, NA_LITTLE, N, 4, &m);
    na_scan_opts_t o = opts(2, 16384 * 4, 5);
    uint64_t seen = 0;
    o.progress = count_progress;
    o.progress_ud = &seen;
    na_result_t r;
    na_err_t err;
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_int_equal(seen, N * 4);
    assert_int_equal(r.pass2, 1);
    assert_int_equal(r.outliers, 1);
    assert_int_equal(r.out_locs[0], 10);
    assert_int_equal(m.calls, 4 + 1);
    na_result_free(&r);

    o.zscore = 0; /* disabled: no pass 2, no count */
    assert_int_equal(scan(&t, &o, &r, &err), NA_OK);
    assert_int_equal(r.outliers_checked, 0);
    assert_int_equal(r.pass2, 0);
    assert_int_equal(m.calls, 4);
    na_result_free(&r);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outliers_across_boundaries),
        cmocka_unit_test(test_threads_bit_identical),
        cmocka_unit_test(test_outlier_boundary_exact),
        cmocka_unit_test(test_cancellation_f64),
        cmocka_unit_test(test_offset_tiny_spread),
        cmocka_unit_test(test_all_nan),
        cmocka_unit_test(test_f16_inf),
        cmocka_unit_test(test_subnormals),
        cmocka_unit_test(test_all_16bit_codes),
        cmocka_unit_test(test_location_order),
        cmocka_unit_test(test_big_endian),
        cmocka_unit_test(test_c64_stride),
        cmocka_unit_test(test_constant),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_source_error),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_lut_and_integers),
        cmocka_unit_test(test_progress_and_skipping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
