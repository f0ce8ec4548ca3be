/*
 * hdf5_wchild.c - the libhdf5 process of the HDF5 writer (hdf5_write.c;
 * messages in hdf5_wproto.h). It creates the output with the input's
 * file creation properties, copies the input's structure, and writes the
 * cleaned tensors' elements with hyperslab H5Dwrite calls, one shared
 * window at a time. No OpenMP, no stdio; leaves with _exit.
 *
 * What is copied (HDF5 User's Guide, "HDF5 Groups", "HDF5 Attributes",
 * "HDF5 Datasets"; H5Ocopy reference):
 *  - groups are re-created with their creation property list (link and
 *    attribute creation order, storage thresholds) and their attributes,
 *    links visited in creation order where the group indexes it, else in
 *    name order (the order h5py shows), so both orders survive;
 *  - datasets that hold no cleaned tensor, and named datatypes, are
 *    copied by H5Ocopy (layout, filters, fill value, raw chunks:
 *    byte-identical data), their attributes here (copy_whole says why);
 *    but a variable-length dataset with a fill value of its own is
 *    re-created and its rows copied (rebuild; needs_rebuild says why);
 *  - a dataset (or a compound's string fields) that clean does not read
 *    but that follows a --together group (na_wtensor_t.drop) is
 *    re-created like a cleaned one and the kept rows copied in its own
 *    type (rebuild, rows_copy; w_follow and w_dataset);
 *  - attributes are read and written with their own file type (strings,
 *    variable-length data, compounds as stored), in creation order where
 *    the object indexes it, else in name order;
 *  - soft and external links are re-created with their values; a second
 *    hard link to an object already copied becomes a hard link to the
 *    copy; user-defined links cannot be copied (an error, never dropped);
 *  - a dataset with cleaned tensors is re-created: same creation property
 *    list (chunking, filters, fill value and fill time), same datatype
 *    (byte order included) unless the output dtype differs (integers with
 *    --normalize become F32 in the input's byte order), the new row count
 *    along axis 0 (a fixed maximum extent follows it, an unlimited one
 *    stays), a chunk extent larger than the new extent shrunk to it (1
 *    for 0 rows), and every attribute (but scale_factor, add_offset and
 *    the valid_* range of a dataset clean normalized: na_h5_packing_attr);
 *  - compound fields (NAME.field, nested NAME.a.b, complex NAME.real and
 *    NAME.imag as hdf5_child.c names them) are written into their
 *    dataset with a memory type holding only that member; libhdf5 keeps
 *    the other members (background buffer). When every cleaned field
 *    keeps all rows and its dtype, the dataset is H5Ocopy'd and the
 *    fields overwritten; when rows go or a dtype changes, every member
 *    must be a cleaned tensor or a string field following with it, with
 *    the same row count (the caller's --together made the dropped rows
 *    the same), else the write is refused (NA_E_USAGE) naming the
 *    dataset: never misaligned records;
 *  - array datatypes (the tensor's trailing dimensions) are written per
 *    dataset element, a "unit" of tensor elements (READY tells the parent);
 *  - object references (dimension scales, h5py ref datasets) are given
 *    new values pointing at the copies (see "object references" below).
 * Not preserved: region references into datasets that lose samples (NULL),
 * object addresses, times.
 *
 * A check (h5w_job_t.output NULL: clean --dry-run) runs this same walk,
 * so every refusal above (user-defined links, a lossy scale-offset
 * filter, a reduced-precision float type, external or virtual storage,
 * compound records that cannot be rewritten) is decided by the code
 * that decides it in a real run, with
 * the same message and status. It copies structure only, never data:
 * the output is an in-memory file (core driver, no backing store:
 * nothing is created on disk); an untouched dataset becomes an empty
 * stand-in that takes its attributes instead of an H5Ocopy, which would
 * read and copy its data; cleaned datasets are created with late
 * allocation (no storage, no fill values written). So it costs
 * milliseconds whatever the data's size; what it cannot see is a read
 * failure inside the data H5Ocopy would copy (a damaged untouched
 * dataset), which a real run reports.
 */
#include "hdf5_types.h"
#include "hdf5_wdeflate.h"
#include "hdf5_wproto.h"

#include <fcntl.h>      /* open */
#include <signal.h>     /* raise, SIGSEGV */
#include <stdarg.h>     /* va_list */
#include <stdio.h>      /* snprintf */
#include <stdlib.h>     /* malloc, free */
#include <string.h>     /* strcmp, strlen */
#include <sys/prctl.h>  /* prctl, PR_SET_PDEATHSIG (a test fault) */
#include <unistd.h>     /* _exit, pread, pwrite, sleep */

#if NA_HAVE_HDF5
#include <hdf5.h>

#define W_MAX_FIELDS 16

/* One cleaned tensor: where its elements go. */
typedef struct wtgt {
    char *dpath;        /* its dataset in the input (NULL: copied tensor) */
    haddr_t addr;       /* that dataset's object address */
    int nf;             /* member path depth (0: the whole dataset) */
    char *field[W_MAX_FIELDS];
    hid_t leaf;         /* file type of the member (or the dataset) */
    hid_t dset;         /* output dataset, -1 until created */
    hid_t memtype;      /* type of the bytes that arrive */
    uint32_t unit;      /* tensor elements per dataset element (array types) */
    int ndim;
    uint64_t shape[NA_MAX_NDIM];
    /* Chunks left unwritten (sparse_plan): 0 not decided yet, 1 yes, -1 no */
    int sparse;
    uint64_t chunk_elems; /* dataset elements per chunk, contiguous in C order */
    size_t esize;         /* bytes of one dataset element of memtype (set
                           * with it) */
    uint8_t *fillpat;     /* the fill value in memtype, repeated (W_FILLPAT bytes) */
    uint64_t ck_elems;    /* elements per chunk for write_range, 0 not known yet,
                           * UINT64_MAX not chunked */
    int wd_planned;       /* write_window: wd decided */
    na_h5wd_t *wd;        /* whole chunks deflated on threads (hdf5_wdeflate.c), NULL:
                           * libhdf5 writes everything */
    int rowcopy;          /* a copied dataset or field that loses rows
                           * (na_wtensor_t.drop): 1 until copied, 2 after */
} wtgt_t;

typedef struct wctx {
    int sock;
    uint8_t *shm;
    const h5w_job_t *job;
    hid_t in, out;
    wtgt_t *tg;
    size_t map_cap, map_n;  /* input object address -> output path */
    haddr_t *map_k;
    char **map_v;
    size_t n_pend;          /* committed datatypes at a temporary link at
                             * the root (type_copy), not moved yet */
    haddr_t *pend;          /* their input addresses (take_pending) */
    size_t n_fix, cap_fix;  /* objects whose references need new values */
    struct wfix *fix;
    struct waddr *by_addr;  /* cleaned tensors by dataset address (index_targets) */
    size_t n_by_addr;
    int check;              /* no output file: structure only (see above) */
    uint32_t fail_st;       /* first error, sent as FAIL */
    char fail[400];
} wctx_t;

static void w_die(void) __attribute__((noreturn));
static void w_die(void) { _exit(2); }

static int w_err(wctx_t *c, uint32_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record the first error (later ones are consequences); returns -1. */
static int w_err(wctx_t *c, uint32_t st, const char *fmt, ...)
{
    if (c->fail[0])
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->fail, sizeof c->fail, fmt, ap);
    va_end(ap);
    c->fail_st = st;
    return -1;
}

/* w_err with the innermost libhdf5 message appended: a failure to write
 * (NA_E_WRITE, exit 4) or, w_h5in, to read the input (NA_E_FORMAT, exit
 * 3: a damaged object that H5Ocopy or an attribute read trips over). */
static int w_h5st(wctx_t *c, uint32_t st, const char *what, const char *path)
{
    char cause[200];
    na_h5c_cause(cause, sizeof cause);
    return w_err(c, st, "%s: %s: %s", path, what, cause);
}

static int w_h5err(wctx_t *c, const char *what, const char *path)
{
    return w_h5st(c, NA_E_WRITE, what, path);
}

static int w_h5in(wctx_t *c, const char *what, const char *path)
{
    return w_h5st(c, NA_E_FORMAT, what, path);
}

static void w_send(wctx_t *c, uint32_t type, uint32_t st, const char *msg)
{
    if (na_h5p_send(c->sock, type, st, msg, msg ? strlen(msg) : 0, NULL, 0) != 0)
        w_die();
}

/* Close every id of ids[0..n) that is set (>= 0), whatever its kind:
 * the error paths leave some at -1. */
static void w_close(const hid_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0)
            continue;
        switch (H5Iget_type(ids[i])) {
        case H5I_DATATYPE: H5Tclose(ids[i]); break;
        case H5I_DATASPACE: H5Sclose(ids[i]); break;
        case H5I_ATTR: H5Aclose(ids[i]); break;
        case H5I_GENPROP_LST: H5Pclose(ids[i]); break;
        case H5I_DATASET:
        case H5I_GROUP: H5Oclose(ids[i]); break;
        default: break;
        }
    }
}
#define W_CLOSE(...)                                                                               \
    do {                                                                                           \
        const hid_t w_ids_[] = {__VA_ARGS__};                                                      \
        w_close(w_ids_, sizeof w_ids_ / sizeof w_ids_[0]);                                         \
    } while (0)

/* ---- object address -> output path (hard links to one object) ---- */

/* The slot of address a in the open-addressed table (k, v, cap: a power
 * of two, not full): the one holding a, or the empty one where it goes. */
static size_t map_slot(const haddr_t *k, char *const *v, size_t cap, haddr_t a)
{
    size_t h = (size_t)(a * 0x9E3779B97F4A7C15ull) & (cap - 1);
    while (v[h] != NULL && k[h] != a)
        h = (h + 1) & (cap - 1);
    return h;
}

static const char *map_get(const wctx_t *c, haddr_t a)
{
    return c->map_cap ? c->map_v[map_slot(c->map_k, c->map_v, c->map_cap, a)] : NULL;
}

/* Point a's entry at path (a new entry, or a type_copy link moved). */
static void map_put(wctx_t *c, haddr_t a, const char *path)
{
    if (2 * (c->map_n + 1) > c->map_cap) {
        size_t oc = c->map_cap, nc = oc ? oc * 2 : 256;
        haddr_t *ok = c->map_k;
        char **ov = c->map_v;
        c->map_k = calloc(nc, sizeof *c->map_k);
        c->map_v = calloc(nc, sizeof *c->map_v);
        if (!c->map_k || !c->map_v)
            w_die();
        c->map_cap = nc;
        for (size_t i = 0; i < oc; i++) { /* the strings move over */
            if (ov[i]) {
                size_t h = map_slot(c->map_k, c->map_v, nc, ok[i]);
                c->map_k[h] = ok[i];
                c->map_v[h] = ov[i];
            }
        }
        free(ok);
        free(ov);
    }
    size_t h = map_slot(c->map_k, c->map_v, c->map_cap, a);
    char *v = strdup(path);
    if (!v)
        w_die();
    if (c->map_v[h] == NULL)
        c->map_n++;
    free(c->map_v[h]);
    c->map_k[h] = a;
    c->map_v[h] = v;
}

/* ---- object references ------------------------------------------------ */

/* A copied object reference holds the address of an object of the input
 * (a raw copy) or NULL (H5Ocopy, for objects outside that one copy), so
 * every attribute or dataset whose type contains an object reference
 * (dimension scales' DIMENSION_LIST and REFERENCE_LIST, h5py ref
 * datasets) is recorded during the copy and rewritten after it, when
 * every object has its place: input address -> output path -> H5Rcreate.
 * A region reference is made anew on the copy of its dataset with the
 * same selection (region_ref) where that copy has the input's extent;
 * into a dataset that lost samples, or one not copied, it becomes NULL,
 * as does a reference to an object that was not copied, rather than an
 * address of the wrong file. */

typedef struct wfix {
    char *path;   /* the object, the same path in input and output */
    char *attr;   /* its attribute, or NULL: the dataset's data */
} wfix_t;

/* 64 MiB: a larger reference dataset keeps H5Ocopy's NULL references
 * (read whole here; reference datasets are small lists in practice). */
#define W_MAX_REF_BYTES ((uint64_t)64 << 20)

static void add_fix(wctx_t *c, const char *path, const char *attr)
{
    if (c->n_fix == c->cap_fix) {
        size_t nc = c->cap_fix ? 2 * c->cap_fix : 16;
        wfix_t *nf = realloc(c->fix, nc * sizeof *nf);
        if (!nf)
            w_die();
        c->fix = nf;
        c->cap_fix = nc;
    }
    wfix_t *f = &c->fix[c->n_fix++];
    f->path = strdup(path);
    f->attr = attr ? strdup(attr) : NULL;
    if (!f->path || (attr && !f->attr))
        w_die();
}

static int has_refs(hid_t ty) { return H5Tdetect_class(ty, H5T_REFERENCE) > 0; }
/* 1 when ty holds variable-length data (strings included), which a read
 * allocates and H5Dvlen_reclaim frees. */
static int has_vlen(hid_t ty)
{
    return H5Tdetect_class(ty, H5T_VLEN) > 0 || H5Tis_variable_str(ty) > 0;
}

/* A region reference of the input (*in) as one of the output (*out): the
 * same selection on the copy of its dataset. 0 made; -1 for NULL (a NULL
 * reference, a dataset not copied, or one whose copy's extent differs:
 * --together or a drop took samples, and the selection would name other
 * or missing elements). */
static int region_ref(wctx_t *c, const hdset_reg_ref_t *in, hdset_reg_ref_t *out)
{
    static const hdset_reg_ref_t null_ref;
    if (memcmp(in, &null_ref, sizeof null_ref) == 0)
        return -1;
    hid_t ds = H5Rdereference2(c->in, H5P_DEFAULT, H5R_DATASET_REGION, in);
    hid_t sp = ds < 0 ? -1 : H5Rget_region(c->in, H5R_DATASET_REGION, in);
    H5O_info_t oi;
    const char *op = sp >= 0 && H5Oget_info2(ds, &oi, H5O_INFO_BASIC) >= 0
                         ? map_get(c, oi.addr)
                         : NULL;
    hid_t od = op ? H5Dopen2(c->out, op, H5P_DEFAULT) : -1;
    hid_t isp = od >= 0 ? H5Dget_space(ds) : -1, osp = od >= 0 ? H5Dget_space(od) : -1;
    hsize_t a[H5S_MAX_RANK], b[H5S_MAX_RANK];
    int na = isp >= 0 ? H5Sget_simple_extent_dims(isp, a, NULL) : -1;
    int nb = osp >= 0 ? H5Sget_simple_extent_dims(osp, b, NULL) : -2;
    int r = na >= 0 && na == nb && memcmp(a, b, (size_t)na * sizeof a[0]) == 0 &&
                    H5Rcreate(out, c->out, op, H5R_DATASET_REGION, sp) >= 0
                ? 0
                : -1;
    W_CLOSE(osp, isp, od, sp, ds);
    H5Eclear2(H5E_DEFAULT);
    return r;
}

