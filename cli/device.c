/*
 * device.c - `--device auto|cpu|cuda[:N]`: which backend (lib/'s
 * na_backend_t) scans each tensor, and what the report says about it.
 *
 *  - cpu: the OpenMP engine for everything.
 *  - cuda[:N]: GPU N (default 0) for every tensor; a machine without a
 *    usable GPU is an environment error (exit 4, one line), decided before
 *    any input is opened.
 *  - auto (default): the GPU when a usable one exists and the run is
 *    large enough to repay CUDA's start-up (cli_device_plan), and then
 *    only for tensors of at least CLI_AUTO_GPU_BYTES; the CPU otherwise.
 *    CUDA is initialised only when the first such tensor comes, so small
 *    scans never pay for it, and a failure (no driver, no device, old
 *    driver) leaves a note in the report and the CPU doing the work.
 * clean (cli_device_clean) follows the same rules for its write pass
 * (gpu/cuda_clean.c); its fit stays on the CPU, and a tensor the GPU
 * refuses before writing anything (missing values, unwritten chunks) is
 * cleaned on the CPU with a note.
 * Why 32 MiB per tensor: a GPU window is 16 MiB, so smaller tensors
 * cannot fill the copy/transfer/kernel pipeline, and their CPU scan takes
 * milliseconds.
 * Why a rule on the run's total size: measured on an H200 host with 16
 * cores (bench/RESULTS.md), CUDA start-up costs ~0.45 s once per process;
 * after it the GPU scans F32 at ~50 GB/s end to end (page cache, pinned
 * copies) against ~39 GB/s for the CPU, i.e. ~2.4 GB/s per CPU thread.
 * With T threads the CPU takes S / (T * 2.4 GB/s) for S bytes, the GPU
 * 0.45 s + S / (50 GB/s); auto picks the GPU only when the second is
 * smaller: from ~2.4 GB with 2 threads, ~74 GB with 16, never when the
 * threads alone outrun the GPU's transfer rate. The per-thread rate is
 * the lower (H200 host's) of the two machines measured, which favours the
 * GPU; BF16/F16 scan at about the same elements/s as F32 on the CPU, so
 * their files (half the bytes per element) are treated alike.
 */
#include "cli.h"
#include "na_cuda.h"

#include <omp.h>    /* omp_get_max_threads */
#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* strtoul */
#include <string.h> /* strcmp, strncmp, memset */

#define CLI_AUTO_GPU_BYTES (32ull << 20)
#define CLI_AUTO_START_S 0.45         /* CUDA start-up, seconds */
#define CLI_AUTO_GPU_BPS 50e9         /* GPU end to end, bytes/s */
#define CLI_AUTO_CPU_BPS_THREAD 2.4e9 /* CPU scan per thread, bytes/s */

/* The run size in bytes above which the GPU repays its start-up with
 * `threads` CPU threads (the model above); -1: never. */
static double breakeven(int threads)
{
    double cpu = CLI_AUTO_CPU_BPS_THREAD * (threads > 0 ? threads : 1);
    if (cpu >= CLI_AUTO_GPU_BPS)
        return -1; /* the CPU is at least as fast at any size */
    /* 0.45 + S/gpu < S/cpu  <=>  S > 0.45 / (1/cpu - 1/gpu) */
    return CLI_AUTO_START_S / (1.0 / cpu - 1.0 / CLI_AUTO_GPU_BPS);
}

void cli_device_plan(cli_device_t *d, uint64_t total_bytes, int threads)
{
    if (d->mode != CLI_DEV_AUTO)
        return;
    double be = breakeven(threads > 0 ? threads : omp_get_max_threads());
    d->run_too_small = be < 0 || (double)total_bytes <= be;
}

int cli_device_parse(const char *a, int *mode, int *ordinal)
{
    *ordinal = 0;
    if (!strcmp(a, "auto")) {
        *mode = CLI_DEV_AUTO;
    } else if (!strcmp(a, "cpu")) {
        *mode = CLI_DEV_CPU;
    } else if (!strcmp(a, "cuda")) {
        *mode = CLI_DEV_CUDA;
    } else if (!strncmp(a, "cuda:", 5) && a[5] >= '0' && a[5] <= '9' && strlen(a + 5) <= 4) {
        char *end;
        unsigned long v = strtoul(a + 5, &end, 10);
        if (*end)
            return -1;
        *mode = CLI_DEV_CUDA;
        *ordinal = (int)v;
    } else {
        return -1;
    }
    return 0;
}

int cli_device_open(cli_device_t *d, int mode, int ordinal)
{
    memset(d, 0, sizeof *d);
    d->mode = mode;
    d->ordinal = ordinal;
    d->verb = "scanned";
    na_backend_cpu(&d->cpu);
    if (mode != CLI_DEV_CUDA)
        return 0;
    na_err_t err = {{0}};
    if (na_cuda_open(ordinal, &d->gpu, &err) != NA_OK) {
        cli_error(NULL, "--device cuda:%d: %s", ordinal, err.msg);
        return 4;
    }
    d->gpu_state = 1;
    return 0;
}

