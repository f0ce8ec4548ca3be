/*
 * fake_libcuda.c - a stand-in for the NVIDIA driver library (libcuda.so.1)
 * so that CI, which has no GPU, can test what nanaudit says for each way
 * the driver can be unusable (issue 6: "no driver / no device / driver
 * older than the runtime", exit 4, one line; `auto` falls back to the CPU
 * with a note). tests/cli/cuda_fake_driver.sh puts the folder holding it
 * on LD_LIBRARY_PATH.
 *
 * The static CUDA runtime (cudart_static) dlopens libcuda.so.1 and looks
 * up every driver entry point through cuGetProcAddress (CUDA driver API,
 * "Driver Entry Point Access"; the _v2 form from CUDA 12.0). This library
 * answers the few the runtime needs to decide, and returns an error from
 * every other one:
 *   cuInit            -> NA_FAKE_CUDA_INIT (default 0; 100 is
 *                        CUDA_ERROR_NO_DEVICE, 999 CUDA_ERROR_UNKNOWN)
 *   cuDriverGetVersion -> NA_FAKE_CUDA_VERSION (default 11000 = CUDA 11.0,
 *                        older than the runtime nanaudit is built with)
 *   cuDeviceGetCount  -> NA_FAKE_CUDA_DEVICES (default 0)
 * Only ever loaded by tests.
 */
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
#define FAKE_NOT_FOUND 500 /* CUDA_ERROR_NOT_FOUND */
#define FAKE_UNKNOWN 999   /* CUDA_ERROR_UNKNOWN */

static int env_int(const char *k, int dflt)
{
    const char *v = getenv(k);
    return v ? atoi(v) : dflt;
}

CUresult cuInit(unsigned flags);
CUresult cuDriverGetVersion(int *v);
CUresult cuDeviceGetCount(int *n);
CUresult cuGetProcAddress(const char *sym, void **p, int version, unsigned long long flags);
CUresult cuGetProcAddress_v2(const char *sym, void **p, int version, unsigned long long flags,
                             int *status);

CUresult cuInit(unsigned flags)
{
    (void)flags;
    return env_int("NA_FAKE_CUDA_INIT", 0);
}

CUresult cuDriverGetVersion(int *v)
{
    *v = env_int("NA_FAKE_CUDA_VERSION", 11000);
    return 0;
}

CUresult cuDeviceGetCount(int *n)
{
    *n = env_int("NA_FAKE_CUDA_DEVICES", 0);
    return 0;
}

static CUresult unsupported(void)
{
    return FAKE_UNKNOWN;
}

CUresult cuGetProcAddress(const char *sym, void **p, int version, unsigned long long flags)
{
    (void)flags;
    if (!sym || !*sym) {
        *p = NULL;
        return FAKE_NOT_FOUND;
    }
    if (!strcmp(sym, "cuInit"))
        *p = (void *)cuInit;
    else if (!strcmp(sym, "cuDriverGetVersion"))
        *p = (void *)cuDriverGetVersion;
    else if (!strcmp(sym, "cuDeviceGetCount"))
        *p = (void *)cuDeviceGetCount;
    else if (!strcmp(sym, "cuGetProcAddress"))
        *p = version >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    else
        *p = (void *)unsupported;
    return 0;
}

CUresult cuGetProcAddress_v2(const char *sym, void **p, int version, unsigned long long flags,
                             int *status)
{
    if (status)
        *status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
    return cuGetProcAddress(sym, p, version, flags);
}