/* New values for the n references of type ty at p (in memory as read). */
static void translate(wctx_t *c, hid_t ty, uint8_t *p, size_t n)
{
    size_t sz = H5Tget_size(ty);
    H5T_class_t cl = H5Tget_class(ty);
    if (cl == H5T_REFERENCE && H5Tequal(ty, H5T_STD_REF_DSETREG) > 0 &&
        sz == sizeof(hdset_reg_ref_t)) {
        for (size_t i = 0; i < n; i++) {
            hdset_reg_ref_t in, out;
            memcpy(&in, p + i * sz, sizeof in);
            if (region_ref(c, &in, &out) < 0)
                memset(&out, 0, sizeof out);
            memcpy(p + i * sz, &out, sizeof out);
        }
    } else if (cl == H5T_REFERENCE) {
        int obj = H5Tequal(ty, H5T_STD_REF_OBJ) > 0;
        for (size_t i = 0; i < n; i++) {
            hobj_ref_t in = 0, out = 0;
            const char *op = NULL;
            if (obj) {
                memcpy(&in, p + i * sz, sizeof in);
                op = in ? map_get(c, (haddr_t)in) : NULL;
            }
            if (op && H5Rcreate(&out, c->out, op, H5R_OBJECT, -1) < 0)
                out = 0;
            memset(p + i * sz, 0, sz);
            if (obj)
                memcpy(p + i * sz, &out, sizeof out);
        }
    } else if (cl == H5T_COMPOUND) {
        for (int m = 0; m < H5Tget_nmembers(ty); m++) {
            hid_t mt = H5Tget_member_type(ty, (unsigned)m);
            size_t off = H5Tget_member_offset(ty, (unsigned)m);
            for (size_t i = 0; has_refs(mt) && i < n; i++)
                translate(c, mt, p + i * sz + off, 1);
            H5Tclose(mt);
        }
    } else if (cl == H5T_ARRAY || (cl == H5T_VLEN && !H5Tis_variable_str(ty))) {
        hid_t base = H5Tget_super(ty);
        size_t per = 1;
        hsize_t dims[H5S_MAX_RANK];
        int nd = cl == H5T_ARRAY ? H5Tget_array_ndims(ty) : 0;
        if (nd > 0 && H5Tget_array_dims2(ty, dims) == nd)
            for (int d = 0; d < nd; d++)
                per *= dims[d];
        for (size_t i = 0; i < n; i++) {
            if (cl == H5T_ARRAY) {
                translate(c, base, p + i * sz, per);
            } else {
                hvl_t v;
                memcpy(&v, p + i * sz, sizeof v);
                translate(c, base, v.p, v.len);
            }
        }
        H5Tclose(base);
    }
}

/* The new values into attribute *out. libhdf5 1.10.8 refuses a second
 * H5Awrite to an attribute holding references ("can't locate open
 * attribute"), so it is then deleted and created anew with the input's
 * creation properties; where the object tracks attribute creation order
 * it moves to the end. */
static herr_t w_reattr(wctx_t *c, const wfix_t *f, hid_t in, hid_t *out, hid_t ty, hid_t sp,
                       const void *buf)
{
    if (H5Awrite(*out, ty, buf) >= 0)
        return 0;
    H5Eclear2(H5E_DEFAULT);
    H5Aclose(*out); /* before it is deleted */
    *out = -1;
    hid_t acpl = H5Aget_create_plist(in);
    herr_t r = H5Adelete_by_name(c->out, f->path, f->attr, H5P_DEFAULT);
    hid_t a = r < 0 ? -1 : H5Acreate_by_name(c->out, f->path, f->attr, ty, sp, acpl,
                                               H5P_DEFAULT, H5P_DEFAULT);
    r = a < 0 ? -1 : H5Awrite(a, ty, buf);
    if (a >= 0)
        H5Aclose(a);
    if (acpl >= 0)
        H5Pclose(acpl);
    return r;
}

