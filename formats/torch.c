/*
 * torch.c - PyTorch checkpoints written by torch.save (.pt, .pth, .bin),
 * read without executing pickle (pickle.c) and without Python.
 *
 * Zip format (default since PyTorch 1.6; torch/serialization.py, _save
 * and _load; the layout in torch/csrc/jit/serialization/
 * pickler.h / caffe2/serialize/inline_container.h):
 *   DIR/data.pkl     the pickled object; tensors are persistent ids
 *                    ('storage', torch.FloatStorage, KEY, location, numel)
 *   DIR/data/KEY     the storage's bytes, stored (torch aligns them to 64
 *                    bytes and never compresses them)
 *   DIR/byteorder    "little" or "big" (absent before 1.10: little)
 * DIR is any folder name ("archive", or the file's stem). Stored storages
 * are read through mmap windows at their data position; a storage
 * someone re-compressed is inflated as a stream (or into a temporary file
 * when a view must be gathered).
 *
 * Legacy format (torch < 1.6, or _use_new_zipfile_serialization=False):
 * five pickles in a row - the magic number 0x1950a86a20f9469cfc6c, the
 * protocol version 1001, sys_info ({'little_endian': ...}), the object,
 * the list of storage keys - then for each key in that order an 8-byte
 * element count and the storage's bytes (torch/serialization.py,
 * _legacy_save / _legacy_load; Storage._write_file). A storage may be a
 * view of another (view_metadata (key, offset, size) in the persistent id).
 *
 * Each tensor is audited as its view (view.c): storage offset, shape and
 * strides, shared storages and non-contiguous layouts included; complex64
 * and complex128 as NAME.real / NAME.imag (F32 / F64 parts). Non-tensor
 * entries (epoch, loss, hyper-parameters) are listed as metadata. A
 * storage type nanaudit cannot decode (quantized) fails closed (exit 3).
 */
#include "npt.h"

#include <errno.h>    /* errno */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free, malloc, qsort */
#include <string.h>   /* strcmp, strlen, strrchr, strerror */
#include <strings.h>  /* strcasecmp */
#include <sys/stat.h> /* fstat */
#include <unistd.h>   /* close */

#define PKL_MAX_BYTES ((uint64_t)1 << 30) /* data.pkl: metadata only, never this big */

typedef struct tstore {
    char *key;
    na_store_t s;
    na_map_t *spill;
    size_t zmember;      /* its zip member (SIZE_MAX: legacy) */
} tstore_t;

typedef struct tentry {
    char *name;          /* owned (C64: NAME.real / NAME.imag) */
    char *reason;        /* NULL or why it cannot be audited */
    na_dtype_t dtype, stored;
    uint32_t part_offset;
    int part;            /* na_tensor_t.part: NA_PART_COMPLEX for .real/.imag */
    uint64_t bytes;
    na_view_t view;
} tentry_t;

typedef struct torch_input {
    na_input_t base;
    na_zip_t *zip;       /* zip format */
    na_map_t *map;
    na_endian_t order;
    size_t n_stores, cap_stores;
    tstore_t *stores;    /* pointers into it are kept by views: sized once */
    int stores_sorted;   /* stores in strcmp order of key: find_store bisects */
    size_t n, cap;
    tentry_t *e;
    size_t n_meta;
    char **meta;
    size_t win;
    na_scratch_t scratch; /* the window buffer all views share */
} torch_input_t;

/* ---- the na_input_t table ------------------------------------------------ */

static size_t t_count(const na_input_t *in) { return ((const torch_input_t *)in)->n; }

static na_status_t t_tensor(na_input_t *in, size_t i, na_tensor_t *t, na_err_t *err)
{
    torch_input_t *ti = (torch_input_t *)in;
    tentry_t *e = &ti->e[i];
    memset(t, 0, sizeof *t);
    t->name = e->name;
    t->dtype = e->dtype;
    t->stored = e->stored;
    t->byte_order = ti->order;
    t->ndim = e->view.ndim;
    memcpy(t->shape, e->view.shape, (size_t)t->ndim * sizeof *t->shape);
    t->elements = e->view.elements;
    t->elem_stride = e->view.rsize ? e->view.rsize : 1;
    t->elem_offset = e->part_offset;
    t->part = e->part;
    if (e->reason != NULL)
        return na_err_set(err, NA_E_UNSUPPORTED, "%s", e->reason);
    t->src.read = na_view_read;
    t->src.ctx = &e->view;
    return NA_OK;
}

static size_t t_meta_count(const na_input_t *in) { return ((const torch_input_t *)in)->n_meta; }

