/*
 * gpucheck.c - nanaudit-gpucheck, the GPU self-test and benchmark that
 * tests/gpu/run.sh drives on a machine with a GPU (built with the CUDA
 * backend only; not installed).
 *
 *   nanaudit-gpucheck agree [DEVICE]   CPU vs GPU backends on generated
 *       tensors of every decodable dtype, both byte orders, a strided
 *       (complex-part) layout, windows small enough that each tensor
 *       crosses several, and K = 6, 1.5 and 0.5 so pass 2 runs. Counts,
 *       min, max, max|x|, outlier counts and all locations must be equal;
 *       mean and std within 1e-12 (|mean| + std) (DESIGN.md); two GPU runs
 *       must be bit-identical. Then F64 data far from 0 that varies
 *       little (agree_narrow): std within 1e-9 of the CPU's. Prints one
 *       line per case; exit 1 on any difference.
 *   nanaudit-gpucheck bench [DEVICE]   pinned host-to-device bandwidth,
 *       device memory bandwidth (device-to-device copy, read + write, and
 *       the theoretical figure from cudaDeviceGetAttribute), and the
 *       pass-1 / pass-2 kernel throughput on device-resident F32 and BF16
 *       (GB/s of tensor data), as "key value" lines run.sh reads.
 *   nanaudit-gpucheck e2e FILE [DEVICE]   end to end from a file (page
 *       cache, mapped windows, pinned copy, transfer, kernels, merge):
 *       the GB/s of scanning every tensor of FILE on the GPU and on the
 *       CPU, timed inside one process after CUDA is initialised, so the
 *       one-time context creation is not counted (it is in the CLI runs).
 */
#include "format.h" /* na_input_open: the readers nanaudit uses */
#include "na_cuda.h"

#include <cuda_runtime_api.h> /* events, cudaMemcpy */
#include <math.h>             /* fabs, isnan */
#include <stdio.h>            /* printf */
#include <stdlib.h>           /* malloc, atoi */
#include <string.h>           /* memcmp, strcmp */
#include <time.h>             /* clock_gettime */

/* ---- a memory source for na_tensor_t ---- */
typedef struct membuf {
    const unsigned char *p;
    uint64_t len;
} membuf_t;

static na_status_t mem_read(void *ctx, uint64_t off, size_t len, const uint8_t **ptr, na_err_t *err)
{
    membuf_t *m = ctx;
    if (off > m->len || len > m->len - off)
        return na_err_set(err, NA_E_IO, "read past the end");
    *ptr = m->p + off;
    return NA_OK;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) /* splitmix64: reproducible data for every run */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Fill n elements of size es (stride st, offset of) with data: for floats
 * mostly finite values of moderate exponent, some special codes and a few
 * large values (outliers); for the rest random bytes. */
static void fill(unsigned char *buf, na_dtype_t dt, size_t n, unsigned es, unsigned st,
                 unsigned of, int big)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char *p = buf + i * st + of;
        uint64_t r = rnd(), u = r;
        int special = (r >> 56) == 0; /* 1 in 256: raw random bits (NaN/Inf/subnormal) */
        int large = (r >> 52) == 1;   /* ~1 in 4096: an outlier */
        switch (dt) {
        case NA_DT_F32: /* exponent 120..135 */
            u = special ? r : ((r & 0x807fffffu) | ((uint64_t)(120 + (r >> 40) % 16) << 23));
            if (large) u = 0x461c4000u; /* 1e4 */
            break;
        case NA_DT_F64:
            u = special ? r : ((r & 0x800fffffffffffffull) | ((uint64_t)(1016 + (r >> 40) % 16) << 52));
            if (large) u = 0x40c3880000000000ull; /* 1e4 */
            break;
        case NA_DT_F16:
            u = special ? r : ((r & 0x83ffu) | ((uint64_t)(10 + (r >> 40) % 10) << 10));
            if (large) u = 0x7000u; /* 8192 */
            break;
        case NA_DT_BF16:
            u = special ? r : ((r & 0x807fu) | ((uint64_t)(120 + (r >> 40) % 16) << 7));
            if (large) u = 0x4620u;
            break;
        default:
            break;
        }
        uint64_t hi = r; /* F80: bytes 8-9 are sign and exponent */
        if (dt == NA_DT_F80 && !special) { /* J = 1, exponent 16376..16391 */
            u = r | (1ull << 63);
            hi = (r & 0x8000u) | (16376u + (r >> 40) % 16);
        }
        for (unsigned b = 0; b < es; b++)
            p[big ? es - 1 - b : b] = (unsigned char)(b < 8 ? u >> (8 * b) : hi >> (8 * (b - 8)));
    }
}

