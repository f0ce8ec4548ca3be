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
#include <stdlib.h> /* calloc, free */
#include <string.h> /* strcmp */
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

/* Tensor i's name, or NULL for one that is an error of its own. */
static const char *name_of(na_input_t *in, size_t i)
{
    if (in->v->name != NULL)
        return in->v->name(in, i);
    na_tensor_t t;
    na_err_t e;
    return na_input_tensor(in, i, &t, &e) == NA_OK ? t.name : NULL;
}

/* NA_E_FORMAT when two tensors of `in` have one name. The formats make
 * names that can meet: PyTorch's nested dicts are flattened with dots
 * ({"a": {"b": t}} and "a.b"), a complex tensor c becomes c.real and
 * c.imag (beside a tensor named c.real), an .npz member x.npy is x (beside
 * a member x). Reports, baselines, --include and --save-params name
 * tensors, so such a file could not be reported or cleaned faithfully
 * (--apply-params gave one tensor the other's statistics); in HDF5 a
 * compound /x's field a is /x.a, as a dataset x.a is. Open addressing of
 * FNV-1a hashes; names compared by strcmp on a hash match. */
static na_status_t unique_names(na_input_t *in, na_err_t *err)
{
    size_t n = na_input_count(in), cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = n > 1 ? calloc(cap, sizeof *slot) : NULL; /* index + 1, 0: empty */
    if (n > 1 && slot == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory for %zu tensor names", n);
    na_status_t st = NA_OK;
    for (size_t i = 0; n > 1 && i < n && st == NA_OK; i++) {
        const char *ni = name_of(in, i);
        if (ni == NULL)
            continue; /* its own error, reported when it is read */
        uint64_t h = 1469598103934665603u;
        for (const unsigned char *c = (const unsigned char *)ni; *c; c++)
            h = (h ^ *c) * 1099511628211u;
        size_t k = (size_t)h & (cap - 1);
        for (; slot[k] != 0; k = (k + 1) & (cap - 1)) {
            size_t j = slot[k] - 1;
            const char *nj = name_of(in, j);
            if (nj != NULL && strcmp(nj, ni) == 0) {
                st = na_err_set(err, NA_E_FORMAT, "tensors %zu and %zu (in file order) are "
                                "both named '%.200s': reports and parameter files could not "
                                "tell them apart", j + 1, i + 1, ni);
                break;
            }
        }
        slot[k] = i + 1;
    }
    free(slot);
    return st;
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
    st = f->open(path, fd, o, out, err); /* f->open owns fd now */
    if (st == NA_OK && (st = unique_names(*out, err)) != NA_OK) {
        na_input_close(*out);
        *out = NULL;
    }
    return st;
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
