/*
 * input.c - opening an input by content and the generic accessors.
 *
 * na_input_open probes the file (sniff.c), turns content we do not audit
 * into its one-line message, and hands the open descriptor to the format
 * reader (safetensors.c, raw.c), which owns it from then on. The
 * na_input_* accessors dispatch through the reader's vtbl, like curl's
 * struct Curl_ssl, so the CLI never knows which format it holds.
 */
#include "format.h"

#include <stdint.h> /* UINT64_MAX */
#include <unistd.h> /* close */

void na_open_opts_init(na_open_opts_t *o)
{
    o->max_header_bytes = 100000000u; /* safetensors' reference MAX_HEADER_SIZE */
    o->raw_dtype = NA_DT_INVALID;
    o->raw_endian = NA_LITTLE;
    o->raw_offset = 0;
    o->raw_ndim = -1;
    for (int i = 0; i < NA_MAX_NDIM; i++)
        o->raw_shape[i] = 0;
    o->window_bytes = NA_DEFAULT_WINDOW_BYTES;
    o->raw_length = NA_RAW_TO_EOF;
    o->hdf5_timeout = 60.0;
    o->missing_mode = NA_MISSING_AUTO;
    o->threads = 0;
    o->no_measure = 0;
}

na_status_t na_input_open(const char *path, const na_open_opts_t *o, na_input_t **out,
                          na_err_t *err)
{
    *out = NULL;
    int raw_mode = o->raw_dtype != NA_DT_INVALID;
    na_probe_t p;
    int fd = -1;
    na_status_t st = na_probe_path(path, raw_mode, &p, &fd, err);
    if (st != NA_OK)
        return st;
    st = na_probe_check(&p, err);
    if (st == NA_OK && p.kind == NA_FILE_INDEX)
        st = na_err_set(err, NA_E_UNSUPPORTED,
                        "a sharded-checkpoint index, not a tensor file: give its shard "
                        "files one by one (scan and info read the index itself)");
    if (st != NA_OK) {
        close(fd);
        return st;
    }
    const na_format_t *f = p.kind == NA_FILE_RAW ? &na_format_raw : &na_format_safetensors;
    if (p.kind == NA_FILE_NPY)
        f = &na_format_npy;
    else if (p.kind == NA_FILE_NPZ)
        f = &na_format_npz;
    else if (p.kind == NA_FILE_TORCH || p.kind == NA_FILE_PICKLE)
        f = &na_format_torch;
#if NA_HAVE_HDF5
    if (p.kind == NA_FILE_HDF5)
        f = &na_format_hdf5;
#endif
    return f->open(path, fd, o, out, err); /* f->open owns fd now */
}

const char *na_input_format(const na_input_t *in) { return in->format; }

const char *na_input_path(const na_input_t *in) { return in->path; }

size_t na_input_count(const na_input_t *in) { return in->v->count(in); }

na_status_t na_input_tensor(na_input_t *in, size_t i, na_tensor_t *t, na_err_t *err)
{
    if (i >= in->v->count(in))
        return na_err_set(err, NA_E_INTERNAL, "tensor index %zu out of range", i);
    return in->v->tensor(in, i, t, err);
}

size_t na_input_metadata_count(const na_input_t *in)
{
    return in->v->meta_count ? in->v->meta_count(in) : 0;
}

void na_input_metadata(const na_input_t *in, size_t i, const char **key, const char **value)
{
    *key = NULL;
    *value = NULL;
    if (in->v->meta != NULL && i < na_input_metadata_count(in))
        in->v->meta(in, i, key, value);
}

uint64_t na_input_tensor_bytes(const na_input_t *in, size_t i)
{
    return i < in->v->count(in) ? in->v->tensor_bytes(in, i) : 0;
}

void na_input_close(na_input_t *in)
{
    if (in != NULL)
        in->v->close(in); /* frees path and the struct too (format.h) */
}