/* Rewrite one recorded attribute or dataset from the input's values. */
static int fix_one(wctx_t *c, const wfix_t *f)
{
    hid_t in = f->attr ? H5Aopen_by_name(c->in, f->path, f->attr, H5P_DEFAULT, H5P_DEFAULT)
                       : H5Dopen2(c->in, f->path, H5P_DEFAULT);
    hid_t out = f->attr ? H5Aopen_by_name(c->out, f->path, f->attr, H5P_DEFAULT, H5P_DEFAULT)
                        : H5Dopen2(c->out, f->path, H5P_DEFAULT);
    hid_t ft = in < 0 ? -1 : f->attr ? H5Aget_type(in) : H5Dget_type(in);
    hid_t ty = ft >= 0 ? H5Tcopy(ft) : -1;
    hid_t sp = in < 0 ? -1 : f->attr ? H5Aget_space(in) : H5Dget_space(in);
    hssize_t np = sp >= 0 ? H5Sget_select_npoints(sp) : -1;
    size_t sz = ty >= 0 ? H5Tget_size(ty) : 0;
    uint8_t *buf = NULL;
    int r = out >= 0 && np >= 0 && sz ? 0 : -1;
    if (r == 0 && (uint64_t)np * sz <= W_MAX_REF_BYTES && np > 0) {
        buf = calloc((size_t)np, sz);
        r = !buf ? -1 : f->attr ? H5Aread(in, ty, buf) : H5Dread(in, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
        if (r >= 0) {
            translate(c, ty, buf, (size_t)np);
            r = f->attr ? w_reattr(c, f, in, &out, ty, sp, buf)
                        : H5Dwrite(out, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
        }
        if (buf && r >= 0)
            H5Dvlen_reclaim(ty, sp, H5P_DEFAULT, buf);
        free(buf);
    }
    if (r < 0) {
        char what[300];
        snprintf(what, sizeof what, "cannot copy the references of %s%s",
                 f->attr ? "attribute " : "the data", f->attr ? f->attr : "");
        w_h5err(c, what, f->path);
    }
    W_CLOSE(sp, ty, ft, in, out);
    return r < 0 ? -1 : 0;
}

static int fix_refs(wctx_t *c)
{
    for (size_t i = 0; i < c->n_fix; i++)
        if (fix_one(c, &c->fix[i]) < 0)
            return -1;
    return 0;
}

/* ---- types ------------------------------------------------------------ */

/* The HDF5 type of dtype dt in byte order be (1: big-endian), or -1.
 * binary16 and bfloat16 are built as h5py builds its float16: a binary32
 * layout narrowed (H5Tset_fields / H5Tset_size / H5Tset_ebias). */
static hid_t make_type(na_dtype_t dt, int be)
{
    hid_t base;
    switch (dt) {
    case NA_DT_F64: return H5Tcopy(be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE);
    case NA_DT_F32: return H5Tcopy(be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE);
    case NA_DT_I8: return H5Tcopy(H5T_STD_I8LE);
    case NA_DT_U8: return H5Tcopy(H5T_STD_U8LE);
    case NA_DT_I16: return H5Tcopy(be ? H5T_STD_I16BE : H5T_STD_I16LE);
    case NA_DT_U16: return H5Tcopy(be ? H5T_STD_U16BE : H5T_STD_U16LE);
    case NA_DT_I32: return H5Tcopy(be ? H5T_STD_I32BE : H5T_STD_I32LE);
    case NA_DT_U32: return H5Tcopy(be ? H5T_STD_U32BE : H5T_STD_U32LE);
    case NA_DT_I64: return H5Tcopy(be ? H5T_STD_I64BE : H5T_STD_I64LE);
    case NA_DT_U64: return H5Tcopy(be ? H5T_STD_U64BE : H5T_STD_U64LE);
    case NA_DT_F16:
    case NA_DT_BF16:
        base = H5Tcopy(H5T_IEEE_F32LE);
        if (dt == NA_DT_F16)
            H5Tset_fields(base, 15, 10, 5, 0, 10);
        else
            H5Tset_fields(base, 15, 7, 8, 0, 7);
        H5Tset_size(base, 2);
        H5Tset_ebias(base, dt == NA_DT_F16 ? 15 : 127);
        if (be)
            H5Tset_order(base, H5T_ORDER_BE);
        return base;
    default: return -1;
    }
}

/* The dtype whose bytes go into the file for a tensor of dtype dt: dt,
 * or for a dataset read as unsigned (uns: na_h5_unsigned_view, the
 * element size of its signed file type) the signed integer of that size
 * when dt is the unsigned one, the same bits (the reader's U8 of an
 * _Unsigned I8). Any other dtype (normalized to F32, --out-dtype U16) is
 * dt itself. */
static na_dtype_t file_dtype(na_dtype_t dt, size_t uns)
{
    if (!uns || (size_t)na_dtype_bits(dt) != 8 * uns)
        return dt;
    switch (dt) {
    case NA_DT_U8: return NA_DT_I8;
    case NA_DT_U16: return NA_DT_I16;
    case NA_DT_U32: return NA_DT_I32;
    case NA_DT_U64: return NA_DT_I64;
    default: return dt;
    }
}

/* dtype dt in the shape of leaf (an array type keeps its dimensions) and,
 * with file set, in leaf's byte order (else little-endian: the bytes as
 * they arrive). -1 when dt has no HDF5 type here. */
static hid_t out_type(hid_t leaf, na_dtype_t dt, int file)
{
    /* BOOL is h5py's enum {FALSE = 0, TRUE = 1} of int8 (hdf5_types.c),
     * which a BOOL follower (--together) keeps: its bytes, 0 or 1, go in
     * as that enum, as HDF5 converts no integer to an enum. */
    if (dt == NA_DT_BOOL)
        return H5Tcopy(leaf);
    if (H5Tget_class(leaf) != H5T_ARRAY)
        return make_type(dt, file && H5Tget_order(leaf) == H5T_ORDER_BE);
    hid_t base = H5Tget_super(leaf), e = -1, r = -1;
    hsize_t ad[H5S_MAX_RANK];
    int na = H5Tget_array_ndims(leaf);
    if (base >= 0 && na > 0 && H5Tget_array_dims2(leaf, ad) == na)
        e = make_type(dt, file && H5Tget_order(base) == H5T_ORDER_BE);
    if (e >= 0)
        r = H5Tarray_create2(e, (unsigned)na, ad);
    if (e >= 0)
        H5Tclose(e);
    if (base >= 0)
        H5Tclose(base);
    return r;
}

/* ---- naming: tensor name -> dataset and member path ------------------- */

static int is_dataset(hid_t f, const char *path, haddr_t *addr)
{
    H5O_info_t oi;
    int ok = H5Oget_info_by_name2(f, path, &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
             oi.type == H5O_TYPE_DATASET;
    H5Eclear2(H5E_DEFAULT);
    if (ok)
        *addr = oi.addr;
    return ok;
}

/* Split rest ("a.b", "real") into member names of compound ft, the way
 * hdf5_child.c joined them; the longest member name that matches wins. */
static int split_fields(wctx_t *c, wtgt_t *t, hid_t ft, const char *rest, const char *name)
{
    hid_t cur = H5Tcopy(ft);
    while (*rest) {
        if (H5Tget_class(cur) != H5T_COMPOUND || t->nf == W_MAX_FIELDS) {
            H5Tclose(cur);
            return w_err(c, NA_E_INTERNAL, "%s: no such compound member", name);
        }
        int cplx = na_h5c_is_complex(cur), nm = H5Tget_nmembers(cur), best = -1;
        size_t best_len = 0;
        for (int i = 0; i < nm; i++) {
            char *mn = H5Tget_member_name(cur, (unsigned)i);
            const char *label = cplx ? (i ? "imag" : "real") : mn;
            size_t L = label ? strlen(label) : 0;
            if (label && L >= best_len && !strncmp(rest, label, L) &&
                (rest[L] == '\0' || rest[L] == '.')) {
                best = i;
                best_len = L;
            }
            H5free_memory(mn);
        }
        if (best < 0) {
            H5Tclose(cur);
            return w_err(c, NA_E_INTERNAL, "%s: no such compound member", name);
        }
        t->field[t->nf++] = H5Tget_member_name(cur, (unsigned)best);
        hid_t next = H5Tget_member_type(cur, (unsigned)best);
        H5Tclose(cur);
        cur = next;
        rest += best_len + (rest[best_len] == '.');
    }
    t->leaf = cur;
    return 0;
}

/* Find the dataset (and member path) of every cleaned tensor. */
static int resolve(wctx_t *c)
{
    for (size_t j = 0; j < c->job->n; j++) {
        const na_wtensor_t *w = &c->job->t[j];
        wtgt_t *t = &c->tg[j];
        t->dset = t->memtype = t->leaf = -1;
        if (w->copied && !w->drop)
            continue;
        t->rowcopy = w->copied; /* a follower copied row by row (w_dataset) */
        t->ndim = w->ndim;
        memcpy(t->shape, w->shape, sizeof t->shape);
        char *p = strdup(w->name);
        if (!p)
            w_die();
        if (is_dataset(c->in, p, &t->addr)) {
            t->dpath = p;
            hid_t d = H5Dopen2(c->in, p, H5P_DEFAULT);
            t->leaf = d >= 0 ? H5Dget_type(d) : -1;
            if (d >= 0)
                H5Dclose(d);
            if (t->leaf < 0)
                return w_h5in(c, "cannot read the dataset's type", p);
            continue;
        }
        /* NAME.field: the longest prefix that is a dataset. */
        for (char *dot = strrchr(p, '.'); dot; dot = strrchr(p, '.')) {
            *dot = '\0';
            if (!is_dataset(c->in, p, &t->addr))
                continue;
            t->dpath = p;
            hid_t d = H5Dopen2(c->in, p, H5P_DEFAULT);
            hid_t ft = d >= 0 ? H5Dget_type(d) : -1;
            int r = ft < 0 ? w_h5in(c, "cannot read the dataset's type", p)
                           : split_fields(c, t, ft, w->name + (dot - p) + 1, w->name);
            if (ft >= 0)
                H5Tclose(ft);
            if (d >= 0)
                H5Dclose(d);
            if (r < 0)
                return r;
            break;
        }
        if (!t->dpath) {
            free(p);
            return w_err(c, strchr(w->name, '@') ? NA_E_USAGE : NA_E_INTERNAL,
                         strchr(w->name, '@') ? "%s: clean does not write HDF5 attributes"
                                              : "%s: no dataset of that name in the input",
                         w->name);
        }
    }
    return 0;
}

/* The cleaned tensors of each input dataset, found by its address: a
 * sorted index, so that the walk finds them in log time (a loop over
 * every tensor for every dataset was quadratic: 40,000 datasets took 20 s
 * to clean; round 33b). */
struct waddr {
    haddr_t addr;
    size_t j;
};

static int waddr_cmp(const void *a, const void *b)
{
    const struct waddr *x = a, *y = b;
    return x->addr != y->addr ? (x->addr < y->addr ? -1 : 1) : (x->j > y->j) - (x->j < y->j);
}

static void index_targets(wctx_t *c)
{
    c->by_addr = malloc((c->job->n ? c->job->n : 1) * sizeof *c->by_addr);
    if (!c->by_addr)
        w_die();
    for (size_t j = 0; j < c->job->n; j++)
        if (c->tg[j].dpath)
            c->by_addr[c->n_by_addr++] = (struct waddr){c->tg[j].addr, j};
    qsort(c->by_addr, c->n_by_addr, sizeof *c->by_addr, waddr_cmp);
}

/* ---- attributes ------------------------------------------------------- */

static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *ai, void *ud);

typedef struct acopy {
    wctx_t *c;
    hid_t dst;
    const char *path;
    hid_t conv; /* a cleaned dataset's new type when it changed, else -1 */
    int drop_packing; /* values normalized: leave out the CF packing attributes */
    int uns;          /* src is read as unsigned (na_h5_unsigned_view) */
} acopy_t;

/* One iteration over obj's attributes or links in index order ix. */
typedef herr_t (*w_iter_fn)(hid_t obj, H5_index_t ix, void *ud);

/* Run it in creation order where obj indexes it (so the copy tracks the
 * same order), else in name order: without the index the creation-order
 * iteration fails before any callback. 0, or -1 with c->fail set. */
static int in_order(wctx_t *c, hid_t obj, w_iter_fn it, void *ud, const char *what,
                    const char *path)
{
    if (it(obj, H5_INDEX_CRT_ORDER, ud) >= 0)
        return 0;
    if (c->fail[0])
        return -1;
    H5Eclear2(H5E_DEFAULT);
    if (it(obj, H5_INDEX_NAME, ud) >= 0)
        return 0;
    return c->fail[0] ? -1 : w_h5in(c, what, path);
}

static herr_t attrs_iter(hid_t obj, H5_index_t ix, void *ud)
{
    hsize_t i = 0;
    return H5Aiterate2(obj, ix, H5_ITER_INC, &i, attr_cb, ud);
}

/* Every attribute of src onto dst; conv and drop_packing as in acopy_t. */
static int copy_attrs_conv(wctx_t *c, hid_t src, hid_t dst, const char *path, hid_t conv,
                           int drop_packing)
{
    acopy_t a = {c, dst, path, conv, drop_packing, conv >= 0 && na_h5_unsigned_view(src)};
    return in_order(c, src, attrs_iter, &a, "cannot list the attributes", path);
}

static int copy_attrs(wctx_t *c, hid_t src, hid_t dst, const char *path)
{
    return copy_attrs_conv(c, src, dst, path, -1, 0);
}

/* The CF missing-value attributes must have the variable's type (CF
 * conventions 1.11, section 2.5.1 "Missing data, valid and actual range
 * of data": _FillValue "must be of the same type as the variable", and
 * netCDF-C refuses a _FillValue of another type; missing_value is
 * treated alike). When clean changes a dataset's type (integer input
 * normalised to F32, --out-dtype), numeric ones are converted to it by
 * libhdf5's conversion (round to nearest), as the markers in the data
 * are (lib/clean.c). 1 when name is one of them and was written. */
static int conv_attr(acopy_t *a, hid_t at, const char *name, hid_t ft, hid_t sp, hid_t acpl)
{
    H5T_class_t cl = H5Tget_class(ft);
    if (a->conv < 0 || (strcmp(name, "_FillValue") && strcmp(name, "missing_value")) ||
        (cl != H5T_INTEGER && cl != H5T_FLOAT))
        return 0;
    hssize_t np = H5Sget_select_npoints(sp);
    double *v = np > 0 ? calloc((size_t)np, sizeof *v) : NULL;
    hid_t out = -1, ut = -1;
    int r;
    if (a->uns && cl == H5T_INTEGER) { /* its bits as the unsigned integers the data were */
        ut = H5Tcopy(ft);
        r = v && ut >= 0 && H5Aread(at, ft, v) >= 0 && H5Tset_sign(ut, H5T_SGN_NONE) >= 0 &&
                    H5Tconvert(ut, H5T_NATIVE_DOUBLE, (size_t)np, v, NULL, H5P_DEFAULT) >= 0
                ? 0
                : -1;
    } else {
        r = v && H5Aread(at, H5T_NATIVE_DOUBLE, v) >= 0 ? 0 : -1;
    }
    if (r == 0) {
        out = H5Acreate2(a->dst, name, a->conv, sp, acpl, H5P_DEFAULT);
        r = out >= 0 && H5Awrite(out, H5T_NATIVE_DOUBLE, v) >= 0 ? 0 : -1;
    }
    if (r < 0)
        w_h5err(a->c, "cannot convert the missing-value attribute", a->path);
    free(v);
    W_CLOSE(out, ut);
    return r < 0 ? -1 : 1;
}

/* A check's stand-in for an untouched dataset dst/name: an empty scalar
 * dataset (no storage) that takes the attributes and hard links the copy
 * would. 0, or -1 with c->fail set. */
static int check_stand_in(wctx_t *c, hid_t dst, const char *name, hid_t lcpl, const char *path)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t d = sp >= 0 ? H5Dcreate2(dst, name, H5T_NATIVE_UCHAR, sp, lcpl, H5P_DEFAULT,
                                   H5P_DEFAULT)
                      : -1;
    int r = d < 0 ? w_h5err(c, "cannot copy", path) : 0;
    W_CLOSE(d, sp);
    return r;
}

/* The input object libhdf5 reads next (path, and attr or NULL), in the
 * page the parent names in a crash's message (h5w_job_t.where); NULL path:
 * none. */
static void w_where(const wctx_t *c, const char *path, const char *attr)
{
    char *w = c->job->where;
    if (w == NULL)
        return;
    if (path == NULL)
        w[0] = '\0';
    else
        snprintf(w, H5W_WHERE, "%s%s%s", path, attr ? "@" : "", attr ? attr : "");
}

static int copy_whole(wctx_t *c, hid_t g, const char *name, hid_t dst, const char *dname,
                      hid_t lcpl, const char *path);

static H5O_mcdt_search_ret_t mcdt_stop(void *ud)
{
    (void)ud;
    return H5O_MCDT_SEARCH_STOP; /* only the listed path, never the whole file */
}

/* The output path of the copy of committed datatype ty (an input type, as
 * H5Dget_type returns it), for datasets of that type, so that they stay
 * linked to one copy of their own type as in the input; NULL in a check
 * or when it cannot be copied (the dataset then gets an anonymous type of
 * the same layout). A type the walk has not reached is copied now to a
 * temporary link at the root, ".nanaudit-type-ADDR", which w_hard moves
 * to the type's first link when the walk gets there (so link creation
 * order stays the input's) and finish_types removes when the walk never
 * does (an anonymous committed type, or one in a group nested too deep to
 * walk). */
static const char *type_copy(wctx_t *c, hid_t ty)
{
    H5O_info_t ti;
    if (c->check || H5Oget_info2(ty, &ti, H5O_INFO_BASIC) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return NULL;
    }
    const char *done = map_get(c, ti.addr);
    if (done)
        return done;
    char tmp[64];
    unsigned k = 0;
    do /* a name the input's root does not have (the output's is a copy) */
        snprintf(tmp, sizeof tmp, "/.nanaudit-type-%llx%s%.0u", (unsigned long long)ti.addr,
                 k ? "-" : "", k);
    while (H5Lexists(c->in, tmp + 1, H5P_DEFAULT) > 0 && ++k < 100);
    char label[1024]; /* for messages: the type's input path */
    ssize_t ln = H5Iget_name(ty, label, sizeof label);
    hid_t root = H5Gopen2(c->out, "/", H5P_DEFAULT);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    int ok = k < 100 && root >= 0 &&
             copy_whole(c, ty, ".", root, tmp + 1, lcpl,
                        ln > 0 && (size_t)ln < sizeof label ? label : tmp) == 0;
    W_CLOSE(lcpl, root);
    H5Eclear2(H5E_DEFAULT);
    if (!ok)
        return NULL;
    haddr_t *np = realloc(c->pend, (c->n_pend + 1) * sizeof *np);
    if (!np)
        w_die();
    c->pend = np;
    c->pend[c->n_pend++] = ti.addr;
    map_put(c, ti.addr, tmp);
    return map_get(c, ti.addr);
}

/* Whether a (an input address) is a type type_copy put at a temporary
 * link; it is not afterwards. */
static int take_pending(wctx_t *c, haddr_t a)
{
    for (size_t i = 0; i < c->n_pend; i++)
        if (c->pend[i] == a) {
            c->pend[i] = c->pend[--c->n_pend];
            return 1;
        }
    return 0;
}

/* Temporary type links the walk did not move: removed; the types stay,
 * anonymous, held by the datasets that use them. */
static int finish_types(wctx_t *c)
{
    while (c->n_pend) {
        const char *p = map_get(c, c->pend[--c->n_pend]);
        if (p && H5Ldelete(c->out, p, H5P_DEFAULT) < 0)
            return w_h5err(c, "cannot remove a temporary link", p);
    }
    return 0;
}

/* H5Ocopy of g/name into dst (a dataset or a named datatype), with its
 * attributes copied here rather than by H5Ocopy: libhdf5 1.10.8 crashes
 * copying densely stored attributes of variable-length type
 * (H5A__dense_post_copy_file_all -> H5T__conv_vlen: netCDF-4 variables
 * with many attributes and a DIMENSION_LIST), and references in them
 * need new values anyway. A dataset whose data holds references is
 * recorded for fix_refs. */
static int copy_whole(wctx_t *c, hid_t g, const char *name, hid_t dst, const char *dname,
                      hid_t lcpl, const char *path)
{
    H5O_info_t si;
    int stand_in = c->check && H5Oget_info_by_name2(g, name, &si, H5O_INFO_BASIC,
                                                    H5P_DEFAULT) >= 0 &&
                   si.type == H5O_TYPE_DATASET;
    H5Eclear2(H5E_DEFAULT);
    int r;
    if (stand_in) { /* a check: no data read or copied */
        r = check_stand_in(c, dst, name, lcpl, path);
    } else {
        /* A dataset of a committed datatype is linked to the output's copy
         * of that type (type_copy), and to no other: libhdf5's merge
         * matches any equal committed type in the file unless the search
         * is confined to the listed paths (H5Padd_merge_committed_dtype_path,
         * H5Pset_mcdt_search_cb). A named datatype is a new object. */
        hid_t cp = H5Pcreate(H5P_OBJECT_COPY);
        hid_t d = H5Oget_info_by_name2(g, name, &si, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
                          si.type == H5O_TYPE_DATASET
                      ? H5Dopen2(g, name, H5P_DEFAULT)
                      : -1;
        hid_t dt = d >= 0 ? H5Dget_type(d) : -1;
        const char *tp = dt >= 0 && H5Tcommitted(dt) > 0 ? type_copy(c, dt) : NULL;
        W_CLOSE(dt, d);
        H5Eclear2(H5E_DEFAULT);
        unsigned fl = H5O_COPY_WITHOUT_ATTR_FLAG;
        if (tp) {
            fl |= H5O_COPY_MERGE_COMMITTED_DTYPE_FLAG;
            H5Padd_merge_committed_dtype_path(cp, tp);
            H5Pset_mcdt_search_cb(cp, mcdt_stop, NULL);
        }
        H5Pset_copy_object(cp, fl);
        w_where(c, path, NULL);
        r = H5Ocopy(g, name, dst, dname, cp, lcpl) < 0 ? w_h5in(c, "cannot copy", path) : 0;
        w_where(c, NULL, NULL);
        H5Pclose(cp);
    }
    hid_t so = r == 0 ? H5Oopen(g, name, H5P_DEFAULT) : -1;
    hid_t dob = r == 0 ? H5Oopen(dst, dname, H5P_DEFAULT) : -1;
    if (r == 0 && (so < 0 || dob < 0))
        r = w_h5err(c, "cannot open the copy", path);
    if (r == 0)
        r = copy_attrs(c, so, dob, path);
    H5O_info_t oi;
    if (r == 0 && !stand_in && H5Oget_info2(so, &oi, H5O_INFO_BASIC) >= 0 &&
        oi.type == H5O_TYPE_DATASET) {
        hid_t t = H5Dget_type(so);
        if (t >= 0 && has_refs(t))
            add_fix(c, path, NULL);
        if (t >= 0)
            H5Tclose(t);
    }
    W_CLOSE(so, dob);
    return r;
}

/* Read the attribute with its own (transient copy of the) file type and
 * write the same bytes: no conversion, variable-length data included.
 * A normalized dataset loses the attributes that describe its stored
 * values (na_h5_packing_attr): a CF reader would unpack normalized values. */
static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *ai, void *ud)
{
    acopy_t *a = ud;
    if (a->drop_packing && na_h5_packing_attr(name))
        return 0;
    /* a new type is no signed integer to view as unsigned */
    if (a->conv >= 0 && !strcmp(name, "_Unsigned"))
        return 0;
    w_where(a->c, a->path, name);
    hid_t at = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t ft = at >= 0 ? H5Aget_type(at) : -1, ty = ft >= 0 ? H5Tcopy(ft) : -1;
    hid_t sp = at >= 0 ? H5Aget_space(at) : -1, acpl = at >= 0 ? H5Aget_create_plist(at) : -1;
    hssize_t np = sp >= 0 ? H5Sget_select_npoints(sp) : -1;
    size_t sz = ty >= 0 ? H5Tget_size(ty) : 0;
    int cv = at >= 0 && ft >= 0 && sp >= 0 ? conv_attr(a, at, name, ft, sp, acpl) : 0;
    if (cv) {
        W_CLOSE(acpl, sp, ty, ft, at);
        return cv < 0 ? -1 : 0;
    }
    uint8_t *buf = np >= 0 && sz ? calloc((size_t)np ? (size_t)np : 1, sz) : NULL;
    int r = buf && H5Aread(at, ty, buf) >= 0 ? 0 : -1;
    char what[300];
    snprintf(what, sizeof what, "cannot %s the attribute '%s'", r ? "read" : "write", name);
    if (r < 0)
        w_h5in(a->c, what, a->path);
    hid_t out = -1;
    if (r == 0) {
        out = H5Acreate2(a->dst, name, ty, sp, acpl, H5P_DEFAULT);
        r = out >= 0 && H5Awrite(out, ty, buf) >= 0 ? 0 : w_h5err(a->c, what, a->path);
    }
    if (r == 0 && has_refs(ty))
        add_fix(a->c, a->path, name);
    if (buf && np > 0)
        H5Dvlen_reclaim(ty, sp, H5P_DEFAULT, buf);
    free(buf);
    W_CLOSE(out, acpl, sp, ty, ft, at);
    w_where(a->c, NULL, NULL);
    return r < 0 ? -1 : 0;
}

/* ---- cleaned datasets ------------------------------------------------- */

/* The output's copy of src's committed (named) datatype (type_copy), for
 * a dataset re-created with the same type ty, so that it keeps its link
 * to the type as a copied dataset does; -1 when src's type is not
 * committed, ty differs (--out-dtype), or the type cannot be had (the
 * dataset then gets an anonymous copy of ty). */
static hid_t committed_copy(wctx_t *c, hid_t src, hid_t ty)
{
    hid_t sft = H5Dget_type(src), out = -1;
    const char *p = sft >= 0 && H5Tcommitted(sft) > 0 && H5Tequal(sft, ty) > 0
                        ? type_copy(c, sft)
                        : NULL;
    if (p)
        out = H5Topen2(c->out, p, H5P_DEFAULT);
    if (sft >= 0)
        H5Tclose(sft);
    H5Eclear2(H5E_DEFAULT);
    return out;
}

/* Make fw's cleaned fill value (na_wtensor_t.fill_set) dcpl's where it
 * differs and libhdf5 uses one (not compact data, fill time not NEVER):
 * pieces of the copy equal to it are then left unwritten (sparse_plan)
 * and read back as it, as the input's never-written chunks read as its
 * fill value. 0, or -1 from libhdf5. */
static int set_fill(hid_t dcpl, const na_wtensor_t *fw)
{
    H5D_fill_time_t ft = H5D_FILL_TIME_NEVER;
    H5D_fill_value_t fv = H5D_FILL_VALUE_UNDEFINED;
    if (H5Pget_layout(dcpl) == H5D_COMPACT || H5Pget_fill_time(dcpl, &ft) < 0 ||
        ft == H5D_FILL_TIME_NEVER || H5Pfill_value_defined(dcpl, &fv) < 0)
        return 0;
    hid_t mt = make_type(fw->dtype, 0);
    uint8_t old[8];
    size_t sz = mt >= 0 ? H5Tget_size(mt) : 0;
    int r = sz == 0 || sz > sizeof old ? -1 : 0;
    if (r == 0 && (fv == H5D_FILL_VALUE_UNDEFINED || H5Pget_fill_value(dcpl, mt, old) < 0 ||
                   memcmp(old, fw->fill, sz)))
        r = H5Pset_fill_value(dcpl, mt, fw->fill) < 0 ? -1 : 0;
    W_CLOSE(mt);
    return r;
}

/* Create dst/name like input dataset src but with type ty and extent
 * dims (a fixed maximum extent follows the extent; chunks that no longer
 * fit are shrunk), then copy src's attributes; fw: a cleaned whole
 * dataset whose fill value the steps change (set_fill), else NULL. The
 * new dataset or -1. */
static hid_t recreate(wctx_t *c, hid_t src, hid_t dst, const char *name, hid_t lcpl, hid_t ty,
                      const uint64_t *dims, const char *path, int drop_packing, int computes,
                      const na_wtensor_t *fw)
{
    hid_t ssp = H5Dget_space(src), dcpl = H5Dget_create_plist(src), sp = -1, out = -1;
    if (ssp < 0 || dcpl < 0) {
        w_h5in(c, "cannot read the dataset's header", path);
        goto done;
    }
    if (H5Pget_external_count(dcpl) > 0 || H5Pget_layout(dcpl) == H5D_VIRTUAL) {
        w_err(c, NA_E_USAGE, "%s: its data lives in other files (%s); clean writes only this "
              "file: --exclude it", path,
              H5Pget_layout(dcpl) == H5D_VIRTUAL ? "virtual dataset" : "external storage");
        goto done;
    }
    /* The scale-offset filter on floating point data is lossy (it keeps
     * a fixed number of decimal digits): the written values would differ
     * from what clean computed and the verification would fail (exit 4). */
    unsigned so_flags = 0, so_cd[8];
    size_t so_n = 8;
    if (H5Tget_class(ty) == H5T_FLOAT &&
        H5Pget_filter_by_id2(dcpl, H5Z_FILTER_SCALEOFFSET, &so_flags, &so_n, so_cd, 0, NULL,
                             NULL) >= 0) {
        w_err(c, NA_E_USAGE, "%s: its scale-offset filter would store the cleaned floating "
              "point values with a fixed number of decimal digits (lossy), so they could not "
              "be written exactly: --exclude it", path);
        goto done;
    }
    /* Likewise a float type that keeps fewer bits than it occupies
     * (H5Tset_precision, what the n-bit filter packs) when clean computes
     * new values (computes: na_wtensor_t.computes): libhdf5 rounds them to
     * it, so the verification would fail (exit 4). Dropped rows and zero
     * fills are exact. --out-dtype gives a native type; an array type is
     * checked by its element type. */
    hid_t fty = !computes ? -1 : H5Tget_class(ty) == H5T_ARRAY ? H5Tget_super(ty) : H5Tcopy(ty);
    size_t fprec = fty >= 0 && H5Tget_class(fty) == H5T_FLOAT ? H5Tget_precision(fty) : 0;
    size_t fbits = fty >= 0 ? 8 * H5Tget_size(fty) : 0;
    if (fty >= 0)
        H5Tclose(fty);
    if (fprec && fprec < fbits) {
        w_err(c, NA_E_USAGE, "%s: its floating point type keeps %zu of its %zu bits (reduced "
              "precision, as the n-bit filter packs), so the cleaned values could not be "
              "written exactly: --out-dtype F64 or --exclude it", path, fprec, fbits);
        goto done;
    }
    int nd = H5Sget_simple_extent_ndims(ssp);
    hsize_t old[H5S_MAX_RANK], maxd[H5S_MAX_RANK], nd_[H5S_MAX_RANK];
    if (H5Sget_simple_extent_type(ssp) != H5S_SIMPLE || nd <= 0) {
        sp = H5Scopy(ssp);
    } else {
        H5Sget_simple_extent_dims(ssp, old, maxd);
        for (int d = 0; d < nd; d++) {
            nd_[d] = dims[d];
            if (maxd[d] != H5S_UNLIMITED && (maxd[d] == old[d] || maxd[d] < dims[d]))
                maxd[d] = dims[d];
        }
        if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
            hsize_t ck[H5S_MAX_RANK];
            int cn = H5Pget_chunk(dcpl, H5S_MAX_RANK, ck);
            for (int d = 0; d < cn && d < nd; d++) {
                if (ck[d] > nd_[d] && nd_[d] < old[d]) /* only when it shrank */
                    ck[d] = nd_[d] ? nd_[d] : 1;
                /* A chunk may not exceed a fixed maximum extent: an empty
                 * result keeps one row of room (its maximum becomes 1). */
                if (maxd[d] != H5S_UNLIMITED && ck[d] > maxd[d])
                    maxd[d] = ck[d];
            }
            if (cn > 0)
                H5Pset_chunk(dcpl, cn, ck);
        }
        sp = H5Screate_simple(nd, nd_, maxd);
    }
    /* A check allocates nothing: early allocation would write fill values
     * for the whole extent into the in-memory file (compact data must be
     * allocated early, and is at most 64 KiB). */
    if (c->check && H5Pget_layout(dcpl) != H5D_COMPACT)
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE);
    if (fw && sp >= 0 && set_fill(dcpl, fw) < 0) {
        w_h5err(c, "cannot set the cleaned fill value", path);
        goto done;
    }
    hid_t named = sp >= 0 ? committed_copy(c, src, ty) : -1;
    if (sp >= 0)
        out = H5Dcreate2(dst, name, named >= 0 ? named : ty, sp, lcpl, dcpl, H5P_DEFAULT);
    if (named >= 0)
        H5Tclose(named);
    hid_t sty = out >= 0 ? H5Dget_type(src) : -1;
    /* libhdf5 converts the dataset fill value to ty itself; the CF
     * attributes are ours to convert (conv_attr) */
    H5T_class_t tc = H5Tget_class(ty); /* not for compound members */
    hid_t conv = sty >= 0 && H5Tequal(sty, ty) <= 0 && (tc == H5T_INTEGER || tc == H5T_FLOAT)
                     ? ty : -1;
    if (out < 0)
        w_h5err(c, "cannot create the cleaned dataset", path);
    else if (copy_attrs_conv(c, src, out, path, conv, drop_packing) < 0) {
        H5Dclose(out);
        out = -1;
    }
    W_CLOSE(sty);
