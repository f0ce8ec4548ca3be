/*
 * cuda_none.c - the CUDA backend's entry points in a build without CUDA
 * (NANAUDIT_CUDA=OFF, or AUTO without nvcc): `--device cuda` then fails
 * with one line and exit 4, `--device auto` uses the CPU.
 */
#include "na_cuda.h"

int na_cuda_built(void) { return 0; }

na_status_t na_cuda_open(int ordinal, na_backend_t *b, na_err_t *err)
{
    (void)ordinal;
    (void)b;
    return na_err_set(err, NA_E_INTERNAL, "CUDA: this nanaudit was built without CUDA support "
                      "(NANAUDIT_CUDA=OFF or no nvcc at build time)");
}

int na_cuda_ordinal(const na_backend_t *b)
{
    (void)b;
    return -1;
}

na_status_t na_cuda_clean_emit(na_backend_t *b, const na_tensor_t *t, const na_clean_opts_t *o,
                               na_clean_tensor_t *ct, na_clean_sink_fn sink, void *ud,
                               na_err_t *err)
{
    (void)b, (void)t, (void)o, (void)ct, (void)sink, (void)ud;
    return na_cuda_open(0, NULL, err);
}
