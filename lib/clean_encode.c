/*
 * clean_encode.c - rounding a double back to a tensor dtype for
 * `nanaudit clean` (output dtype = input dtype, DESIGN.md / issue 4).
 * The rounding itself (nearest even, overflow to +-Inf, integer
 * saturation; its sources) is na_ce_put in lib/clean_elem.h, which the
 * GPU's write pass compiles too.
 */
#include "clean_elem.h"

int na_clean_dtype_ok(na_dtype_t dt)
{
    switch (dt) {
    case NA_DT_F64: case NA_DT_F32: case NA_DT_F16: case NA_DT_BF16:
    case NA_DT_U8: case NA_DT_I8: case NA_DT_U16: case NA_DT_I16:
    case NA_DT_U32: case NA_DT_I32: case NA_DT_U64: case NA_DT_I64:
        return 1;
    default:
        return 0;
    }
}

int na_clean_encode(na_dtype_t dt, double v, void *p)
{
    double back;
    return na_ce_put(dt, v, (unsigned char *)p, &back);
}
