/*
 * mmap_sum.c - the baseline of bench/run_scan.sh: map a safetensors file,
 * sum its data region as F32 (or 16-bit codes for F16/BF16) with a plain
 * OpenMP reduction, and print the bytes/s. This is about the least work a
 * scanner can do over the same bytes: one read of every page, one add per
 * element. A pass-1 scan should reach >= 80 % of it (issue 2, section 8).
 *
 *   mmap_sum FILE THREADS [ELEM_BYTES]     ELEM_BYTES 4 (default) or 2
 *
 * Output: one line "mmap_sum bytes=N seconds=S GBps=G sum=X".
 */
#include <fcntl.h>    /* open */
#include <omp.h>      /* omp_get_wtime */
#include <stdint.h>   /* uint64_t */
#include <stdio.h>    /* printf */
#include <stdlib.h>   /* atoi */
#include <string.h>   /* memcpy */
#include <sys/mman.h> /* mmap */
#include <sys/stat.h> /* fstat */
#include <unistd.h>   /* close */

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mmap_sum FILE THREADS [ELEM_BYTES]\n");
        return 2;
    }
    int threads = atoi(argv[2]);
    int eb = argc > 3 ? atoi(argv[3]) : 4;
    int fd = open(argv[1], O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        perror(argv[1]);
        return 1;
    }
    size_t size = (size_t)sb.st_size;
    const unsigned char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    uint64_t hlen;
    memcpy(&hlen, m, 8); /* safetensors: u64 LE header length */
    const unsigned char *d = m + 8 + hlen;
    size_t n = (size - 8 - hlen) / (size_t)eb;
    double t0 = omp_get_wtime(), sum = 0;
    if (eb == 4) {
        const float *f = (const float *)(const void *)d; /* data offset is 8-aligned here */
#pragma omp parallel for simd num_threads(threads) reduction(+ : sum) schedule(static)
        for (size_t i = 0; i < n; i++)
            sum += f[i];
    } else {
        const uint16_t *h = (const uint16_t *)(const void *)d;
#pragma omp parallel for simd num_threads(threads) reduction(+ : sum) schedule(static)
        for (size_t i = 0; i < n; i++)
            sum += h[i];
    }
    double dt = omp_get_wtime() - t0;
    printf("mmap_sum bytes=%zu seconds=%.4f GBps=%.3f sum=%g\n", n * (size_t)eb, dt,
           (double)n * eb / dt / 1e9, sum);
    munmap((void *)m, size);
    close(fd);
    return 0;
}
