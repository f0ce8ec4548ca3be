/*
 * progress.c - one progress line on stderr: bytes done / total,
 * throughput in GB/s and an ETA. By default (CLI_AUTO) only when stderr
 * is a terminal and the scan has run for about a second, so short runs
 * and CI logs stay clean; --progress forces it, --no-progress disables.
 * Called from the scanning thread (na_scan_opts_t.progress); redraws at
 * most ten times a second.
 */
#include "cli.h"

#include <stdio.h>  /* fprintf */
#include <time.h>   /* clock_gettime */
#include <unistd.h> /* isatty */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress_t *p, int mode, uint64_t total_bytes)
{
    p->mode = mode;
    p->tty = isatty(2);
    p->drawn = 0;
    p->total = total_bytes;
    p->done = 0;
    p->t0 = p->last = now();
}

/* Bytes as "812.4 MB" or "3.21 GB" (SI units, as GB/s). */
static void human(char *b, size_t cap, double bytes)
{
    if (bytes < 1e9)
        snprintf(b, cap, "%.1f MB", bytes / 1e6);
    else
        snprintf(b, cap, "%.2f GB", bytes / 1e9);
}

/* On a terminal the line is redrawn in place (\r); elsewhere (a forced
 * --progress into a log) each update is its own line. */
static void draw(cli_progress_t *p, double t)
{
    double el = t - p->t0, gbs = el > 0 ? (double)p->done / el / 1e9 : 0.0;
    double left = p->total > p->done ? (double)(p->total - p->done) : 0.0;
    char done[32], total[32], eta[32] = "-";
    /* a rate from the first milliseconds says nothing (a forced first
     * line said "ETA 112036 s", or "ETA 0 s" 10 s before the end: tester
     * rounds 22b, 23a) */
    if (gbs > 0 && el >= 0.5)
        snprintf(eta, sizeof eta, "%.0f s", left / (gbs * 1e9));
    human(done, sizeof done, (double)p->done);
    human(total, sizeof total, (double)p->total);
    fprintf(stderr, "%snanaudit: %s / %s  %.2f GB/s  ETA %s%s", p->tty ? "\r" : "", done,
            total, gbs, eta, p->tty ? "  " : "\n");
    fflush(stderr);
    p->drawn = 1;
    p->drawn_done = p->done;
    p->last = t;
}

void cli_progress_add(void *ud, uint64_t bytes)
{
    cli_progress_t *p = ud;
    if (!p || p->mode == CLI_OFF)
        return;
    p->done += bytes;
    double t = now();
    if (p->mode == CLI_AUTO && (!p->tty || t - p->t0 < 1.0))
        return;
    if (!p->drawn || t - p->last >= (p->tty ? 0.1 : 1.0))
        draw(p, t);
}

void cli_progress_end(cli_progress_t *p)
{
    /* forced: show at least the final figures; else finish what is shown */
    if ((p->mode == CLI_ON || p->drawn) && (!p->drawn || p->drawn_done != p->done))
        draw(p, now());
    if (p->drawn && p->tty)
        fputc('\n', stderr);
}
