/*
 * fuzz_pickle.c - the restricted pickle reader (formats/pickle.c) on the
 * raw bytes: every opcode of protocols 0-5 it knows, the stack and MARK
 * discipline, the memo (index caps), the global allowlist, tensor
 * rebuilds and persistent ids, flattening (depth and leaf caps against
 * cycles and shared sub-objects); then the same bytes as a legacy
 * torch.save file (formats/torch.c: five pickles in a row, then storage
 * blobs) scanned through the engine.
 *
 * Checks beyond "no crash": nothing is ever executed (there is no code
 * path that could); one-line errors; every tensor found has a name, a
 * storage key and at most NA_MAX_NDIM dimensions; reports parse back.
 */
#include "fuzz_common.h"

#include "npt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_pk_result_t r;
    na_err_t err = {{0}};
    na_status_t st = na_pickle_load(data, size, &r, &err);
    fz_check_msg(st, &err);
    if (st == NA_OK) {
        if (r.consumed == 0 || r.consumed > size)
            abort();
        for (size_t i = 0; i < r.n_tensors; i++)
            if (r.tensors[i].name == NULL || r.tensors[i].storage_key == NULL ||
                r.tensors[i].ndim < 0 || r.tensors[i].ndim > NA_MAX_NDIM)
                abort();
        for (size_t i = 0; i < 2 * r.n_meta; i++)
            if (r.meta[i] == NULL)
                abort();
        na_pickle_result_free(&r);
    }
    int fd = fz_memfd(data, size);
    if (fd < 0)
        return 0;
    na_open_opts_t o;
    na_open_opts_init(&o);
    o.window_bytes = 4096;
    na_input_t *in = NULL;
    na_err_t e2 = {{0}};
    st = na_format_torch.open("fuzz.pt", fd, &o, &in, &e2);
    fz_check_msg(st, &e2);
    if (st == NA_OK) {
        fz_scan_input(in, "fuzz.pt", 64, 1.5);
        na_input_close(in);
    }
    return 0;
}