done:
    W_CLOSE(sp, dcpl, ssp);
    return out;
}

/* 1 when member path (names[0..depth)) of a cleaned tensor in js. */
static wtgt_t *tgt_of(wctx_t *c, const size_t *js, size_t nj, char *const *names, int depth)
{
    for (size_t k = 0; k < nj; k++) {
        wtgt_t *t = &c->tg[js[k]];
        int same = t->nf == depth;
        for (int i = 0; same && i < depth; i++)
            same = !strcmp(t->field[i], names[i]);
        if (same)
            return t;
    }
    return NULL;
}

/* Compound ft with each cleaned member's type replaced by its output
 * dtype (same byte order), members packed in order; NULL-free: -1 when
 * a member is not a cleaned tensor (*missing: its name). */
static hid_t retype(wctx_t *c, hid_t ft, const size_t *js, size_t nj, char **names, int depth,
                    char *missing, size_t cap)
{
    int nm = H5Tget_nmembers(ft);
    hid_t mt[256];
    char *mn[256];
    size_t total = 0;
    if (nm <= 0 || nm > 256 || depth >= W_MAX_FIELDS)
        return -1;
    int ok = 1;
    for (int i = 0; i < nm; i++) {
        mn[i] = H5Tget_member_name(ft, (unsigned)i);
        hid_t m = H5Tget_member_type(ft, (unsigned)i);
        names[depth] = mn[i];
        wtgt_t *t = tgt_of(c, js, nj, names, depth + 1);
        if (t && t->rowcopy) { /* copied from the input: its own type */
            mt[i] = H5Tcopy(m);
        } else if (t) {
            c_type_t ty;
            na_h5t_classify(m, &ty);
            if (ty.memtype >= 0)
                H5Tclose(ty.memtype);
            mt[i] = ty.dtype == c->job->t[t - c->tg].dtype ? H5Tcopy(m)
                                                            : out_type(m, c->job->t[t - c->tg].dtype, 1);
        } else if (H5Tget_class(m) == H5T_COMPOUND) {
            mt[i] = retype(c, m, js, nj, names, depth + 1, missing, cap);
        } else {
            mt[i] = -1;
            if (!missing[0]) {
                size_t L = 0;
                for (int d = 0; d <= depth; d++)
                    L += (size_t)snprintf(missing + L, L < cap ? cap - L : 0, "%s%s",
                                          d ? "." : "", names[d]);
            }
        }
        H5Tclose(m);
        ok &= mt[i] >= 0;
        total += mt[i] >= 0 ? H5Tget_size(mt[i]) : 0;
    }
    hid_t out = ok ? H5Tcreate(H5T_COMPOUND, total) : -1;
    size_t off = 0;
    for (int i = 0; i < nm; i++) {
        if (out >= 0) {
            H5Tinsert(out, mn[i], off, mt[i]);
            off += H5Tget_size(mt[i]);
        }
        if (mt[i] >= 0)
            H5Tclose(mt[i]);
        H5free_memory(mn[i]);
    }
    return out;
}

static int rows_copy(wctx_t *c, hid_t src, hid_t out, hid_t ty, int nd, const hsize_t *dims,
                     const hsize_t *odims, hsize_t rows, const uint8_t *drop, const char *path);
static int w_follow(wctx_t *c, hid_t g, const char *name, hid_t dst, hid_t lcpl,
                    const char *path, const size_t *js, size_t nj);

/* Whether tensor w keeps input row r (na_wtensor_t.row_state of a
 * cleaned tensor, .drop of a follower; neither: every row). */
static int keeps_row(const na_wtensor_t *w, uint64_t r)
{
    if (w->row_state)
        return !((w->row_state[r >> 2] >> ((r & 3) * 2)) & 3u);
    return !(w->drop && (w->drop[r / 8] >> (r % 8) & 1));
}

/* The first of the `rows` input rows that a and b (tensors of one
 * compound dataset) do not both keep or both drop; rows when none. */
static uint64_t rows_differ(const na_wtensor_t *a, const na_wtensor_t *b, uint64_t rows)
{
    if (!a->row_state && !a->drop && !b->row_state && !b->drop)
        return rows;
    for (uint64_t r = 0; r < rows; r++)
        if (keeps_row(a, r) != keeps_row(b, r))
            return r;
    return rows;
}

/* A dataset holding the cleaned tensors js[0..nj): create it in dst (or
 * copy it and overwrite its fields) and set up every tensor's target.
 * Fields that follow a --together group row by row (strings beside
 * cleaned fields: wtgt_t.rowcopy) keep their type and get the input's
 * kept rows here; when every tensor follows so, w_follow. */