/* auto: open the GPU at the first large tensor; remember a failure. */
static int gpu_wanted(cli_device_t *d, const na_tensor_t *t)
{
    /* missing values, one-element scans, fill runs the CPU does not read: CPU */
    if (t->n_missing > 0 || t->constant || t->src.fill != NULL) {
        d->on_cpu_kept++;
        return 0;
    }
    if (d->mode == CLI_DEV_CUDA)
        return 1;
    if (d->mode == CLI_DEV_CPU || d->run_too_small ||
        (uint64_t)t->elements * t->elem_stride < CLI_AUTO_GPU_BYTES)
        return 0;
    if (d->gpu_state == 0) {
        na_err_t err = {{0}};
        if (!na_cuda_built()) {
            d->gpu_state = -1; /* a CPU-only build: auto is simply the CPU */
        } else if (na_cuda_open(d->ordinal, &d->gpu, &err) == NA_OK) {
            d->gpu_state = 1;
        } else {
            d->gpu_state = -1;
            snprintf(d->note, sizeof d->note,
                     "--device auto: no usable GPU (%s); %s on the CPU", err.msg, d->verb);
        }
    }
    return d->gpu_state == 1;
}

na_status_t cli_device_scan(cli_device_t *d, const na_tensor_t *t, const na_scan_opts_t *so,
                            na_result_t *r, na_err_t *err)
{
    if (gpu_wanted(d, t)) {
        na_status_t st = d->gpu.scan_tensor(d->gpu.self, t, so, r, err);
        /* auto: a CUDA failure (e.g. out of device memory) is retried on the
         * CPU; read and format errors are the data's and stand. */
        if (!(d->mode == CLI_DEV_AUTO && (st == NA_E_INTERNAL || st == NA_E_NOMEM))) {
            d->on_gpu += st == NA_OK;
            return st;
        }
        snprintf(d->note, sizeof d->note, "--device auto: %s; scanned on the CPU", err->msg);
        err->msg[0] = '\0';
    }
    d->on_cpu++;
    return d->cpu.scan_tensor(d->cpu.self, t, so, r, err);
}

/* A sink that counts what passes through it (cli_device_clean). */
typedef struct counted {
    na_clean_sink_fn sink;
    void *ud;
    uint64_t bytes;
} counted_t;

static na_status_t counted_sink(void *ud, const void *buf, size_t len, na_err_t *err)
{
    counted_t *c = ud;
    c->bytes += len;
    return c->sink(c->ud, buf, len, err);
}

na_status_t cli_device_clean(cli_device_t *d, const na_tensor_t *t, const na_clean_opts_t *o,
                             na_clean_tensor_t *ct, na_clean_sink_fn sink, void *ud,
                             na_err_t *err)
{
    /* rows without data ((5, 0)): nothing to read or send */
    if (t->elements && gpu_wanted(d, t)) {
        counted_t c = {sink, ud, 0};
        na_status_t st = na_cuda_clean_emit(&d->gpu, t, o, ct, counted_sink, &c, err);
        /* Only before any byte went out can the CPU take over: the GPU
         * refused the tensor, or (auto) CUDA failed at its start. */
        int kept = st == NA_E_UNSUPPORTED, retry = d->mode == CLI_DEV_AUTO &&
                                                   (st == NA_E_INTERNAL || st == NA_E_NOMEM);
        if (c.bytes || !(kept || retry)) {
            d->on_gpu += st == NA_OK;
            return st;
        }
        d->on_cpu_kept += (uint64_t)kept;
        if (!d->note[0] || retry)
            snprintf(d->note, sizeof d->note, "--device %s: %s; cleaned on the CPU",
                     d->mode == CLI_DEV_AUTO ? "auto" : "cuda", err->msg);
        err->msg[0] = '\0';
    }
    d->on_cpu++;
    return na_clean_emit(t, o, ct, sink, ud, err);
}

void cli_device_names(cli_device_t *d)
{
    if (d->on_gpu && d->on_cpu)
        snprintf(d->name, sizeof d->name, "%s+cpu", d->gpu.name);
    else
        snprintf(d->name, sizeof d->name, "%s", d->on_gpu ? d->gpu.name : "cpu");
    uint64_t small = d->on_cpu - d->on_cpu_kept;
    if (!d->note[0] && d->on_gpu && d->on_cpu_kept)
        snprintf(d->note, sizeof d->note, "%llu tensor%s with missing values or unwritten chunks "
                 "%s on the CPU", (unsigned long long)d->on_cpu_kept,
                 d->on_cpu_kept == 1 ? "" : "s", d->verb);
    else if (!d->note[0] && d->on_gpu && small && d->mode == CLI_DEV_AUTO)
        snprintf(d->note, sizeof d->note, "--device auto: %llu tensor%s under %llu MiB "
                 "%s on the CPU", (unsigned long long)small, small == 1 ? "" : "s",
                 CLI_AUTO_GPU_BYTES >> 20, d->verb);
}

void cli_device_report(cli_device_t *d, na_report_t *rep)
{
    cli_device_names(d);
    rep->device = d->name;
    rep->device_note = d->note[0] ? d->note : NULL;
}

void cli_device_close(cli_device_t *d)
{
    na_backend_close(&d->gpu);
    na_backend_close(&d->cpu);
}
