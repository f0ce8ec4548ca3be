/*
 * clean_mem.h - an in-memory na_source_t for the clean engine's unit
 * tests (test_clean.c, test_clean_unrep.c): a row-major F64 array as a
 * tensor of rows x cols (rank 1 when cols is 1).
 */
#ifndef NA_TEST_CLEAN_MEM_H
#define NA_TEST_CLEAN_MEM_H

#include <stdint.h>
#include <string.h>

#include "nanaudit.h"

typedef struct mem {
    const uint8_t *p;
    size_t n;
} mem_t;

static inline na_status_t mread(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                                na_err_t *err)
{
    mem_t *m = ctx;
    if (off + len > m->n)
        return na_err_set(err, NA_E_IO, "past end");
    *ptr = m->p + off;
    return NA_OK;
}

static inline na_tensor_t f64_tensor(mem_t *m, const double *v, uint64_t rows, uint64_t cols)
{
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    m->p = (const uint8_t *)v;
    m->n = rows * cols * 8;
    t.name = "t";
    t.dtype = t.stored = NA_DT_F64;
    t.ndim = cols > 1 ? 2 : 1;
    t.shape[0] = rows;
    t.shape[1] = cols;
    t.elements = rows * cols;
    t.elem_stride = 8;
    t.src.read = mread;
    t.src.ctx = m;
    return t;
}

#endif /* NA_TEST_CLEAN_MEM_H */