static void t_meta(const na_input_t *in, size_t i, const char **k, const char **v)
{
    const torch_input_t *ti = (const torch_input_t *)in;
    *k = ti->meta[2 * i];
    *v = ti->meta[2 * i + 1];
}

static uint64_t t_tensor_bytes(const na_input_t *in, size_t i)
{
    return ((const torch_input_t *)in)->e[i].bytes;
}

static void t_close(na_input_t *in)
{
    torch_input_t *ti = (torch_input_t *)in;
    if (ti == NULL)
        return;
    for (size_t i = 0; i < ti->n; i++) {
        free(ti->e[i].name);
        free(ti->e[i].reason);
        na_view_free(&ti->e[i].view);
    }
    free(ti->e);
    free(ti->scratch.buf);
    for (size_t i = 0; i < ti->n_stores; i++) {
        free(ti->stores[i].key);
        na_map_close(ti->stores[i].spill);
    }
    free(ti->stores);
    for (size_t i = 0; i < 2 * ti->n_meta; i++)
        free(ti->meta[i]);
    free(ti->meta);
    na_map_close(ti->map);
    na_zip_close(ti->zip);
    free(ti->base.path);
    free(ti);
}

static const struct na_input_vtbl torch_vtbl = {
    t_count, t_tensor, t_meta_count, t_meta, t_tensor_bytes, t_close, NULL,
};

/* ---- building entries ------------------------------------------------------ */

static int store_cmp(const void *a, const void *b)
{
    return strcmp(((const tstore_t *)a)->key, ((const tstore_t *)b)->key);
}

/* The store of key: by bisection once the stores are sorted (a checkpoint
 * of 100,000 tensors took minutes in linear lookups: round 44a). */
static tstore_t *find_store(torch_input_t *ti, const char *key)
{
    if (ti->stores_sorted) {
        tstore_t probe = {0};
        probe.key = (char *)key;
        return bsearch(&probe, ti->stores, ti->n_stores, sizeof *ti->stores, store_cmp);
    }
    for (size_t i = 0; i < ti->n_stores; i++)
        if (strcmp(ti->stores[i].key, key) == 0)
            return &ti->stores[i];
    return NULL;
}

static tentry_t *new_entry(torch_input_t *ti, const char *name)
{
    if (ti->n == ti->cap) {
        size_t nc = ti->cap ? 2 * ti->cap : 16;
        tentry_t *e = realloc(ti->e, nc * sizeof *e);
        if (e == NULL)
            return NULL;
        ti->e = e;
        ti->cap = nc;
    }
    tentry_t *e = &ti->e[ti->n];
    memset(e, 0, sizeof *e);
    if ((e->name = strdup(name)) == NULL)
        return NULL;
    ti->n++;
    return e;
}

static unsigned esize_of(na_dtype_t dt)
{
    unsigned bits = na_dtype_bits(dt);
    return bits >= 8 ? bits / 8 : 0;
}

/* torch.ComplexDoubleStorage (complex128) has no na_dtype_t, as
 * safetensors has no C128: it is audited as two F64 parts, NAME.real and
 * NAME.imag, as numpy's c16 is (npy.c), after DESIGN.md's "complex values
 * are audited as two real tensors". */
static int is_c128(const na_pk_tensor_t *pt)
{
    return pt->dtype == NA_DT_INVALID && strcmp(pt->dtype_name, "ComplexDoubleStorage") == 0;
}

/* Bytes of one storage element of tensor pt; 0 when unknown. */
static unsigned elem_size(const na_pk_tensor_t *pt)
{
    return is_c128(pt) ? 16 : esize_of(pt->dtype);
}

/* A deflated storage read out of order: inflate it into a temp file. */
static na_status_t ensure_mapped(torch_input_t *ti, tstore_t *s, na_err_t *err)
{
    if (s->s.map != NULL)
        return NA_OK;
    int fd = -1;
    na_status_t st = na_zip_spill(ti->zip, s->s.member, &fd, err);
    if (st == NA_OK)
        st = na_map_open(fd, s->s.size, ti->win, &s->spill, err);
    if (st == NA_OK)
        s->s = (na_store_t){s->spill, 0, s->s.size, NULL, 0};
    return st;
}

