/*
 * raw_write.c - the raw writer: the tensors' bytes one after another and
 * nothing else (raw data has no header; a cleaned raw file holds only the
 * data, without the input's --offset prefix or trailer, and is read back
 * with the input's --dtype and --endian and the shape the report gives).
 * Byte order: the input's. na_clean_emit gives little-endian bytes, so a
 * cleaned tensor of a --endian big input (na_wtensor_t.big_out) has each
 * element's bytes reversed here: with no header to say which order the
 * file is in, the copy must read back with the flags that read the input
 * (a tensor copied unchanged already has the input's bytes).
 */
#include "write.h"

#include <stdlib.h> /* calloc, free */

#define RAW_SWAP_BUF 65536 /* bytes reversed per na_writer_put */

typedef struct raw_writer {
    na_writer_t base;      /* first: the writer functions get &base */
    unsigned *esize;       /* per tensor: bytes per element to reverse, 0 none */
    uint8_t part[8];       /* an element split across two writes */
    unsigned npart;
    uint8_t tmp[RAW_SWAP_BUF];
} raw_writer_t;

static void raw_wfree(na_writer_t *w)
{
    raw_writer_t *r = (raw_writer_t *)w;
    na_writer_base_free(w);
    free(r->esize);
    free(r);
}

static na_status_t raw_begin(na_writer_t *w, size_t i, na_err_t *err)
{
    (void)i;
    (void)err;
    ((raw_writer_t *)w)->npart = 0;
    return NA_OK;
}

/* Element e of n bytes at src, reversed into dst. */
static void put_reversed(uint8_t *dst, const uint8_t *src, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        dst[k] = src[n - 1 - k];
}

/* The current tensor's bytes: as they are, or each element reversed
 * (an element may be split across calls: its first bytes wait in part). */
static na_status_t raw_data(na_writer_t *w, const void *buf, size_t len, na_err_t *err)
{
    raw_writer_t *r = (raw_writer_t *)w;
    unsigned es = r->esize[w->cur];
    if (es < 2)
        return na_writer_put(w, buf, len, err);
    const uint8_t *p = buf;
    size_t used = 0;
    na_status_t st = NA_OK;
    while (len && st == NA_OK) {
        if (r->npart || len < es) { /* complete (or start) a split element */
            while (len && r->npart < es) {
                r->part[r->npart++] = *p++;
                len--;
            }
            if (r->npart < es)
                break;
            put_reversed(r->tmp + used, r->part, es);
            used += es;
            r->npart = 0;
        } else {
            size_t k = len / es;
            if (k > (RAW_SWAP_BUF - used) / es)
                k = (RAW_SWAP_BUF - used) / es;
            for (size_t j = 0; j < k; j++)
                put_reversed(r->tmp + used + j * es, p + j * es, es);
            used += k * es;
            p += k * es;
            len -= k * es;
        }
        if (used + es > RAW_SWAP_BUF || !len) {
            st = na_writer_put(w, r->tmp, used, err);
            used = 0;
        }
    }
    return st == NA_OK && used ? na_writer_put(w, r->tmp, used, err) : st;
}

static const struct na_writer_vtbl raw_wvtbl = {raw_begin, NULL, raw_wfree, raw_data, NULL};

static na_status_t raw_wopen(int fd, const na_wopts_t *o, const na_wtensor_t *t, size_t n,
                             const na_wmeta_t *meta, size_t n_meta, na_writer_t **out,
                             na_err_t *err)
{
    (void)o;
    (void)meta; /* raw data has no place for metadata (the report has it) */
    (void)n_meta;
    raw_writer_t *r = calloc(1, sizeof *r);
    if (r)
        r->esize = calloc(n ? n : 1, sizeof *r->esize);
    if (!r || !r->esize) {
        free(r);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        unsigned es = na_dtype_bits(t[i].dtype) / 8;
        r->esize[i] = t[i].big_out && es <= sizeof r->part ? es : 0;
    }
    na_writer_t *w = &r->base;
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