static int same_double(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static int same_locs(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    return na == nb && (na == 0 || !memcmp(a, b, na * sizeof *a));
}

/* 0 when r (GPU) matches c (CPU) as DESIGN.md requires; prints the first
 * difference otherwise. */
static int compare(const char *what, const na_result_t *c, const na_result_t *r)
{
    const na_stats_t *a = &c->st, *b = &r->st;
    const char *bad = NULL;
    if (a->elements != b->elements || a->nan != b->nan || a->pos_inf != b->pos_inf ||
        a->neg_inf != b->neg_inf || a->zeros != b->zeros || a->subnormal != b->subnormal ||
        a->finite != b->finite)
        bad = "counts";
    else if (!same_double(a->min, b->min) || !same_double(a->max, b->max) ||
             !same_double(a->abs_max, b->abs_max))
        bad = "min/max";
    else if (c->outliers != r->outliers) /* pass2 itself may differ: the CPU skips re-reads */
        bad = "outliers";
    else if (!same_locs(c->nan_locs, c->n_nan_locs, r->nan_locs, r->n_nan_locs) ||
             !same_locs(c->inf_locs, c->n_inf_locs, r->inf_locs, r->n_inf_locs) ||
             !same_locs(c->out_locs, c->n_out_locs, r->out_locs, r->n_out_locs) ||
             c->first_pos_inf != r->first_pos_inf || c->first_neg_inf != r->first_neg_inf)
        bad = "locations";
    else if (a->finite) {
        double tol = 1e-12 * (fabs(a->mean) + c->std);
        if (!(fabs(a->mean - b->mean) <= tol) || !(fabs(c->std - r->std) <= tol))
            bad = "mean/std";
    }
    if (!bad)
        return 0;
    printf("FAIL %s: %s differ: cpu n=%llu nan=%llu inf=%llu/%llu fin=%llu min=%.17g max=%.17g "
           "mean=%.17g std=%.17g out=%llu | gpu nan=%llu inf=%llu/%llu fin=%llu min=%.17g "
           "max=%.17g mean=%.17g std=%.17g out=%llu\n", what, bad,
           (unsigned long long)a->elements, (unsigned long long)a->nan,
           (unsigned long long)a->pos_inf, (unsigned long long)a->neg_inf,
           (unsigned long long)a->finite, a->min, a->max, a->mean, c->std,
           (unsigned long long)c->outliers, (unsigned long long)b->nan,
           (unsigned long long)b->pos_inf, (unsigned long long)b->neg_inf,
           (unsigned long long)b->finite, b->min, b->max, b->mean, r->std,
           (unsigned long long)r->outliers);
    return 1;
}

static int same_result(const na_result_t *x, const na_result_t *y)
{
    return !memcmp(&x->st, &y->st, sizeof x->st) && x->outliers == y->outliers &&
           same_double(x->std, y->std);
}

/* Data far from 0 that varies little (F64 1e9 + uniform noise of +-1e-3,
 * one block in the CPU's sense and many): its std rests on each block's
 * mean_lo (lib/stats_block.h), which the GPU kernels left 0 until
 * 2026-12-02: a relative error of ~1e-6 in the std. Now CPU and GPU must
 * agree to 1e-9 of the std. 0 when they do. */
static int agree_narrow(na_backend_t *cpu, na_backend_t *gpu)
{
    const size_t n = 1000003;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return 1;
    for (size_t i = 0; i < n; i++)
        v[i] = 1e9 + ((double)(rnd() >> 11) * 0x1p-53 - 0.5) * 2e-3;
    membuf_t m = {(unsigned char *)v, (uint64_t)n * sizeof *v};
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = "narrow";
    t.dtype = t.stored = NA_DT_F64;
    t.ndim = 1;
    t.shape[0] = t.elements = n;
    t.elem_stride = 8;
    t.src.read = mem_read;
    t.src.ctx = &m;
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    o.window_bytes = (size_t)1 << 22;
    na_result_t rc, rg;
    na_err_t err = {{0}};
    int bad = 1;
    if (cpu->scan_tensor(cpu->self, &t, &o, &rc, &err) == NA_OK) {
        if (gpu->scan_tensor(gpu->self, &t, &o, &rg, &err) == NA_OK) {
            double ds = fabs(rc.std - rg.std);
            bad = compare("F64 1e9 + noise", &rc, &rg) || !(ds <= 1e-9 * rc.std);
            printf("%s F64 1e9 + noise 1e-3: std cpu %.17g gpu %.17g (|d|/std %.2e)\n",
                   bad ? "FAIL" : "ok  ", rc.std, rg.std, ds / rc.std);
            na_result_free(&rg);
        }
        na_result_free(&rc);
    }
    if (err.msg[0])
        printf("FAIL F64 1e9 + noise: %s\n", err.msg);
    free(v);
    return bad;
}

static int agree(int dev)
{
    na_backend_t gpu, cpu;
    na_err_t err = {{0}};
    if (na_cuda_open(dev, &gpu, &err) != NA_OK) {
        printf("FAIL %s\n", err.msg);
        return 1;
    }
    na_backend_cpu(&cpu);
    static const na_dtype_t dts[] = {NA_DT_BOOL, NA_DT_U8, NA_DT_I8, NA_DT_U16, NA_DT_I16,
        NA_DT_U32, NA_DT_I32, NA_DT_U64, NA_DT_I64, NA_DT_F16, NA_DT_BF16, NA_DT_F32,
        NA_DT_F64, NA_DT_F8_E4M3, NA_DT_F8_E5M2, NA_DT_F8_E8M0, NA_DT_F8_E4M3FNUZ,
        NA_DT_F8_E5M2FNUZ, NA_DT_F80};
    static const double ks[] = {6.0, 1.5, 0.5};
    const size_t n = 3000017; /* odd: a partial last block and window */
    int fails = 0, cases = 0;
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
        na_dtype_t dt = dts[di];
        unsigned es = dt == NA_DT_F80 ? 10 : na_dtype_bits(dt) / 8;
        for (int layout = 0; layout < 3; layout++) { /* plain, big endian, strided */
            if (layout == 1 && es == 1)
                continue;
            unsigned st = layout == 2 ? es * 2 + (dt == NA_DT_F80 ? 6 : 0) : (dt == NA_DT_F80 ? 16 : es);
            unsigned of = layout == 2 ? es : 0;
            int big = layout == 1;
            unsigned char *buf = calloc(n, st);
            if (!buf)
                return 1;
            fill(buf, dt, n, es, st, of, big);
            membuf_t m = {buf, (uint64_t)n * st};
            na_tensor_t t;
            memset(&t, 0, sizeof t);
            t.name = "t";
            t.dtype = t.stored = dt;
            t.byte_order = big ? NA_BIG : NA_LITTLE;
            t.ndim = 1;
            t.shape[0] = t.elements = n;
            t.elem_stride = st;
            t.elem_offset = of;
            t.src.read = mem_read;
            t.src.ctx = &m;
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                na_scan_opts_t o;
                na_scan_opts_init(&o);
                o.zscore = ks[ki];
                o.max_locations = 7;
                o.window_bytes = (size_t)1 << 22; /* 4 MiB: several windows in flight */
                na_result_t rc, rg, rg2;
                char what[96];
                snprintf(what, sizeof what, "%s %s K=%g", na_dtype_name(dt),
                         layout == 0 ? "plain" : layout == 1 ? "big-endian" : "strided", ks[ki]);
                na_status_t s1 = cpu.scan_tensor(cpu.self, &t, &o, &rc, &err);
                na_status_t s2 = gpu.scan_tensor(gpu.self, &t, &o, &rg, &err);
                na_status_t s3 = gpu.scan_tensor(gpu.self, &t, &o, &rg2, &err);
                cases++;
                if (s1 != NA_OK || s2 != NA_OK || s3 != NA_OK) {
                    printf("FAIL %s: status %d %d %d: %s\n", what, s1, s2, s3, err.msg);
                    fails++;
                } else if (compare(what, &rc, &rg)) {
                    fails++;
                } else if (!same_result(&rg, &rg2)) {
                    printf("FAIL %s: two GPU runs differ\n", what);
                    fails++;
                } else {
                    printf("ok   %-34s nan=%llu inf=%llu sub=%llu pass2=%d outliers=%llu "
                           "|dmean|=%.2e\n", what, (unsigned long long)rc.st.nan,
                           (unsigned long long)(rc.st.pos_inf + rc.st.neg_inf),
                           (unsigned long long)rc.st.subnormal, rc.pass2,
                           (unsigned long long)rc.outliers, fabs(rc.st.mean - rg.st.mean));
                }
                na_result_free(&rc);
                na_result_free(&rg);
                na_result_free(&rg2);
            }
            free(buf);
        }
    }
    cases++;
    fails += agree_narrow(&cpu, &gpu);
    na_backend_close(&gpu);
    printf("agree: %d of %d cases equal\n", cases - fails, cases);
    return fails != 0;
}