/* One pickled tensor -> one entry (two for complex64 and complex128). */
static na_status_t add_tensor(torch_input_t *ti, const na_pk_tensor_t *pt, na_err_t *err)
{
    na_dtype_t dt = pt->dtype;
    int c128 = is_c128(pt);
    int parts = dt == NA_DT_C64 || c128 ? 2 : 1;
    unsigned es = elem_size(pt);
    /* what one entry decodes: a complex number's part, or the element */
    na_dtype_t part = dt == NA_DT_C64 ? NA_DT_F32 : c128 ? NA_DT_F64 : dt;
    tstore_t *s = find_store(ti, pt->storage_key);
    for (int p = 0; p < parts; p++) {
        char nm[1200];
        snprintf(nm, sizeof nm, "%s%s", pt->name, parts == 2 ? (p ? ".imag" : ".real") : "");
        tentry_t *e = new_entry(ti, nm);
        if (e == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        e->dtype = part;
        e->stored = c128 ? NA_DT_F64 : dt; /* as npy.c's c16 */
        e->part_offset = (uint32_t)(es / 2 * p);
        e->part = parts == 2 ? NA_PART_COMPLEX : 0;
        na_view_t *v = &e->view;
        v->scratch = &ti->scratch;
        v->ndim = pt->ndim;
        v->rsize = es ? es : 1;
        uint64_t n = 1;
        for (int d = 0; d < pt->ndim; d++) {
            v->shape[d] = pt->shape[d];
            n = pt->shape[d] && n > UINT64_MAX / pt->shape[d] ? UINT64_MAX : n * pt->shape[d];
        }
        v->elements = n;
        if (part == NA_DT_INVALID || es == 0 || !na_dtype_supported(part)) {
            char r[200];
            snprintf(r, sizeof r, "unsupported torch storage type %s in tensor '%.120s'",
                     pt->dtype_name, pt->name);
            return (e->reason = strdup(r)) ? NA_OK : na_err_set(err, NA_E_NOMEM, "oom");
        }
        e->bytes = n != UINT64_MAX ? n * es / (uint64_t)parts : 0;
        if (s == NULL)
            return na_err_set(err, NA_E_FORMAT, "tensor '%.200s': storage '%.60s' is missing "
                              "from the file", pt->name, pt->storage_key);
        /* torch.load builds the storage from its persistent id's element
         * count: a member shorter than that is refused (round 43b: 2^31-1
         * elements over 12 bytes was audited) */
        if (pt->view_key == NULL && (pt->storage_numel > UINT64_MAX / es ||
                                     pt->storage_numel * es > s->s.size))
            return na_err_set(err, NA_E_FORMAT, "tensor '%.200s': storage '%.60s' holds %llu "
                              "bytes, less than the %llu elements of %llu bytes its persistent "
                              "id declares (torch.load refuses it)", pt->name, pt->storage_key,
                              (unsigned long long)s->s.size,
                              (unsigned long long)pt->storage_numel, (unsigned long long)es);
        uint64_t base = pt->view_offset + pt->offset;
        if (pt->offset > UINT64_MAX / es || base > UINT64_MAX / es)
            return na_err_set(err, NA_E_FORMAT, "tensor '%.200s': storage offset overflows",
                              pt->name);
        v->store = &s->s;
        v->offset = base * es;
        for (int d = 0; d < pt->ndim; d++) {
            if (pt->stride[d] > UINT64_MAX / es)
                return na_err_set(err, NA_E_FORMAT, "tensor '%.200s': stride overflows",
                                  pt->name);
            v->stride[d] = pt->stride[d] * es;
        }
        char what[300];
        snprintf(what, sizeof what, "tensor '%.200s'", pt->name);
        na_status_t st = na_view_prepare(v, what, err);
        if (st != NA_OK)
            return st;
        /* A stride-0 (broadcast) view can show 10^18 elements of a
         * one-element storage: a hostile file could make the scan run for
         * ever. State dicts hold parameters, not expanded views; refuse a
         * view more than 16 times the bytes of its storage. */
        if (n > (16 * s->s.size + (1u << 20)) / es)
            return na_err_set(err, NA_E_UNSUPPORTED, "tensor '%.200s': a view of %llu elements "
                              "over a storage of %llu bytes (more than 16 times its storage; "
                              "a broadcast view?) is not audited", pt->name,
                              (unsigned long long)n, (unsigned long long)s->s.size);
        /* the view must also stay inside the element count the persistent
         * id declares (a legacy storage view is smaller than its root) */
        uint64_t lim = pt->storage_numel <= UINT64_MAX / es ? pt->storage_numel * es : 0;
        uint64_t end = v->offset - pt->view_offset * es;
        for (int d = 0; n && d < pt->ndim; d++)
            end += (pt->shape[d] - 1) * v->stride[d];
        if (n != 0 && end + es > lim)
            return na_err_set(err, NA_E_FORMAT, "tensor '%.200s': view reaches element %llu "
                              "of a storage of %llu elements", pt->name,
                              (unsigned long long)((end + es) / es),
                              (unsigned long long)pt->storage_numel);
        if (!v->contiguous && (st = ensure_mapped(ti, s, err)) != NA_OK)
            return st;
    }
    return NA_OK;
}

static int tensor_key_cmp(const void *a, const void *b)
{
    const na_pk_tensor_t *x = *(const na_pk_tensor_t *const *)a;
    const na_pk_tensor_t *y = *(const na_pk_tensor_t *const *)b;
    int c = strcmp(x->storage_key, y->storage_key);
    return c ? c : (x < y ? -1 : x > y); /* pickle order within a key */
}

/* torch.load builds a storage once, with the type of the first tensor
 * that names its key (torch/serialization.py: loaded_storages[key] in
 * _load, deserialized_objects in _legacy_load), and every later tensor of
 * that key gets that type whatever its own persistent id says. Tensors
 * that name one key under two types (torch.save refuses to write them:
 * "Cannot save multiple tensors or storages that view the same data as
 * different types") would be audited as bytes torch does not load (round
 * 28b: an I32 view of a float storage hid the NaN torch.load gives):
 * refused. Sorted copy: O(n log n). */
static na_status_t storage_types_agree(const na_pk_result_t *r, na_err_t *err)
{
    if (r->n_tensors < 2)
        return NA_OK;
    const na_pk_tensor_t **s = malloc(r->n_tensors * sizeof *s);
    if (s == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    for (size_t i = 0; i < r->n_tensors; i++)
        s[i] = &r->tensors[i];
    qsort(s, r->n_tensors, sizeof *s, tensor_key_cmp);
    na_status_t st = NA_OK;
    for (size_t i = 1, g = 0; i < r->n_tensors && st == NA_OK; i++) {
        if (strcmp(s[g]->storage_key, s[i]->storage_key)) {
            g = i; /* the first tensor of this key */
            continue;
        }
        if (strcmp(s[g]->dtype_name, s[i]->dtype_name))
            st = na_err_set(err, NA_E_FORMAT, "tensors '%.120s' and '%.120s' share storage "
                            "'%.60s' as %s and %s; torch.load reads it as the first's type "
                            "(torch.save refuses to write this): refused", s[g]->name,
                            s[i]->name, s[i]->storage_key, s[g]->dtype_name, s[i]->dtype_name);
    }
    free(s);
    return st;
}

static na_status_t take_result(torch_input_t *ti, na_pk_result_t *r, na_err_t *err)
{
    na_status_t tst = storage_types_agree(r, err);
    if (tst != NA_OK)
        return tst;
    for (size_t i = 0; i < r->n_tensors; i++) {
        na_status_t st = add_tensor(ti, &r->tensors[i], err);
        if (st != NA_OK)
            return st;
    }
    /* Views of one storage may overlap (tied weights: twice its bytes; a
     * block of weights shared by 24 layers: 24 times, round 44a), but a
     * pickle that names one 16 MiB storage in 100,000 tensors made the
     * scan run for minutes (round 43b): all views together at most 64
     * times the storages' bytes, + 16 GiB (a few seconds of reading). */
    uint64_t views = 0, stores = 0;
    for (size_t i = 0; i < ti->n; i++)
        views = views + ti->e[i].bytes < views ? UINT64_MAX : views + ti->e[i].bytes;
    for (size_t i = 0; i < ti->n_stores; i++)
        stores += ti->stores[i].s.size;
    if (stores > UINT64_MAX / 128 || views > 64 * stores + ((uint64_t)16 << 30))
        return na_err_set(err, NA_E_FORMAT, "the %zu tensors view %llu bytes in all, more than "
                          "64 times the %llu bytes of their storages (+16 GiB): the same storage "
                          "named over and over; not audited", ti->n,
                          (unsigned long long)views, (unsigned long long)stores);
    ti->meta = r->meta;
    ti->n_meta = r->n_meta;
    r->meta = NULL;
    r->n_meta = 0;
    return NA_OK;
}

/* ---- where a tensor's bytes are, for clean's writer ------------------------ */

na_status_t na_torch_locate(const na_input_t *in, size_t i, na_torch_loc_t *loc,
                            na_err_t *err)
{
    const torch_input_t *ti = (const torch_input_t *)in;
    memset(loc, 0, sizeof *loc);
    if (in == NULL || in->v != &torch_vtbl || i >= ti->n)
        return na_err_set(err, NA_E_INTERNAL, "not a tensor of a PyTorch input");
    const tentry_t *e = &ti->e[i];
    loc->order = ti->order;
    if (e->reason != NULL)
        return na_err_set(err, NA_E_UNSUPPORTED, "%s", e->reason);
    const na_view_t *v = &e->view;
    /* v->store is the s of one of ti->stores (add_tensor), which is
     * allocated once: its index by address, not by a walk per tensor */
    const tstore_t *s = NULL;
    uintptr_t at = (uintptr_t)v->store, base = (uintptr_t)ti->stores;
    if (ti->n_stores && at >= base && at < base + ti->n_stores * sizeof *ti->stores)
        s = &ti->stores[(at - base) / sizeof *ti->stores];
    if (s == NULL || &s->s != v->store || s->s.map != ti->map) {
        /* a storage someone re-compressed: read through inflate (or a
         * spill file), no byte of it is in the file as it is */
        loc->why = "its storage is a compressed zip member";
        return NA_OK;
    }
    loc->member = s->zmember == SIZE_MAX ? NULL : na_zip_entry(ti->zip, s->zmember);
    if (v->elements == 0)
        return NA_OK;
    /* the view's extent (na_view_prepare checked it is inside the store) */
    uint64_t span = v->rsize;
    for (int d = 0; d < v->ndim; d++)
        span += (v->shape[d] - 1) * v->stride[d];
    loc->lo = s->s.base + v->offset;
    loc->hi = loc->lo + span;
    loc->direct = v->contiguous && e->part == 0;
    if (!loc->direct)
        loc->why = e->part ? "a part of a complex tensor" : "a non-contiguous view";
    return NA_OK;
}

na_status_t na_torch_pread(const na_input_t *in, uint64_t off, size_t len, void *buf,
                           na_err_t *err)
{
    if (in == NULL || in->v != &torch_vtbl)
        return na_err_set(err, NA_E_INTERNAL, "not a PyTorch input");
    return na_map_pread(((const torch_input_t *)in)->map, off, len, buf, err);
}

/* ---- zip format ------------------------------------------------------------ */

/* torch.load finds members with miniz's mz_zip_reader_locate_file
 * without MZ_ZIP_FLAG_CASE_SENSITIVE: names compare ASCII
 * case-insensitively (archive/DATA/0 is data/0's member). So does this,
 * and two members whose names differ only in case are refused
 * (zip_case_unique): which one miniz finds depends on their order (round
 * 31a: a clean data/0 for nanaudit, a NaN DATA/0 for torch). */
static size_t find_nocase(const na_zip_t *z, const char *name)
{
    for (size_t i = 0; i < na_zip_count(z); i++)
        if (strcasecmp(na_zip_entry(z, i)->name, name) == 0)
            return i;
    return SIZE_MAX;
}

static na_status_t zip_case_unique(const na_zip_t *z, na_err_t *err)
{
    const char *a, *b;
    int clash = na_zip_name_clash(z, 1, &a, &b);
    if (clash < 0)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    return clash ? na_err_set(err, NA_E_FORMAT, "zip members '%.200s' and '%.200s' differ only "
                              "in case, which torch.load does not tell apart (refused)", a, b)
                 : NA_OK;
}

typedef struct mref {
    const char *name; /* a zip member's name */
    size_t k;         /* its index */
} mref_t;

static int member_cmp(const void *a, const void *b)
{
    return strcasecmp(((const mref_t *)a)->name, ((const mref_t *)b)->name);
}

/* One store per storage key, made in key order (the stores come out
 * sorted for find_store); members found by bisection over the names in
 * case-insensitive order (zip_case_unique made them unique so): n log n,
 * where a lookup per key over all keys and members was n^2 (round 44a:
 * 100,000 tensors took 147 s). */
static na_status_t zip_stores(torch_input_t *ti, const char *dir, const na_pk_result_t *r,
                              na_err_t *err)
{
    ti->stores = calloc(r->n_tensors + 1, sizeof *ti->stores);
    size_t nm = na_zip_count(ti->zip);
    const na_pk_tensor_t **tk = malloc((r->n_tensors + 1) * sizeof *tk);
    mref_t *mi = malloc((nm + 1) * sizeof *mi);
    na_status_t st = NA_OK;
    if (ti->stores == NULL || tk == NULL || mi == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    for (size_t i = 0; st == NA_OK && i < r->n_tensors; i++)
        tk[i] = &r->tensors[i];
    for (size_t i = 0; st == NA_OK && i < nm; i++)
        mi[i] = (mref_t){na_zip_entry(ti->zip, i)->name, i};
    if (st == NA_OK) {
        qsort(tk, r->n_tensors, sizeof *tk, tensor_key_cmp);
        qsort(mi, nm, sizeof *mi, member_cmp);
    }
    for (size_t i = 0; st == NA_OK && i < r->n_tensors; i++) {
        const char *key = tk[i]->storage_key;
        if (i > 0 && strcmp(key, tk[i - 1]->storage_key) == 0)
            continue;
        char mem[1200];
        snprintf(mem, sizeof mem, "%s%sdata/%s", dir, *dir ? "/" : "", key);
        mref_t probe = {mem, 0};
        const mref_t *f = bsearch(&probe, mi, nm, sizeof *mi, member_cmp);
        size_t k = f ? f->k : SIZE_MAX;
        if (k == SIZE_MAX) {
            st = na_err_set(err, NA_E_FORMAT, "tensor '%.200s': storage member '%.300s' is "
                            "missing", tk[i]->name, mem);
            break;
        }
        const na_zip_entry_t *ze = na_zip_entry(ti->zip, k);
        tstore_t *s = &ti->stores[ti->n_stores++];
        if ((s->key = strdup(key)) == NULL) {
            st = na_err_set(err, NA_E_NOMEM, "out of memory");
            break;
        }
        s->zmember = k;
        if (ze->data_pos != UINT64_MAX)
            s->s = (na_store_t){ti->map, ze->data_pos, ze->usize, NULL, 0};
        else
            s->s = (na_store_t){NULL, 0, ze->usize, ti->zip, k};
    }
    ti->stores_sorted = st == NA_OK;
    free(tk);
    free(mi);
    return st;
}

static na_status_t zip_byteorder(torch_input_t *ti, const char *dir, na_err_t *err)
{
    char mem[1100];
    snprintf(mem, sizeof mem, "%s%sbyteorder", dir, *dir ? "/" : "");
    size_t k = find_nocase(ti->zip, mem);
    ti->order = NA_LITTLE;
    if (k == SIZE_MAX)
        return NA_OK;
    uint8_t *b = NULL;
    size_t len = 0;
    na_status_t st = na_zip_read_all(ti->zip, k, 16, &b, &len, err);
    if (st != NA_OK)
        return st;
    if (len == 3 && memcmp(b, "big", 3) == 0)
        ti->order = NA_BIG;
    else if (!(len == 6 && memcmp(b, "little", 6) == 0))
        st = na_err_set(err, NA_E_FORMAT, "member '%s' is neither \"little\" nor \"big\"", mem);
    free(b);
    return st;
}

static na_status_t open_zip(torch_input_t *ti, int fd, na_err_t *err)
{
    na_status_t st = na_zip_open(fd, ti->base.file_size, &ti->zip, err);
    if (st != NA_OK)
        return st;
    int fd2 = na_zip_dup_fd(ti->zip);
    st = fd2 < 0 ? na_err_set(err, na_errno_status(errno), "dup failed: %s", strerror(errno))
                 : na_map_open(fd2, ti->base.file_size, ti->win, &ti->map, err);
    if (st != NA_OK)
        return st;
    st = zip_case_unique(ti->zip, err);
    if (st != NA_OK)
        return st;
    size_t pk = SIZE_MAX;
    for (size_t i = 0; i < na_zip_count(ti->zip); i++) {
        const char *nm = na_zip_entry(ti->zip, i)->name, *sl = strchr(nm, '/');
        if ((sl != NULL && sl != nm && strcasecmp(sl, "/data.pkl") == 0) ||
            strcasecmp(nm, "data.pkl") == 0) {
            if (pk != SIZE_MAX)
                return na_err_set(err, NA_E_FORMAT, "zip holds two data.pkl members ('%s' and "
                                  "'%s')", na_zip_entry(ti->zip, pk)->name, nm);
            pk = i;
        }
    }
    if (pk == SIZE_MAX)
        return na_err_set(err, NA_E_FORMAT, "zip archive without DIR/data.pkl: not a "
                          "torch.save checkpoint");
    const char *pname = na_zip_entry(ti->zip, pk)->name;
    char dir[1024];
    const char *sl = strchr(pname, '/');
    snprintf(dir, sizeof dir, "%.*s", sl ? (int)(sl - pname) : 0, pname);
    uint8_t *buf = NULL;
    size_t len = 0;
    na_pk_result_t r;
    memset(&r, 0, sizeof r);
    st = na_zip_read_all(ti->zip, pk, PKL_MAX_BYTES, &buf, &len, err);
    if (st == NA_OK)
        st = na_pickle_load(buf, len, &r, err);
    free(buf);
    if (st == NA_OK)
        st = zip_byteorder(ti, dir, err);
    if (st == NA_OK)
        st = zip_stores(ti, dir, &r, err);
    if (st == NA_OK)
        st = take_result(ti, &r, err);
    na_pickle_result_free(&r);
    return st;
}

/* ---- legacy format ---------------------------------------------------------- */

/* The pickles at the start of the file: read a growing prefix until the
 * five pickles parse (they are metadata, far smaller than the data). */
typedef struct legacy {
    uint8_t *buf;
    size_t len;
    size_t pos;
} legacy_t;

static na_status_t next_pickle(torch_input_t *ti, legacy_t *L, na_pk_result_t *r,
                               na_err_t *err)
{
    for (;;) {
        na_status_t st = na_pickle_load(L->buf + L->pos, L->len - L->pos, r, err);
        int short_read = st == NA_E_FORMAT && L->len < ti->base.file_size &&
                         strstr(err->msg, "truncated") != NULL;
        if (!short_read) {
            if (st == NA_OK)
                L->pos += r->consumed;
            return st;
        }
        uint64_t want = (uint64_t)L->len * 4;
        if (want > ti->base.file_size)
            want = ti->base.file_size;
        if (want > PKL_MAX_BYTES)
            return na_err_set(err, NA_E_FORMAT, "legacy checkpoint: pickles larger than "
                              "%llu bytes", (unsigned long long)PKL_MAX_BYTES);
        uint8_t *b = realloc(L->buf, (size_t)want);
        if (b == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        L->buf = b;
        st = na_map_pread(ti->map, L->len, (size_t)want - L->len, b + L->len, err);
        if (st != NA_OK)
            return st;
        L->len = (size_t)want;
    }
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* torch.load (torch/serialization.py, _legacy_load) reads each blob into
 * the storage of its key, so of a key listed twice the last blob wins,
 * while a lookup here would find the first: the bytes audited would not
 * be the bytes torch loads. Refused, as a duplicate zip member is (zip.c).
 * Sorted copy: O(n log n) for a hostile list of millions of keys. */
static na_status_t legacy_unique_keys(const na_pk_result_t *keys, na_err_t *err)
{
    if (keys->n_keys < 2)
        return NA_OK;
    const char **k = malloc(keys->n_keys * sizeof *k);
    if (k == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    for (size_t i = 0; i < keys->n_keys; i++)
        k[i] = keys->keys[i];
    qsort(k, keys->n_keys, sizeof *k, key_cmp);
    na_status_t st = NA_OK;
    for (size_t i = 1; i < keys->n_keys && st == NA_OK; i++)
        if (strcmp(k[i - 1], k[i]) == 0)
            st = na_err_set(err, NA_E_FORMAT, "legacy checkpoint: storage key '%.60s' is "
                            "listed twice (refused: torch.load fills the storage from the "
                            "last copy, readers disagree on which wins)", k[i]);
    free(k);
    return st;
}

/* Storage blobs after the key list: u64 element count + bytes, in the
 * key list's order. The element size comes from the tensors' types. */
static na_status_t legacy_stores(torch_input_t *ti, const na_pk_result_t *obj,
                                 const na_pk_result_t *keys, uint64_t pos, na_err_t *err)
{
    ti->stores = calloc(keys->n_keys + 1, sizeof *ti->stores);
    if (ti->stores == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    na_status_t dst = legacy_unique_keys(keys, err);
    if (dst != NA_OK)
        return dst;
    for (size_t i = 0; i < keys->n_keys; i++) {
        const char *key = keys->keys[i], *who = NULL; /* the first tensor on it */
        unsigned es = 0;
        for (size_t t = 0; t < obj->n_tensors && es == 0; t++)
            if (strcmp(obj->tensors[t].storage_key, key) == 0) {
                es = elem_size(&obj->tensors[t]);
                who = obj->tensors[t].name;
            }
        /* messages name a tensor: the key is pickle-internal (round 40a) */
        char whose[200] = "";
        if (who)
            snprintf(whose, sizeof whose, "tensor '%.120s': ", who);
        uint8_t n8[8];
        na_status_t st = na_map_pread(ti->map, pos, 8, n8, err);
        if (st != NA_OK)
            return na_err_set(err, NA_E_FORMAT, "%sdata truncated: its storage (key '%.60s', "
                              "%zu of %zu) should start at byte %llu, the file has %llu bytes",
                              whose, key, i + 1, keys->n_keys, (unsigned long long)pos,
                              (unsigned long long)ti->base.file_size);
        uint64_t numel = 0;
        for (int b = 7; b >= 0; b--)
            numel = numel << 8 | n8[ti->order == NA_BIG ? 7 - b : b];
        if (es == 0)
            return na_err_set(err, NA_E_UNSUPPORTED, "storage '%.60s' has a type whose element "
                              "size is unknown, so the storages after it cannot be found", key);
        uint64_t avail = ti->base.file_size - pos - 8;
        if (numel > avail / es)
            return na_err_set(err, NA_E_FORMAT, "%sdata truncated: its storage (key '%.60s') "
                              "needs %llu elements × %u bytes from byte %llu, the file has %llu "
                              "bytes (%llu after it)", whose, key, (unsigned long long)numel, es,
                              (unsigned long long)(pos + 8),
                              (unsigned long long)ti->base.file_size, (unsigned long long)avail);
        tstore_t *s = &ti->stores[ti->n_stores++];
        if ((s->key = strdup(key)) == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        s->zmember = SIZE_MAX;
        s->s = (na_store_t){ti->map, pos + 8, numel * es, NULL, 0};
        pos += 8 + numel * es;
    }
    return NA_OK;
}

static na_status_t open_legacy(torch_input_t *ti, int fd, na_err_t *err)
{
    na_status_t st = na_map_open(fd, ti->base.file_size, ti->win, &ti->map, err);
    if (st != NA_OK)
        return st;
    legacy_t L = {NULL, 0, 0};
    L.len = ti->base.file_size < (1u << 20) ? (size_t)ti->base.file_size : (1u << 20);
    if ((L.buf = malloc(L.len ? L.len : 1)) == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    st = na_map_pread(ti->map, 0, L.len, L.buf, err);
    na_pk_result_t r[5];
    memset(r, 0, sizeof r);
    for (int k = 0; k < 5 && st == NA_OK; k++)
        st = next_pickle(ti, &L, &r[k], err);
    if (st == NA_OK && (!r[0].is_int || strcmp(r[0].int_text, "0x1950a86a20f9469cfc6c") != 0))
        st = na_err_set(err, NA_E_FORMAT, "pickle without torch.save's magic number "
                        "0x1950a86a20f9469cfc6c: not a PyTorch checkpoint");
    if (st == NA_OK && (!r[1].is_int || strcmp(r[1].int_text, "1001") != 0))
        st = na_err_set(err, NA_E_UNSUPPORTED, "legacy torch.save protocol %s (only 1001 is "
                        "known)", r[1].is_int ? r[1].int_text : "?");
    if (st == NA_OK) {
        ti->order = NA_LITTLE;
        for (size_t i = 0; i < r[2].n_meta; i++)
            if (strcmp(r[2].meta[2 * i], "little_endian") == 0 &&
                strcmp(r[2].meta[2 * i + 1], "False") == 0)
                ti->order = NA_BIG;
        if (!r[4].is_keys)
            st = na_err_set(err, NA_E_FORMAT, "legacy checkpoint: the fifth pickle is not the "
                            "list of storage keys");
    }
    if (st == NA_OK)
        st = legacy_stores(ti, &r[3], &r[4], L.pos, err);
    if (st == NA_OK && ti->stores != NULL) { /* for find_store (keys unique: checked) */
        qsort(ti->stores, ti->n_stores, sizeof *ti->stores, store_cmp);
        ti->stores_sorted = 1;
    }
    if (st == NA_OK)
        st = take_result(ti, &r[3], err);
    for (int k = 0; k < 5; k++)
        na_pickle_result_free(&r[k]);
    free(L.buf);
    return st;
}

/* ---- open ------------------------------------------------------------------- */

static na_status_t torch_open(const char *path, int fd, const na_open_opts_t *o,
                              na_input_t **out, na_err_t *err)
{
    *out = NULL;
    struct stat sb;
    uint8_t head[4] = {0};
    if (fstat(fd, &sb) != 0 || pread(fd, head, 4, 0) < 0) {
        close(fd);
        return na_err_set(err, NA_E_IO, "cannot read the file");
    }
    torch_input_t *ti = calloc(1, sizeof *ti);
    if (ti == NULL) {
        close(fd);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    ti->base.v = &torch_vtbl;
    ti->base.format = "pytorch";
    ti->base.file_size = (uint64_t)sb.st_size;
    ti->base.path = strdup(path ? path : "");
    ti->win = o && o->window_bytes ? o->window_bytes : NA_DEFAULT_WINDOW_BYTES;
    na_status_t st = head[0] == 'P' && head[1] == 'K' ? open_zip(ti, fd, err)
                                                      : open_legacy(ti, fd, err);
    if (st == NA_OK && ti->base.path == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    if (st != NA_OK) {
        t_close(&ti->base);
        return st;
    }
    *out = &ti->base;
    return NA_OK;
}

const na_format_t na_format_torch = {"pytorch", torch_open};