static int w_dataset(wctx_t *c, hid_t g, const char *name, hid_t dst, hid_t lcpl,
                     const char *path, const size_t *js, size_t nj)
{
    size_t nrc = 0;
    for (size_t k = 0; k < nj; k++)
        nrc += c->tg[js[k]].rowcopy != 0;
    if (nrc == nj)
        return w_follow(c, g, name, dst, lcpl, path, js, nj);
    wtgt_t *t0 = &c->tg[js[0]];
    const na_wtensor_t *w0 = &c->job->t[js[0]];
    hid_t src = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t ft = src >= 0 ? H5Dget_type(src) : -1, ssp = src >= 0 ? H5Dget_space(src) : -1;
    hid_t ty = -1;
    int r = 0, nd = ssp >= 0 ? H5Sget_simple_extent_ndims(ssp) : -1;
    hsize_t dims[H5S_MAX_RANK] = {0};
    if (ft < 0 || nd < 0 || H5Sget_simple_extent_dims(ssp, dims, NULL) < 0)
        r = w_h5in(c, "cannot read the dataset's header", path);
    /* Every tensor covers the dataset's dimensions (rows maybe fewer) and
     * then its array type's (hdf5_child.c appends them); it is written in
     * units of one dataset element, unit stream elements each. */
    for (size_t k = 0; r == 0 && k < nj; k++) {
        const na_wtensor_t *w = &c->job->t[js[k]];
        wtgt_t *t = &c->tg[js[k]];
        hsize_t ad[H5S_MAX_RANK];
        int na = H5Tget_class(t->leaf) == H5T_ARRAY ? H5Tget_array_ndims(t->leaf) : 0;
        if (na > 0 && H5Tget_array_dims2(t->leaf, ad) != na)
            na = -1;
        t->unit = 1;
        for (int d = 0; na > 0 && d < na; d++)
            t->unit *= (uint32_t)ad[d];
        if (na < 0 || w->ndim != nd + na || (nd > 0 && w->shape[0] != w0->shape[0]))
            r = w_err(c, NA_E_USAGE,
                      "%s: compound fields keep different numbers of rows (%llu and %llu); "
                      "clean its fields with --together",
                      path, (unsigned long long)w0->shape[0], (unsigned long long)w->shape[0]);
        /* as many rows, but other ones (fields cleaned apart with
         * --allow-misaligned, audit 25a): record i would pair field a's
         * row i with field b's row j, a damaged copy that verifies */
        uint64_t rd = r == 0 && nd > 0 && k > 0 ? rows_differ(w0, w, dims[0]) : 0;
        if (r == 0 && nd > 0 && k > 0 && rd < dims[0])
            r = w_err(c, NA_E_USAGE,
                      "%s: compound fields keep different rows (row %llu: dropped by '%s', "
                      "kept by '%s'); clean its fields with --together",
                      path, (unsigned long long)rd, keeps_row(w0, rd) ? w->name : w0->name,
                      keeps_row(w0, rd) ? w0->name : w->name);
        for (int d = 1; r == 0 && d < nd + na; d++)
            if (w->shape[d] != (d < nd ? dims[d] : ad[d - nd]))
                r = w_err(c, NA_E_INTERNAL, "%s: cleaned shape differs from the dataset's", path);
        t->ndim = nd; /* writes select dataset elements */
    }
    int same_rows = nd == 0 || w0->shape[0] == dims[0], same_types = 1;
    /* _Unsigned: the reader's U8 is this file's I8, the same bits */
    size_t uns = r == 0 && t0->nf == 0 && na_h5_unsigned_view(src) ? H5Tget_size(ft) : 0;
    /* written as its own signed type, _Unsigned would read the values
     * back as unsigned (round 39a: exit 4 at verification) */
    na_dtype_t sdt = uns == 1 ? NA_DT_I8 : uns == 2 ? NA_DT_I16 : uns == 4 ? NA_DT_I32 : NA_DT_I64;
    if (uns && w0->dtype == sdt)
        r = w_err(c, NA_E_USAGE, "%s: an _Unsigned dataset cannot be written as %s, which "
                  "netCDF readers would read as unsigned again; --out-dtype U%zu or a float "
                  "type", path, na_dtype_name(sdt), 8 * uns);
    for (size_t k = 0; r == 0 && k < nj; k++) {
        c_type_t cl;
        na_h5t_classify(c->tg[js[k]].leaf, &cl);
        if (cl.memtype >= 0)
            H5Tclose(cl.memtype);
        same_types &= cl.dtype == file_dtype(c->job->t[js[k]].dtype, uns);
    }
    hid_t out = -1;
    if (r == 0 && t0->nf == 0) {
        c_type_t cl;
        na_h5t_classify(ft, &cl);
        if (cl.memtype >= 0)
            H5Tclose(cl.memtype);
        ty = same_types ? H5Tcopy(ft) : out_type(ft, file_dtype(w0->dtype, uns), 1);
        out = ty < 0 ? -1
                     : recreate(c, src, dst, name, lcpl, ty, w0->shape, path, w0->normalized,
                                w0->computes, nj == 1 && t0->unit == 1 && w0->fill_set ? w0 : NULL);
        r = out < 0 ? w_err(c, NA_E_WRITE, "%s: cannot write dtype %s", path,
                            na_dtype_name(w0->dtype))
                    : 0;
    } else if (r == 0 && same_rows && same_types) {
        r = copy_whole(c, g, name, dst, name, lcpl, path);
        if (r == 0 && (out = H5Dopen2(dst, name, H5P_DEFAULT)) < 0)
            r = w_h5err(c, "cannot open the copied dataset", path);
    } else if (r == 0) {
        char *names[W_MAX_FIELDS], missing[300] = "";
        ty = retype(c, ft, js, nj, names, 0, missing, sizeof missing);
        if (ty < 0)
            r = w_err(c, NA_E_USAGE,
                      "%s: compound dataset whose cleaned fields %s, but its member '%s' is "
                      "not cleaned, so its records cannot be rewritten; %s",
                      path, same_rows ? "change dtype" : "drop rows", missing[0] ? missing : "?",
                      same_rows ? "keep the dtype (--out-dtype) or --exclude those fields"
                                : "clean every field, with --together over them");
        if (ty >= 0 && same_types) { /* the input's layout (offsets, padding) */
            H5Tclose(ty);
            ty = H5Tcopy(ft);
        }
        if (r == 0 && (out = recreate(c, src, dst, name, lcpl, ty, w0->shape, path, 0, 0, NULL)) < 0)
            r = -1;
        hsize_t odims[H5S_MAX_RANK];
        for (int d = 0; d < nd; d++)
            odims[d] = d ? dims[d] : w0->shape[0];
        for (size_t k = 0; r == 0 && k < nj; k++) {
            wtgt_t *t = &c->tg[js[k]];
            if (!t->rowcopy)
                continue;
            hid_t mt = na_h5c_nest_memtype(t->field, t->nf, H5Tcopy(t->leaf));
            r = mt < 0 ? w_h5err(c, "cannot set up the copy of a field", path)
                       : rows_copy(c, src, out, mt, nd, dims, odims, nd ? dims[0] : 1,
                                   c->job->t[js[k]].drop, path);
            W_CLOSE(mt);
            t->rowcopy = 2;
        }
    }
    for (size_t k = 0; r == 0 && k < nj; k++) {
        wtgt_t *t = &c->tg[js[k]];
        if (t->rowcopy)
            continue; /* copied above */
        hid_t leaf = out_type(t->leaf, file_dtype(c->job->t[js[k]].dtype, uns), 0);
        t->memtype = t->nf ? na_h5c_nest_memtype(t->field, t->nf, leaf) : leaf;
        t->esize = t->memtype >= 0 ? H5Tget_size(t->memtype) : 0; /* write_range */
        t->dset = k == 0 ? out : H5Dopen2(dst, name, H5P_DEFAULT);
        if (t->memtype < 0 || t->dset < 0)
            r = w_h5err(c, "cannot set up the write", path);
    }
    if (r < 0 && out >= 0)
        H5Dclose(out);
    W_CLOSE(ty, ft, ssp, src);
    return r;
}

/* ---- datasets that follow --together ----------------------------------- */

/* A dataspace of extent dims (rank nd; a scalar: nd 0) with rows
 * [a, a+n) selected. */
static hid_t rows_space(int nd, const hsize_t *dims, hsize_t a, hsize_t n)
{
    if (nd == 0)
        return H5Screate(H5S_SCALAR);
    hsize_t start[H5S_MAX_RANK] = {0}, cnt[H5S_MAX_RANK];
    for (int d = 0; d < nd; d++)
        cnt[d] = d ? dims[d] : n;
    start[0] = a;
    hid_t sp = H5Screate_simple(nd, dims, NULL);
    if (sp >= 0 && H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0) {
        H5Sclose(sp);
        sp = -1;
    }
    return sp;
}

/* Rows [0, n) of buf (input rows a..a+n, rowb bytes each) into part:
 * the kept ones (bit clear in drop) first, in order, the dropped behind
 * them, so part still holds every row read (for H5Dvlen_reclaim). */
static uint8_t *partition(const uint8_t *buf, uint8_t *part, hsize_t a, hsize_t n,
                          const uint8_t *drop, size_t rowb, hsize_t kept)
{
    size_t front = 0, back = (size_t)kept;
    for (hsize_t r = 0; r < n; r++) {
        int gone = drop && drop[(a + r) / 8] >> ((a + r) % 8) & 1;
        memcpy(part + (gone ? back++ : front++) * rowb, buf + r * rowb, rowb);
    }
    return part;
}

/* rows_space with the rows r of [0, n) that have sel[r] == want selected
 * at rows base + r (or, compact, base + their rank). */
static hid_t rows_where(int nd, const hsize_t *dims, hsize_t base, hsize_t n,
                        const uint8_t *sel, int want, int compact)
{
    hid_t sp = H5Screate_simple(nd, dims, NULL);
    if (sp < 0 || H5Sselect_none(sp) < 0)
        goto fail;
    hsize_t start[H5S_MAX_RANK] = {0}, cnt[H5S_MAX_RANK], at = 0;
    for (int d = 1; d < nd; d++)
        cnt[d] = dims[d];
    for (hsize_t r = 0; r < n;) {
        if ((sel[r] != 0) != want) {
            r++;
            continue;
        }
        hsize_t e = r + 1;
        while (e < n && (sel[e] != 0) == want)
            e++;
        start[0] = base + (compact ? at : r);
        cnt[0] = e - r;
        if (H5Sselect_hyperslab(sp, H5S_SELECT_OR, start, NULL, cnt, NULL) < 0)
            goto fail;
        at += e - r;
        r = e;
    }
    return sp;
fail:
    if (sp >= 0)
        H5Sclose(sp);
    return -1;
}

/* copy_rows of a window with holes (window_holes): the rows in
 * allocated chunks read, compacted as copy_rows does, and the kept ones
 * among them written; kh[i] = 1 for the i-th kept row that is a hole. */
static herr_t copy_rows_holes(hid_t src, hid_t dst, hid_t ty, int nd, const hsize_t *dims,
                              const hsize_t *odims, hsize_t a, hsize_t n, hsize_t o,
                              const uint8_t *drop, size_t rowb, uint8_t *buf, uint8_t *part,
                              const uint8_t *hole, const uint8_t *kh, hsize_t kept)
{
    hsize_t wd[H5S_MAX_RANK] = {0}, kd[H5S_MAX_RANK] = {0};
    for (int d = 0; d < nd; d++) {
        wd[d] = d ? dims[d] : n;
        kd[d] = d ? dims[d] : kept;
    }
    hid_t ms = rows_where(nd, wd, 0, n, hole, 0, 0), fs = rows_where(nd, dims, a, n, hole, 0, 0);
    int read = ms >= 0 && fs >= 0 && H5Dread(src, ty, ms, fs, H5P_DEFAULT, buf) >= 0;
    uint8_t *out = buf;
    if (read && kept < n)
        out = partition(buf, part, a, n, drop, rowb, kept);
    hsize_t nw = 0;
    for (hsize_t i = 0; i < kept; i++)
        nw += !kh[i];
    hid_t ks = read && nw ? rows_where(nd, kd, 0, kept, kh, 0, 0) : -1;
    hid_t os = read && nw ? rows_where(nd, odims, o, kept, kh, 0, 0) : -1;
    herr_t r = !read ? -2 : !nw ? 0 : ks < 0 || os < 0 ? -1
                                   : H5Dwrite(dst, ty, ks, os, H5P_DEFAULT, out);
    hid_t es = r < 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
    hid_t all = read ? rows_space(nd, wd, 0, n) : -1;
    if (all >= 0)
        H5Dvlen_reclaim(ty, all, H5P_DEFAULT, out); /* holes are NULL */
    W_CLOSE(all, os, ks, fs, ms);
    if (es >= 0)
        H5Eset_current_stack(es);
    return r;
}

/* Whether chunk row cr of chunked dataset src (extent dims, chunk ck,
 * rank nd >= 1) has storage: 1 every chunk, 0 none, -1 some. */
static int chunk_row_alloc(hid_t src, int nd, const hsize_t *dims, const hsize_t *ck,
                           hsize_t cr)
{
    hsize_t off[H5S_MAX_RANK] = {0};
    off[0] = cr * ck[0];
    int any = 0, all = 1;
    for (;;) {
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info_by_coord(src, off, &mask, &addr, &size) < 0) {
            H5Eclear2(H5E_DEFAULT);
            return 1; /* unknown: read it */
        }
        int has = addr != HADDR_UNDEF;
        any |= has;
        all &= has;
        int d = nd - 1;
        for (; d >= 1 && (off[d] += ck[d]) >= dims[d]; d--)
            off[d] = 0;
        if (d < 1)
            break;
    }
    return all ? 1 : any ? -1 : 0;
}

/* Rows of a window [a, a+n) of src in unallocated chunks, which a read
 * cannot give when the type is variable-length and the fill value user
 * defined (libhdf5 converts the fill value to its stored form, which
 * writes the input's global heap: "no write intent on file"; h5py's read
 * fails the same way). Such rows are neither read nor written: the
 * output has the same fill value. hole[r] = 1 for them; returns how
 * many (0: read as before). Rows of a chunk row only partly allocated
 * are read (and fail as before). */
static hsize_t window_holes(hid_t src, hid_t ty, int nd, const hsize_t *dims, hsize_t a,
                            hsize_t n, uint8_t *hole)
{
    if (nd < 1 || !has_vlen(ty))
        return 0;
    hid_t dcpl = H5Dget_create_plist(src);
    hsize_t ck[H5S_MAX_RANK];
    H5D_fill_value_t fv = H5D_FILL_VALUE_UNDEFINED;
    int chunked = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
                  H5Pget_chunk(dcpl, H5S_MAX_RANK, ck) == nd &&
                  H5Pfill_value_defined(dcpl, &fv) >= 0 && fv == H5D_FILL_VALUE_USER_DEFINED;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    H5Eclear2(H5E_DEFAULT);
    if (!chunked)
        return 0;
    hsize_t holes = 0;
    for (hsize_t r = 0; r < n;) {
        hsize_t cr = (a + r) / ck[0], end = (cr + 1) * ck[0] - a;
        end = end < n ? end : n;
        int has = chunk_row_alloc(src, nd, dims, ck, cr);
        for (; r < end; r++) {
            hole[r] = has == 0;
            holes += has == 0;
        }
    }
    return holes;
}

