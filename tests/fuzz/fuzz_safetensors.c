/*
 * fuzz_safetensors.c - the safetensors reader (formats/safetensors.c) on
 * arbitrary bytes: the 8-byte length, the UTF-8 and JSON checks, every
 * header rule and the data layout check, then every listed tensor read
 * through the engine in windows of 64 or 4096 bytes (mapfile.c windows of
 * one page or a few), so window and block edges fall inside tensors.
 *
 * Checks beyond "no crash": an error has a one-line message; an accepted
 * file obeys the layout rule of DESIGN.md (8 + header + tensor data ==
 * file size, the stored names are one per stored tensor); the reports of
 * what was read parse back (JSON) and hold no control bytes (text).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = fz_memfd(data, size);
    if (fd < 0)
        return 0;
    na_open_opts_t o;
    na_open_opts_init(&o);
    /* the reference cap is 100 MB; inputs are smaller, keep the rule */
    o.window_bytes = (size & 1) ? 4096 : 3 * 4096;
    na_input_t *in = NULL;
    na_err_t err = {{0}};
    na_status_t st = na_format_safetensors.open("fuzz.safetensors", fd, &o, &in, &err);
    fz_check_msg(st, &err);
    if (st != NA_OK) {
        if (in != NULL)
            abort(); /* open leaves *out NULL on error */
        return 0;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | data[i];
    if (8 + hlen + na_safetensors_data_bytes(in) != size)
        abort();
    const char *const *names;
    size_t ns = na_safetensors_stored_names(in, &names);
    if (ns > na_input_count(in))
        abort();
    for (size_t i = 0; i < ns; i++)
        if (names[i] == NULL)
            abort();
    fz_scan_input(in, "fuzz.safetensors", (size & 2) ? 64 : 4096, 2.0);
    na_input_close(in);
    return 0;
}
