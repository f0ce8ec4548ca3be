/*
 * raw_write.c - the raw writer: the tensors' bytes one after another and
 * nothing else (raw data has no header; a cleaned raw file holds only the
 * data, little-endian, without the input's --offset prefix or trailer,
 * and is read back with the same --dtype and the shape the report gives).
 */
#include "write.h"

#include <stdlib.h> /* calloc, free */

static void raw_wfree(na_writer_t *w)
{
    na_writer_base_free(w);
    free(w);
}

static const struct na_writer_vtbl raw_wvtbl = {NULL, NULL, raw_wfree, NULL, NULL};

static na_status_t raw_wopen(int fd, const na_wopts_t *o, const na_wtensor_t *t, size_t n,
                             const na_wmeta_t *meta, size_t n_meta, na_writer_t **out,
                             na_err_t *err)
{
    na_writer_t *w = calloc(1, sizeof *w);
    if (!w)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    w->v = &raw_wvtbl;
    na_status_t st = na_writer_base_init(w, fd, t, n, err);
    if (st != NA_OK) {
        raw_wfree(w);
        return st;
    }
    *out = w;
    return NA_OK;
}

const na_writer_format_t na_writer_raw = {"raw", raw_wopen};
