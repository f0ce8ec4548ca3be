/*
 * scan_fill.c - fill runs in the scan: blocks that a source knows to be
 * copies of one element (na_fill_fn; an HDF5 dataset's unallocated
 * chunks, which read as its fill value) are neither read nor decoded.
 *
 * Why this gives the report of a full read, byte for byte: a block's
 * pass-1 statistics, interval counts, pass-2 count and locations depend
 * only on its elements (scan_pass.c), so every whole block of the fill
 * element has the results of one "template" block of copies, computed once
 * by the same kernels. The driver merges the template's statistics in
 * block order like any other block's (Chan et al., stats.c), and runs the
 * location scans on the template at the block's own index, so counts,
 * locations and the rounding of mean and m2 are those of reading the
 * blocks, for any --threads. A partial block (the tensor's last, or one a
 * run covers in part) is read or computed from the template as it is.
 *
 * Cost: one fill query per window plus O(1) per block: a 4 GiB I8 dataset
 * with two chunks written is 262144 block merges (tests/cli/hdf5_sparse.sh).
 */
#include "fill.h"
#include "scan_kernels.h"

#include <stdlib.h> /* malloc, free */
#include <string.h> /* memcpy, memcmp, memset */

void na_kfill_free(na_kfill_t *f)
{
    free(f->tmpl);
    free(f->flag);
    memset(f, 0, sizeof *f);
}

uint8_t *na_fill_repeat(const uint8_t *elem, size_t stride, size_t B)
{
    size_t bytes = B * stride;
    uint8_t *b = malloc(bytes ? bytes : 1);
    for (size_t i = 0; b != NULL && i < B; i++)
        memcpy(b + i * stride, elem, stride);
    return b;
}

na_status_t na_fill_flags(const na_tensor_t *t, uint64_t e0, uint64_t n, uint64_t B,
                          uint8_t *flag, uint64_t *nflag, na_fill_use_fn use, void *ud,
                          na_err_t *err)
{
    uint64_t nb = (n + B - 1) / B;
    memset(flag, 0, (size_t)nb);
    *nflag = 0;
    if (t->src.fill == NULL)
        return NA_OK;
    uint64_t stride = t->elem_stride, pos = e0 * stride, end = (e0 + n) * stride;
    while (pos < end) {
        uint64_t skip = 0, run = 0;
        const uint8_t *elem = NULL;
        na_status_t st = t->src.fill(t->src.ctx, pos, end - pos, &skip, &run, &elem, err);
        if (st != NA_OK)
            return st;
        if (run == 0)
            break;
        if (skip > end - pos || run > end - pos - skip || skip % stride || run % stride ||
            elem == NULL)
            return na_err_set(err, NA_E_INTERNAL, "%s: bad fill run [%llu, +%llu) in [%llu, %llu)",
                              t->name, (unsigned long long)(pos + skip),
                              (unsigned long long)run, (unsigned long long)pos,
                              (unsigned long long)end);
        int take = 1;
        st = use(ud, elem, &take, err);
        if (st != NA_OK)
            return st;
        if (!take) {
            memset(flag, 0, (size_t)nb);
            *nflag = 0;
            return NA_OK;
        }
        /* Window-relative elements [a, b) of the run; blocks wholly inside. */
        uint64_t a = (pos + skip) / stride - e0, b = a + run / stride;
        for (uint64_t j = (a + B - 1) / B; j < nb && j * B < b; j++) {
            uint64_t bend = (j + 1) * B < n ? (j + 1) * B : n;
            if (bend > b)
                break;
            flag[j] = 1;
            (*nflag)++;
        }
        pos += skip + run;
    }
    return NA_OK;
}

/* What na_kfill_window's walk does with a run's element. */
typedef struct kfill_use {
    na_kfill_t *f;
    const na_tensor_t *t;
    const na_kctx_t *k;
    const na_kscratch_t *sc;
    const na_extra_t *ex;
    size_t B;
} kfill_use_t;

/* The first run's element: B copies and their results (the template);
 * later runs must hold the same element. */
static na_status_t kfill_use(void *ud, const uint8_t *elem, int *take, na_err_t *err)
{
    kfill_use_t *u = ud;
    na_kfill_t *f = u->f;
    size_t stride = u->t->elem_stride;
    *take = 1;
    if (f->tmpl != NULL)
        return memcmp(f->tmpl, elem, stride) == 0
                   ? NA_OK
                   : na_err_set(err, NA_E_INTERNAL, "%s: fill runs of different elements",
                                u->t->name);
    f->tmpl = na_fill_repeat(elem, stride, u->B);
    if (f->tmpl == NULL)
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory for the fill block", u->t->name);
    f->B = u->B;
    na_k_pass1(u->k, f->tmpl, u->B, u->sc, &f->st);
    if (u->ex != NULL && u->ex->n > 0)
        na_k_extra(u->k, f->tmpl, u->B, u->sc, u->ex, f->ext);
    return NA_OK;
}

na_status_t na_kfill_window(na_kfill_t *f, const na_tensor_t *t, const na_kctx_t *k,
                            const na_kscratch_t *sc, const na_extra_t *ex, size_t B, uint64_t e0,
                            size_t n, long *nfill, na_err_t *err)
{
    kfill_use_t u = {f, t, k, sc, ex, B};
    uint64_t nflag = 0;
    na_status_t st = na_fill_flags(t, e0, n, B, f->flag, &nflag, kfill_use, &u, err);
    *nfill = (long)nflag;
    return st;
}

void na_kfill_pass1(const na_kfill_t *f, const na_kctx_t *k, const na_kscratch_t *sc,
                    const na_extra_t *ex, size_t bn, na_stats_t *st, uint64_t *ext)
{
    if (bn == f->B) {
        *st = f->st;
        if (ext != NULL)
            memcpy(ext, f->ext, sizeof f->ext);
        return;
    }
    na_k_pass1(k, f->tmpl, bn, sc, st);
    if (ext != NULL)
        na_k_extra(k, f->tmpl, bn, sc, ex, ext);
}

uint64_t na_kfill_pass2(na_kfill_t *f, const na_kctx_t *k, const na_kthr_t *th,
                        const na_kscratch_t *sc, size_t bn)
{
    if (bn != f->B)
        return na_k_pass2(k, f->tmpl, bn, th, sc);
    if (!f->have_p2) { /* the thresholds are fixed for the whole of pass 2 */
        f->p2 = na_k_pass2(k, f->tmpl, bn, th, sc);
        f->have_p2 = 1;
    }
    return f->p2;
}