/* Copy the window of input rows [a, a+n) (extent dims) to output rows
 * from o on (extent odims): read whole into buf, the rows kept (bit clear
 * in drop, or all with drop NULL) moved to the front of part and the
 * others behind them, the k kept written in one H5Dwrite. One read and
 * one write per window whatever the drops (a call per run of kept rows
 * cost ~100 us each: 20 s for 2M vlen strings with 10 % scattered drops).
 * Read and written with the dataset's own type ty, so no value is
 * converted; variable-length data (strings) is reclaimed from part, which
 * holds every row read. *k gets the rows kept. 0, -1 (the write failed)
 * or -2 (the read). */
static herr_t copy_rows(hid_t src, hid_t dst, hid_t ty, int nd, const hsize_t *dims,
                        const hsize_t *odims, hsize_t a, hsize_t n, hsize_t o,
                        const uint8_t *drop, size_t rowb, uint8_t *buf, uint8_t *part,
                        hsize_t *k)
{
    hsize_t kept = 0;
    for (hsize_t r = a; r < a + n; r++)
        kept += !(drop && drop[r / 8] >> (r % 8) & 1);
    *k = kept;
    if (kept == 0)
        return 0; /* nothing read */
    hsize_t wd[H5S_MAX_RANK] = {0};
    for (int d = 0; d < nd; d++)
        wd[d] = d ? dims[d] : n;
    uint8_t *hole = calloc(n, 1);
    if (!hole)
        return -1;
    hsize_t holes = window_holes(src, ty, nd, dims, a, n, hole);
    if (holes == n) { /* all fill value: left to the output's */
        free(hole);
        return 0;
    }
    if (holes) { /* kept rows that are holes are not written (no hole in part) */
        memset(buf, 0, n * rowb); /* reclaimed below: NULL pointers */
        hsize_t at = 0;
        uint8_t *kh = calloc(kept, 1);
        for (hsize_t r = 0; kh && r < n; r++)
            if (!(drop && drop[(a + r) / 8] >> ((a + r) % 8) & 1))
                kh[at++] = hole[r];
        herr_t r = kh ? copy_rows_holes(src, dst, ty, nd, dims, odims, a, n, o, drop, rowb, buf,
                                        part, hole, kh, kept)
                      : -1;
        free(kh);
        free(hole);
        return r;
    }
    free(hole);
    hid_t ms = rows_space(nd, wd, 0, n), fs = rows_space(nd, dims, a, n);
    int read = ms >= 0 && fs >= 0 && H5Dread(src, ty, ms, fs, H5P_DEFAULT, buf) >= 0;
    uint8_t *out = buf;
    if (read && kept < n)
        out = partition(buf, part, a, n, drop, rowb, kept);
    hsize_t kd[H5S_MAX_RANK] = {0};
    for (int d = 0; d < nd; d++)
        kd[d] = d ? dims[d] : kept;
    hid_t ks = read ? rows_space(nd, kd, 0, kept) : -1;
    hid_t os = read ? rows_space(nd, odims, o, kept) : -1;
    herr_t r = !read ? -2 : ks < 0 || os < 0 ? -1 : H5Dwrite(dst, ty, ks, os, H5P_DEFAULT, out);
    hid_t es = r < 0 ? H5Eget_current_stack() : H5I_INVALID_HID; /* as write_part */
    if (read && has_vlen(ty))
        H5Dvlen_reclaim(ty, ms, H5P_DEFAULT, out); /* what the read allocated: n rows */
    W_CLOSE(os, ks, fs, ms);
    if (es >= 0)
        H5Eset_current_stack(es);
    return r;
}

/* Copy the rows of input dataset src (extent dims, rank nd; rows of
 * them, 1 for a scalar) whose bit in drop is clear (all: drop NULL) to
 * output dataset out (extent odims), in type ty: the dataset's own, or a
 * compound of some of its members (HDF5 matches members by name, so the
 * other members of out are left alone). Windows of at most W_ROWS_BYTES
 * (copy_rows); a row wider is copied alone, up to 1 GiB. 0 or -1. */
#define W_ROWS_BYTES ((size_t)8 << 20)
static int rows_copy(wctx_t *c, hid_t src, hid_t out, hid_t ty, int nd, const hsize_t *dims,
                     const hsize_t *odims, hsize_t rows, const uint8_t *drop, const char *path)
{
    uint64_t rowb = H5Tget_size(ty); /* bytes of one row in memory */
    for (int d = 1; d < nd; d++)
        rowb = dims[d] && rowb > ((uint64_t)1 << 30) / dims[d] ? UINT64_MAX : rowb * dims[d];
    if (rowb > ((uint64_t)1 << 30) && drop)
        return w_err(c, NA_E_USAGE, "%s: its rows take more than 1 GiB each; leave it out of "
                     "--together", path);
    if (rowb > ((uint64_t)1 << 30)) /* an untouched dataset needs_rebuild chose */
        return w_err(c, NA_E_UNSUPPORTED, "%s: its rows take more than 1 GiB each, and libhdf5's "
                     "copy of a variable-length dataset with a fill value does not read back: "
                     "clean cannot copy it", path);
    if (c->check)
        return 0; /* no data in a check */
    hsize_t per = rowb ? (hsize_t)(W_ROWS_BYTES / rowb) : 1;
    per = per ? per : 1;
    /* and at most NA_H5_RANGE_CHUNKS of the input's chunks (the output's
     * are the same or shorter): one-row chunks of strings took 1.3 GB for
     * 200000 rows (fifteenth fresh-user round) */
    hid_t dcpl = H5Dget_create_plist(src);
    hsize_t ck[H5S_MAX_RANK];
    if (nd > 0 && dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
        H5Pget_chunk(dcpl, H5S_MAX_RANK, ck) == nd && ck[0] > 0) {
        uint64_t sh[H5S_MAX_RANK], ch[H5S_MAX_RANK];
        for (int d = 0; d < nd; d++) {
            sh[d] = dims[d];
            ch[d] = ck[d];
        }
        uint64_t cap = na_h5c_range_rows(nd, sh, ch);
        per = per < cap ? per : cap;
    }
    W_CLOSE(dcpl);
    H5Eclear2(H5E_DEFAULT);
    size_t wbytes = (size_t)(per * (rowb ? rowb : 1));
    uint8_t *buf = malloc(wbytes), *part = drop ? malloc(wbytes) : NULL;
    if (!buf || (drop && !part))
        w_die();
    hsize_t o = 0;
    int r = 0;
    for (hsize_t a = 0; r == 0 && a < rows; a += per) {
        hsize_t n = rows - a < per ? rows - a : per, k = 0;
        r = copy_rows(src, out, ty, nd, dims, odims, a, n, o, drop, (size_t)rowb, buf, part, &k);
        if (r < 0)
            r = r == -2 ? w_h5in(c, "cannot read the rows kept", path)
                        : w_h5err(c, "cannot write the rows kept", path);
        o += k;
        if (r == 0 && nd && o > odims[0])
            r = w_err(c, NA_E_INTERNAL, "%s: more rows kept than announced", path);
    }
    if (r == 0 && nd && o != odims[0])
        r = w_err(c, NA_E_INTERNAL, "%s: %llu rows kept, %llu announced", path,
                  (unsigned long long)o, (unsigned long long)odims[0]);
    free(part);
    free(buf);
    return r;
}

/* Input dataset g/name re-created in dst like the input's (recreate:
 * creation properties, attributes, chunks shrunk) and its rows copied
 * (rows_copy): all of them (drop NULL), or those whose
 * bit in drop is not set, which must be kept of in_rows (the input's
 * axis 0, checked). A scalar is copied whole. 0 or -1 (c->fail). */
static int rebuild(wctx_t *c, hid_t g, const char *name, hid_t dst, hid_t lcpl,
                   const char *path, const uint8_t *drop, uint64_t in_rows, uint64_t kept)
{
    hid_t src = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t ft = src >= 0 ? H5Dget_type(src) : -1, ssp = src >= 0 ? H5Dget_space(src) : -1;
    hid_t ty = ft >= 0 ? H5Tcopy(ft) : -1, out = -1;
    int nd = ssp >= 0 ? H5Sget_simple_extent_ndims(ssp) : -1, r = 0;
    hsize_t dims[H5S_MAX_RANK] = {0}, odims[H5S_MAX_RANK] = {0};
    if (ty < 0 || nd < 0 || H5Sget_simple_extent_dims(ssp, dims, NULL) < 0)
        r = w_h5in(c, "cannot read the dataset's header", path);
    if (r == 0 && drop && (nd < 1 || dims[0] != in_rows))
        r = w_err(c, NA_E_INTERNAL, "%s: its rows differ from the input's", path);
    /* its rows are read: a filter this libhdf5 lacks (h5py's lzf) is
     * named, as scan names it (H5Ocopy copies such chunks as stored) */
    hid_t dcpl = r == 0 ? H5Dget_create_plist(src) : -1;
    char why[200];
    if (dcpl >= 0 && na_h5c_filter_missing(src, dcpl, why, sizeof why))
        r = w_err(c, NA_E_UNSUPPORTED, "%s: %s; clean cannot copy its rows", path, why);
    /* recreate refuses data in other files with "--exclude it", which
     * does not help a dataset that follows --together: an excluded one
     * still follows its group */
    if (r == 0 && drop && dcpl >= 0 &&
        (H5Pget_external_count(dcpl) > 0 || H5Pget_layout(dcpl) == H5D_VIRTUAL))
        r = w_err(c, NA_E_USAGE, "%s: its data lives in other files (%s); clean writes only "
                  "this file, so it cannot lose the samples of its --together group: leave "
                  "it out of --together", path,
                  H5Pget_layout(dcpl) == H5D_VIRTUAL ? "virtual dataset" : "external storage");
    W_CLOSE(dcpl);
    /* A reference names an object of the input; copied row by row it
     * would not be rewritten (fix_refs rewrites whole datasets). */
    if (r == 0 && has_refs(ty))
        r = w_err(c, NA_E_USAGE, "%s: holds object references, whose rows clean cannot "
                  "select; leave it out of --together", path);
    uint64_t shape[NA_MAX_NDIM] = {0};
    for (int d = 0; d < nd && d < NA_MAX_NDIM; d++) {
        odims[d] = d || !drop ? dims[d] : kept;
        shape[d] = odims[d];
    }
    if (r == 0 && (out = recreate(c, src, dst, name, lcpl, ty, shape, path, 0, 0, NULL)) < 0)
        r = -1;
    /* rows to copy: none in an empty (H5S_NULL) dataspace */
    hsize_t rows = H5Sget_simple_extent_type(ssp) == H5S_NULL ? 0 : nd ? dims[0] : 1;
    if (r == 0)
        r = rows_copy(c, src, out, ty, nd, dims, odims, rows, drop, path);
    W_CLOSE(out, ty, ssp, ft, src);
    return r;
}

/* Whether untouched dataset g/name is copied by rebuild rather than
 * H5Ocopy: variable-length data (strings) with a fill value of its own.
 * libhdf5 1.10.8's H5Ocopy leaves such a fill value pointing into the
 * input's global heap, so the copy's creation properties no longer read
 * ("bad global heap collection signature": netcdf-c's
 * ref_test_corrupt_magic.nc, whose UTC_time has the fill value ""; h5py's
 * copy does the same). References go through H5Ocopy (fix_refs). */
static int needs_rebuild(hid_t g, const char *name)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t ft = d >= 0 ? H5Dget_type(d) : -1, dcpl = d >= 0 ? H5Dget_create_plist(d) : -1;
    H5D_fill_value_t fv = H5D_FILL_VALUE_UNDEFINED;
    int vlen = ft >= 0 && has_vlen(ft) && !has_refs(ft);
    int r = vlen && dcpl >= 0 && H5Pfill_value_defined(dcpl, &fv) >= 0 &&
            fv == H5D_FILL_VALUE_USER_DEFINED;
    W_CLOSE(dcpl, ft, d);
    H5Eclear2(H5E_DEFAULT);
    return r;
}

/* Tensors of a compound type's leaves (hdf5_child.c lists one per
 * member, a complex member as .real and .imag). */
static int count_leaves(hid_t ty)
{
    if (H5Tget_class(ty) != H5T_COMPOUND)
        return 1;
    if (na_h5c_is_complex(ty))
        return 2;
    int nm = H5Tget_nmembers(ty), n = 0;
    for (int i = 0; i < nm; i++) {
        hid_t m = H5Tget_member_type(ty, (unsigned)i);
        n += m >= 0 ? count_leaves(m) : 0;
        W_CLOSE(m);
    }
    return n;
}

/* Dataset g/name, all of whose tensors js[0..nj) follow a --together
 * group row by row (na_wtensor_t.drop: strings, or every field of a
 * compound of strings): rebuilt with the rows kept, whole records. A
 * compound's fields must all follow, with the same rows: one left out
 * would lose rows it was not named for. */
static int w_follow(wctx_t *c, hid_t g, const char *name, hid_t dst, hid_t lcpl,
                    const char *path, const size_t *js, size_t nj)
{
    const na_wtensor_t *w0 = &c->job->t[js[0]];
    for (size_t k = 1; k < nj; k++) {
        const na_wtensor_t *w = &c->job->t[js[k]];
        if (w->in_rows != w0->in_rows || memcmp(w->drop, w0->drop, (size_t)(w0->in_rows / 8) + 1))
            return w_err(c, NA_E_USAGE, "%s: its fields lose different samples (two --together "
                         "groups); clean drops whole records", path);
    }
    if (c->tg[js[0]].nf > 0) {
        hid_t d = H5Dopen2(g, name, H5P_DEFAULT), ft = d >= 0 ? H5Dget_type(d) : -1;
        int leaves = ft >= 0 ? count_leaves(ft) : -1;
        W_CLOSE(ft, d);
        if (leaves < 0)
            return w_h5in(c, "cannot read the dataset's type", path);
        if ((size_t)leaves != nj)
            return w_err(c, NA_E_USAGE, "%s: %zu of its %d fields follow --together, and clean "
                         "drops whole records: name them all ('%s.*')", path, nj, leaves, path);
    }
    int r = rebuild(c, g, name, dst, lcpl, path, w0->drop, w0->in_rows, w0->shape[0]);
    for (size_t k = 0; r == 0 && k < nj; k++)
        c->tg[js[k]].rowcopy = 2;
    return r;
}

