/*
 * bench_scan.c - time na_scan_tensor alone (no reader, no report) on the
 * single tensor of a safetensors file written by bench/run_scan.sh: the
 * file is mapped whole and the read callback hands out pointers into the
 * mapping. Used to measure kernel choices (block size, target_clones)
 * apart from the CLI.
 *
 *   bench_scan FILE DTYPE THREADS ZSCORE [REPEAT]
 *
 * Prints per run: "bench_scan dtype=.. threads=.. zscore=.. seconds=..
 * GBps=.. Gelem_per_s=.. pass2=.. outliers=..".
 */
#include <fcntl.h>    /* open */
#include <omp.h>      /* omp_get_wtime */
#include <stdio.h>    /* printf */
#include <stdlib.h>   /* atoi, atof */
#include <string.h>   /* memcpy, strlen */
#include <sys/mman.h> /* mmap */
#include <sys/stat.h> /* fstat */

#include "nanaudit.h"

typedef struct {
    const unsigned char *base;
} mapsrc_t;

static na_status_t map_read(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                            na_err_t *err)
{
    (void)len;
    (void)err;
    *ptr = ((mapsrc_t *)ctx)->base + off;
    return NA_OK;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_scan FILE DTYPE THREADS ZSCORE [REPEAT]\n");
        return 2;
    }
    na_dtype_t dt = na_dtype_from_name(argv[2], strlen(argv[2]));
    int repeat = argc > 5 ? atoi(argv[5]) : 3;
    int fd = open(argv[1], O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || dt == NA_DT_INVALID) {
        fprintf(stderr, "bench_scan: cannot open %s or bad dtype %s\n", argv[1], argv[2]);
        return 1;
    }
    const unsigned char *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return 1;
    uint64_t hlen;
    memcpy(&hlen, m, 8);
    mapsrc_t src = {m + 8 + hlen};
    unsigned eb = na_dtype_bits(dt) / 8;
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = "bench";
    t.dtype = t.stored = dt;
    t.ndim = 1;
    t.elements = t.shape[0] = ((uint64_t)sb.st_size - 8 - hlen) / eb;
    t.elem_stride = eb;
    t.src.read = map_read;
    t.src.ctx = &src;
    na_scan_opts_t o;
    na_scan_opts_init(&o);
    o.threads = atoi(argv[3]);
    o.zscore = atof(argv[4]);
    for (int i = 0; i < repeat; i++) {
        na_result_t r;
        na_err_t err;
        double t0 = omp_get_wtime();
        na_status_t st = na_scan_tensor(&t, &o, &r, &err);
        double dt_s = omp_get_wtime() - t0;
        if (st != NA_OK) {
            fprintf(stderr, "bench_scan: %s\n", err.msg);
            return 1;
        }
        printf("bench_scan dtype=%s threads=%d zscore=%g seconds=%.4f GBps=%.3f "
               "Gelem_per_s=%.3f pass2=%d outliers=%llu\n",
               argv[2], o.threads, o.zscore, dt_s, (double)t.elements * eb / dt_s / 1e9,
               (double)t.elements / dt_s / 1e9, r.pass2, (unsigned long long)r.outliers);
        na_result_free(&r);
    }
    return 0;
}
