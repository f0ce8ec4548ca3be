/*
 * backend_cpu.c - the CPU scan backend: na_scan_tensor (scan_pass.c,
 * OpenMP) behind the na_backend_t table that the CUDA backend (gpu/)
 * also implements, so the CLI picks a device without knowing either.
 */
#include "nanaudit.h"

#include <string.h> /* memset */

static na_status_t cpu_scan(void *self, const na_tensor_t *t, const na_scan_opts_t *o,
                            na_result_t *r, na_err_t *err)
{
    (void)self;
    return na_scan_tensor(t, o, r, err);
}

void na_backend_cpu(na_backend_t *b)
{
    b->name = "cpu";
    b->scan_tensor = cpu_scan;
    b->close = NULL;
    b->self = NULL;
}

void na_backend_close(na_backend_t *b)
{
    if (!b)
        return;
    if (b->close)
        b->close(b->self);
    memset(b, 0, sizeof *b);
}