/* ---- bench ---- */

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

static double ms_between(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms;
}

static int bench(int dev)
{
    na_backend_t gpu;
    na_err_t err = {{0}};
    if (na_cuda_open(dev, &gpu, &err) != NA_OK) { /* checks driver and device */
        printf("FAIL %s\n", err.msg);
        return 1;
    }
    const size_t bytes = (size_t)1 << 30;
    unsigned char *h, *d1, *d2;
    cudaEvent_t e0, e1;
    CK(cudaSetDevice(dev));
    CK(cudaHostAlloc((void **)&h, bytes, cudaHostAllocDefault));
    CK(cudaMalloc((void **)&d1, bytes));
    CK(cudaMalloc((void **)&d2, bytes));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int clk = 0, bus = 0, sms = 0, major = 0, minor = 0;
    cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, dev); /* kHz */
    cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev); /* bits */
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    printf("device_cc %d.%d\ndevice_sms %d\n", major, minor, sms);
    if (clk > 0 && bus > 0) /* double data rate */
        printf("mem_bw_theoretical_gbs %.1f\n", 2.0 * clk * 1e3 * (bus / 8.0) / 1e9);
    fill(h, NA_DT_F32, bytes / 4, 4, 4, 0, 0);
    double best = 1e30;
    for (int i = 0; i < 5; i++) {
        CK(cudaEventRecord(e0, 0));
        CK(cudaMemcpyAsync(d1, h, bytes, cudaMemcpyHostToDevice, 0));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        double ms = ms_between(e0, e1);
        best = ms < best ? ms : best;
    }
    printf("h2d_pinned_gbs %.2f\n", bytes / best / 1e6);
    best = 1e30;
    for (int i = 0; i < 5; i++) {
        CK(cudaEventRecord(e0, 0));
        CK(cudaMemcpyAsync(d2, d1, bytes, cudaMemcpyDeviceToDevice, 0));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        double ms = ms_between(e0, e1);
        best = ms < best ? ms : best;
    }
    printf("d2d_copy_gbs %.1f\n", 2.0 * bytes / best / 1e6); /* read + write */
    size_t block = 16384, maxblocks = bytes / 2 / block + 1;
    na_stats_t *dst;
    unsigned long long *dcnt;
    CK(cudaMalloc((void **)&dst, maxblocks * sizeof(na_stats_t)));
    CK(cudaMalloc((void **)&dcnt, maxblocks * sizeof(unsigned long long)));
    static const na_dtype_t bdt[] = {NA_DT_F32, NA_DT_BF16};
    for (int k = 0; k < 2; k++) {
        unsigned es = na_dtype_bits(bdt[k]) / 8;
        size_t n = bytes / es;
        fill(h, bdt[k], n, es, es, 0, 0);
        CK(cudaMemcpy(d1, h, bytes, cudaMemcpyHostToDevice));
        na_gdesc_t d = {k == 0 ? NA_GK_F32 : NA_GK_BF16, es, es, 0, 0, NULL, NULL};
        for (int pass = 1; pass <= 2; pass++) {
            best = 1e30;
            for (int i = 0; i < 5; i++) {
                CK(cudaEventRecord(e0, 0));
                int rc = pass == 1 ? na_gpu_pass1(&d, d1, n, block, dst, 0)
                                   : na_gpu_pass2(&d, d1, n, block, 0.0, 4.0, dcnt, 0);
                CK((cudaError_t)rc);
                CK(cudaEventRecord(e1, 0));
                CK(cudaEventSynchronize(e1));
                double ms = ms_between(e0, e1);
                best = ms < best ? ms : best;
            }
            printf("kernel_pass%d_%s_gbs %.1f\n", pass, na_dtype_name(bdt[k]), bytes / best / 1e6);
        }
    }
    cudaFree(dst);
    cudaFree(dcnt);
    cudaFree(d1);
    cudaFree(d2);
    cudaFreeHost(h);
    na_backend_close(&gpu);
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Seconds to scan every tensor of `path` with backend b; -1 on error. */
static double scan_file(na_backend_t *b, const char *path, uint64_t *bytes)
{
    na_open_opts_t oo;
    na_input_t *in = NULL;
    na_err_t err = {{0}};
    na_open_opts_init(&oo);
    double t0 = now();
    if (na_input_open(path, &oo, &in, &err) != NA_OK) {
        printf("FAIL %s: %s\n", path, err.msg);
        return -1;
    }
    *bytes = 0;
    for (size_t i = 0; i < na_input_count(in); i++) {
        na_tensor_t t;
        na_result_t r;
        na_scan_opts_t so;
        na_scan_opts_init(&so);
        if (na_input_tensor(in, i, &t, &err) != NA_OK ||
            b->scan_tensor(b->self, &t, &so, &r, &err) != NA_OK) {
            printf("FAIL %s: %s\n", path, err.msg);
            na_input_close(in);
            return -1;
        }
        *bytes += t.elements * t.elem_stride;
        na_result_free(&r);
    }
    na_input_close(in);
    return now() - t0;
}