/* ---- the walk ---------------------------------------------------------- */

typedef struct lwalk {
    wctx_t *c;
    hid_t dst;
    const char *dpath; /* output path of dst */
    int depth;
} lwalk_t;

static int copy_group(wctx_t *c, hid_t src, hid_t dst, const char *path, int depth);

static int w_hard(lwalk_t *lw, hid_t g, const char *name, const char *path, hid_t lcpl)
{
    wctx_t *c = lw->c;
    H5O_info_t oi;
    if (H5Oget_info_by_name2(g, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
        return w_h5in(c, "cannot read the object header", path);
    const char *first = map_get(c, oi.addr);
    if (first && take_pending(c, oi.addr)) { /* type_copy's: to its place */
        if (H5Lmove(c->out, first, lw->dst, name, lcpl, H5P_DEFAULT) < 0)
            return w_h5err(c, "cannot move the named datatype", path);
        map_put(c, oi.addr, path);
        return 0;
    }
    if (first) /* a second hard link: to the copy */
        return H5Lcreate_hard(c->out, first, lw->dst, name, lcpl, H5P_DEFAULT) < 0
                   ? w_h5err(c, "cannot create the hard link", path)
                   : 0;
    map_put(c, oi.addr, path);
    if (oi.type == H5O_TYPE_GROUP && lw->depth < 64) {
        hid_t sg = H5Gopen2(g, name, H5P_DEFAULT);
        hid_t gcpl = sg >= 0 ? H5Gget_create_plist(sg) : -1;
        hid_t ng = gcpl >= 0 ? H5Gcreate2(lw->dst, name, lcpl, gcpl, H5P_DEFAULT) : -1;
        int r = ng < 0 ? w_h5err(c, "cannot copy the group", path)
                       : copy_group(c, sg, ng, path, lw->depth + 1);
        if (ng >= 0)
            H5Gclose(ng);
        if (gcpl >= 0)
            H5Pclose(gcpl);
        if (sg >= 0)
            H5Gclose(sg);
        return r;
    }
    size_t nj = 0, *js = NULL, lo = 0, hi = c->n_by_addr;
    while (oi.type == H5O_TYPE_DATASET && lo < hi) { /* the first entry of addr >= oi.addr */
        size_t mid = lo + (hi - lo) / 2;
        if (c->by_addr[mid].addr < oi.addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (oi.type == H5O_TYPE_DATASET && lo + nj < c->n_by_addr &&
           c->by_addr[lo + nj].addr == oi.addr)
        nj++;
    if (nj && (js = malloc(nj * sizeof *js)) == NULL)
        w_die();
    for (size_t k = 0; k < nj; k++)
        js[k] = c->by_addr[lo + k].j;
    int r;
    if (nj) {
        r = w_dataset(c, g, name, lw->dst, lcpl, path, js, nj);
    } else if (oi.type == H5O_TYPE_DATASET && needs_rebuild(g, name)) {
        r = rebuild(c, g, name, lw->dst, lcpl, path, NULL, 0, 0);
    } else if (oi.type != H5O_TYPE_GROUP) { /* untouched dataset, named datatype */
        r = copy_whole(c, g, name, lw->dst, name, lcpl, path);
    } else if (c->check) { /* too deep to walk: a check copies no data */
        hid_t ng = H5Gcreate2(lw->dst, name, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        r = ng < 0 ? w_h5err(c, "cannot copy the group", path) : 0;
        W_CLOSE(ng);
    } else { /* a group nested too deep to walk: whole, attributes included */
        r = H5Ocopy(g, name, lw->dst, name, H5P_DEFAULT, lcpl) < 0
                ? w_h5in(c, "cannot copy", path)
                : 0;
    }
    free(js);
    return r;
}

static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *li, void *ud)
{
    lwalk_t *lw = ud;
    wctx_t *c = lw->c;
    size_t plen = strlen(lw->dpath) + strlen(name) + 2;
    char *path = malloc(plen);
    if (!path)
        w_die();
    snprintf(path, plen, "%s/%s", strcmp(lw->dpath, "/") ? lw->dpath : "", name);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_char_encoding(lcpl, li->cset); /* UTF-8 names stay UTF-8 */
    int r = 0;
    if (li->type == H5L_TYPE_HARD) {
        r = w_hard(lw, g, name, path, lcpl);
    } else if (li->type == H5L_TYPE_SOFT || li->type == H5L_TYPE_EXTERNAL) {
        char *val = malloc(li->u.val_size + 1);
        const char *file = NULL, *obj = NULL;
        unsigned fl = 0;
        if (!val)
            w_die();
        if (H5Lget_val(g, name, val, li->u.val_size, H5P_DEFAULT) < 0)
            r = -1;
        else if (li->type == H5L_TYPE_SOFT)
            r = H5Lcreate_soft(val, lw->dst, name, lcpl, H5P_DEFAULT) < 0 ? -1 : 0;
        else
            r = H5Lunpack_elink_val(val, li->u.val_size, &fl, &file, &obj) < 0 ||
                        H5Lcreate_external(file, obj, lw->dst, name, lcpl, H5P_DEFAULT) < 0
                    ? -1
                    : 0;
        free(val);
        if (r < 0)
            w_h5in(c, "cannot copy the link", path);
    } else {
        r = w_err(c, NA_E_UNSUPPORTED, "%s: user-defined link (type %d) cannot be copied", path,
                  (int)li->type);
    }
    H5Pclose(lcpl);
    free(path);
    return r < 0 ? -1 : 0;
}

static herr_t links_iter(hid_t obj, H5_index_t ix, void *ud)
{
    hsize_t i = 0;
    return H5Literate(obj, ix, H5_ITER_INC, &i, link_cb, ud);
}

/* src's attributes and links into dst (both groups), in order. */
static int copy_group(wctx_t *c, hid_t src, hid_t dst, const char *path, int depth)
{
    if (copy_attrs(c, src, dst, path) < 0)
        return -1;
    lwalk_t lw = {c, dst, path, depth};
    return in_order(c, src, links_iter, &lw, "cannot list the group", path);
}

/* ---- data and finish ---------------------------------------------------- */

/* Sparse output. A chunk that is never written is not allocated, and
 * reads as the dataset's fill value (HDF5 User's Guide, "Allocation of
 * Space in the File" and "Fill Values"): an input whose chunks are mostly
 * unallocated (a dataset created at full size and partly filled) would
 * otherwise come out with every chunk written - 4 GiB for the 6 KB
 * hdfgroup-tbigdims.h5. So a piece of a chunk whose cleaned bytes all
 * equal the fill value is not written. Where that reads back the same:
 *  - chunked layout, the whole dataset (not a compound member, whose
 *    record's other members the fill value does not describe);
 *  - each chunk contiguous in the C-order element stream (chunk extent
 *    >= the dataset's on every axis but the first), so pieces are ranges;
 *  - fill time ALLOC or IFSET: an allocated chunk's unwritten elements
 *    then read as the fill value too (libhdf5 initialises the chunk;
 *    with NEVER they are undefined, so everything is written);
 *  - incremental or late allocation (early allocation writes the chunks
 *    at creation anyway, with NEVER or IFSET-without-value unfilled).
 * Contiguous data too, in pieces of W_FILLPAT bytes, when fill time is
 * ALLOC or a value was set (IFSET): libhdf5 writes the fill value over
 * the whole storage when the first write allocates it, so a piece left
 * out reads as it, and a dataset all of whose pieces are left out stays
 * without storage (one never written in the input, its NaN fill made 0).
 * The fill value is the one libhdf5 reports for the dataset converted to
 * the bytes that arrive (its default, 0, when none was set); for a
 * cleaned dataset, the cleaned value of the input's (set_fill). */
#define W_FILLPAT ((size_t)1 << 16)

static void sparse_plan(wtgt_t *t)
{
    t->sparse = -1;
    if (t->nf || t->ndim == 0)
        return;
    hid_t dcpl = H5Dget_create_plist(t->dset);
    if (dcpl < 0)
        return;
    hsize_t ck[H5S_MAX_RANK];
    H5D_fill_time_t ft = H5D_FILL_TIME_NEVER;
    H5D_alloc_time_t at = H5D_ALLOC_TIME_EARLY;
    H5D_fill_value_t fv = H5D_FILL_VALUE_UNDEFINED;
    size_t es = H5Tget_size(t->memtype);
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int ok = H5Pget_fill_time(dcpl, &ft) >= 0 && ft != H5D_FILL_TIME_NEVER &&
             H5Pget_alloc_time(dcpl, &at) >= 0 &&
             (at == H5D_ALLOC_TIME_INCR || at == H5D_ALLOC_TIME_LATE) &&
             H5Pfill_value_defined(dcpl, &fv) >= 0 && fv != H5D_FILL_VALUE_UNDEFINED &&
             es > 0 && es <= W_FILLPAT;
    uint64_t ce = 0;
    if (ok && lay == H5D_CHUNKED && H5Pget_chunk(dcpl, H5S_MAX_RANK, ck) == t->ndim) {
        ce = ck[0];
        for (int d = 1; ok && d < t->ndim; d++) {
            ok = ck[d] >= t->shape[d];
            ce *= t->shape[d];
        }
    } else if (ok && lay == H5D_CONTIGUOUS &&
               (ft == H5D_FILL_TIME_ALLOC || fv == H5D_FILL_VALUE_USER_DEFINED)) {
        ce = W_FILLPAT / es; /* any piece */
    } else {
        ok = 0;
    }
    uint8_t *pat = ok && ce ? malloc(W_FILLPAT) : NULL;
    if (pat && H5Pget_fill_value(dcpl, t->memtype, pat) >= 0) {
        size_t whole = W_FILLPAT / es * es;
        for (size_t k = es; k < whole; k += es)
            memcpy(pat + k, pat, es);
        t->fillpat = pat;
        t->chunk_elems = ce;
        t->sparse = 1;
    } else {
        free(pat);
    }
    H5Pclose(dcpl);
}

/* 1 when n elements at p are all the fill value. */
static int all_fill(const wtgt_t *t, const uint8_t *p, uint64_t n)
{
    size_t whole = W_FILLPAT / t->esize * t->esize;
    for (uint64_t b = n * t->esize; b > 0;) {
        size_t k = b < whole ? (size_t)b : whole;
        if (memcmp(p, t->fillpat, k))
            return 0;
        p += k;
        b -= k;
    }
    return 1;
}

/* H5Dwrite of dataset elements [a, a+n) from buf. */
static herr_t write_part(const wtgt_t *t, uint64_t a, uint64_t n, const uint8_t *buf)
{
    hid_t fs = H5Dget_space(t->dset), ms = na_h5c_range_space(t->ndim, t->shape, a, n);
    herr_t r = fs < 0 || ms < 0 ? -1 : na_h5c_select_range(fs, t->ndim, t->shape, a, n);
    if (r >= 0)
        r = H5Dwrite(t->dset, t->memtype, ms, fs, H5P_DEFAULT, buf);
    /* Every API call clears the error stack on entry: H5Sclose would
     * drop the cause of a failed write (the caller's w_h5err said
     * "unknown libhdf5 error" for EFBIG). Keep it across the closes. */
    hid_t es = r < 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    if (es >= 0)
        H5Eset_current_stack(es); /* restores it and closes es */
    return r;
}

/* H5Dwrite of dataset elements [a, a+n) from buf, whose partial rows
 * and whole rows are written apart (na_h5c_row_parts: write_sparse cuts
 * at chunk boundaries, which for (15625, 1) chunks are not rows), at
 * most NA_H5_RANGE_CHUNKS chunks' elements at a time (a 32 MiB window of
 * (1, 8) F32 chunks took 1.3 GB; fifteenth fresh-user round). */
static herr_t write_range(wtgt_t *t, uint64_t a, uint64_t n, const uint8_t *buf)
{
    if (t->ck_elems == 0) { /* elements per chunk; UINT64_MAX: not chunked */
        hid_t dcpl = H5Dget_create_plist(t->dset);
        hsize_t ck[H5S_MAX_RANK];
        int cn = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED
                     ? H5Pget_chunk(dcpl, H5S_MAX_RANK, ck)
                     : -1;
        t->ck_elems = cn > 0 ? 1 : UINT64_MAX;
        for (int d = 0; d < cn; d++)
            t->ck_elems *= ck[d] ? ck[d] : 1;
        if (dcpl >= 0)
            H5Pclose(dcpl);
        H5Eclear2(H5E_DEFAULT);
    }
    uint64_t step =
        t->ck_elems <= n / NA_H5_RANGE_CHUNKS ? t->ck_elems * NA_H5_RANGE_CHUNKS : n;
    herr_t r = 0;
    for (uint64_t s = a; s < a + n && r >= 0; s += step) {
        uint64_t m = a + n - s < step ? a + n - s : step, part[3][2];
        na_h5c_row_parts(t->ndim, t->shape, s, m, part);
        for (int k = 0; k < 3 && r >= 0; k++)
            if (part[k][1] > 0)
                r = write_part(t, part[k][0], part[k][1], buf + (part[k][0] - a) * t->esize);
    }
    return r;
}

/* Write [first, first+count) from buf, leaving out the
 * pieces of chunks that are all fill value (sparse_plan), the others in
 * one H5Dwrite per run of consecutive pieces. */
static herr_t write_sparse(wtgt_t *t, uint64_t first, uint64_t count, const uint8_t *buf)
{
    if (t->sparse == 0)
        sparse_plan(t);
    if (t->sparse < 0)
        return write_range(t, first, count, buf);
    uint64_t end = first + count, run = first; /* [run, a): pieces to write */
    for (uint64_t a = first; a < end;) {
        uint64_t b = (a / t->chunk_elems + 1) * t->chunk_elems;
        b = b < end ? b : end;
        if (all_fill(t, buf + (a - first) * t->esize, b - a)) {
            if (run < a && write_range(t, run, a - run, buf + (run - first) * t->esize) < 0)
                return -1;
            run = b;
        }
        a = b;
    }
    return run < end ? write_range(t, run, end - run, buf + (run - first) * t->esize) : 0;
}

/* Reopen t's dataset (a whole dataset, chunked and filtered) with a
 * chunk cache that keeps the chunks a window boundary cuts until the
 * next window completes them, as the reader's c_open_cur does: with
 * libhdf5's default, 1 MiB, a 2 MiB chunk half written was deflated,
 * inflated and deflated again (6 extra deflates for a (20000, 1000) F32
 * file in 2 MiB chunks, measured). Before its first write, so nothing is
 * cached yet; t->dset is the dataset's only handle (nf == 0). 0 or -1. */
static int reopen_cached(wctx_t *c, wtgt_t *t)
{
    hid_t dcpl = H5Dget_create_plist(t->dset);
    hsize_t ck[H5S_MAX_RANK];
    int want = t->nf == 0 && dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
               H5Pget_nfilters(dcpl) > 0;
    int cn = want ? H5Pget_chunk(dcpl, H5S_MAX_RANK, ck) : -1;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    char path[1024];
    ssize_t n = want ? H5Iget_name(t->dset, path, sizeof path) : 0;
    if (n <= 0 || (size_t)n >= sizeof path)
        return 0; /* keep the handle as it is */
    uint64_t chunk[NA_MAX_NDIM];
    for (int d = 0; d < cn && d < NA_MAX_NDIM; d++)
        chunk[d] = ck[d];
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl < 0 ||
        na_h5c_chunk_cache(dapl, t->ndim, t->shape, cn == t->ndim ? chunk : NULL, t->esize) < 0 ||
        H5Dclose(t->dset) < 0)
        t->dset = -1;
    else
        t->dset = H5Dopen2(c->out, path, dapl);
    if (dapl >= 0)
        H5Pclose(dapl);
    return t->dset < 0 ? w_h5err(c, "cannot reopen the cleaned dataset", path) : 0;
}

/* Close t's output dataset (libhdf5 flushes its chunks here) and free
 * what its writes kept: after its last elements (w_write) or at FINISH.
 * The H5Dclose result, 0 when it was closed already. */
static herr_t close_target(wtgt_t *t)
{
    herr_t r = t->dset >= 0 ? H5Dclose(t->dset) : 0;
    t->dset = -1;
    free(t->fillpat);
    t->fillpat = NULL;
    na_h5wd_free(t->wd);
    t->wd = NULL;
    return r;
}

/* Write [first, first+count) from the shared window: the whole chunks
 * in it deflated on the run's threads where hdf5_wdeflate.c reproduces
 * the dataset's pipeline (na_h5wd_plan), all fill-value chunks left out
 * as write_sparse leaves them; the elements before and after them (and
 * every element of other datasets) through write_sparse. */
static herr_t write_window(wctx_t *c, wtgt_t *t, uint64_t first, uint64_t count)
{
    if (!t->wd_planned) {
        /* NANAUDIT_HDF5_SERIAL_WRITE set (man page): every chunk through
         * libhdf5, the reference that tests/cli/clean_hdf5_gzip_parallel.sh
         * and bench/run_hdf5_gzip_clean.sh compare with */
        t->wd_planned = 1;
        if (reopen_cached(c, t) < 0)
            return -1;
        if (t->nf == 0 && getenv("NANAUDIT_HDF5_SERIAL_WRITE") == NULL)
            t->wd = na_h5wd_plan(t->dset, t->memtype, c->job->threads, c->job->shm_bytes);
    }
    if (t->sparse == 0)
        sparse_plan(t);
    uint64_t lo = first, hi = first, end = first + count;
    if (t->wd) {
        char why[120];
        const uint8_t *pat = t->sparse > 0 ? t->fillpat : NULL;
        size_t patlen = pat ? W_FILLPAT / t->esize * t->esize : 0;
        if (na_h5wd_write(t->wd, t->dset, t->memtype, first, count, c->shm, pat, patlen, &lo,
                          &hi, why, sizeof why) < 0)
            return why[0] ? w_err(c, NA_E_WRITE, "%s: %s", c->job->t[t - c->tg].name, why) : -1;
    }
    if (lo > first && write_sparse(t, first, lo - first, c->shm) < 0)
        return -1;
    return hi < end ? write_sparse(t, hi, end - hi, c->shm + (hi - first) * t->esize) : 0;
}

static void w_write(wctx_t *c, const h5w_write_t *rq)
{
    /* Fault injection for tests/cli/clean_hdf5.sh: a crash or a hang at
     * the first data write, as libhdf5 does on some hostile files. */
    const char *f = getenv("NANAUDIT_HDF5_WRITE_FAULT");
    if (f && !strcmp(f, "segv"))
        raise(SIGSEGV);
    while (f && !strcmp(f, "hang"))
        pause();
    wtgt_t *t = rq->tensor < c->job->n ? &c->tg[rq->tensor] : NULL;
    uint64_t total = 1;
    for (int d = 0; t && d < t->ndim; d++)
        total *= t->shape[d];
    if (!t || t->dset < 0 || rq->first > total || rq->count > total - rq->first) {
        w_send(c, H5P_FAIL, NA_E_INTERNAL, "HDF5 writer: write outside a cleaned dataset");
        return;
    }
    const char *name = c->job->t[rq->tensor].name;
    herr_t r;
    if (t->ndim == 0) {
        r = H5Dwrite(t->dset, t->memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, c->shm);
    } else {
        r = write_window(c, t, rq->first, rq->count);
    }
    if (r < 0 && !c->fail[0])
        w_h5err(c, "write failed", name);
    /* Its last elements: close it now (libhdf5 flushes its chunks here).
     * Every cleaned dataset held open until FINISH kept ~22 KB of libhdf5
     * state each: 450 MB for 20,000 datasets (round 33b). */
    if (r >= 0 && rq->first + rq->count == total && (r = close_target(t)) < 0)
        w_h5err(c, "cannot write the cleaned dataset's last chunks", name);
    if (r < 0)
        w_send(c, H5P_FAIL, NA_E_WRITE, c->fail);
    else
        w_send(c, H5W_ACK, 0, NULL);
}

/* Root attributes from the FINISH payload: variable-length UTF-8
 * strings (what h5py reads as str), replacing any of the same name. */
static int w_meta(wctx_t *c, const uint8_t *p, uint64_t len)
{
    hid_t root = H5Gopen2(c->out, "/", H5P_DEFAULT);
    hid_t st = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    int r = root < 0 ? -1 : 0;
    H5Tset_size(st, H5T_VARIABLE);
    H5Tset_cset(st, H5T_CSET_UTF8);
    while (r == 0 && len >= 8) {
        uint32_t kl, vl;
        memcpy(&kl, p, 4);
        memcpy(&vl, p + 4, 4);
        if ((uint64_t)kl + vl > len - 8)
            break;
        char *k = strndup((const char *)p + 8, kl), *v = strndup((const char *)p + 8 + kl, vl);
        if (!k || !v)
            w_die();
        if (H5Aexists(root, k) > 0)
            H5Adelete(root, k);
        hid_t a = H5Acreate2(root, k, st, sp, H5P_DEFAULT, H5P_DEFAULT);
        const char *vp = v;
        r = a < 0 || H5Awrite(a, st, &vp) < 0 ? w_h5err(c, "cannot write the attribute", k) : 0;
        if (a >= 0)
            H5Aclose(a);
        free(k);
        free(v);
        p += 8 + kl + vl;
        len -= 8 + (uint64_t)kl + vl;
    }
    H5Tclose(st);
    H5Sclose(sp);
    if (root >= 0)
        H5Gclose(root);
    return r;
}

/* The input's user block (bytes before the superblock, H5Pset_userblock)
 * into the output's, which H5Fcreate reserved with the same size. */
static int w_userblock(wctx_t *c, hsize_t ub)
{
    int fi = open(c->job->input, O_RDONLY | O_CLOEXEC);
    int fo = open(c->job->output, O_WRONLY | O_CLOEXEC);
    uint8_t buf[4096];
    int r = fi >= 0 && fo >= 0 ? 0 : -1;
    for (hsize_t off = 0; r == 0 && off < ub; off += sizeof buf) {
        size_t k = ub - off < sizeof buf ? (size_t)(ub - off) : sizeof buf;
        r = pread(fi, buf, k, (off_t)off) == (ssize_t)k && pwrite(fo, buf, k, (off_t)off) ==
            (ssize_t)k ? 0 : -1;
    }
    if (fi >= 0)
        close(fi);
    if (fo >= 0)
        close(fo);
    return r < 0 ? w_err(c, NA_E_WRITE, "cannot copy the user block") : 0;
}

static void w_finish(wctx_t *c, const uint8_t *p, uint64_t len)
{
    int r = w_meta(c, p, len);
    for (size_t j = 0; j < c->job->n; j++)
        (void)close_target(&c->tg[j]);
    hid_t fcpl = H5Fget_create_plist(c->in);
    hsize_t ub = 0;
    if (fcpl >= 0) {
        H5Pget_userblock(fcpl, &ub);
        H5Pclose(fcpl);
    }
    /* The output's last bytes (and errors such as a full disk) land here. */
    if (H5Fclose(c->out) < 0 && r == 0) {
        char cause[200];
        na_h5c_cause(cause, sizeof cause);
        r = w_err(c, NA_E_WRITE, "libhdf5 could not finish the file: %s", cause);
    }
    H5Fclose(c->in);
    if (r == 0 && ub > 0)
        r = w_userblock(c, ub);
    w_send(c, r == 0 ? H5W_DONE : H5P_FAIL, r == 0 ? 0 : c->fail_st, r == 0 ? NULL : c->fail);
    _exit(0);
}

/* Open both files and copy the structure; 0 or -1 (c->fail). */
static int w_setup(wctx_t *c)
{
    /* Fault injection for tests/cli/clean_hdf5.sh: the file created late
     * by a child that outlives its parent, as when a signal came between
     * the parent's unlink of the temporary file and its exit (the parent's
     * handler must stop this process before it unlinks). */
    const char *f = getenv("NANAUDIT_HDF5_WRITE_FAULT");
    if (f && !strcmp(f, "late-create")) {
        prctl(PR_SET_PDEATHSIG, 0);
        sleep(2);
    }
    c->in = H5Fopen(c->job->input, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (c->in < 0)
        return w_h5in(c, "libhdf5 cannot open the input", c->job->input);
    hid_t fcpl = H5Fget_create_plist(c->in), fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* The root group's link and attribute creation order are file
     * creation properties, which H5Fget_create_plist does not return. */
    hid_t rin = H5Gopen2(c->in, "/", H5P_DEFAULT);
    hid_t rcp = rin >= 0 ? H5Gget_create_plist(rin) : -1;
    unsigned lf = 0, af = 0;
    if (fcpl >= 0 && rcp >= 0 && H5Pget_link_creation_order(rcp, &lf) >= 0 &&
        H5Pget_attr_creation_order(rcp, &af) >= 0) {
        H5Pset_link_creation_order(fcpl, lf);
        H5Pset_attr_creation_order(fcpl, af);
    }
    W_CLOSE(rcp, rin);
    H5Eclear2(H5E_DEFAULT);
    /* Close everything at H5Fclose, so that its error is the last word. */
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    /* A check: the core driver without a backing store keeps the file in
     * memory and opens nothing on disk (HDF5 reference, H5Pset_fapl_core);
     * the name only labels it. 1 MiB: its growth step. */
    if (c->check)
        H5Pset_fapl_core(fapl, (size_t)1 << 20, 0);
    c->out = H5Fcreate(c->check ? "nanaudit-check" : c->job->output, H5F_ACC_TRUNC,
                       fcpl >= 0 ? fcpl : H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (c->out < 0)
        return w_h5err(c, "libhdf5 cannot create the file",
                       c->check ? "in-memory check file" : c->job->output);
    if (resolve(c) < 0)
        return -1;
    index_targets(c);
    hid_t sr = H5Gopen2(c->in, "/", H5P_DEFAULT), dr = H5Gopen2(c->out, "/", H5P_DEFAULT);
    H5O_info_t oi;
    if (sr >= 0 && H5Oget_info2(sr, &oi, H5O_INFO_BASIC) >= 0)
        map_put(c, oi.addr, "/");
    int r = sr < 0 || dr < 0 ? w_h5in(c, "cannot open the root group", c->job->input)
                             : copy_group(c, sr, dr, "/", 0);
    if (sr >= 0)
        H5Gclose(sr);
    if (dr >= 0)
        H5Gclose(dr);
    for (size_t j = 0; r == 0 && j < c->job->n; j++)
        if (c->tg[j].dpath && c->tg[j].dset < 0 && c->tg[j].rowcopy != 2)
            r = w_err(c, NA_E_INTERNAL, "%s: its dataset was not reached by the copy",
                      c->job->t[j].name);
    if (r == 0)
        r = finish_types(c);
    return r == 0 ? fix_refs(c) : r;
}

void na_h5w_child_main(int sock, uint8_t *shm, void *arg)
{
    wctx_t c;
    memset(&c, 0, sizeof c);
    c.sock = sock;
    c.shm = shm;
    c.job = arg;
    c.check = c.job->output == NULL;
    c.tg = calloc(c.job->n ? c.job->n : 1, sizeof *c.tg);
    if (!c.tg)
        w_die();
    /* A crash in libhdf5 must end this process with its signal, which the
     * parent reports, not in a sanitizer's handler. */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (w_setup(&c) < 0) {
        w_send(&c, H5P_FAIL, c.fail_st ? c.fail_st : NA_E_WRITE, c.fail);
        _exit(0);
    }
    uint32_t *units = malloc((c.job->n ? c.job->n : 1) * sizeof *units);
    if (!units)
        w_die();
    for (size_t j = 0; j < c.job->n; j++)
        units[j] = c.tg[j].unit ? c.tg[j].unit : 1;
    if (na_h5p_send(sock, H5W_READY, 0, units, c.job->n * sizeof *units, NULL, 0) != 0)
        w_die();
    free(units);
    for (;;) {
        h5p_hdr_t h;
        if (na_h5p_recv_all(sock, &h, sizeof h) != 0)
            _exit(0); /* the parent gave up: the file is dropped */
        if (h.type == H5W_WRITE && h.len == sizeof(h5w_write_t)) {
            h5w_write_t rq;
            if (na_h5p_recv_all(sock, &rq, sizeof rq) != 0)
                _exit(0);
            w_write(&c, &rq);
        } else if (h.type == H5W_FINISH && h.len < (64u << 20)) {
            uint8_t *p = malloc(h.len ? h.len : 1);
            if (!p || na_h5p_recv_all(sock, p, h.len) != 0)
                w_die();
            w_finish(&c, p, h.len);
        } else {
            w_die();
        }
    }
}

#else /* !NA_HAVE_HDF5 */

void na_h5w_child_main(int sock, uint8_t *shm, void *arg)
{
    static const char msg[] = "this nanaudit was built without libhdf5";
    na_h5p_send(sock, H5P_FAIL, NA_E_UNSUPPORTED, msg, sizeof msg - 1, NULL, 0);
    _exit(0);
}

#endif