static int e2e(const char *path, int dev)
{
    na_backend_t gpu, cpu;
    na_err_t err = {{0}};
    uint64_t bytes = 0;
    if (na_cuda_open(dev, &gpu, &err) != NA_OK) {
        printf("FAIL %s\n", err.msg);
        return 1;
    }
    na_backend_cpu(&cpu);
    double g1 = scan_file(&gpu, path, &bytes); /* first: allocates the pinned buffers */
    double g2 = scan_file(&gpu, path, &bytes);
    double c1 = scan_file(&cpu, path, &bytes);
    na_backend_close(&gpu);
    if (g1 < 0 || g2 < 0 || c1 < 0)
        return 1;
    printf("e2e_bytes %llu\ne2e_gpu_first_gbs %.2f\ne2e_gpu_gbs %.2f\ne2e_cpu_gbs %.2f\n",
           (unsigned long long)bytes, bytes / g1 / 1e9, bytes / g2 / 1e9, bytes / c1 / 1e9);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "e2e"))
        return e2e(argv[2], argc > 3 ? atoi(argv[3]) : 0);
    int dev = argc > 2 ? atoi(argv[2]) : 0;
    if (argc >= 2 && !strcmp(argv[1], "agree"))
        return agree(dev);
    if (argc >= 2 && !strcmp(argv[1], "bench"))
        return bench(dev);
    fprintf(stderr, "usage: nanaudit-gpucheck agree|bench [DEVICE] | e2e FILE [DEVICE]\n");
    return 2;
}
