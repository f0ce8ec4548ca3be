/*
 * hdf5_child.c - the crash-isolated HDF5 reader process (see hdf5_proto.h).
 *
 * Runs in a child forked by hdf5.c and is the only code that calls
 * libhdf5 (serial API, 1.10.8 on Debian 12). It walks the file, sends the
 * catalog of datasets, then answers READ requests by H5Dread of a flat
 * row-major element range into the shared mapping, converted to the
 * memory type the catalog announced. No OpenMP, no stdio: a fork of a
 * process that used libgomp may not use it again, and the child leaves
 * with _exit so no atexit handler of the parent runs twice.
 *
 * Format rules used here (HDF5 User's Guide, "HDF5 Datatypes",
 * "HDF5 Datasets"; netCDF CF conventions for _FillValue/missing_value,
 * https://cfconventions.org/cf-conventions/cf-conventions.html#missing-data):
 *  - groups are walked in name order (H5_INDEX_NAME, increasing), each
 *    object once (by address); every hard link in the file is walked
 *    before any soft link, so an object is named by its first hard-link
 *    path in name order and a soft link is followed (once) only to an
 *    object no hard link reaches; external links not followed (an error when
 *    their file exists, a note when it does not: visit_link);
 *  - the object's other hard-link paths are sent after the catalog
 *    (H5P_ALIAS), at most NA_HDF5_MAX_ALIASES per object, so that clean's
 *    patterns match every path a user may name it by (format.h);
 *  - datatypes map to audited element types as hdf5_types.c says;
 *  - compound members are NAME.field (nested: NAME.a.b); two equal float
 *    members named r/i or real/imag are complex: NAME.real, NAME.imag;
 *  - CF _FillValue / missing_value: the first element of each numeric
 *    attribute, cast to the dataset's type, becomes a missing value
 *    (na_tensor_t.missing);
 *  - a dataset of variable-length numeric sequences is the concatenation
 *    of its sequences in row-major order of its elements (what numpy's
 *    np.concatenate of h5py's d[...].ravel() holds): H5Dread with a
 *    memory type of hvl_t {len, p} gives each element's sequence (HDF5
 *    User's Guide, "Variable-length Datatypes"); the lengths' prefix
 *    sum, kept every VL_CK elements (vl_measure), maps value ranges to
 *    rows.
 */
#include "hdf5_chunks.h"
#include "hdf5_gheap.h"
#include "hdf5_inflate.h"
#include "hdf5_msg.h"
#include "hdf5_proto.h"
#include "hdf5_types.h"

#include <errno.h>      /* errno, EINTR */
#include <fcntl.h>      /* open */
#include <math.h>       /* fabs, isfinite */
#include <signal.h>     /* raise, SIGSEGV */
#include <stdarg.h>     /* va_list */
#include <stdio.h>      /* snprintf */
#include <limits.h>     /* PATH_MAX */
#include <stdlib.h>     /* malloc, free, realpath */
#include <string.h>     /* memset, strlen, strstr */
#include <sys/resource.h> /* getrlimit, setrlimit, RLIMIT_AS */
#include <sys/socket.h> /* send, recv */
#include <sys/stat.h>   /* fstat */
#include <unistd.h>     /* _exit */

int na_h5p_send(int fd, uint32_t type, uint32_t status, const void *a, uint64_t alen,
                const void *b, uint64_t blen)
{
    h5p_hdr_t h = {type, status, alen + blen};
    const void *parts[3] = {&h, a, b};
    uint64_t lens[3] = {sizeof h, alen, blen};
    for (int i = 0; i < 3; i++) {
        const uint8_t *p = parts[i];
        uint64_t left = lens[i];
        while (left > 0) {
            ssize_t r = send(fd, p, left, MSG_NOSIGNAL);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return -1;
            p += r;
            left -= (uint64_t)r;
        }
    }
    return 0;
}

int na_h5p_recv_all(int fd, void *buf, uint64_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t r = recv(fd, p, len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (uint64_t)r;
    }
    return 0;
}

#if NA_HAVE_HDF5
#include <hdf5.h>
#include <zlib.h> /* uncompress: vl_check_heap */

/* One servable entry: how to read it. */
typedef struct c_ent {
    char *dset;      /* dataset path (of the owning object for an attribute) */
    char *attr;      /* attribute name (--attributes), or NULL for the dataset */
    hid_t memtype;   /* memory type of one dataset element */
    uint32_t esize;  /* bytes of one stream element */
    uint64_t per;    /* stream elements per dataset element (array types) */
    int ndim;        /* of the dataset (without array dims) */
    uint64_t shape[NA_MAX_NDIM];
    int chunked;     /* chunk dims known */
    uint64_t chunk[NA_MAX_NDIM];
    int64_t unalloc; /* unallocated chunks, -1 unknown */
    int nostorage;   /* nothing allocated at all */
    int full;        /* every element allocated: no zeroing before H5Dread */
    uint64_t chunk_elems; /* raw chunk reads allowed (H5P_RAW): elements per chunk */
    int have_spans;  /* spans computed */
    size_t n_spans;  /* flat-index bounds of allocated chunks */
    uint64_t (*spans)[2];
    int index_state; /* chunk index (c_index_check): 0 unchecked, 1 sound, 2 damaged */
    char *index_msg; /* what is wrong with it, when damaged */
    int vlen;        /* sequences of a variable length: memtype is hvl_t */
    uint64_t rows;   /* dataset elements (0 for a null dataspace) */
    uint32_t fbase;  /* vlen: bytes of one value as stored */
    /* deflate chunks checked before H5Dread (zc_check): */
    int zc_mode;       /* 0 not set up, 1 no check, 2 exact size, 3 bound */
    int zc_raw_edges;  /* partial edge chunks stored unfiltered: not checked */
    unsigned zc_bit;   /* deflate's place in the pipeline: its filter-mask bit */
    uint32_t zc_strip; /* bytes of Fletcher32 checksums after deflate's output */
    uint64_t zc_size;  /* what a chunk inflates to (2), or at most (3) */
    uint64_t zc_next;  /* first chunk row (along dim 0) not checked yet */
} c_ent_t;

typedef struct child {
    int sock;
    hid_t file;
    const char *path;     /* the file as the user named it */
    uint8_t *shm;
    uint64_t shm_bytes;
    size_t n, cap;        /* catalog entries sent */
    c_ent_t *ents;        /* per catalog entry; dset NULL when not servable */
    size_t *seen;         /* open-addressing set: indices into objs */
    size_t seen_cap;
    size_t n_objs, cap_objs;
    struct c_obj *objs;   /* every object reached, in the order met */
    hid_t cur;            /* dataset open for reading, or -1 */
    size_t cur_ent;
    int attributes;       /* --attributes: list numeric attributes too */
    int follow_soft;      /* 0 in the hard-link pass: soft links are deferred */
    size_t n_soft, cap_soft;
    char **soft;          /* deferred soft links, each "GROUP\0NAME" */
    uint64_t *vl_ck;      /* entry vl_ent's values before row j * VL_CK, for
                           * j = 0 .. blocks; the last is the total; or NULL */
    size_t vl_ent;
    uint64_t vl_batch;    /* VL_BATCH_BYTES, or NANAUDIT_HDF5_VLEN_BATCH */
    size_t cl_ent;        /* entry whose chunks cl_offs lists (chunk_list) */
    int cl_state;         /* 0 none, 1 listed, 2 not listed, 3 failed (cl_msg) */
    hsize_t *cl_offs;     /* cl_n chunks, ndim element offsets each */
    hsize_t cl_n;
    uint64_t (*cl_ord)[2]; /* {chunk, dim-0 offset} by offset, or NULL (rows_read) */
    char cl_msg[200];
} child_t;

static void c_die(child_t *c) __attribute__((noreturn));
static void c_die(child_t *c)
{
    (void)c;
    _exit(2);
}

/* The innermost description on the HDF5 error stack: the real cause
 * ("required filter 'zstd' is not registered"), not the API wrapper.
 * Taken whole (a file driver's runs to ~400 bytes), then made one line
 * of at most NA_H5_CAUSE_MAX bytes (hdf5_msg.c). */
#define H5_DESC_MAX 2048
static herr_t err_walk(unsigned n, const H5E_error2_t *e, void *ud)
{
    char *buf = ud;
    (void)n;
    if (e->desc != NULL && e->desc[0] != '\0')
        snprintf(buf, H5_DESC_MAX, "%s", e->desc);
    return 0;
}

/* Address space libhdf5 may add while it reads sequences (vl_cap_on) or
 * the catalog's object headers (na_h5c_main, h5_header_cap set). */
#define VL_AS_ROOM ((uint64_t)2 << 30)
static int h5_header_cap;

static void h5_cause(char *buf, size_t cap)
{
    char tmp[H5_DESC_MAX] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, err_walk, tmp);
    H5Eclear2(H5E_DEFAULT);
    if (h5_header_cap && strstr(tmp, "allocation failed"))
        snprintf(tmp + strlen(tmp), sizeof tmp - strlen(tmp),
                 " (more than %llu GiB for an object header: a damaged size)",
                 (unsigned long long)(VL_AS_ROOM >> 30));
    /* An object header message of a version this libhdf5 does not know
     * ("bad version number for layout message"): mostly a file from a
     * newer HDF5 (h5py 3.16 bundles HDF5 2.0, whose libver="latest"
     * writes a gzip-chunked dataset's layout in a version 1.10 cannot
     * read; the seventh fresh-user round), rarely a damaged one. Say
     * which library read it, so the user knows what to upgrade or which
     * libver to write with. */
    size_t n = strlen(tmp);
    unsigned maj = 0, min = 0, rel = 0;
    if (strstr(tmp, "bad version number") && H5get_libversion(&maj, &min, &rel) >= 0)
        snprintf(tmp + n, sizeof tmp - n,
                 " (a newer HDF5 file format than this nanaudit's libhdf5 %u.%u.%u reads, or "
                 "a damaged file)",
                 maj, min, rel);
    na_h5_clean_cause(tmp[0] ? tmp : "unknown libhdf5 error", buf,
                      cap < NA_H5_CAUSE_MAX ? cap : NA_H5_CAUSE_MAX);
}

/* ---- catalog ---------------------------------------------------------- */

typedef struct c_out {
    h5p_entry_t e;
    char reason[400];
    char detail[600];
} c_out_t;

static void c_send_entry(child_t *c, const char *name, c_out_t *o, const c_ent_t *serve)
{
    size_t nl = strlen(name), rl = strlen(o->reason), dl = strlen(o->detail);
    o->e.name_len = (uint32_t)nl;
    o->e.reason_len = (uint32_t)rl;
    o->e.detail_len = (uint32_t)dl;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        c_ent_t *ne = realloc(c->ents, nc * sizeof *ne);
        if (ne == NULL)
            c_die(c);
        c->ents = ne;
        c->cap = nc;
    }
    c_ent_t *slot = &c->ents[c->n++];
    memset(slot, 0, sizeof *slot);
    slot->memtype = -1;
    if (serve != NULL)
        *slot = *serve;
    size_t tl = rl + dl;
    char *tail = malloc(tl + 1);
    if (tail == NULL)
        c_die(c);
    memcpy(tail, o->reason, rl);
    memcpy(tail + rl, o->detail, dl);
    uint8_t *head = malloc(sizeof o->e + nl);
    if (head == NULL)
        c_die(c);
    memcpy(head, &o->e, sizeof o->e);
    memcpy(head + sizeof o->e, name, nl);
    if (na_h5p_send(c->sock, H5P_ENTRY, 0, head, sizeof o->e + nl, tail, tl) != 0)
        c_die(c);
    free(head);
    free(tail);
}

static void c_note(child_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void c_note(child_t *c, const char *fmt, ...)
{
    c_out_t o;
    memset(&o, 0, sizeof o);
    o.e.kind = H5P_K_NOTE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o.reason, sizeof o.reason, fmt, ap);
    va_end(ap);
    c_send_entry(c, "", &o, NULL);
}

/* One object (group or dataset) the walk reached, by address: the
 * catalog entries its visit sent, [lo, hi), each named by its path (plen
 * bytes) plus a suffix, and the other hard-link paths met to it later
 * (at most NA_HDF5_MAX_ALIASES kept; more counts the rest, so millions
 * of links to one object cost a counter, not memory). */
typedef struct c_obj {
    haddr_t addr;
    uint64_t lo, hi, plen, more;
    size_t n_alias;
    char **alias;
} c_obj_t;

static size_t obj_slot(const child_t *c, haddr_t addr, size_t cap, const size_t *set)
{
    size_t h = (size_t)(addr * 0x9E3779B97F4A7C15ull) & (cap - 1);
    while (set[h] != SIZE_MAX && c->objs[set[h]].addr != addr)
        h = (h + 1) & (cap - 1);
    return h;
}

/* Returns 1 when addr was already seen, else records it; *ix: its index
 * in c->objs either way. */
static int seen_before(child_t *c, haddr_t addr, size_t *ix)
{
    if (c->n_objs * 2 >= c->seen_cap) {
        size_t nc = c->seen_cap ? c->seen_cap * 2 : 1024;
        size_t *ns = malloc(nc * sizeof *ns);
        if (ns == NULL)
            c_die(c);
        for (size_t i = 0; i < nc; i++)
            ns[i] = SIZE_MAX;
        for (size_t i = 0; i < c->n_objs; i++)
            ns[obj_slot(c, c->objs[i].addr, nc, ns)] = i;
        free(c->seen);
        c->seen = ns;
        c->seen_cap = nc;
    }
    size_t h = obj_slot(c, addr, c->seen_cap, c->seen);
    if (c->seen[h] != SIZE_MAX) {
        *ix = c->seen[h];
        return 1;
    }
    if (c->n_objs == c->cap_objs) {
        size_t nc = c->cap_objs ? c->cap_objs * 2 : 1024;
        c_obj_t *no = realloc(c->objs, nc * sizeof *no);
        if (no == NULL)
            c_die(c);
        c->objs = no;
        c->cap_objs = nc;
    }
    c_obj_t *o = &c->objs[c->n_objs];
    memset(o, 0, sizeof *o);
    o->addr = addr;
    o->lo = o->hi = c->n;
    *ix = c->seen[h] = c->n_objs++;
    return 0;
}

/* Object ix met again through hard link `path`: keep the path (up to the
 * cap) for send_aliases. */
static void obj_alias(child_t *c, size_t ix, const char *path)
{
    c_obj_t *o = &c->objs[ix];
    if (o->n_alias == NA_HDF5_MAX_ALIASES) {
        o->more++;
        return;
    }
    char **na = realloc(o->alias, (o->n_alias + 1) * sizeof *na);
    if (na == NULL)
        c_die(c);
    o->alias = na;
    if ((na[o->n_alias] = strdup(path)) == NULL)
        c_die(c);
    o->n_alias++;
}

/* After the walk, when every object's entries are known (a link inside a
 * group back to it is met before the group's visit ends): one ALIAS per
 * kept path, and one with an empty path for those beyond the cap. Last
 * met first: a member is met after its group, and the parent applies a
 * group's other paths to the paths its members have by then (hdf5.c). */
static void send_aliases(child_t *c)
{
    for (size_t i = c->n_objs; i-- > 0;) {
        c_obj_t *o = &c->objs[i];
        for (size_t k = 0; k <= o->n_alias; k++) {
            h5p_alias_t a = {o->lo, o->hi, o->plen, k == o->n_alias ? o->more : 0};
            const char *p = k < o->n_alias ? o->alias[k] : "";
            if (o->lo < o->hi && (k < o->n_alias || a.more) &&
                na_h5p_send(c->sock, H5P_ALIAS, 0, &a, sizeof a, p, strlen(p)) != 0)
                c_die(c);
            if (k < o->n_alias)
                free(o->alias[k]);
        }
        free(o->alias);
    }
    free(c->objs);
    free(c->seen);
    c->objs = NULL;
    c->seen = NULL;
    c->n_objs = c->cap_objs = c->seen_cap = 0;
}

/* ---- datasets ------------------------------------------------------------ */

/* 2^40 elements: 4 TiB of F32, hours of reading at any speed. */
#define NA_H5_MAX_READ_ELEMS (1ull << 40)
/* Variable-length sequences per dataset: 128 MiB of checkpoints (VL_CK). */
#define NA_H5_VLEN_MAX_SEQS (1ull << 32)
/* Bytes per element of a dataset's or attribute's file datatype. libhdf5
 * 1.10 allocates at least one element for the fill value and for type
 * conversion before it finds that the data cannot be there: a damaged
 * size field (4 GiB for an I32; seventeenth fresh-user round) took
 * 4.2 GB and 12 s before libhdf5 said "addr overflow". The
 * widest types h5py writes are arrays of at most 65536 values of 16
 * bytes (1 MiB, the limit array_type keeps); compounds of thousands of
 * fields stay far below 16 MiB. */
#define NA_H5_MAX_ELEM_BYTES ((size_t)16 << 20)

/* 1 and why when ft's element is wider than NA_H5_MAX_ELEM_BYTES. */
static int too_wide(hid_t ft, char *why, size_t n)
{
    size_t sz = H5Tget_size(ft);
    if (sz <= NA_H5_MAX_ELEM_BYTES)
        return 0;
    snprintf(why, n, "datatype of %zu bytes per element: more than %zu MiB (a damaged size, "
             "or elements too large to audit)", sz, NA_H5_MAX_ELEM_BYTES >> 20);
    return 1;
}

typedef struct c_ds {
    const char *path;
    const char *attr;       /* attribute of path, or NULL: the dataset */
    int ndim;
    uint64_t shape[NA_MAX_NDIM];
    uint64_t elements;
    int shape_err;          /* 1: element count overflows */
    uint64_t storage;
    int64_t unalloc;
    int chunked;
    int nostorage_ok;       /* storage size 0 means "all fill" */
    int contiguous;         /* contiguous layout in this file, not external */
    uint64_t offset;        /* its data's file offset (H5Dget_offset) */
    int full;               /* every element has storage (nothing to zero) */
    uint64_t chunk[NA_MAX_NDIM];
    uint32_t n_missing;
    double missing[2];
    uint64_t missing_int[2]; /* bit i of missing_exact: missing[i] exactly */
    uint32_t missing_exact;
    uint32_t packed;        /* has an attribute na_h5_packing_attr names */
    uint32_t dim_scale;     /* na_h5_is_dim_scale */
    int uns;                /* na_h5_unsigned_view: signed integers read as unsigned */
    int nc_dim;             /* a netCDF dimension without a variable */
    const char *mat_skip;   /* na_h5_matlab_skip */
    uint64_t scale0[NA_SCALES0]; /* na_tensor_t.scale0 */
    int scale_other_axis;   /* na_tensor_t.scale_other_axis */
    int filter_missing;     /* a filter is not available */
    char filter_msg[300];
    char detail[600];
    hid_t ftype;            /* the dataset's file type (not owned) */
    uint32_t par_mode;      /* H5P_PAR_*: filters the parent can undo */
} c_ds_t;

static const char *filter_known(H5Z_filter_t id)
{
    switch (id) {
    case H5Z_FILTER_DEFLATE: return "deflate";
    case H5Z_FILTER_SHUFFLE: return "shuffle";
    case H5Z_FILTER_FLETCHER32: return "fletcher32";
    case H5Z_FILTER_SZIP: return "szip";
    case H5Z_FILTER_NBIT: return "nbit";
    case H5Z_FILTER_SCALEOFFSET: return "scaleoffset";
    case 307: return "bzip2";
    case 32000: return "lzf";
    case 32001: return "blosc";
    case 32004: return "lz4";
    case 32008: return "bitshuffle";
    case 32015: return "zstd";
    case 32017: return "sz";
    case 32026: return "blosc2";
    default: return NULL;
    }
}

/* "HDF5 filter ID (NAME) is not available ..." into msg: a registered
 * filter's own name, else the name the file stores, made printable and
 * said to be the file's (round 43b: id 30583 "(deflate)"), else unnamed. */
static void missing_msg(H5Z_filter_t id, const char *name, char *msg, size_t cap)
{
    const char *kn = filter_known(id);
    char shown[80];
    if (kn || !name[0])
        snprintf(shown, sizeof shown, "%s", kn ? kn : "unnamed");
    else
        snprintf(shown, sizeof shown, "named '%.48s' in the file", name);
    for (char *p = shown; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            *p = '?';
    snprintf(msg, cap, "HDF5 filter %d (%s) is not available in this libhdf5 (plugins are "
             "searched in HDF5_PLUGIN_PATH)", (int)id, shown);
}

/* 1 when a filter of dataset dset's pipeline (dcpl) is missing from this
 * libhdf5 (a plugin not installed: h5py's lzf, bitshuffle, zstd), with
 * msg "HDF5 filter 32000 (lzf) is not available in this libhdf5 (...)"
 * for the first; 0 otherwise. An optional filter (H5Z_FLAG_OPTIONAL,
 * which h5py sets for lzf) counts when the first allocated chunk was
 * written through it (its filter mask bit is clear; HDF5 User's Guide,
 * "Filters"): a writer that lacked it skipped it on every chunk, and
 * libhdf5 reads those (round 41a: such a file was refused); a later
 * chunk that needs it fails its read, exit 3. any_optional: every
 * optional filter missing counts, whatever the first chunk did, and only
 * those (optional_missing, after such a read failed). */
static int filter_missing(hid_t dset, hid_t dcpl, char *msg, size_t cap, int any_optional)
{
    int nf = H5Pget_nfilters(dcpl), miss = 0;
    unsigned mask = 0; /* the first allocated chunk's: bit i set, filter i skipped */
    int have_mask = -1; /* not looked up yet (only for an optional filter) */
    for (int i = 0; i < nf && !miss; i++) {
        unsigned flags = 0, cd[8];
        size_t ncd = 8;
        char name[128] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name,
                                         NULL);
        if (id < 0 || H5Zfilter_avail(id) > 0)
            continue;
        if (any_optional && !(flags & H5Z_FLAG_OPTIONAL))
            continue; /* optional_missing: the required ones were refused before */
        if ((flags & H5Z_FLAG_OPTIONAL) && have_mask < 0 && !any_optional) {
            hid_t fs = dset >= 0 ? H5Dget_space(dset) : -1;
            haddr_t addr = 0;
            hsize_t csize = 0, nch = 0, off[H5S_MAX_RANK];
            have_mask = fs >= 0 && H5Dget_num_chunks(dset, fs, &nch) >= 0 && nch > 0 &&
                        H5Dget_chunk_info(dset, fs, 0, off, &mask, &addr, &csize) >= 0;
            if (fs >= 0)
                H5Sclose(fs);
            H5Eclear2(H5E_DEFAULT);
        }
        if ((flags & H5Z_FLAG_OPTIONAL) && !any_optional && (!have_mask || (mask >> i & 1u)))
            continue;
        miss = 1;
        missing_msg(id, name, msg, cap);
    }
    H5Eclear2(H5E_DEFAULT);
    return miss;
}

/* After a failed read of dset: an optional filter this libhdf5 lacks,
 * which filter_missing let pass because the first chunk skipped it (h5py
 * writes lzf as optional, and skips it for a chunk it cannot shrink), is
 * why - a later chunk went through it. Its message ("; a chunk was
 * written through it") into msg: 1, else 0. */
static int optional_missing(hid_t dset, char *msg, size_t cap)
{
    hid_t dcpl = H5Dget_create_plist(dset);
    int miss = dcpl >= 0 && filter_missing(dset, dcpl, msg, cap, 1);
    if (miss) {
        size_t n = strlen(msg);
        snprintf(msg + n, cap - n, "; a chunk was written through it");
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    H5Eclear2(H5E_DEFAULT);
    return miss;
}

static void cat(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

static void ds_filters(hid_t dset, hid_t dcpl, c_ds_t *d)
{
    int nf = H5Pget_nfilters(dcpl);
    int ids[2] = {-1, -1};
    for (int i = 0; i < nf; i++) {
        unsigned flags = 0, cd[8];
        size_t ncd = 8;
        char name[128] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name,
                                         NULL);
        if (id < 0)
            continue;
        const char *kn = filter_known(id);
        if (i < 2)
            ids[i] = (int)id;
        cat(d->detail, sizeof d->detail, "%s%s(%d)", i ? "," : " filters=", kn ? kn : "filter",
            (int)id);
        H5Eclear2(H5E_DEFAULT);
    }
    d->filter_missing = filter_missing(dset, dcpl, d->filter_msg, sizeof d->filter_msg, 0);
    /* Pipelines the parent can undo itself on all threads (hdf5_inflate.c);
     * not when partial edge chunks are stored unfiltered (HDF5 1.10's
     * H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS: no filter-mask bit says so,
     * the parent would inflate raw bytes; round 44a) */
    unsigned copts = 0;
    int raw_edges = H5Pget_chunk_opts(dcpl, &copts) >= 0 &&
                    (copts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
    H5Eclear2(H5E_DEFAULT);
    if (raw_edges)
        ;
    else if (nf == 1 && ids[0] == H5Z_FILTER_DEFLATE)
        d->par_mode = H5P_PAR_DEFLATE;
    else if (nf == 2 && ids[0] == H5Z_FILTER_SHUFFLE && ids[1] == H5Z_FILTER_DEFLATE)
        d->par_mode = H5P_PAR_SHUFFLE_DEFLATE;
}

/* Allocated chunks (1.10.8 wants a real file dataspace, not H5S_ALL). */
static herr_t num_chunks(hid_t dset, hsize_t *n)
{
    hid_t fs = H5Dget_space(dset);
    herr_t r = fs < 0 ? -1 : H5Dget_num_chunks(dset, fs, n);
    if (fs >= 0)
        H5Sclose(fs);
    return r;
}

static void ds_layout(hid_t dset, hid_t dcpl, c_ds_t *d)
{
    H5D_layout_t lay = H5Pget_layout(dcpl);
    d->unalloc = -1;
    if (lay == H5D_CHUNKED) {
        hsize_t cd[H5S_MAX_RANK];
        int cn = H5Pget_chunk(dcpl, H5S_MAX_RANK, cd);
        cat(d->detail, sizeof d->detail, "chunked [");
        d->chunked = cn == d->ndim && cn > 0;
        for (int i = 0; d->chunked && i < cn; i++)
            d->chunk[i] = cd[i];
        uint64_t total = d->elements ? 1 : 0;
        for (int i = 0; i < cn && i < d->ndim; i++) {
            cat(d->detail, sizeof d->detail, "%s%llu", i ? "," : "", (unsigned long long)cd[i]);
            uint64_t per = cd[i] ? (d->shape[i] + cd[i] - 1) / cd[i] : 0;
            total = per && total > UINT64_MAX / per ? UINT64_MAX : total * per;
        }
        cat(d->detail, sizeof d->detail, "]");
        hsize_t nalloc = 0;
        if (d->elements == 0) {
            d->unalloc = 0;
        } else if (num_chunks(dset, &nalloc) >= 0) {
            d->unalloc = (int64_t)(total >= nalloc ? total - nalloc : 0);
            cat(d->detail, sizeof d->detail, " %llu/%llu chunks allocated",
                (unsigned long long)nalloc, (unsigned long long)total);
        }
        H5Eclear2(H5E_DEFAULT);
    } else {
        cat(d->detail, sizeof d->detail, "%s",
            lay == H5D_CONTIGUOUS ? "contiguous" : lay == H5D_COMPACT ? "compact"
                                                 : lay == H5D_VIRTUAL ? "virtual" : "layout?");
    }
    d->nostorage_ok = lay == H5D_CHUNKED || lay == H5D_CONTIGUOUS;
    d->contiguous = lay == H5D_CONTIGUOUS;
    d->full = lay == H5D_CONTIGUOUS || lay == H5D_COMPACT ? d->storage > 0 : d->unalloc == 0;
    if (H5Pget_external_count(dcpl) > 0) {
        d->nostorage_ok = 0; /* data in other files: always read */
        d->contiguous = 0;
        cat(d->detail, sizeof d->detail, " external-storage");
    }
    ds_filters(dset, dcpl, d);
    H5D_fill_value_t fs = H5D_FILL_VALUE_UNDEFINED;
    H5D_fill_time_t ft = H5D_FILL_TIME_IFSET;
    H5Pfill_value_defined(dcpl, &fs);
    H5Pget_fill_time(dcpl, &ft);
    double fv = 0.0;
    if (fs == H5D_FILL_VALUE_UNDEFINED)
        cat(d->detail, sizeof d->detail, " fill=undefined");
    else if (H5Pget_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fv) >= 0)
        cat(d->detail, sizeof d->detail, " fill=%.17g%s", fv,
            fs == H5D_FILL_VALUE_DEFAULT ? "(default)" : "");
    else
        cat(d->detail, sizeof d->detail, " fill=set");
    if (ft == H5D_FILL_TIME_NEVER)
        cat(d->detail, sizeof d->detail, " fill-time=never");
    H5Eclear2(H5E_DEFAULT);
}

static void ds_nc_default_fill(hid_t dset, hid_t ft, c_ds_t *d);

/* 1 when dimension scale dset is attached to a dimension other than 0
 * of some dataset: its REFERENCE_LIST attribute (HDF5 Dimension Scale
 * Specification 1.0, section 4.2: compound {dataset reference, dimension
 * index} per attachment) has a dimension index above 0. Errors read 0. */
static int scale_other_axis(hid_t dset)
{
    typedef struct {
        hobj_ref_t ref;
        int dim;
    } rl_t;
    int r = 0;
    if (H5Aexists(dset, "REFERENCE_LIST") <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    hid_t a = H5Aopen(dset, "REFERENCE_LIST", H5P_DEFAULT);
    hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(rl_t));
    rl_t *v = np >= 1 && np <= (1 << 20) ? calloc((size_t)np, sizeof *v) : NULL;
    if (v && mt >= 0 && H5Tinsert(mt, "dataset", HOFFSET(rl_t, ref), H5T_STD_REF_OBJ) >= 0 &&
        H5Tinsert(mt, "dimension", HOFFSET(rl_t, dim), H5T_NATIVE_INT) >= 0 &&
        H5Aread(a, mt, v) >= 0)
        for (hssize_t i = 0; i < np && !r; i++)
            r = v[i].dim != 0;
    free(v);
    if (mt >= 0)
        H5Tclose(mt);
    if (sp >= 0)
        H5Sclose(sp);
    if (a >= 0)
        H5Aclose(a);
    H5Eclear2(H5E_DEFAULT);
    return r;
}

/* na_tensor_t.scale0 of dataset dset into s (dim_scale: it is a
 * dimension scale): the address + 1 of each scale its DIMENSION_LIST
 * attribute (HDF5 Dimension Scale Specification 1.0, section 4.2: one
 * variable-length list of object references per dimension) attaches to
 * dimension 0, at most NA_SCALES0, or its own when it is a scale; 0 in
 * the slots left (all when none or unreadable). */
static void ds_scale0(hid_t dset, int dim_scale, uint64_t s[NA_SCALES0])
{
    H5O_info_t oi;
    memset(s, 0, NA_SCALES0 * sizeof s[0]);
    if (dim_scale) {
        if (H5Oget_info2(dset, &oi, H5O_INFO_BASIC) >= 0)
            s[0] = (uint64_t)oi.addr + 1;
        H5Eclear2(H5E_DEFAULT);
        return;
    }
    if (H5Aexists(dset, "DIMENSION_LIST") <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return;
    }
    hid_t a = H5Aopen(dset, "DIMENSION_LIST", H5P_DEFAULT);
    hid_t at = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    hid_t mt = H5Tvlen_create(H5T_STD_REF_OBJ);
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    hvl_t v[H5S_MAX_RANK];
    if (at >= 0 && mt >= 0 && H5Tget_class(at) == H5T_VLEN && np >= 1 && np <= H5S_MAX_RANK &&
        H5Aread(a, mt, v) >= 0) {
        for (size_t k = 0, n = 0; v[0].p != NULL && k < v[0].len && n < NA_SCALES0; k++) {
            hobj_ref_t ref;
            memcpy(&ref, (const unsigned char *)v[0].p + k * sizeof ref, sizeof ref);
            hid_t o = H5Rdereference2(dset, H5P_DEFAULT, H5R_OBJECT, &ref);
            if (o >= 0 && H5Oget_info2(o, &oi, H5O_INFO_BASIC) >= 0 &&
                oi.type == H5O_TYPE_DATASET)
                s[n++] = (uint64_t)oi.addr + 1;
            if (o >= 0)
                H5Oclose(o);
        }
        H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, v);
    }
    if (mt >= 0)
        H5Tclose(mt);
    if (sp >= 0)
        H5Sclose(sp);
    if (at >= 0)
        H5Tclose(at);
    if (a >= 0)
        H5Aclose(a);
    H5Eclear2(H5E_DEFAULT);
}

/* 1 when integral m lies in the range of integer type ft, read as
 * unsigned when uns (na_h5_unsigned_view). */
static int int_fits(hid_t ft, int uns, double m)
{
    int bits = 8 * (int)H5Tget_size(ft);
    if (uns || H5Tget_sign(ft) != H5T_SGN_2)
        return m >= 0 && m < ldexp(1.0, bits);
    return m >= -ldexp(1.0, bits - 1) && m < ldexp(1.0, bits - 1);
}

/* What dataset dset's attributes say of it besides its markers: CF
 * packing, dimension scales (its own kind, those of its axis 0, a netCDF
 * dimension without a variable), _Unsigned, a MATLAB array without
 * numbers. */
static void ds_tags(hid_t dset, c_ds_t *d)
{
    d->packed = (uint32_t)na_h5_has_packing(dset);
    d->dim_scale = (uint32_t)na_h5_is_dim_scale(dset);
    d->uns = na_h5_unsigned_view(dset);
    d->nc_dim = d->dim_scale && na_h5_nc_dim_only(dset);
    d->mat_skip = na_h5_matlab_skip(dset);
    ds_scale0(dset, (int)d->dim_scale, d->scale0);
    d->scale_other_axis = d->dim_scale && scale_other_axis(dset);
    if (d->uns)
        cat(d->detail, sizeof d->detail, " _Unsigned");
}

/* CF missing-value attributes (ds_tags ran: d->uns): numeric, 1 to 64
 * elements, every value a marker slot (_FillValue first; what does not fit
 * is said in a note). A marker is cast to the variable's type before it
 * is compared (CF 1.11 section 2.5.1: _FillValue and missing_value have
 * the variable's type): an f8 -9999.9 marks the F32 value (float)-9999.9,
 * which an F32 element equals, where the double -9999.9 would match
 * nothing; netCDF4-python ignores such a marker, which a note says. ft is
 * the dataset's type: the cast is a round trip through it by H5Tconvert,
 * for integer and float types only (compound members keep the double). */
static void ds_missing(child_t *c, hid_t dset, hid_t ft, c_ds_t *d)
{
    static const char *names[2] = {"_FillValue", "missing_value"};
    H5T_class_t fcl = H5Tget_class(ft);
    int cast = (fcl == H5T_INTEGER || fcl == H5T_FLOAT) && H5Tget_size(ft) <= sizeof(double);
    int fill_attr = H5Aexists(dset, names[0]) > 0;
    H5Eclear2(H5E_DEFAULT);
    for (int k = 0; k < 2; k++) {
        if (H5Aexists(dset, names[k]) <= 0) {
            H5Eclear2(H5E_DEFAULT);
            continue;
        }
        hid_t a = H5Aopen(dset, names[k], H5P_DEFAULT);
        if (a < 0) {
            H5Eclear2(H5E_DEFAULT);
            continue;
        }
        hid_t at = H5Aget_type(a), as = H5Aget_space(a);
        H5T_class_t cl = at >= 0 ? H5Tget_class(at) : H5T_NO_CLASS;
        hssize_t np = as >= 0 ? H5Sget_simple_extent_npoints(as) : -1;
        if (cl == H5T_STRING && (fcl == H5T_INTEGER || fcl == H5T_FLOAT))
            c_note(c, "%s: %s is a string, not a number of the dataset's type: ignored (as "
                   "netCDF4-python does)", d->path, names[k]);
        if ((cl == H5T_INTEGER || cl == H5T_FLOAT) && np >= 1 && np <= 64) {
            double v[64];
            /* A 64-bit integer dataset's markers also as its integers:
             * a double holds NC_FILL_INT64 (-9223372036854775806) as
             * -2^63, which INT64_MIN and its neighbours equal too. */
            uint64_t iv[64];
            int sgn = fcl == H5T_INTEGER && H5Tget_sign(ft) == H5T_SGN_2;
            int wide = fcl == H5T_INTEGER && H5Tget_size(ft) == 8 &&
                       H5Aread(a, sgn ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64, iv) >= 0;
            H5Eclear2(H5E_DEFAULT);
            if (H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0) {
                /* Every value of a vector missing_value (CF allows
                 * several) takes a marker slot, _FillValue first; equal
                 * values share one; what does not fit is said in a note. */
                long long left = 0;
                int inexact = 0; /* the first netCDF4-python ignores, + 1 */
                double inexact_m = 0;
                for (hssize_t j = 0; j < np; j++) {
                    double m = v[j];
                    /* In place: 8 bytes hold any element of at most 8 bytes. */
                    union { double d; unsigned char b[sizeof(double)]; } u = {m};
                    /* Only a rounding is taken: libhdf5 saturates a value
                     * out of the type's range (1e20 -> I16 32767) and makes
                     * NaN an integer, and such a marker must match nothing,
                     * not the largest value. 1/8 is wider than any float
                     * type's rounding (F8_E4M3: 1/16) and narrower than a
                     * saturation. */
                    int conv = cast && isfinite(m) &&
                               H5Tconvert(H5T_NATIVE_DOUBLE, ft, 1, u.b, NULL, H5P_DEFAULT) >= 0 &&
                               H5Tconvert(ft, H5T_NATIVE_DOUBLE, 1, u.b, NULL, H5P_DEFAULT) >= 0;
                    /* netCDF4-python uses a marker only when its cast to
                     * the stored type is exact (_check_safecast; NaN and
                     * Inf are exact in a float type) */
                    int safe = conv ? u.d == m : fcl == H5T_FLOAT && !isfinite(m);
                    if (conv &&
                        (fcl == H5T_FLOAT ? fabs(u.d - m) <= fabs(m) / 8 : fabs(u.d - m) < 1))
                        m = u.d;
                    /* the integer is the marker when it rounds to m (not
                     * when libhdf5 saturated it, or m is no integer) */
                    int exact = wide && (sgn ? (double)(int64_t)iv[j] : (double)iv[j]) == m;
                    /* _Unsigned: the marker's bits as the unsigned
                     * integer the elements are read as (netCDF4-python
                     * views _FillValue and missing_value so) */
                    if (d->uns && isfinite(m) && m < 0 && m == nearbyint(m))
                        m += ldexp(1.0, 8 * (int)H5Tget_size(ft));
                    /* one that netCDF4-python ignores but that can match
                     * values here is said (a note below) */
                    if (cast && !safe && !inexact && isfinite(m) &&
                        (fcl == H5T_FLOAT || (m == nearbyint(m) && int_fits(ft, d->uns, m)))) {
                        inexact = (int)j + 1;
                        inexact_m = m;
                    }
                    /* equal markers share a slot; exact ones only when
                     * their integers are equal (NC_FILL_INT64 and
                     * INT64_MIN are one double: the second was dropped
                     * and its values counted as data) */
                    int dup = 0;
                    for (uint32_t i = 0; i < d->n_missing; i++)
                        dup |= d->missing[i] == m &&
                               (!exact || !((d->missing_exact >> i) & 1u) ||
                                d->missing_int[i] == iv[j]);
                    if (dup)
                        continue;
                    if (d->n_missing >= sizeof d->missing / sizeof d->missing[0]) {
                        left++;
                        continue;
                    }
                    if (exact) {
                        d->missing_int[d->n_missing] = iv[j];
                        d->missing_exact |= 1u << d->n_missing;
                    }
                    d->missing[d->n_missing++] = m;
                    if (exact && sgn && !d->uns) /* the integer, not its double (round 38a) */
                        cat(d->detail, sizeof d->detail, " %s=%lld", names[k],
                            (long long)(int64_t)iv[j]);
                    else if (exact)
                        cat(d->detail, sizeof d->detail, " %s=%llu", names[k],
                            (unsigned long long)iv[j]);
                    else
                        cat(d->detail, sizeof d->detail, " %s=%.17g", names[k], m);
                }
                /* netCDF4-python 1.7 ignores such an attribute (its
                 * _check_safecast); the cells its writer meant are
                 * counted here, and the difference is said */
                char num[40], num2[40];
                if (inexact)
                    c_note(c, "%s: %s %s is not exactly a value of the stored type: "
                           "netCDF4-python ignores this attribute, nanaudit takes %s as the marker",
                           d->path, names[k], na_fmt_num(num, sizeof num, v[inexact - 1]),
                           na_fmt_num(num2, sizeof num2, inexact_m));
                if (left)
                    c_note(c, "%s: %s: %lld value%s beyond the %zu markers honoured (_FillValue "
                           "and missing_value together) ignored", d->path, names[k], left,
                           left == 1 ? "" : "s", sizeof d->missing / sizeof d->missing[0]);
            }
        }
        if (at >= 0)
            H5Tclose(at);
        if (as >= 0)
            H5Sclose(as);
        H5Aclose(a);
        H5Eclear2(H5E_DEFAULT);
    }
    /* _Unsigned: netCDF4-python compares the unsigned view with the
     * signed default (-127 is never 129) and so masks none */
    if (!fill_attr && cast && !d->uns)
        ds_nc_default_fill(dset, ft, d);
}

/* The netCDF default fill of a variable without _FillValue (round 37b:
 * 500 unwritten cells of a netCDF-4 variable audited as 9.97e36 data,
 * which netCDF4-python and xarray mask): a marker when the dataset is a
 * netCDF-4 variable (the root's _NCProperties, or its own _Netcdf4Dimid,
 * _Netcdf4Coordinates or DIMENSION_LIST) whose HDF5 fill value, which
 * netCDF-C sets to it, is the default of its type (netcdf.h NC_FILL_*:
 * 9.9692099683868690e+36 for float and double, -127 / 255, -32767 /
 * 65535, -2147483647 / 4294967295, -9223372036854775806 /
 * 18446744073709551614). Bytes only with fill on: netCDF4-python masks a
 * byte variable's default only then ("generic utilities ... will not
 * assume a default fill value for byte variables", netCDF-C Fill Values). */
static void ds_nc_default_fill(hid_t dset, hid_t ft, c_ds_t *d)
{
    H5T_class_t cl = H5Tget_class(ft);
    size_t sz = H5Tget_size(ft);
    int sgn = cl == H5T_INTEGER && H5Tget_sign(ft) == H5T_SGN_2;
    int nc = H5Aexists_by_name(dset, "/", "_NCProperties", H5P_DEFAULT) > 0 ||
             H5Aexists(dset, "_Netcdf4Dimid") > 0 || H5Aexists(dset, "_Netcdf4Coordinates") > 0 ||
             H5Aexists(dset, "DIMENSION_LIST") > 0;
    hid_t dcpl = nc && d->n_missing < sizeof d->missing / sizeof d->missing[0]
                     ? H5Dget_create_plist(dset)
                     : -1;
    H5D_fill_value_t fs = H5D_FILL_VALUE_UNDEFINED;
    H5D_fill_time_t tm = H5D_FILL_TIME_IFSET;
    if (dcpl < 0 || H5Pfill_value_defined(dcpl, &fs) < 0 || fs != H5D_FILL_VALUE_USER_DEFINED ||
        H5Pget_fill_time(dcpl, &tm) < 0 || (sz == 1 && tm == H5D_FILL_TIME_NEVER)) {
        if (dcpl >= 0)
            H5Pclose(dcpl);
        H5Eclear2(H5E_DEFAULT);
        return;
    }
    double want = NAN, fv = 0;
    uint64_t wi = 0, fi = 0;
    int wide = cl == H5T_INTEGER && sz == 8, same = 0;
    if (cl == H5T_FLOAT && sz == 4)
        want = (double)9.9692099683868690e+36f;
    else if (cl == H5T_FLOAT && sz == 8)
        want = 9.9692099683868690e+36;
    else if (cl == H5T_INTEGER && sz == 1)
        want = sgn ? -127.0 : 255.0;
    else if (cl == H5T_INTEGER && sz == 2)
        want = sgn ? -32767.0 : 65535.0;
    else if (cl == H5T_INTEGER && sz == 4)
        want = sgn ? -2147483647.0 : 4294967295.0;
    else if (wide)
        wi = sgn ? (uint64_t)(-INT64_MAX + 1) : UINT64_MAX - 1;
    if (wide)
        same = H5Pget_fill_value(dcpl, sgn ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64, &fi) >= 0 &&
               fi == wi;
    else if (!isnan(want))
        same = H5Pget_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fv) >= 0 && fv == want;
    H5Pclose(dcpl);
    H5Eclear2(H5E_DEFAULT);
    if (!same)
        return;
    double m = wide ? (sgn ? (double)(int64_t)wi : (double)wi) : want;
    for (uint32_t i = 0; i < d->n_missing; i++)
        if (d->missing[i] == m && (!wide || !((d->missing_exact >> i) & 1u) ||
                                   d->missing_int[i] == wi))
            return; /* a missing_value equal to it */
    if (wide) {
        d->missing_int[d->n_missing] = wi;
        d->missing_exact |= 1u << d->n_missing;
    }
    d->missing[d->n_missing++] = m;
    if (wide && sgn)
        cat(d->detail, sizeof d->detail, " _FillValue=%lld(netCDF default)",
            (long long)(int64_t)wi);
    else if (wide)
        cat(d->detail, sizeof d->detail, " _FillValue=%llu(netCDF default)",
            (unsigned long long)wi);
    else
        cat(d->detail, sizeof d->detail, " _FillValue=%.17g(netCDF default)", m);
}

/* Shape of dataspace sp (consumed) into d; -1 with why set on failure. */
static int sp_shape(hid_t sp, c_ds_t *d, char *why, size_t cap)
{
    if (sp < 0) {
        h5_cause(why, cap);
        return -1;
    }
    H5S_class_t cl = H5Sget_simple_extent_type(sp);
    d->ndim = 0;
    d->elements = cl == H5S_NULL ? 0 : 1;
    if (cl == H5S_NULL)
        cat(d->detail, sizeof d->detail, "null dataspace ");
    if (cl == H5S_SIMPLE) {
        int nd = H5Sget_simple_extent_ndims(sp);
        hsize_t dims[H5S_MAX_RANK];
        if (nd < 0 || nd > NA_MAX_NDIM || H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
            H5Sclose(sp);
            h5_cause(why, cap);
            return -1;
        }
        d->ndim = nd;
        for (int i = 0; i < nd; i++) {
            d->shape[i] = dims[i];
            if (dims[i] != 0 && d->elements > UINT64_MAX / dims[i])
                d->shape_err = 1;
            else
                d->elements *= dims[i];
        }
    }
    H5Sclose(sp);
    return 0;
}

static int ds_space(hid_t dset, c_ds_t *d, char *why, size_t cap)
{
    return sp_shape(H5Dget_space(dset), d, why, cap);
}

/* Memory type for member path names[0..depth) of a compound, whose leaf
 * memory type is leaf (consumed). Conversion matches members by name. */
static hid_t nest_memtype(char *const *names, int depth, hid_t leaf)
{
    hid_t t = leaf;
    for (int i = depth - 1; i >= 0; i--) {
        hid_t c = H5Tcreate(H5T_COMPOUND, H5Tget_size(t));
        H5Tinsert(c, names[i], 0, t);
        H5Tclose(t);
        t = c;
    }
    return t;
}

typedef struct c_walk {
    child_t *c;
    c_ds_t *d;
    char *names[16];
    int depth;
} c_walk_t;

static void emit_leaf(c_walk_t *w, const char *name, c_type_t *ty, na_dtype_t stored)
{
    c_out_t o;
    memset(&o, 0, sizeof o);
    c_ds_t *d = w->d;
    o.e.kind = (uint32_t)ty->kind;
    o.e.dtype = ty->dtype;
    if (w->depth == 0 && d->uns && d->attr == NULL)
        o.e.dtype = (int32_t)(ty->dtype == NA_DT_I8    ? NA_DT_U8
                               : ty->dtype == NA_DT_I16 ? NA_DT_U16
                               : ty->dtype == NA_DT_I32 ? NA_DT_U32
                               : ty->dtype == NA_DT_I64 ? NA_DT_U64
                                                        : ty->dtype);
    o.e.stored = stored != NA_DT_INVALID ? (int32_t)stored : o.e.dtype;
    o.e.byte_order = ty->order;
    o.e.ndim = d->ndim;
    o.e.elements = d->elements;
    memcpy(o.e.shape, d->shape, sizeof o.e.shape);
    int too_deep = d->ndim + ty->adims > NA_MAX_NDIM;
    int too_many = ty->per > 1 && d->elements > UINT64_MAX / ty->per;
    if (ty->kind == H5P_K_TENSOR && !too_deep && !too_many && ty->adims > 0) {
        for (int i = 0; i < ty->adims; i++)
            o.e.shape[d->ndim + i] = ty->adim[i];
        o.e.ndim = d->ndim + ty->adims;
        o.e.elements = d->elements * ty->per;
    }
    o.e.storage_bytes = d->storage;
    o.e.unallocated_chunks = d->unalloc;
    o.e.elem_size = ty->esize;
    o.e.n_missing = d->n_missing;
    /* exact only for the dataset's own 64-bit integers, not its members */
    o.e.missing_exact = w->depth == 0 && (o.e.dtype == NA_DT_I64 || o.e.dtype == NA_DT_U64)
                            ? d->missing_exact : 0;
    memcpy(o.e.missing_int, d->missing_int, sizeof o.e.missing_int);
    o.e.packed = d->packed;
    o.e.dim_scale = d->dim_scale;
    /* a compound's fields share its axis 0 (round 39a) */
    if (d->attr == NULL) {
        memcpy(o.e.scale0, d->scale0, sizeof o.e.scale0);
        o.e.scale_other_axis = (uint32_t)d->scale_other_axis;
    }
    memcpy(o.e.missing, d->missing, sizeof o.e.missing);
    snprintf(o.detail, sizeof o.detail, "%s", d->detail);
    snprintf(o.reason, sizeof o.reason, "%s", ty->reason);
    if (ty->kind == H5P_K_TENSOR && d->filter_missing) {
        o.e.kind = H5P_K_ERROR;
        o.e.status = NA_E_UNSUPPORTED;
        snprintf(o.reason, sizeof o.reason, "%s", d->filter_msg);
    } else if (ty->kind == H5P_K_TENSOR && (d->shape_err || too_deep || too_many)) {
        o.e.kind = H5P_K_ERROR;
        o.e.status = NA_E_FORMAT;
        snprintf(o.reason, sizeof o.reason, "%s",
                 too_deep ? "more than 64 dimensions with the array type's"
                          : "element count overflows 64 bits");
    } else if (ty->kind == H5P_K_TENSOR && ty->vlen && (w->depth > 0 || d->attr != NULL)) {
        o.e.kind = H5P_K_ERROR;
        o.e.status = NA_E_UNSUPPORTED;
        snprintf(o.reason, sizeof o.reason, "variable-length numeric data %s is not supported",
                 d->attr != NULL ? "in an attribute" : "in a compound member");
    } else if (ty->kind == H5P_K_TENSOR && ty->vlen && o.e.elements > NA_H5_VLEN_MAX_SEQS) {
        /* 8 bytes per VL_CK of them (vl_measure) */
        o.e.kind = H5P_K_ERROR;
        o.e.status = NA_E_UNSUPPORTED;
        snprintf(o.reason, sizeof o.reason,
                 "%llu variable-length sequences: more than the %llu whose lengths the reader "
                 "keeps", (unsigned long long)o.e.elements,
                 (unsigned long long)NA_H5_VLEN_MAX_SEQS);
    } else if (ty->kind == H5P_K_TENSOR && o.e.elements > NA_H5_MAX_READ_ELEMS &&
               !(d->storage == 0 && d->nostorage_ok)) {
        /* Reading that many fill values would take days. Unallocated
         * chunks are not read (c_fill), but still cost one merge per block
         * of 16 Ki elements (lib/scan_fill.c): 2^26 of them at this limit. */
        o.e.kind = H5P_K_ERROR;
        o.e.status = NA_E_UNSUPPORTED;
        snprintf(o.reason, sizeof o.reason,
                 "declared %llu elements (%llu bytes allocated in the file): too large to "
                 "audit by reading (limit %llu elements)",
                 (unsigned long long)o.e.elements, (unsigned long long)d->storage,
                 (unsigned long long)NA_H5_MAX_READ_ELEMS);
    } else if (ty->kind == H5P_K_TENSOR && w->depth == 0 && d->attr == NULL &&
               (d->nc_dim || d->mat_skip)) {
        /* no variable for netCDF readers, no numbers for MATLAB: listed
         * as skipped, copied by clean (its rows follow a --together that
         * names it) */
        o.e.kind = H5P_K_SKIP;
        snprintf(o.reason, sizeof o.reason, "%s", d->nc_dim ? NA_HDF5_REASON_NC_DIM : d->mat_skip);
    } else if (ty->kind == H5P_K_ERROR) {
        o.e.status = NA_E_UNSUPPORTED;
    }
    c_ent_t serve;
    memset(&serve, 0, sizeof serve);
    int ok = o.e.kind == H5P_K_TENSOR;
    o.e.vlen = ok && ty->vlen;
    /* Nothing allocated: every element reads as the fill value, so the
     * engine reads one (lib/scan_const.c) whatever the declared size. */
    o.e.constant = ok && !o.e.vlen && d->storage == 0 && d->nostorage_ok && d->elements > 0;
    /* Stored exactly as the stream wants it (same type, contiguous, in
     * this file): the parent maps the bytes itself, no copy through here.
     * Plain reads of a range it checks against the file size: safe. */
    o.e.direct_offset = UINT64_MAX;
    if (ok && !o.e.vlen && d->contiguous && w->depth == 0 && ty->per == 1 && d->ftype >= 0 &&
        H5Tequal(ty->memtype, d->ftype) > 0 && d->storage == d->elements * ty->esize)
        o.e.direct_offset = d->offset;
    /* Raw chunks the parent inflates on all threads: deflate (after
     * shuffle), no conversion, chunk dims known. Chunks of whole rows
     * (every dim but the first at full size) make a window a run of
     * chunks; any other chunk shape (h5py's (15625, 1) column chunks of a
     * tall table, 2-D tiles, edge chunks cut by the extent) is scattered
     * into the window's rows by the parent (hdf5_inflate.c), from the
     * G chunks of each chunk row the window meets (c_raw). G is at most
     * the element count, which fits in 64 bits (sp_shape). */
    int grid = d->chunked && d->ndim > 0;
    uint64_t ce = 1, g = 1;
    for (int i = 0; grid && i < d->ndim; i++) {
        grid = d->chunk[i] > 0 && d->shape[i] > 0 && ce <= UINT64_MAX / d->chunk[i];
        ce = grid ? ce * d->chunk[i] : 0;
        if (grid && i > 0)
            g *= (d->shape[i] + d->chunk[i] - 1) / d->chunk[i];
    }
    /* Chunks of at least 4 KiB: a 64 MiB window then lists at most 16 Ki
     * of them (smaller ones gain nothing from threads anyway); at most
     * 4096 chunks per chunk row, so that a window's list stays short. */
    if (ok && !o.e.vlen && grid && ce > 0 && ce <= (64u << 20) / ty->esize &&
        ce * ty->esize >= 4096 &&
        g <= 4096 && d->par_mode != 0 &&
        w->depth == 0 && ty->per == 1 && ty->esize <= 8 && d->ftype >= 0 &&
        H5Tequal(ty->memtype, d->ftype) > 0) {
        o.e.par_mode = d->par_mode;
        o.e.chunk_elems = ce;
        o.e.chunk0 = d->chunk[0];
        for (int i = 0; i < d->ndim; i++)
            o.e.chunk[i] = d->chunk[i];
    }
    H5Eclear2(H5E_DEFAULT);
    if (ok) {
        serve.dset = strdup(d->path);
        serve.attr = d->attr != NULL ? strdup(d->attr) : NULL;
        if (d->attr != NULL && serve.attr == NULL)
            c_die(w->c);
        serve.memtype = nest_memtype(w->names, w->depth, ty->memtype);
        ty->memtype = -1;
        serve.esize = ty->esize;
        serve.per = ty->per;
        serve.ndim = d->ndim;
        memcpy(serve.shape, d->shape, sizeof serve.shape);
        serve.chunked = d->chunked;
        memcpy(serve.chunk, d->chunk, sizeof serve.chunk);
        serve.unalloc = d->unalloc;
        serve.nostorage = d->storage == 0 && d->elements > 0 && d->nostorage_ok;
        serve.full = d->full;
        serve.chunk_elems = o.e.par_mode ? o.e.chunk_elems : 0;
        serve.vlen = o.e.vlen;
        serve.rows = d->elements;
        if (o.e.vlen && d->ftype >= 0) {
            hid_t sup = H5Tget_super(d->ftype);
            serve.fbase = sup >= 0 ? (uint32_t)H5Tget_size(sup) : 1;
            if (sup >= 0)
                H5Tclose(sup);
        }
        if (serve.dset == NULL)
            c_die(w->c);
    }
    c_send_entry(w->c, name, &o, ok ? &serve : NULL);
    if (ty->memtype >= 0)
        H5Tclose(ty->memtype);
}

/* Two members of one float type named r/i or real/imag: complex. */
static int is_complex(hid_t ct)
{
    if (H5Tget_nmembers(ct) != 2)
        return 0;
    char *a = H5Tget_member_name(ct, 0), *b = H5Tget_member_name(ct, 1);
    int names = a && b && ((!strcmp(a, "r") && !strcmp(b, "i")) ||
                           (!strcmp(a, "real") && !strcmp(b, "imag")));
    H5free_memory(a);
    H5free_memory(b);
    if (!names)
        return 0;
    hid_t ta = H5Tget_member_type(ct, 0), tb = H5Tget_member_type(ct, 1);
    int same = ta >= 0 && tb >= 0 && H5Tget_class(ta) == H5T_FLOAT && H5Tequal(ta, tb) > 0;
    H5Tclose(ta);
    H5Tclose(tb);
    return same;
}

static void emit_type(c_walk_t *w, const char *name, hid_t ft);

static void emit_compound(c_walk_t *w, const char *name, hid_t ft)
{
    int nm = H5Tget_nmembers(ft);
    int cplx = is_complex(ft);
    if (nm <= 0) {
        c_type_t ty;
        memset(&ty, 0, sizeof ty);
        ty.memtype = -1;
        ty.kind = H5P_K_ERROR;
        snprintf(ty.reason, sizeof ty.reason, "compound type without members");
        emit_leaf(w, name, &ty, NA_DT_INVALID);
        return;
    }
    for (int i = 0; i < nm; i++) {
        char *mn = H5Tget_member_name(ft, (unsigned)i);
        hid_t mt = H5Tget_member_type(ft, (unsigned)i);
        if (mn == NULL || mt < 0 || w->depth >= 16) {
            H5free_memory(mn);
            if (mt >= 0)
                H5Tclose(mt);
            continue;
        }
        size_t len = strlen(name) + strlen(mn) + 8;
        char *full = malloc(len);
        if (full == NULL)
            c_die(w->c);
        snprintf(full, len, "%s.%s", name, cplx ? (i ? "imag" : "real") : mn);
        w->names[w->depth++] = mn;
        if (cplx) {
            c_type_t ty;
            na_h5t_classify(mt, &ty);
            emit_leaf(w, full, &ty, ty.dtype == NA_DT_F32 ? NA_DT_C64 : NA_DT_INVALID);
        } else {
            emit_type(w, full, mt);
        }
        w->depth--;
        H5free_memory(mn);
        H5Tclose(mt);
        free(full);
    }
}

static void emit_type(c_walk_t *w, const char *name, hid_t ft)
{
    if (H5Tget_class(ft) == H5T_COMPOUND) {
        emit_compound(w, name, ft);
        return;
    }
    c_type_t ty;
    na_h5t_classify(ft, &ty);
    emit_leaf(w, name, &ty, NA_DT_INVALID);
}

static void c_error_entry(child_t *c, const char *path, uint32_t st, const char *why)
{
    c_out_t o;
    memset(&o, 0, sizeof o);
    o.e.kind = H5P_K_ERROR;
    o.e.status = st;
    o.e.unallocated_chunks = -1;
    snprintf(o.reason, sizeof o.reason, "%s", why);
    c_send_entry(c, path, &o, NULL);
}

/* ---- attributes (--attributes) ------------------------------------------ */

/* A growing list of names (links of a group, attributes of an object),
 * collected first and visited after, in the order libhdf5 gave them. */
typedef struct c_names {
    size_t n, cap;
    char **v;
} c_names_t;

/* Append a copy of name; -1 (stop the libhdf5 iteration) when out of memory. */
static herr_t names_push(c_names_t *nm, const char *name)
{
    if (nm->n == nm->cap) {
        size_t nc = nm->cap ? nm->cap * 2 : 16;
        char **nv = realloc(nm->v, nc * sizeof *nv);
        if (nv == NULL)
            return -1;
        nm->v = nv;
        nm->cap = nc;
    }
    if ((nm->v[nm->n] = strdup(name)) == NULL)
        return -1;
    nm->n++;
    return 0;
}

static herr_t collect_attr(hid_t loc, const char *name, const H5A_info_t *ai, void *ud);

/* The attributes of object obj (path opath), in name order (the order
 * h5py's .attrs and h5dump show), each as an entry OPATH@NAME: "@" cannot
 * clash with a dataset path, whose components HDF5 separates by "/", and
 * the root group's are "/@NAME". Same type rules as datasets: numeric
 * ones are audited, compound ones per field, strings are skipped. */
static void visit_attrs(child_t *c, hid_t obj, const char *opath)
{
    if (!c->attributes)
        return;
    c_names_t nm = {0, 0, NULL};
    hsize_t idx = 0;
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &nm) < 0) {
        H5Eclear2(H5E_DEFAULT);
        c_note(c, "%s: attributes cannot be listed", opath);
    }
    for (size_t i = 0; i < nm.n; i++) {
        size_t len = strlen(opath) + strlen(nm.v[i]) + 2;
        char *full = malloc(len);
        if (full == NULL)
            c_die(c);
        snprintf(full, len, "%s@%s", opath, nm.v[i]);
        hid_t a = H5Aopen(obj, nm.v[i], H5P_DEFAULT);
        hid_t at = a >= 0 ? H5Aget_type(a) : -1;
        c_ds_t d;
        memset(&d, 0, sizeof d);
        d.path = opath;
        d.attr = nm.v[i];
        d.unalloc = -1;
        d.full = 1; /* H5Aread writes every element */
        d.ftype = at;
        char why[300];
        if (at < 0 || sp_shape(H5Aget_space(a), &d, why, sizeof why) < 0) {
            char cause[200];
            h5_cause(cause, sizeof cause);
            snprintf(why, sizeof why, "cannot read the attribute: %s", cause);
            c_error_entry(c, full, NA_E_FORMAT, why);
        } else if (too_wide(at, why, sizeof why)) {
            c_error_entry(c, full, NA_E_FORMAT, why);
        } else {
            d.storage = H5Aget_storage_size(a);
            c_walk_t w;
            memset(&w, 0, sizeof w);
            w.c = c;
            w.d = &d;
            emit_type(&w, full, at);
        }
        if (at >= 0)
            H5Tclose(at);
        if (a >= 0)
            H5Aclose(a);
        H5Eclear2(H5E_DEFAULT);
        free(full);
        free(nm.v[i]);
    }
    free(nm.v);
}

static herr_t collect_attr(hid_t loc, const char *name, const H5A_info_t *ai, void *ud)
{
    (void)loc;
    (void)ai;
    return names_push(ud, name);
}

static hid_t vds_try(char *got, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* H5Fopen of the path fmt makes, kept in got[cap]: the file or -1. */
static hid_t vds_try(char *got, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(got, cap, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= cap ? -1 : H5Fopen(got, H5F_ACC_RDONLY, H5P_DEFAULT);
}

/* Open source file `name` of a virtual dataset in the input file `vds`
 * where libhdf5 1.10 looks for it (H5F_prefix_open_file in H5Fint.c; the
 * H5Pset_virtual_prefix reference): an absolute name as given; then its
 * last component in each directory of HDF5_VDS_PREFIX (split at ':',
 * taken literally); in HDF5_VDS_PREFIX whole, as the access property's
 * default prefix, where a leading "${ORIGIN}" is the input's directory;
 * in the input's directory; relative to the working directory; in the
 * directory of the input's resolved name (a symbolic link's target).
 * Measured with 1.10.8: "${ORIGIN}/d" finds d/, "/x:${ORIGIN}/d" does not.
 * Looking in fewer places than libhdf5 would only call a source missing
 * that it reads (an error, never a silent fill). The file, its path in
 * got[cap], or -1. */
static hid_t vds_open_source(const char *vds, const char *name, char *got, size_t cap)
{
    const char *base = name;
    hid_t f = -1;
    if (name[0] == '/') {
        if ((f = vds_try(got, cap, "%s", name)) >= 0)
            return f;
        base = strrchr(name, '/') + 1;
    }
    const char *slash = strrchr(vds, '/');
    int dl = slash == NULL ? 1 : slash == vds ? 1 : (int)(slash - vds);
    const char *dir = slash == NULL ? "." : vds;
    const char *env = getenv("HDF5_VDS_PREFIX");
    for (const char *p = env; p != NULL && *p != '\0' && f < 0;) {
        size_t len = strcspn(p, ":");
        if (len > 0)
            f = vds_try(got, cap, "%.*s/%s", (int)len, p, base);
        p += len + (p[len] == ':');
    }
    if (f < 0 && env != NULL && *env != '\0')
        f = strncmp(env, "${ORIGIN}", 9) == 0
                ? vds_try(got, cap, "%.*s%s/%s", dl, dir, env + 9, base)
                : vds_try(got, cap, "%s/%s", env, base);
    if (f < 0)
        f = vds_try(got, cap, "%.*s/%s", dl, dir, base);
    if (f < 0)
        f = vds_try(got, cap, "%s", base);
    /* the file's resolved name: a symbolic link's target's directory */
    char real[PATH_MAX];
    const char *rs = f < 0 && realpath(vds, real) != NULL ? strrchr(real, '/') : NULL;
    if (rs != NULL)
        f = vds_try(got, cap, "%.*s/%s", rs == real ? 1 : (int)(rs - real), real, base);
    H5Eclear2(H5E_DEFAULT);
    return f;
}

/* A mapping's file or dataset name (H5Pset_virtual: "%b" stands for a
 * block number in a printf-style mapping of an unlimited extent, "%%" for
 * a '%'): 1 with the name unescaped in out[cap], 0 for a printf-style
 * name, whose sources are found by counting (not checked). */
static int vds_name(const char *in, char *out, size_t cap)
{
    size_t k = 0;
    for (const char *p = in; *p != '\0' && k + 1 < cap; p++) {
        if (p[0] == '%' && p[1] == '%')
            p++;
        else if (p[0] == '%')
            return 0;
        out[k++] = *p;
    }
    out[k] = '\0';
    return 1;
}

/* Virtual datasets whose sources are virtual: at most this deep. */
#define VDS_MAX_DEPTH 8

/* vds_missing's walk of the mappings of dcpl, a virtual dataset of file
 * `file` (named `path`, for relative source names), depth levels down:
 * 1 with why set (the problem, without "virtual dataset: ") when a source
 * cannot be opened, recursively through sources that are virtual too. */
static int vds_check(const char *path, hid_t file, hid_t dcpl, int depth, char *why, size_t cap)
{
    size_t n = 0;
    if (H5Pget_layout(dcpl) != H5D_VIRTUAL || H5Pget_virtual_count(dcpl, &n) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    if (depth >= VDS_MAX_DEPTH) {
        snprintf(why, cap, "its sources are virtual datasets nested more than %d deep (a "
                 "cycle?)", VDS_MAX_DEPTH);
        return 1;
    }
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        char fr[4096], dr[4096], fn[4096], dn[4096], got[4096];
        ssize_t fl = H5Pget_virtual_filename(dcpl, i, fr, sizeof fr);
        ssize_t nl = H5Pget_virtual_dsetname(dcpl, i, dr, sizeof dr);
        if (fl <= 0 || nl <= 0 || (size_t)fl >= sizeof fr || (size_t)nl >= sizeof dr) {
            snprintf(why, cap, "the source of mapping %zu cannot be read", i);
            bad = 1;
            break;
        }
        if (!vds_name(fr, fn, sizeof fn) || !vds_name(dr, dn, sizeof dn))
            continue;
        int same = strcmp(fn, ".") == 0;
        hid_t f = same ? file : vds_open_source(path, fn, got, sizeof got);
        hid_t d = f >= 0 ? H5Dopen2(f, dn, H5P_DEFAULT) : -1;
        hid_t sp = d >= 0 ? H5Dget_create_plist(d) : -1;
        H5Eclear2(H5E_DEFAULT);
        char sub[200];
        if (f < 0) {
            snprintf(why, cap, "its source file %.100s cannot be opened", fn);
            bad = 1;
        } else if (d < 0 || H5Iget_type(d) != H5I_DATASET) {
            snprintf(why, cap, "its source dataset %.80s is not in %.80s", dn,
                     same ? "this file" : fn);
            bad = 1;
        } else if (sp >= 0 && vds_check(same ? path : got, f, sp, depth + 1, sub, sizeof sub)) {
            if (strncmp(sub, "its sources are", 15) == 0) /* too deep: said once */
                snprintf(why, cap, "%.150s", sub);
            else
                snprintf(why, cap, "its source dataset %.40s in %.40s is virtual too, and %.100s",
                         dn, same ? "this file" : fn, sub);
            bad = 1;
        }
        if (sp >= 0)
            H5Pclose(sp);
        if (d >= 0)
            H5Dclose(d);
        if (!same && f >= 0)
            H5Fclose(f);
    }
    H5Eclear2(H5E_DEFAULT);
    return bad;
}

/* A virtual dataset reads the fill value wherever a source file or
 * dataset cannot be opened, without an error (H5Pset_virtual reference:
 * "the fill value is returned for the unmapped or missing data"): the
 * audit would report data it never saw. 1 with why set when a mapping's
 * source is missing, also one level or more down (a source that is a
 * virtual dataset itself: tester round 22a). */
static int vds_missing(const child_t *c, hid_t dcpl, char *why, size_t cap)
{
    char sub[240];
    if (!vds_check(c->path, c->file, dcpl, 0, sub, sizeof sub))
        return 0;
    snprintf(why, cap, "virtual dataset: %.200s%s", sub,
             strncmp(sub, "its sources are", 15) == 0
                 ? ""
                 : " (libhdf5 would read the fill value in its place)");
    return 1;
}

/* External storage (H5Pset_external): each raw file must hold the bytes
 * its segment gives the dataset, since libhdf5 reads a short or missing
 * one as zeros or fails without naming it (round 41a: 74 of 99 values of
 * a truncated file audited as zeros, status ok). Paths as libhdf5 1.10
 * resolves them (H5Defl.c, H5D__build_file_prefix): HDF5_EXTFILE_PREFIX
 * or the access list's prefix, "${ORIGIN}" the HDF5 file's folder, else
 * the name as stored. 0, or 1 with why (*st: NA_E_NOTFOUND for a missing
 * file, NA_E_FORMAT for a short one). */
static int efl_short(const child_t *c, hid_t dset, hid_t dcpl, hid_t ft, const c_ds_t *d,
                     na_status_t *st, char *why, size_t cap)
{
    int n = H5Pget_external_count(dcpl);
    size_t esize = H5Tget_size(ft);
    if (n <= 0 || esize == 0 || d->elements > UINT64_MAX / esize)
        return 0;
    uint64_t left = d->elements * esize; /* bytes still to place in segments */
    char prefix[1024] = "";
    const char *env = getenv("HDF5_EXTFILE_PREFIX");
    hid_t dapl = H5Dget_access_plist(dset);
    if (env)
        snprintf(prefix, sizeof prefix, "%s", env);
    else if (dapl >= 0 && H5Pget_efile_prefix(dapl, prefix, sizeof prefix) < 0)
        prefix[0] = '\0';
    if (dapl >= 0)
        H5Pclose(dapl);
    H5Eclear2(H5E_DEFAULT);
    char dir[1024] = ".";
    const char *sl = strrchr(c->path, '/');
    if (sl)
        snprintf(dir, sizeof dir, "%.*s", sl == c->path ? 1 : (int)(sl - c->path), c->path);
    for (int i = 0; i < n && left > 0; i++) {
        char name[512] = "", full[2048];
        off_t off = 0;
        hsize_t size = 0;
        if (H5Pget_external(dcpl, (unsigned)i, sizeof name, name, &off, &size) < 0) {
            H5Eclear2(H5E_DEFAULT);
            return 0;
        }
        uint64_t need = size == H5F_UNLIMITED || size > left ? left : size;
        left -= need;
        const char *org = strstr(prefix, "${ORIGIN}");
        if (name[0] == '/' || !prefix[0])
            snprintf(full, sizeof full, "%s", name);
        else if (org)
            snprintf(full, sizeof full, "%.*s%s%s/%s", (int)(org - prefix), prefix, dir,
                     org + 9, name);
        else
            snprintf(full, sizeof full, "%s/%s", prefix, name);
        struct stat sb;
        if (stat(full, &sb) != 0) {
            *st = NA_E_NOTFOUND;
            snprintf(why, cap, "external raw data file '%.160s' (segment %d): %.80s", full, i,
                     strerror(errno));
            return 1;
        }
        if ((uint64_t)sb.st_size < (uint64_t)off + need) {
            *st = NA_E_FORMAT;
            snprintf(why, cap, "external raw data file '%.80s' (segment %d): %llu bytes, the "
                     "data needs %llu from byte %llu (truncated? libhdf5 reads zeros)", full, i,
                     (unsigned long long)sb.st_size, (unsigned long long)need,
                     (unsigned long long)off);
            return 1;
        }
    }
    return 0;
}

static void visit_dataset(child_t *c, hid_t loc, const char *name, const char *path)
{
    char why[300];
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    if (dset < 0) {
        char cause[200];
        h5_cause(cause, sizeof cause);
        snprintf(why, sizeof why, "cannot open the dataset: %s", cause);
        c_error_entry(c, path, NA_E_FORMAT, why);
        return;
    }
    c_ds_t d;
    memset(&d, 0, sizeof d);
    d.path = path;
    d.unalloc = -1;
    na_status_t est = NA_OK;
    hid_t ft = H5Dget_type(dset);
    hid_t dcpl = H5Dget_create_plist(dset);
    if (ft < 0 || dcpl < 0 || ds_space(dset, &d, why, sizeof why) < 0) {
        char cause[200];
        h5_cause(cause, sizeof cause);
        snprintf(why, sizeof why, "cannot read the dataset's header: %s", cause);
        c_error_entry(c, path, NA_E_FORMAT, why);
    } else if (too_wide(ft, why, sizeof why)) {
        c_error_entry(c, path, NA_E_FORMAT, why);
    } else if (vds_missing(c, dcpl, why, sizeof why)) {
        c_error_entry(c, path, NA_E_NOTFOUND, why);
    } else if (efl_short(c, dset, dcpl, ft, &d, &est, why, sizeof why)) {
        c_error_entry(c, path, est, why);
    } else {
        d.storage = H5Dget_storage_size(dset);
        haddr_t off = H5Dget_offset(dset); /* HADDR_UNDEF unless contiguous, allocated */
        H5Eclear2(H5E_DEFAULT);
        ds_layout(dset, dcpl, &d);
        d.offset = off;
        if (off == HADDR_UNDEF)
            d.contiguous = 0;
        ds_tags(dset, &d);
        ds_missing(c, dset, ft, &d);
        c_walk_t w;
        memset(&w, 0, sizeof w);
        w.c = c;
        w.d = &d;
        d.ftype = ft;
        emit_type(&w, path, ft);
        visit_attrs(c, dset, path);
    }
    if (ft >= 0)
        H5Tclose(ft);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    H5Dclose(dset);
    H5Eclear2(H5E_DEFAULT);
}


static herr_t collect(hid_t g, const char *name, const H5L_info_t *li, void *ud)
{
    (void)g;
    (void)li;
    return names_push(ud, name);
}

static char *join(const char *g, const char *name)
{
    size_t len = strlen(g) + strlen(name) + 2;
    char *p = malloc(len);
    if (p != NULL)
        snprintf(p, len, "%s/%s", strcmp(g, "/") ? g : "", name);
    return p;
}

static void visit_group(child_t *c, hid_t g, const char *gpath, int depth);
static void visit_link(child_t *c, hid_t g, const char *name, const char *path, int depth);
static void visit_object(child_t *c, hid_t g, const char *name, const char *path, int depth,
                         H5O_type_t type);

/* Remember soft link NAME of group g for the second pass: an object that a
 * soft link reaches must be named by its hard link (the path that clean's
 * --include/--exclude and h5py's .name use), wherever that link sits in
 * name order. Stored as "GROUP\0NAME", GROUP the group's own path. */
static void soft_defer(child_t *c, hid_t g, const char *name)
{
    char gp[4096];
    ssize_t gl = H5Iget_name(g, gp, sizeof gp);
    if (gl <= 0 || (size_t)gl >= sizeof gp) {
        H5Eclear2(H5E_DEFAULT);
        c_note(c, "%s: soft link in a group whose path cannot be read, not followed", name);
        return;
    }
    size_t nl = strlen(name);
    if (c->n_soft == c->cap_soft) {
        size_t nc = c->cap_soft ? c->cap_soft * 2 : 16;
        char **nv = realloc(c->soft, nc * sizeof *nv);
        if (nv == NULL)
            c_die(c);
        c->soft = nv;
        c->cap_soft = nc;
    }
    char *e = malloc((size_t)gl + nl + 2);
    if (e == NULL)
        c_die(c);
    memcpy(e, gp, (size_t)gl + 1);
    memcpy(e + gl + 1, name, nl + 1);
    c->soft[c->n_soft++] = e;
}

/* Second pass: follow the deferred soft links, in the order they were met.
 * Objects a hard link reached are seen already and skipped; soft links met
 * inside a group reached this way are followed at once. */
static void soft_follow(child_t *c)
{
    c->follow_soft = 1;
    for (size_t i = 0; i < c->n_soft; i++) {
        const char *gpath = c->soft[i], *name = gpath + strlen(gpath) + 1;
        hid_t g = H5Gopen2(c->file, gpath, H5P_DEFAULT);
        char *path = join(gpath, name);
        if (path == NULL)
            c_die(c);
        if (g < 0) {
            H5Eclear2(H5E_DEFAULT);
            c_note(c, "%s: soft link cannot be followed", path);
        } else {
            int depth = 0; /* the group's nesting, for the 64-level bound */
            for (const char *q = gpath; *q; q++)
                depth += *q == '/' && q[1] != '\0';
            visit_link(c, g, name, path, depth);
            H5Gclose(g);
        }
        free(path);
        free(c->soft[i]);
    }
    free(c->soft);
    c->soft = NULL;
    c->n_soft = c->cap_soft = 0;
}

static void visit_link(child_t *c, hid_t g, const char *name, const char *path, int depth)
{
    H5L_info_t li;
    if (H5Lget_info(g, name, &li, H5P_DEFAULT) < 0) {
        /* listed by its group but not found by its name: a damaged local
         * heap or symbol table, not a dangling soft link (which is found);
         * whatever lies behind it is not audited, so an error */
        char cause[200], why[300];
        h5_cause(cause, sizeof cause);
        snprintf(why, sizeof why, "the link cannot be read: %s", cause);
        c_error_entry(c, path, NA_E_FORMAT, why);
        return;
    }
    if (li.type == H5L_TYPE_EXTERNAL || li.type >= H5L_TYPE_UD_MIN) {
        char val[512] = "";
        const char *file = NULL, *obj = NULL;
        unsigned fl;
        if (li.type == H5L_TYPE_EXTERNAL && li.u.val_size <= sizeof val &&
            H5Lget_val(g, name, val, sizeof val, H5P_DEFAULT) >= 0 &&
            H5Lunpack_elink_val(val, li.u.val_size, &fl, &file, &obj) >= 0) {
            /* A target file that libhdf5 would open (as named, from the
             * working directory, or beside this file: the H5Lcreate_external
             * search) is data h5py reads through the link, which nanaudit
             * does not follow: an error, not a note, so that a NaN there
             * cannot pass the gate (round 31a). A dangling one is a note. */
            char beside[4096];
            const char *sl = strrchr(c->path, '/');
            struct stat sb;
            int there = stat(file, &sb) == 0 ||
                        (file[0] != '/' && sl &&
                         snprintf(beside, sizeof beside, "%.*s/%s", (int)(sl - c->path), c->path,
                                  file) < (int)sizeof beside &&
                         stat(beside, &sb) == 0);
            if (there) {
                char why[400];
                snprintf(why, sizeof why, "external link to %.90s:%.90s, which nanaudit does "
                         "not follow (h5py reads through it): audit %.90s itself", file, obj,
                         file);
                c_error_entry(c, path, NA_E_UNSUPPORTED, why);
            } else {
                c_note(c, "%s: external link to %s:%s, not followed", path, file, obj);
            }
        } else
            c_note(c, "%s: %s link, not followed", path,
                   li.type == H5L_TYPE_EXTERNAL ? "external" : "user-defined");
        H5Eclear2(H5E_DEFAULT);
        return;
    }
    H5O_info_t oi;
    if (H5Oget_info_by_name2(g, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        char cause[200];
        h5_cause(cause, sizeof cause); /* also clears the stack */
        if (li.type == H5L_TYPE_SOFT) {
            char val[512] = "";
            if (li.u.val_size > sizeof val ||
                H5Lget_val(g, name, val, sizeof val, H5P_DEFAULT) < 0)
                snprintf(val, sizeof val, "?");
            val[sizeof val - 1] = '\0';
            H5Eclear2(H5E_DEFAULT);
            /* libhdf5 stops a chain of soft links after 16 hops (H5L_NUM_LINKS):
             * a cycle, not a missing target (seventeenth fresh-user round) */
            c_note(c, "%s: %s soft link to %s", path,
                   strstr(cause, "too many links") ? "cyclic (or more than 16 deep)" : "dangling",
                   val);
        } else {
            char why[300];
            snprintf(why, sizeof why, "object header cannot be read: %s", cause);
            c_error_entry(c, path, NA_E_FORMAT, why);
        }
        return;
    }
    if (li.type == H5L_TYPE_SOFT && !c->follow_soft) {
        soft_defer(c, g, name);
        return;
    }
    size_t ix;
    if (seen_before(c, oi.addr, &ix)) {
        /* audited once; another hard link is another name of it, which
         * clean's patterns match (soft links are not: h5py's .name and
         * h5dump name objects by hard links) */
        if (li.type == H5L_TYPE_HARD)
            obj_alias(c, ix, path);
        return;
    }
    c->objs[ix].plen = strlen(path);
    visit_object(c, g, name, path, depth, oi.type);
    c->objs[ix].hi = c->n; /* objs may have moved: by index */
}

static void visit_object(child_t *c, hid_t g, const char *name, const char *path, int depth,
                         H5O_type_t type)
{
    if (type == H5O_TYPE_GROUP) {
        if (depth >= 64) { /* an error: its datasets are not audited (it was a
                            * note, and a NaN below passed; seventeenth
                            * fresh-user round) */
            c_error_entry(c, path, NA_E_FORMAT, "groups nested more than 64 deep: not walked");
            return;
        }
        hid_t sub = H5Gopen2(g, name, H5P_DEFAULT);
        if (sub < 0) {
            char cause[200], why[300];
            h5_cause(cause, sizeof cause);
            snprintf(why, sizeof why, "cannot open the group: %s", cause);
            c_error_entry(c, path, NA_E_FORMAT, why);
            return;
        }
        visit_group(c, sub, path, depth + 1);
        H5Gclose(sub);
    } else if (type == H5O_TYPE_DATASET) {
        visit_dataset(c, g, name, path);
    }
}

static void visit_group(child_t *c, hid_t g, const char *gpath, int depth)
{
    c_names_t nm = {0, 0, NULL};
    hsize_t idx = 0;
    visit_attrs(c, g, gpath); /* a group's attributes before its members */
    /* Name order: the order h5py and h5dump show; creation order is not
     * tracked in most files. */
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, collect, &nm) < 0) {
        char cause[200], why[300];
        h5_cause(cause, sizeof cause);
        snprintf(why, sizeof why, "cannot list the group: %s", cause);
        c_error_entry(c, gpath, NA_E_FORMAT, why);
    }
    for (size_t i = 0; i < nm.n; i++) {
        char *path = join(gpath, nm.v[i]);
        if (path == NULL)
            c_die(c);
        visit_link(c, g, nm.v[i], path, depth);
        free(path);
        free(nm.v[i]);
    }
    free(nm.v);
}

/* ---- reads ------------------------------------------------------------- */

/* Select flat row-major elements [a, a+n) of shape in fs: at most 2*ndim
 * blocks, each the largest aligned block that starts at a. HDF5 visits a
 * hyperslab selection in row-major order whatever the order of the OR
 * calls, so memory element k is flat element a + k. */
static int select_range(hid_t fs, int ndim, const uint64_t *shape, uint64_t a, uint64_t n)
{
    uint64_t stride[NA_MAX_NDIM];
    uint64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        stride[d] = s;
        s *= shape[d];
    }
    H5S_seloper_t op = H5S_SELECT_SET;
    while (n > 0) {
        hsize_t start[NA_MAX_NDIM], count[NA_MAX_NDIM];
        int j = ndim - 1;
        for (int k = 0; k < ndim; k++)
            if (a % stride[k] == 0 && n >= stride[k]) {
                j = k;
                break;
            }
        uint64_t rem = a;
        for (int d = 0; d < ndim; d++) {
            start[d] = rem / stride[d];
            rem %= stride[d];
            count[d] = d < j ? 1 : shape[d];
        }
        for (int d = j + 1; d < ndim; d++)
            start[d] = 0;
        uint64_t room = shape[j] - start[j], want = n / stride[j];
        count[j] = room < want ? room : want;
        if (H5Sselect_hyperslab(fs, op, start, NULL, count, NULL) < 0)
            return -1;
        op = H5S_SELECT_OR;
        a += count[j] * stride[j];
        n -= count[j] * stride[j];
    }
    return 0;
}

/* [a, a+n) in up to three parts, part[k] = {first, count} (count 0: none):
 * the rest of the row a starts in, the whole rows after it, the start of
 * the row it ends in. Read or written at once, a range that starts or
 * ends inside a row has a 1-D memory space (range_space), and libhdf5
 * then moves it element by element: a scan of a (4e6, 12) F32 dataset
 * in h5py's automatic (15625, 1) chunks took 14 s (h5py reads it in
 * 1.8 s); in parts only the partial rows go that way. */
static void row_parts(int ndim, const uint64_t *shape, uint64_t a, uint64_t n,
                      uint64_t part[3][2])
{
    uint64_t row = 1;
    for (int d = 1; d < ndim; d++)
        row *= shape[d];
    uint64_t head = ndim >= 2 && row > 1 ? (row - a % row) % row : 0;
    head = head < n ? head : n;
    uint64_t tail = ndim >= 2 && row > 1 ? (n - head) % row : 0;
    part[0][0] = a;
    part[0][1] = head;
    part[1][0] = a + head;
    part[1][1] = n - head - tail;
    part[2][0] = a + n - tail;
    part[2][1] = tail;
}

/* The memory dataspace for elements [a, a+n) selected by select_range:
 * when they are whole rows, the selection's own shape (n / row rows by
 * the other dimensions), else n elements in one dimension. With a 1-D
 * memory space libhdf5 maps a selection of rank 2 or more to the chunks
 * element by element (H5S_select_iterate, H5VM_chunk_index_scaled: most
 * of the time of a clean of a (20e6, 4) F32 dataset in (1e5, 4) chunks,
 * perf); with the same shape it moves whole rows. */
static hid_t range_space(int ndim, const uint64_t *shape, uint64_t a, uint64_t n)
{
    hsize_t md[H5S_MAX_RANK];
    uint64_t row = 1;
    for (int d = 1; d < ndim; d++)
        row *= shape[d];
    if (ndim < 2 || ndim > H5S_MAX_RANK || row == 0 || a % row || n % row) {
        md[0] = n;
        return H5Screate_simple(1, md, NULL);
    }
    md[0] = n / row;
    for (int d = 1; d < ndim; d++)
        md[d] = shape[d];
    return H5Screate_simple(ndim, md, NULL);
}

static void c_fail(child_t *c, uint32_t st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void c_fail(child_t *c, uint32_t st, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (na_h5p_send(c->sock, H5P_FAIL, st, msg, strlen(msg), NULL, 0) != 0)
        c_die(c);
}

/* Flat index of coordinates x in shape. */
static uint64_t flat_of(int ndim, const uint64_t *shape, const uint64_t *x)
{
    uint64_t f = 0;
    for (int d = 0; d < ndim; d++)
        f = f * shape[d] + x[d];
    return f;
}

/* The open file as bytes, for the checks that read its structures
 * themselves (hdf5_gheap.c, hdf5_chunks.c): its descriptor (libhdf5's,
 * not to be closed), base address (the user block), size, sizeof_addr
 * and sizeof_length. Only the sec2 driver (what the catalog opens with)
 * has such a descriptor; -1 for another. */
typedef struct raw_file {
    int fd;
    uint64_t base, eof;
    unsigned sa, sl;
} raw_file_t;

static int raw_file(child_t *c, raw_file_t *rf)
{
    void *h = NULL;
    hid_t fapl = H5Fget_access_plist(c->file), fcpl = H5Fget_create_plist(c->file);
    size_t sa = 0, sl = 0;
    hsize_t ub = 0;
    int sec2 = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2;
    int ok = sec2 && fcpl >= 0 && H5Pget_sizes(fcpl, &sa, &sl) >= 0 &&
             H5Pget_userblock(fcpl, &ub) >= 0 && H5Fget_vfd_handle(c->file, fapl, &h) >= 0 &&
             h != NULL;
    if (fapl >= 0)
        H5Pclose(fapl);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    H5Eclear2(H5E_DEFAULT);
    struct stat sb;
    int fd = ok ? *(int *)h : -1;
    if (!ok || fstat(fd, &sb) != 0)
        return -1;
    rf->fd = fd;
    rf->base = ub;
    rf->eof = (uint64_t)sb.st_size;
    rf->sa = (unsigned)sa;
    rf->sl = (unsigned)sl;
    return 0;
}

/* Every allocated chunk of entry e (open in c->cur), nalloc of them (what
 * H5Dget_num_chunks counts): *n chunks, e->ndim element offsets each in
 * *offs (owned by c, kept until another entry's list), in index order.
 * Up to 1024 through H5Dget_chunk_info, which walks the index from its
 * start on every call in 1.10.8 (quadratic); more by walking the index
 * in the file (hdf5_chunks.c: version 1 B-trees and fixed arrays), a list kept only when
 * it holds nalloc chunks and libhdf5's own lookup finds every one inside
 * the extent, of the same stored size (H5Dget_chunk_storage_size, a
 * B-tree search; H5Dget_chunk_info_by_coord walks every chunk in 1.10.8,
 * 10 ms a call at 200,000 chunks). Chunks outside the extent or off its grid are
 * listed as the index has them (chunk_index_why names them). 0: listed;
 * -1: not, c->cl_msg saying why when libhdf5 failed to read the index or
 * the walk found it breaking the format (a node of the wrong level, past
 * the end of the file: libhdf5 1.10.8 reads what it reaches and counts
 * the rest as unwritten, without an error), "" when the list is unknown
 * (another index type, a walk that disagrees with libhdf5): the callers
 * then do what they did before. */
static int cl_make(child_t *c, c_ent_t *e, hsize_t nalloc)
{
    int nd = e->ndim;
    if (nalloc > ((uint64_t)1 << 30) / sizeof(hsize_t) / (unsigned)nd)
        return -1; /* a list over 1 GiB: not kept */
    c->cl_offs = malloc((size_t)(nalloc ? nalloc : 1) * (unsigned)nd * sizeof(hsize_t));
    if (c->cl_offs == NULL)
        return -1;
    if (nalloc <= 1024) {
        hid_t fs = H5Dget_space(c->cur);
        for (hsize_t i = 0; i < nalloc; i++) {
            hsize_t off[H5S_MAX_RANK] = {0}, size = 0;
            unsigned mask = 0;
            haddr_t addr = 0;
            if (fs < 0 || H5Dget_chunk_info(c->cur, fs, i, off, &mask, &addr, &size) < 0) {
                char cause[150];
                h5_cause(cause, sizeof cause);
                snprintf(c->cl_msg, sizeof c->cl_msg,
                         "chunk %llu of the index cannot be read: %s", (unsigned long long)i,
                         cause);
                break;
            }
            memcpy(c->cl_offs + i * (unsigned)nd, off, (unsigned)nd * sizeof *off);
        }
        if (fs >= 0)
            H5Sclose(fs);
        c->cl_n = nalloc;
        return c->cl_msg[0] ? -1 : 0;
    }
    raw_file_t rf;
    H5O_info_t oi;
    if (getenv("NANAUDIT_HDF5_NO_WALK") != NULL) /* the tests of the fallbacks */
        return -1;
    hsize_t cur[H5S_MAX_RANK], maxd[H5S_MAX_RANK];
    uint64_t mx[NA_MAX_NDIM];
    hid_t fs = H5Dget_space(c->cur);
    int got = fs >= 0 && H5Sget_simple_extent_dims(fs, cur, maxd) == nd;
    if (fs >= 0)
        H5Sclose(fs);
    for (int d = 0; got && d < nd; d++)
        mx[d] = maxd[d]; /* H5S_UNLIMITED: no fixed array (hdf5_chunks.c) */
    if (!got || raw_file(c, &rf) != 0 || H5Oget_info2(c->cur, &oi, H5O_INFO_BASIC) < 0)
        return -1;
    uint64_t *o = NULL, k = 0;
    na_h5ci_chunk_t *info = NULL;
    char why[160];
    int r = na_h5ci_list(rf.fd, rf.base, rf.eof, rf.sa, rf.sl, (uint64_t)oi.addr,
                         (unsigned)nd, mx, nalloc, &o, &info, &k, why, sizeof why);
    int ok = r == 0 && k == nalloc;
    if (r == -1) /* the index breaks the format: damage (chunk_index_why says it) */
        snprintf(c->cl_msg, sizeof c->cl_msg, "the chunk index is damaged: %s", why);
    for (uint64_t i = 0; ok && i < k; i++) {
        hsize_t *off = c->cl_offs + i * (unsigned)nd;
        int in = 1;
        for (int d = 0; d < nd; d++) {
            off[d] = o[i * (unsigned)nd + (unsigned)d];
            in &= off[d] < e->shape[d] && off[d] % e->chunk[d] == 0;
        }
        hsize_t size = 0;
        if (in)
            ok = H5Dget_chunk_storage_size(c->cur, off, &size) >= 0 && size == info[i].size;
    }
    H5Eclear2(H5E_DEFAULT);
    free(o);
    free(info);
    c->cl_n = nalloc;
    return ok ? 0 : -1;
}

/* nalloc UINT64_MAX: counted here when the list must be made (chunk_spans,
 * after the index check has made it). */
static int chunk_list(child_t *c, c_ent_t *e, hsize_t nalloc, const hsize_t **offs, hsize_t *n)
{
    size_t entry = (size_t)(e - c->ents);
    if (c->cl_state == 0 || c->cl_ent != entry) {
        free(c->cl_offs);
        free(c->cl_ord);
        c->cl_ord = NULL;
        c->cl_offs = NULL;
        c->cl_n = 0;
        c->cl_msg[0] = '\0';
        c->cl_ent = entry;
        if (nalloc == UINT64_MAX && num_chunks(c->cur, &nalloc) < 0) {
            H5Eclear2(H5E_DEFAULT);
            c->cl_state = 2; /* the index check says why */
        } else {
            c->cl_state = cl_make(c, e, nalloc) == 0 ? 1 : c->cl_msg[0] ? 3 : 2;
        }
        if (c->cl_state != 1) {
            free(c->cl_offs);
            c->cl_offs = NULL;
        }
    }
    *offs = c->cl_offs;
    *n = c->cl_n;
    return c->cl_state == 1 ? 0 : -1;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Flat-index bounds of every allocated chunk (chunk_list), sorted and
 * merged: then a window that meets none of them is all fill value and is
 * not read. n_spans SIZE_MAX when the chunks cannot be listed. */
static void chunk_spans(child_t *c, c_ent_t *e)
{
    e->have_spans = 1;
    e->n_spans = SIZE_MAX; /* unknown: read everything */
    const hsize_t *offs = NULL;
    hsize_t n = 0;
    if (chunk_list(c, e, UINT64_MAX, &offs, &n) != 0) /* the index check's list, kept */
        return;
    e->spans = malloc((n + 1) * sizeof *e->spans);
    if (e->spans == NULL)
        return;
    for (hsize_t i = 0; i < n; i++) {
        const hsize_t *off = offs + i * (unsigned)e->ndim;
        uint64_t lo[NA_MAX_NDIM], hi[NA_MAX_NDIM];
        int bad = 0; /* a hostile index: a chunk outside the dataset */
        for (int d = 0; d < e->ndim; d++)
            bad |= off[d] >= e->shape[d] || e->chunk[d] == 0 || off[d] % e->chunk[d] != 0;
        if (bad) {
            free(e->spans);
            e->spans = NULL;
            return;
        }
        for (int d = 0; d < e->ndim; d++) {
            lo[d] = off[d];
            hi[d] = e->shape[d] - off[d] > e->chunk[d] ? off[d] + e->chunk[d] - 1
                                                       : e->shape[d] - 1;
        }
        e->spans[i][0] = flat_of(e->ndim, e->shape, lo);
        e->spans[i][1] = flat_of(e->ndim, e->shape, hi);
    }
    e->n_spans = (size_t)na_h5_spans_merge(e->spans, n);
}

/* 1 when dataset elements [lo, lo+n) all lie in unallocated storage. */
static int range_is_fill(child_t *c, c_ent_t *e, uint64_t lo, uint64_t n)
{
    if (e->nostorage)
        return 1;
    if (!e->chunked || e->unalloc <= 0)
        return 0;
    if (!e->have_spans)
        chunk_spans(c, e);
    if (e->n_spans == SIZE_MAX)
        return 0;
    size_t a = (size_t)na_h5_span_find((const uint64_t(*)[2])e->spans, e->n_spans, lo);
    return a == e->n_spans || e->spans[a][0] >= lo + n;
}

/* Fill n dataset elements at the start of the mapping with what libhdf5
 * would read from unallocated storage: the fill value converted to the
 * memory type, or 0 when it is undefined or fill time is "never". */
static int fill_range(child_t *c, c_ent_t *e, uint64_t n)
{
    size_t es = (size_t)e->esize * e->per;
    memset(c->shm, 0, n * es);
    hid_t dcpl = H5Dget_create_plist(c->cur);
    if (dcpl < 0)
        return -1;
    H5D_fill_value_t fs = H5D_FILL_VALUE_UNDEFINED;
    H5D_fill_time_t ft = H5D_FILL_TIME_IFSET;
    H5Pfill_value_defined(dcpl, &fs);
    H5Pget_fill_time(dcpl, &ft);
    int r = 0;
    if (fs != H5D_FILL_VALUE_UNDEFINED && ft != H5D_FILL_TIME_NEVER) {
        r = H5Pget_fill_value(dcpl, e->memtype, c->shm) < 0 ? -1 : 0;
        int zero = 1;
        for (size_t b = 0; b < es; b++)
            zero &= c->shm[b] == 0;
        for (uint64_t i = 1; r == 0 && !zero && i < n; i *= 2) /* doubling copies */
            memcpy(c->shm + i * es, c->shm, (i < n - i ? i : n - i) * es);
    }
    H5Pclose(dcpl);
    return r;
}

static int c_open_cur(child_t *c, uint64_t entry)
{
    if (c->cur >= 0 && c->cur_ent == entry)
        return 0;
    if (c->cur >= 0)
        H5Dclose(c->cur);
    /* A chunk cache that holds the chunks a window boundary cuts, so no
     * chunk is inflated twice by consecutive windows. */
    c_ent_t *e = &c->ents[entry];
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    na_h5c_chunk_cache(dapl, e->ndim, e->shape, e->chunked ? e->chunk : NULL,
                       (size_t)e->esize * (e->per ? e->per : 1));
    c->cur = H5Dopen2(c->file, e->dset, dapl);
    H5Pclose(dapl);
    c->cur_ent = entry;
    return c->cur < 0 ? -1 : 0;
}

/* H5Dread of dataset elements [lo, lo+n) to dst (select_range,
 * range_space); the cause of a failure in cause. */
static herr_t read_part(child_t *c, c_ent_t *e, uint64_t lo, uint64_t n, uint8_t *dst,
                        char *cause, size_t cap)
{
    hid_t fs = H5Dget_space(c->cur);
    hid_t ms = range_space(e->ndim, e->shape, lo, n);
    herr_t r = fs < 0 || ms < 0 ? -1 : select_range(fs, e->ndim, e->shape, lo, n);
    if (r >= 0)
        r = H5Dread(c->cur, e->memtype, ms, fs, H5P_DEFAULT, dst);
    if (r < 0) /* before H5Sclose, which clears the error stack */
        h5_cause(cause, cap);
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    return r;
}

/* The chunk grid of chunked entry e: chunks along each dim into gd[d]
 * (0 for an empty dim), the elements of one chunk into *ce (saturating);
 * returns the grid's slots (saturating, 0 when a dim is empty). */
static uint64_t chunk_grid(const c_ent_t *e, uint64_t *gd, uint64_t *ce)
{
    uint64_t slots = 1, n = 1;
    for (int d = 0; d < e->ndim; d++) {
        gd[d] = e->shape[d] == 0 ? 0 : (e->shape[d] - 1) / e->chunk[d] + 1;
        slots = gd[d] == 0 || slots <= UINT64_MAX / gd[d] ? slots * gd[d] : UINT64_MAX;
        n = n <= UINT64_MAX / e->chunk[d] ? n * e->chunk[d] : UINT64_MAX;
    }
    *ce = n;
    return slots;
}

/* The element offsets of slot k (row-major) of grid gd, into off. */
static void slot_offset(const c_ent_t *e, const uint64_t *gd, uint64_t k, hsize_t *off)
{
    for (int d = e->ndim - 1; d >= 0; d--) {
        off[d] = (k % gd[d]) * e->chunk[d];
        k /= gd[d];
    }
}

/* Dataset elements [lo, lo+n) of entry e into dst. */
static herr_t c_read_range(child_t *c, c_ent_t *e, uint64_t lo, uint64_t n, uint8_t *dst,
                           char *cause, size_t cap)
{
    /* Zeroed first: with fill time "never" or an undefined fill value
     * libhdf5 leaves unwritten elements alone, and they must read as 0
     * (what h5py shows), never as leftovers of an earlier window. */
    if (!e->full)
        memset(dst, 0, n * e->esize * e->per);
    if (e->ndim == 0) {
        herr_t r0 = H5Dread(c->cur, e->memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, dst);
        if (r0 < 0)
            h5_cause(cause, cap);
        return r0;
    }
    /* tiny chunks: at most NA_H5_RANGE_CHUNKS chunks' elements at a time */
    uint64_t ce = 1, gd[NA_MAX_NDIM];
    if (e->chunked)
        chunk_grid(e, gd, &ce);
    uint64_t step = e->chunked && ce <= n / NA_H5_RANGE_CHUNKS ? ce * NA_H5_RANGE_CHUNKS : n;
    herr_t r = 0;
    for (uint64_t a = lo; a < lo + n && r >= 0; a += step) {
        uint64_t m = lo + n - a < step ? lo + n - a : step;
        /* scan's windows are a number of elements: 12 does not divide them */
        uint64_t part[3][2];
        row_parts(e->ndim, e->shape, a, m, part);
        for (int k = 0; k < 3 && r >= 0; k++)
            if (part[k][1] > 0)
                r = read_part(c, e, part[k][0], part[k][1], dst + (part[k][0] - lo) *
                              e->esize * e->per, cause, cap);
    }
    return r;
}

/* Elements [a, a+m) of the window that starts at element lo (already
 * holding the fill element) from the spans that meet them. */
static herr_t spans_read(child_t *c, c_ent_t *e, uint64_t lo, uint64_t a0, uint64_t m,
                         char *cause, size_t cap)
{
    size_t es = (size_t)e->esize * e->per;
    size_t a = (size_t)na_h5_span_find((const uint64_t(*)[2])e->spans, e->n_spans, a0);
    herr_t r = 0;
    for (; r >= 0 && m > 0 && a < e->n_spans && e->spans[a][0] < a0 + m; a++) {
        uint64_t s0 = e->spans[a][0] > a0 ? e->spans[a][0] : a0;
        uint64_t s1 = e->spans[a][1] < a0 + m - 1 ? e->spans[a][1] : a0 + m - 1;
        r = c_read_range(c, e, s0, s1 - s0 + 1, c->shm + (s0 - lo) * es, cause, cap);
    }
    return r;
}

static int ord_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Elements [a0, a0+m), whole rows r0 = a0 / row .. of dim 0, of the
 * window that starts at element lo (already holding the fill element): every listed chunk that meets
 * them read as the box it has in common with them, one H5Dread each, so
 * that libhdf5 meets only allocated chunks. -2 when the list is gone. */
static herr_t rows_read(child_t *c, c_ent_t *e, uint64_t lo, uint64_t a0, uint64_t m,
                        char *cause, size_t cap)
{
    int nd = e->ndim;
    uint64_t row = 1, ck0 = e->chunk[0];
    for (int d = 1; d < nd; d++)
        row *= e->shape[d];
    uint64_t r0 = a0 / row, nr = m / row;
    if (c->cl_state != 1 || c->cl_ent != (size_t)(e - c->ents))
        return -2;
    if (c->cl_ord == NULL) {
        c->cl_ord = malloc((size_t)(c->cl_n ? c->cl_n : 1) * sizeof *c->cl_ord);
        if (c->cl_ord == NULL)
            return -2;
        for (hsize_t i = 0; i < c->cl_n; i++) {
            c->cl_ord[i][0] = i;
            c->cl_ord[i][1] = c->cl_offs[i * (unsigned)nd];
        }
        qsort(c->cl_ord, (size_t)c->cl_n, sizeof *c->cl_ord, ord_cmp);
    }
    uint8_t *dst = c->shm + (a0 - lo) * e->esize * e->per;
    /* the first chunk that may reach row r0: dim-0 offset >= r0 - ck0 + 1
     * (the search of spans: the first "span" whose end is that far) */
    uint64_t a = na_h5_span_find((const uint64_t(*)[2])c->cl_ord, c->cl_n,
                                 r0 >= ck0 ? r0 - ck0 + 1 : 0);
    hsize_t md[H5S_MAX_RANK];
    md[0] = nr;
    for (int d = 1; d < nd; d++)
        md[d] = e->shape[d];
    hid_t ms = H5Screate_simple(nd, md, NULL), fs = H5Dget_space(c->cur);
    herr_t r = ms < 0 || fs < 0 ? -1 : 0;
    for (; r >= 0 && a < c->cl_n && c->cl_ord[a][1] < r0 + nr; a++) {
        const hsize_t *off = c->cl_offs + c->cl_ord[a][0] * (unsigned)nd;
        hsize_t fst[H5S_MAX_RANK], cnt[H5S_MAX_RANK], mst[H5S_MAX_RANK];
        uint64_t end0 = off[0] + ck0 < r0 + nr ? off[0] + ck0 : r0 + nr;
        fst[0] = off[0] > r0 ? off[0] : r0;
        if (end0 <= fst[0])
            continue;
        cnt[0] = end0 - fst[0];
        mst[0] = fst[0] - r0;
        for (int d = 1; d < nd; d++) {
            fst[d] = mst[d] = off[d];
            cnt[d] = e->shape[d] - off[d] < e->chunk[d] ? e->shape[d] - off[d] : e->chunk[d];
        }
        if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, fst, NULL, cnt, NULL) < 0 ||
            H5Sselect_hyperslab(ms, H5S_SELECT_SET, mst, NULL, cnt, NULL) < 0 ||
            H5Dread(c->cur, e->memtype, ms, fs, H5P_DEFAULT, dst) < 0)
            r = -1;
    }
    if (r < 0)
        h5_cause(cause, cap);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    return r;
}

/* Dataset elements [lo, lo+n) into the mapping, when some lie in
 * allocated chunks (range_is_fill is 0): with the chunks' spans known
 * (chunk_spans), the fill element everywhere (fill_range) and then only
 * the allocated chunks' elements read, so that a window over a few
 * chunks of a sparse dataset costs those chunks, not an H5Dread of every
 * element (which makes libhdf5 build the fill value of every unallocated
 * chunk: ~4 ns an element here); else one read of the whole range. The
 * flat spans are exact where chunks span the trailing dims; where they
 * do not (column chunks: every chunk's span crosses the others'), the
 * whole rows of the range are read chunk by chunk from the list
 * (rows_read), the partial rows at its ends from the spans. */
/* ---- deflate chunks checked before H5Dread ----------------------------
 *
 * libhdf5's deflate filter (HDF5 source src/H5Zdeflate.c) inflates a
 * chunk into a buffer it doubles until the zlib stream ends and hands the
 * chunk cache whatever it got (round 43b, two HIGH):
 *  - a stream that ends short of the chunk (10 bytes of zeros stored for
 *    a 400-byte chunk, or a first stream ending early with a second one
 *    behind it) leaves the rest of the chunk uninitialised, and H5Dread
 *    returns that memory as data: statistics that change from run to run,
 *    NaN counted or hidden by chance (h5py with HDF5 2.0 reads the same);
 *  - a small stream that inflates to far more than the chunk (4 MB of
 *    file, 4 GiB from one chunk) grows the buffer without a limit.
 * libhdf5 refuses to replace a predefined filter (H5Zregister: ids below
 * 256), so before a window is read through H5Dread its allocated chunks
 * are read as stored (H5Dread_chunk) and inflated here into a counter,
 * in 64 KiB steps: a chunk that does not give the bytes it must, or gives
 * more than its bound, is a damaged chunk (exit 3, the chunk named) and
 * the read does not happen. The parallel path (hdf5_inflate.c) inflates
 * into exactly the chunk's bytes and refuses both itself.
 *
 * What a chunk inflates to: a stored chunk holds the full chunk extent,
 * chunk elements x the file type's size (HDF5 File Format Specification,
 * "Data Layout Message"). Shuffle keeps the size; Fletcher32 appends a
 * 4-byte checksum (src/H5Zfletcher32.c). With only those beside one
 * deflate, the size is exact: + 4 per Fletcher32 before deflate (write
 * order), and each Fletcher32 after it is 4 bytes to leave off the stored
 * chunk. Other filters before deflate (n-bit, scale-offset, a plugin) and
 * variable-length or reference types (stored size not H5Tget_size):
 * at most twice the chunk plus 64 KiB, which a chunk never needs and a
 * bomb passes. Any other filter after deflate: not checked. Chunk rows
 * are checked once per entry (zc_next): the windows come in order. */
#define ZC_SLACK ((uint64_t)64 << 10)

static void zc_setup(child_t *c, c_ent_t *e)
{
    e->zc_mode = 1;
    hid_t dcpl = H5Dget_create_plist(c->cur), ft = H5Dget_type(c->cur);
    if (dcpl < 0 || ft < 0 || !e->chunked || e->ndim == 0 || e->attr != NULL) {
        if (ft >= 0)
            H5Tclose(ft);
        if (dcpl >= 0)
            H5Pclose(dcpl);
        H5Eclear2(H5E_DEFAULT);
        return;
    }
    uint64_t bytes = H5Tget_size(ft);
    for (int d = 0; d < e->ndim && bytes; d++)
        bytes = bytes <= UINT64_MAX / 4 / e->chunk[d] ? bytes * e->chunk[d] : 0;
    H5T_class_t cl = H5Tget_class(ft);
    int exact = !(cl == H5T_VLEN || cl == H5T_REFERENCE || H5Tis_variable_str(ft) > 0 ||
                  H5Tdetect_class(ft, H5T_VLEN) > 0 || H5Tdetect_class(ft, H5T_REFERENCE) > 0);
    int nf = H5Pget_nfilters(dcpl), at = -1, after_ok = 1;
    uint64_t before = 0;
    uint32_t strip = 0;
    for (int i = 0; i < nf; i++) {
        unsigned fl;
        size_t ncd = 0;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &fl, &ncd, NULL, 0, NULL, NULL);
        if (id == H5Z_FILTER_DEFLATE && at < 0)
            at = i;
        else if (id == H5Z_FILTER_DEFLATE || id < 0)
            after_ok = exact = 0; /* deflate twice: not followed */
        else if (at < 0 && id == H5Z_FILTER_FLETCHER32)
            before += 4;
        else if (at >= 0 && id == H5Z_FILTER_FLETCHER32)
            strip += 4;
        else if (at < 0 && id != H5Z_FILTER_SHUFFLE)
            exact = 0;
        else if (at >= 0)
            after_ok = 0;
    }
    unsigned copts = 0;
    e->zc_raw_edges = H5Pget_chunk_opts(dcpl, &copts) >= 0 &&
                      (copts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
    if (at >= 0 && after_ok && bytes > 0 && at < 32) {
        e->zc_mode = exact ? 2 : 3;
        e->zc_bit = (unsigned)at;
        e->zc_strip = strip;
        e->zc_size = exact ? bytes + before : 2 * bytes + ZC_SLACK;
        if (cl == H5T_VLEN || H5Tdetect_class(ft, H5T_VLEN) > 0) /* heap IDs: 16 bytes */
            e->zc_size += 16 * (bytes / H5Tget_size(ft));
    }
    H5Tclose(ft);
    H5Pclose(dcpl);
    H5Eclear2(H5E_DEFAULT);
}

/* cause = the formatted text (cat: no truncation warning to silence). */
static void zc_msg(char *cause, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void zc_msg(char *cause, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, cap, fmt, ap);
    va_end(ap);
}

/* The chunk at off (ndim offsets) into cause when it is damaged: -1, else
 * 0. The stored bytes go to the shared mapping, which the read after
 * this overwrites; a chunk larger than it is not checked. */
static int zc_chunk(child_t *c, c_ent_t *e, const hsize_t *off, char *cause, size_t cap)
{
    char at[160];
    size_t n = (size_t)snprintf(at, sizeof at, "chunk at [");
    for (int d = 0; d < e->ndim && n < sizeof at; d++)
        n += (size_t)snprintf(at + n, sizeof at - n, "%s%llu", d ? "," : "",
                              (unsigned long long)off[d]);
    if (n < sizeof at)
        snprintf(at + n, sizeof at - n, "]");
    hsize_t nbytes = 0;
    uint32_t mask = 0;
    if (H5Dget_chunk_storage_size(c->cur, off, &nbytes) < 0 || nbytes == 0 ||
        nbytes > c->shm_bytes) {
        H5Eclear2(H5E_DEFAULT); /* not allocated, or too large to hold here */
        return 0;
    }
    if (H5Dread_chunk(c->cur, H5P_DEFAULT, off, &mask, c->shm) < 0) {
        char why[200];
        h5_cause(why, sizeof why);
        zc_msg(cause, cap, "%s: %s", at, why);
        return -1;
    }
    if (mask & (1u << e->zc_bit)) /* stored without deflate */
        return 0;
    if (nbytes < e->zc_strip) {
        zc_msg(cause, cap, "%s: %llu bytes stored, less than its Fletcher32 checksum", at,
                 (unsigned long long)nbytes);
        return -1;
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) {
        zc_msg(cause, cap, "%s: zlib: inflateInit failed", at);
        return -1;
    }
    static uint8_t sink[64 << 10];
    uint64_t left = nbytes - e->zc_strip, got = 0;
    const uint8_t *in = c->shm;
    int zr = Z_OK;
    while (zr == Z_OK && got <= e->zc_size) {
        if (z.avail_in == 0 && left > 0) {
            z.next_in = (Bytef *)in;
            z.avail_in = left > (1u << 30) ? 1u << 30 : (uInt)left;
            in += z.avail_in;
            left -= z.avail_in;
        }
        z.next_out = sink;
        z.avail_out = sizeof sink;
        zr = inflate(&z, Z_NO_FLUSH);
        got = z.total_out;
        if (zr == Z_BUF_ERROR && z.avail_in == 0 && left == 0)
            break; /* the input ended inside the stream */
    }
    inflateEnd(&z);
    if (got > e->zc_size)
        zc_msg(cause, cap, "%s inflates to more than %s%llu bytes (a damaged chunk)", at,
                 e->zc_mode == 2 ? "the chunk's " : "twice the chunk's ",
                 (unsigned long long)(e->zc_mode == 2 ? e->zc_size
                                                      : (e->zc_size - ZC_SLACK) / 2));
    else if (zr != Z_STREAM_END)
        zc_msg(cause, cap, "%s: its %llu stored bytes are not a whole zlib stream (%s; a "
                 "damaged chunk)", at, (unsigned long long)nbytes,
                 z.msg ? z.msg : zr == Z_BUF_ERROR ? "it ends early" : zError(zr));
    else if (e->zc_mode == 2 && got != e->zc_size)
        zc_msg(cause, cap, "%s inflates to %llu bytes, not the chunk's %llu (a damaged "
                 "chunk)", at, (unsigned long long)got, (unsigned long long)e->zc_size);
    else
        return 0;
    return -1;
}

/* Check the deflate chunks that hold dataset elements [lo, lo+n) of e
 * (open as c->cur) before they are read: 0, or -1 with the damaged
 * chunk in cause. */
static int zc_check(child_t *c, c_ent_t *e, uint64_t lo, uint64_t n, char *cause, size_t cap)
{
    if (e->zc_mode == 0)
        zc_setup(c, e);
    if (e->zc_mode == 1 || n == 0)
        return 0;
    uint64_t rowlen = 1, ce, gd[NA_MAX_NDIM] = {0};
    for (int d = 1; d < e->ndim; d++)
        rowlen *= e->shape[d];
    uint64_t slots = chunk_grid(e, gd, &ce);
    if (rowlen == 0 || slots == 0)
        return 0;
    uint64_t g = slots / gd[0]; /* chunks per chunk row */
    uint64_t k0 = lo / rowlen / e->chunk[0], k1 = (lo + n - 1) / rowlen / e->chunk[0];
    if (k0 < e->zc_next)
        k0 = e->zc_next;
    for (uint64_t k = k0; k <= k1; k++) {
        for (uint64_t i = 0; i < g; i++) {
            hsize_t off[H5S_MAX_RANK] = {0};
            slot_offset(e, gd, k * g + i, off);
            int edge = 0; /* cut by the extent: stored raw under zc_raw_edges */
            for (int d = 0; d < e->ndim; d++)
                edge |= off[d] + e->chunk[d] > e->shape[d];
            if (!(edge && e->zc_raw_edges) && zc_chunk(c, e, off, cause, cap) != 0)
                return -1;
        }
        e->zc_next = k + 1;
    }
    return 0;
}

static herr_t c_read_sparse(child_t *c, c_ent_t *e, uint64_t lo, uint64_t n, char *cause,
                            size_t cap)
{
    if (e->nostorage || !e->chunked || e->unalloc <= 0 || e->attr != NULL || e->ndim == 0 ||
        !e->have_spans || e->n_spans == SIZE_MAX || getenv("NANAUDIT_HDF5_READ_ALL") != NULL)
        return c_read_range(c, e, lo, n, c->shm, cause, cap);
    int across = 0; /* chunks narrower than a trailing dim */
    for (int d = 1; d < e->ndim; d++)
        across |= e->chunk[d] < e->shape[d];
    int by_chunk = across && c->cl_state == 1 && c->cl_ent == (size_t)(e - c->ents);
    size_t a = (size_t)na_h5_span_find((const uint64_t(*)[2])e->spans, e->n_spans, lo);
    if (!by_chunk && a < e->n_spans && e->spans[a][0] <= lo && e->spans[a][1] >= lo + n - 1)
        return c_read_range(c, e, lo, n, c->shm, cause, cap); /* all in one span */
    if (fill_range(c, e, n) < 0) {
        h5_cause(cause, cap);
        return -1;
    }
    uint64_t part[3][2] = {{lo, n}, {0, 0}, {0, 0}};
    if (by_chunk)
        row_parts(e->ndim, e->shape, lo, n, part);
    herr_t r = 0;
    for (int k = 0; r >= 0 && k < 3; k++) {
        if (part[k][1] == 0)
            continue;
        r = k == 1 && by_chunk ? rows_read(c, e, lo, part[k][0], part[k][1], cause, cap) : -2;
        if (r == -2) /* not by chunk, or the list is gone */
            r = spans_read(c, e, lo, part[k][0], part[k][1], cause, cap);
    }
    return r;
}

static void c_fault(const char *when);

/* ---- variable-length sequences ------------------------------------------ */

/* H5Dread of sequences gives one hvl_t {len, p} per dataset element, p
 * allocated through vl_alloc (H5Pset_vlen_mem_manager, HDF5 Reference
 * Manual). It keeps every pointer it hands out, so that vl_release frees
 * what a read allocated even when the read failed halfway (libhdf5 then
 * frees some itself, through vl_free, which forgets them), and it
 * refuses more than VL_BATCH_BYTES per read: a read of many rows is then
 * retried with fewer, and one sequence larger than that is an error
 * (also what a lying length becomes, when libhdf5 gets that far). */
#define VL_BATCH_BYTES ((uint64_t)256 << 20)
#define VL_BATCH_ROWS 65536u
#define VL_CK 256u /* rows per checkpoint of the lengths' prefix sum (vl_measure) */
#define VL_HDR 16 /* before each block: its slot, keeping 16-byte alignment */

typedef struct vl_mem {
    void **slot;     /* blocks handed out (NULL: freed by libhdf5) */
    size_t n, cap;
    uint64_t limit;  /* bytes one read may take (child_t.vl_batch) */
    uint64_t used;   /* bytes handed out by this read */
    uint64_t refused; /* size of a request refused, 0 if none */
    int oom;
} vl_mem_t;

/* Rows of sequences one H5Dread may take: VL_BATCH_ROWS, fewer when they
 * would meet more than NA_H5_RANGE_CHUNKS chunks (200000 sequences in
 * (1,) chunks took 470 MB, 6.5 KiB per chunk of a 65536-row batch). */
static uint64_t vl_rows_cap(const c_ent_t *e)
{
    uint64_t cap = e->chunked && e->ndim >= 1 ? na_h5c_range_rows(e->ndim, e->shape, e->chunk)
                                              : VL_BATCH_ROWS;
    return cap < VL_BATCH_ROWS ? cap : VL_BATCH_ROWS;
}

static void *vl_alloc(size_t size, void *info)
{
    vl_mem_t *m = info;
    if (size > m->limit - m->used) {
        m->refused = size;
        return NULL;
    }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 1024;
        void **ns = realloc(m->slot, nc * sizeof *ns);
        if (ns == NULL) {
            m->oom = 1;
            return NULL;
        }
        m->slot = ns;
        m->cap = nc;
    }
    uint8_t *b = malloc(size + VL_HDR);
    if (b == NULL) {
        m->oom = 1;
        return NULL;
    }
    memcpy(b, &m->n, sizeof m->n);
    m->slot[m->n++] = b;
    m->used += size;
    return b + VL_HDR;
}

static void vl_free(void *p, void *info)
{
    vl_mem_t *m = info;
    if (p == NULL)
        return;
    uint8_t *b = (uint8_t *)p - VL_HDR;
    size_t k;
    memcpy(&k, b, sizeof k);
    if (k < m->n && m->slot[k] == b)
        m->slot[k] = NULL;
    free(b);
}

/* Free what the last read allocated; ready for the next. */
static void vl_release(vl_mem_t *m)
{
    for (size_t k = 0; k < m->n; k++)
        free(m->slot[k]);
    m->n = 0;
    m->used = 0;
    m->refused = 0;
    m->oom = 0;
}

/* libhdf5 sizes its conversion buffer by each sequence's stored length
 * and clears it before it reads the heap object (H5T__conv_vlen), so one
 * damaged length of 2^32 - 1 touches 16 GiB before vl_alloc is asked for
 * anything. While sequences are read, the address space may grow by at
 * most VL_AS_ROOM (RLIMIT_AS, restored after): such a buffer then fails
 * to allocate, an error of that read. Not under a sanitizer, whose
 * allocator dies on a failed mapping instead of returning NULL.
 * VL_AS_ROOM is defined above h5_cause. */

typedef struct vl_cap {
    struct rlimit old;
    int set;
} vl_cap_t;

#ifndef NA_FORK_QUIESCE
/* Bytes of address space mapped now (/proc/self/statm), 0 if unknown. */
static uint64_t vm_bytes(void)
{
    char b[64];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, b, sizeof b - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    b[n] = '\0';
    long pg = sysconf(_SC_PAGESIZE);
    return strtoull(b, NULL, 10) * (uint64_t)(pg > 0 ? pg : 4096);
}
#endif

static void vl_cap_on(vl_cap_t *k)
{
    k->set = 0;
#ifndef NA_FORK_QUIESCE
    uint64_t vm = vm_bytes();
    if (vm == 0 || getrlimit(RLIMIT_AS, &k->old) != 0 ||
        (k->old.rlim_cur != RLIM_INFINITY && k->old.rlim_cur <= vm + VL_AS_ROOM))
        return;
    struct rlimit r = {(rlim_t)(vm + VL_AS_ROOM), k->old.rlim_max};
    k->set = setrlimit(RLIMIT_AS, &r) == 0;
#endif
}

static void vl_cap_off(const vl_cap_t *k)
{
    if (k->set)
        setrlimit(RLIMIT_AS, &k->old);
}

/* H5Dread of the sequences of dataset elements [r, r+n) into hv[n]. */
static herr_t vl_read(child_t *c, c_ent_t *e, hid_t dxpl, uint64_t r, uint64_t n, hvl_t *hv,
                      char *cause, size_t cap)
{
    memset(hv, 0, n * sizeof *hv);
    vl_cap_t k = {{0, 0}, 0};
    hsize_t mn = n;
    hid_t fs = H5Dget_space(c->cur), ms = H5Screate_simple(1, &mn, NULL);
    herr_t rr = fs < 0 || ms < 0 ? -1
                : e->ndim == 0   ? H5Sselect_all(fs)
                                 : select_range(fs, e->ndim, e->shape, r, n);
    if (rr >= 0) {
        vl_cap_on(&k);
        rr = H5Dread(c->cur, e->memtype, ms, fs, dxpl, hv);
        vl_cap_off(&k);
    }
    if (rr < 0) {
        h5_cause(cause, cap);
        /* VL_AS_ROOM's, not a lower limit of the user's (ulimit -v) */
        if (k.set && strstr(cause, "allocation failed") != NULL)
            cat(cause, cap, " (a sequence longer than %llu bytes: a damaged length?)",
                (unsigned long long)VL_AS_ROOM);
    }
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    return rr;
}

/* A transfer property list whose sequences come from m. */
static hid_t vl_dxpl(vl_mem_t *m)
{
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (dxpl >= 0 && H5Pset_vlen_mem_manager(dxpl, vl_alloc, m, vl_free, m) < 0) {
        H5Pclose(dxpl);
        dxpl = -1;
    }
    return dxpl;
}

/* What one pass over sequences holds: the hvl_t of a batch of rows, the
 * blocks libhdf5 allocated for them, the transfer list that allocates
 * them (vl_dxpl keeps a pointer to m: a pass does not move). */
typedef struct vl_pass {
    hvl_t *hv;
    vl_mem_t m;
    hid_t dxpl;
} vl_pass_t;

static na_status_t vl_begin(child_t *c, vl_pass_t *p, char *msg, size_t cap)
{
    memset(p, 0, sizeof *p);
    p->m.limit = c->vl_batch;
    p->hv = malloc(VL_BATCH_ROWS * sizeof *p->hv);
    p->dxpl = vl_dxpl(&p->m);
    if (p->hv != NULL && p->dxpl >= 0)
        return NA_OK;
    snprintf(msg, cap, "%s", p->hv == NULL ? "out of memory" : "no transfer property list");
    return p->hv == NULL ? NA_E_NOMEM : NA_E_INTERNAL;
}

static void vl_end(vl_pass_t *p)
{
    vl_release(&p->m);
    if (p->dxpl >= 0)
        H5Pclose(p->dxpl);
    H5Eclear2(H5E_DEFAULT);
    free(p->m.slot);
    free(p->hv);
}

/* ---- stored descriptors checked against the global heap ------------------ */

/* na_gheap_check's answer as a status. */
static na_status_t gh_status(int cr)
{
    return cr == 0 ? NA_OK : cr == -1 ? NA_E_FORMAT : cr == -2 ? NA_E_IO : NA_E_NOMEM;
}

/* A chunk's stored bytes with its filters undone, into out (want bytes):
 * shuffle and deflate, the pipelines hdf5_inflate.c also undoes (filter
 * k skipped where bit k of mask is set). es: the shuffle filter's element
 * size (its cd_values[0]; 0 if it has none, when libhdf5's shuffle fails
 * too; libhdf5 leaves it out of vlen datasets' chunks, mask bit 0); bytes
 * past the last whole element stay in place, as that filter leaves them.
 * 0, or -1 with msg. */
static int vc_unfilter(const int *ids, int nf, uint32_t mask, uint8_t *raw, uint64_t nraw,
                       uint8_t *out, uint8_t *tmp, uint64_t want, uint32_t es, char *msg,
                       size_t cap)
{
    uint8_t *cur = raw;
    uint64_t ncur = nraw;
    for (int i = nf - 1; i >= 0; i--) { /* undone last to first */
        if (mask & (1u << i))
            continue;
        uint8_t *dst = cur == tmp ? out : tmp;
        if (ids[i] == H5Z_FILTER_DEFLATE) {
            uLongf got = (uLongf)want;
            int zr = uncompress(dst, &got, cur, (uLong)ncur);
            if (zr != Z_OK || got != want) {
                snprintf(msg, cap, "deflate: %s (%lu of %llu bytes)",
                         zr != Z_OK ? zError(zr) : "wrong size", (unsigned long)got,
                         (unsigned long long)want);
                return -1;
            }
        } else { /* shuffle: es planes of want / es bytes */
            if (ncur != want || es == 0) {
                snprintf(msg, cap, es == 0 ? "shuffle filter without an element size"
                                           : "shuffled chunk of %llu bytes, not %llu",
                         (unsigned long long)ncur, (unsigned long long)want);
                return -1;
            }
            na_h5i_unshuffle(cur, dst, want / es, es);
            memcpy(dst + want / es * es, cur + want / es * es, want % es);
        }
        cur = dst;
        ncur = want;
    }
    if (ncur != want) {
        snprintf(msg, cap, "%llu bytes stored, not %llu", (unsigned long long)ncur,
                 (unsigned long long)want);
        return -1;
    }
    if (cur != out)
        memcpy(out, cur, want);
    return 0;
}

/* Check every stored descriptor of the sequences of entry e (open in
 * c->cur) with na_gheap_check before libhdf5 reads any (hdf5_gheap.h says
 * why). Contiguous data is read from the file; chunks through
 * H5Dread_chunk, with shuffle and deflate undone here; unallocated
 * storage holds the fill value, which libhdf5 keeps itself. Not checked:
 * compact and external storage, other filters, more than 2^24 chunk
 * slots of which more than 1024 are allocated (chunks are found one
 * slot at a time: H5Dget_chunk_info is quadratic in 1.10.8). Each
 * checked length is added to bs[row / VL_CK]; *all = 1 when that is
 * every row's (the rest read as the default fill value, an empty
 * sequence), so the lengths need no H5Dread. */
static na_status_t vl_check_heap(child_t *c, c_ent_t *e, uint64_t *bs, int *all, char *msg,
                                 size_t cap)
{
    *all = 0;
    raw_file_t rf;
    if (raw_file(c, &rf) != 0)
        return NA_OK; /* another driver: not checked */
    na_gheap_t *g = na_gheap_new(rf.fd, rf.base, rf.eof, rf.sa, rf.sl, e->fbase);
    if (g == NULL)
        return NA_OK; /* sizes this checker does not know */
    size_t dsz = na_gheap_desc_size(g);
    na_status_t st = NA_OK;
    hid_t dcpl = H5Dget_create_plist(c->cur);
    H5D_layout_t lay = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    H5D_fill_value_t fv = H5D_FILL_VALUE_ERROR;
    int zero_fill = dcpl >= 0 && H5Pfill_value_defined(dcpl, &fv) >= 0 &&
                    (fv == H5D_FILL_VALUE_DEFAULT || fv == H5D_FILL_VALUE_UNDEFINED) &&
                    H5Pget_external_count(dcpl) == 0;
    if (lay == H5D_CONTIGUOUS) {
        *all = zero_fill;
        haddr_t off = H5Dget_offset(c->cur); /* absolute; undefined: not stored here */
        uint64_t n = e->rows, fsz = rf.eof;
        enum { PIECE = 65536 };
        uint8_t *buf = off == HADDR_UNDEF || n == 0 ? NULL : malloc(PIECE * dsz);
        if (off != HADDR_UNDEF && n > 0 && (off > fsz || n > (fsz - off) / dsz)) {
            snprintf(msg, cap, "the descriptors of %llu sequences at byte %llu run past the "
                     "end of the file", (unsigned long long)n, (unsigned long long)off);
            st = NA_E_FORMAT;
        } else if (off != HADDR_UNDEF && n > 0 && buf == NULL) {
            snprintf(msg, cap, "out of memory");
            st = NA_E_NOMEM;
        }
        for (uint64_t r = 0; st == NA_OK && buf != NULL && r < n; r += PIECE) {
            uint64_t k = n - r < PIECE ? n - r : PIECE;
            ssize_t got = pread(rf.fd, buf, k * dsz, (off_t)(off + r * dsz));
            if (got != (ssize_t)(k * dsz)) {
                snprintf(msg, cap, "reading the descriptors of sequences %llu..%llu: %s",
                         (unsigned long long)r, (unsigned long long)(r + k - 1),
                         got < 0 ? strerror(errno) : "the file ended early");
                st = NA_E_IO;
            }
            for (uint64_t i = 0; st == NA_OK && i < k; i++) {
                int cr = na_gheap_check(g, buf + i * dsz, r + i, msg, cap);
                st = gh_status(cr);
                bs[(r + i) / VL_CK] += na_gheap_desc_len(buf + i * dsz);
            }
        }
        free(buf);
    } else if (lay == H5D_CHUNKED && e->chunked && e->ndim > 0) {
        int nf = H5Pget_nfilters(dcpl), ids[2] = {-1, -1};
        uint32_t shuf_es = 0;
        for (int i = 0; i < nf && i < 2; i++) {
            unsigned flags = 0, cdv[8];
            size_t ncd = 8;
            ids[i] = (int)H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cdv, 0, NULL, NULL);
            if (ids[i] == H5Z_FILTER_SHUFFLE && ncd >= 1)
                shuf_es = cdv[0];
        }
        int known = nf == 0 || (nf == 1 && (ids[0] == H5Z_FILTER_DEFLATE ||
                                             ids[0] == H5Z_FILTER_SHUFFLE)) ||
                    (nf == 2 && ids[0] == H5Z_FILTER_SHUFFLE && ids[1] == H5Z_FILTER_DEFLATE);
        uint64_t ce, gd[NA_MAX_NDIM], slots = chunk_grid(e, gd, &ce);
        hsize_t nalloc = 0;
        if (num_chunks(c->cur, &nalloc) < 0)
            known = 0;
        H5Eclear2(H5E_DEFAULT);
        const hsize_t *lst = NULL;
        hsize_t nl = 0;
        int listed = known && chunk_list(c, e, nalloc, &lst, &nl) == 0;
        if (!listed && slots > ((uint64_t)1 << 24))
            known = 0;
        uint64_t want = ce <= ((uint64_t)1 << 30) / dsz ? ce * dsz : 0;
        uint8_t *raw = NULL, *out = want ? malloc(want) : NULL, *tmp = want ? malloc(want) : NULL;
        uint64_t rawcap = 0;
        if (known && (want == 0 || out == NULL || tmp == NULL))
            known = 0; /* chunks over 1 GiB of descriptors: not checked */
        *all = known && zero_fill;
        /* the s-th allocated chunk when listed, else slot s of the grid */
        uint64_t steps = !known ? 0 : listed ? nl : slots;
        for (uint64_t s = 0; st == NA_OK && s < steps; s++) {
            hsize_t off[H5S_MAX_RANK] = {0}, nb = 0;
            if (listed)
                memcpy(off, lst + s * (unsigned)e->ndim, (unsigned)e->ndim * sizeof *off);
            else
                slot_offset(e, gd, s, off);
            if (H5Dget_chunk_storage_size(c->cur, off, &nb) < 0)
                nb = 0;
            H5Eclear2(H5E_DEFAULT);
            int inside = nb > 0;
            for (int d = 0; inside && d < e->ndim; d++)
                inside = off[d] < e->shape[d] && off[d] % e->chunk[d] == 0;
            if (!inside)
                continue; /* not allocated (libhdf5 reads its fill value) */
            if (nb > rawcap) {
                uint8_t *nr = nb <= ((uint64_t)2 << 30) ? realloc(raw, nb) : NULL;
                if (nr == NULL) {
                    snprintf(msg, cap, "out of memory for a chunk of %llu bytes",
                             (unsigned long long)nb);
                    st = NA_E_NOMEM;
                    break;
                }
                raw = nr;
                rawcap = nb;
            }
            uint32_t mask = 0;
            char why[200] = "";
            if (H5Dread_chunk(c->cur, H5P_DEFAULT, off, &mask, raw) < 0) {
                h5_cause(why, sizeof why);
                st = NA_E_FORMAT;
            } else if (vc_unfilter(ids, nf, mask, raw, nb, out, tmp, want, shuf_es, why,
                                   sizeof why) != 0) {
                st = NA_E_FORMAT;
            }
            if (st != NA_OK) {
                snprintf(msg, cap, "the chunk at row %llu: %s", (unsigned long long)off[0], why);
                break;
            }
            /* its elements inside the extent, in the chunk's row-major order */
            uint64_t loc[NA_MAX_NDIM] = {0};
            for (uint64_t k = 0; st == NA_OK && k < ce; k++) {
                int in = 1;
                uint64_t flat = 0;
                for (int d = 0; d < e->ndim; d++) {
                    in &= off[d] + loc[d] < e->shape[d];
                    flat = flat * e->shape[d] + off[d] + loc[d];
                }
                if (in) {
                    int cr = na_gheap_check(g, out + k * dsz, flat, msg, cap);
                    st = gh_status(cr);
                    bs[flat / VL_CK] += na_gheap_desc_len(out + k * dsz);
                }
                for (int d = e->ndim - 1; d >= 0 && ++loc[d] == e->chunk[d]; d--)
                    loc[d] = 0;
            }
        }
        free(raw);
        free(out);
        free(tmp);
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    H5Eclear2(H5E_DEFAULT);
    na_gheap_free(g);
    return st;
}

/* Entry `entry`'s sequence lengths, kept as c->vl_ck: the values before
 * row j * VL_CK for every j, and the total (for one entry at a time: scan
 * and clean read one tensor after another), 8 bytes per VL_CK rows. From
 * the stored descriptors when vl_check_heap saw every row's; otherwise
 * by H5Dread of the sequences in batches of at most VL_BATCH_ROWS rows
 * and VL_BATCH_BYTES of values. A failure: its status, and the message
 * in msg. */
static na_status_t vl_measure(child_t *c, size_t entry, char *msg, size_t cap)
{
    if (c->vl_ck != NULL && c->vl_ent == entry)
        return NA_OK;
    free(c->vl_ck);
    c->vl_ck = NULL;
    c_ent_t *e = &c->ents[entry];
    uint64_t n = e->rows; /* its sequences: 1 for a scalar, 0 for a null dataspace */
    uint64_t nb = (n + VL_CK - 1) / VL_CK;
    if (c_open_cur(c, entry) < 0) {
        char cause[200];
        h5_cause(cause, sizeof cause);
        snprintf(msg, cap, "cannot open the dataset: %s", cause);
        return NA_E_FORMAT;
    }
    uint64_t *ck = calloc(nb + 1, sizeof *ck); /* block sums in ck[1..nb] first */
    if (ck == NULL) {
        snprintf(msg, cap, "out of memory for the lengths of %llu variable-length sequences",
                 (unsigned long long)n);
        return NA_E_NOMEM;
    }
    int all = 0;
    na_status_t st = vl_check_heap(c, e, ck + 1, &all, msg, cap);
    if (st != NA_OK) {
        free(ck);
        return st;
    }
    vl_pass_t p;
    if (!all) {
        memset(ck, 0, (nb + 1) * sizeof *ck);
        st = vl_begin(c, &p, msg, cap);
    }
    hvl_t *hv = all ? NULL : p.hv;
    uint64_t r = all ? n : 0, rows_cap = vl_rows_cap(e), b = rows_cap;
    hsize_t fsize = 0;
    if (H5Fget_filesize(c->file, &fsize) < 0)
        fsize = 0;
    while (st == NA_OK && r < n) {
        uint64_t k = n - r < b ? n - r : b;
        char cause[200] = "";
        herr_t rr = vl_read(c, e, p.dxpl, r, k, hv, cause, sizeof cause);
        if (rr < 0 && p.m.refused && k > 1) {
            vl_release(&p.m);
            b = k / 2; /* sequences longer than thought: fewer rows */
            continue;
        }
        if (rr < 0 && p.m.refused)
            snprintf(msg, cap, "sequence %llu holds %llu bytes, more than the %llu one read "
                     "may take (a damaged length?)", (unsigned long long)r,
                     (unsigned long long)p.m.refused, (unsigned long long)c->vl_batch);
        else if (rr < 0)
            snprintf(msg, cap, "reading sequences %llu..%llu failed: %s", (unsigned long long)r,
                     (unsigned long long)(r + k - 1), p.m.oom ? "out of memory" : cause);
        st = rr < 0 ? (p.m.oom ? NA_E_NOMEM : NA_E_FORMAT) : NA_OK;
        for (uint64_t i = 0; st == NA_OK && i < k; i++) {
            uint64_t len = hv[i].len;
            if (e->fbase > 0 && fsize > 0 && len > fsize / e->fbase) {
                /* its heap object would not fit in the file */
                snprintf(msg, cap, "sequence %llu: %llu values of %u bytes, more than the "
                         "file's %llu bytes (a damaged length)", (unsigned long long)(r + i),
                         (unsigned long long)len, e->fbase, (unsigned long long)fsize);
                st = NA_E_FORMAT;
            } else if (len > 0 && hv[i].p == NULL) {
                snprintf(msg, cap, "sequence %llu: %llu values without data",
                         (unsigned long long)(r + i), (unsigned long long)len);
                st = NA_E_FORMAT;
            }
            ck[1 + (r + i) / VL_CK] += len; /* a block's: at most VL_CK * 2^32 */
        }
        vl_release(&p.m);
        r += k;
        b = b < rows_cap ? b * 2 : b;
    }
    if (!all)
        vl_end(&p);
    for (uint64_t j = 1; st == NA_OK && j <= nb; j++) {
        if (ck[j] > NA_H5_MAX_READ_ELEMS - ck[j - 1]) {
            snprintf(msg, cap, "the sequences hold more than %llu values: too many to audit",
                     (unsigned long long)NA_H5_MAX_READ_ELEMS);
            st = NA_E_UNSUPPORTED;
        }
        ck[j] += ck[j - 1];
    }
    if (st != NA_OK) {
        free(ck);
        return st;
    }
    c->vl_ck = ck;
    c->vl_ent = entry;
    return NA_OK;
}

/* H5P_VLEN: measure a variable-length entry; DATA = its values. */
static void c_vlen(child_t *c, const h5p_read_t *rq)
{
    c_fault("read");
    if (rq->entry >= c->n || c->ents[rq->entry].dset == NULL || !c->ents[rq->entry].vlen) {
        c_fail(c, NA_E_INTERNAL, "measure of entry %llu, which has no sequences",
               (unsigned long long)rq->entry);
        return;
    }
    char msg[400];
    na_status_t st = vl_measure(c, (size_t)rq->entry, msg, sizeof msg);
    if (st != NA_OK) {
        c_fail(c, st, "%s", msg);
        return;
    }
    uint64_t total = c->vl_ck[(c->ents[rq->entry].rows + VL_CK - 1) / VL_CK];
    if (na_h5p_send(c->sock, H5P_DATA, 0, &total, sizeof total, NULL, 0) != 0)
        c_die(c);
}

/* The values before row b (a multiple of VL_CK, or n) by c->vl_ck. */
static uint64_t vl_before(const child_t *c, uint64_t b, uint64_t n)
{
    return c->vl_ck[b >= n ? (n + VL_CK - 1) / VL_CK : b / VL_CK];
}

/* READ of values [first, first+count) of the concatenated sequences:
 * from the block of VL_CK rows that holds the first (a binary search of
 * c->vl_ck), rows read in batches of whole blocks, at most VL_BATCH_ROWS
 * rows and VL_BATCH_BYTES of values (fewer rows where a read is refused
 * for its size), blocks without values stepped over; the parts of the
 * sequences inside the range copied to the mapping. The lengths read
 * are checked against the measured ones at every block boundary. */
static void c_read_vlen(child_t *c, c_ent_t *e, const h5p_read_t *rq)
{
    char msg[400];
    na_status_t st = vl_measure(c, (size_t)rq->entry, msg, sizeof msg);
    if (st != NA_OK) {
        c_fail(c, st, "%s", msg);
        return;
    }
    if (c_open_cur(c, rq->entry) < 0) { /* measured before another was read */
        char cause[200];
        h5_cause(cause, sizeof cause);
        c_fail(c, NA_E_FORMAT, "cannot open the dataset: %s", cause);
        return;
    }
    const uint64_t *ck = c->vl_ck, n = e->rows, es = e->esize, nb = (n + VL_CK - 1) / VL_CK;
    uint64_t first = rq->first, end = rq->first + rq->count;
    if (rq->count > c->shm_bytes / es || first > ck[nb] || rq->count > ck[nb] - first) {
        c_fail(c, NA_E_INTERNAL, "read of values %llu..+%llu outside the %llu values or the "
               "shared buffer", (unsigned long long)first, (unsigned long long)rq->count,
               (unsigned long long)ck[nb]);
        return;
    }
    vl_pass_t p;
    st = vl_begin(c, &p, msg, sizeof msg);
    hvl_t *hv = p.hv;
    uint64_t r = 0, cur = 0, rows_cap = vl_rows_cap(e), lim = rows_cap;
    while (st == NA_OK && cur < end && r < n) {
        if (r % VL_CK == 0) {
            /* the last block that starts at or before the values wanted
             * next: those before it hold none of them */
            uint64_t want = first > cur ? first : cur, lo = r / VL_CK, hi = nb;
            while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (ck[mid] <= want)
                    lo = mid;
                else
                    hi = mid;
            }
            if (lo * VL_CK > r) {
                r = lo * VL_CK;
                cur = ck[lo];
            }
        }
        /* to the next block boundary, then whole blocks */
        uint64_t k = (r / VL_CK + 1) * VL_CK - r;
        k = k < n - r ? k : n - r;
        while (r + k < n && k + VL_CK <= lim && vl_before(c, r + k, n) < end) {
            uint64_t b2 = r + k + VL_CK < n ? r + k + VL_CK : n;
            if ((vl_before(c, b2, n) - cur) * es > c->vl_batch)
                break;
            k = b2 - r;
        }
        k = k < lim ? k : lim;
        char cause[200] = "";
        if (vl_read(c, e, p.dxpl, r, k, hv, cause, sizeof cause) < 0) {
            uint64_t refused = p.m.refused;
            int oom = p.m.oom;
            vl_release(&p.m);
            if (refused && k > 1) {
                lim = k / 2; /* sequences longer than the batch: fewer rows */
                continue;
            }
            st = oom ? NA_E_NOMEM : NA_E_FORMAT;
            if (refused)
                snprintf(msg, sizeof msg, "sequence %llu holds %llu bytes, more than the %llu "
                         "one read may take", (unsigned long long)r, (unsigned long long)refused,
                         (unsigned long long)c->vl_batch);
            else
                snprintf(msg, sizeof msg, "reading sequences %llu..%llu failed: %s",
                         (unsigned long long)r, (unsigned long long)(r + k - 1),
                         oom ? "out of memory" : cause);
            break;
        }
        for (uint64_t i = 0; st == NA_OK && i < k; i++) {
            uint64_t a = cur, z = cur + hv[i].len;
            if (z > a && hv[i].p == NULL) {
                st = NA_E_FORMAT;
                snprintf(msg, sizeof msg, "sequence %llu: %llu values without data",
                         (unsigned long long)(r + i), (unsigned long long)hv[i].len);
                break;
            }
            uint64_t x0 = a > first ? a : first, x1 = z < end ? z : end;
            if (x1 > x0)
                memcpy(c->shm + (x0 - first) * es, (const uint8_t *)hv[i].p + (x0 - a) * es,
                       (x1 - x0) * es);
            cur = z;
        }
        vl_release(&p.m);
        r += k;
        lim = lim < rows_cap ? lim * 2 : lim;
        if (st == NA_OK && (r % VL_CK == 0 || r == n) && cur != vl_before(c, r, n)) {
            st = NA_E_FORMAT; /* the file changed, or libhdf5 reads it otherwise */
            snprintf(msg, sizeof msg, "sequences before %llu hold %llu values, %llu when "
                     "measured", (unsigned long long)r, (unsigned long long)cur,
                     (unsigned long long)vl_before(c, r, n));
        }
    }
    if (st == NA_OK && cur < end) {
        st = NA_E_FORMAT;
        snprintf(msg, sizeof msg, "the sequences hold %llu values, %llu when measured",
                 (unsigned long long)cur, (unsigned long long)ck[nb]);
    }
    vl_end(&p);
    if (st != NA_OK) {
        c_fail(c, st, "%s", msg);
        return;
    }
    if (na_h5p_send(c->sock, H5P_DATA, 0, NULL, 0, NULL, 0) != 0)
        c_die(c);
}

/* An attribute is read whole (H5Aread has no selection) and the window
 * moved to the start of the mapping; attributes are small (64 KiB in
 * compact storage), one larger than the mapping is refused. */
static void c_read_attr(child_t *c, c_ent_t *e, const h5p_read_t *rq)
{
    uint64_t total = 1;
    for (int i = 0; i < e->ndim; i++)
        total *= e->shape[i];
    if (total > c->shm_bytes / ((uint64_t)e->esize * e->per)) {
        c_fail(c, NA_E_UNSUPPORTED, "attribute of %llu elements is larger than the read buffer",
               (unsigned long long)total);
        return;
    }
    char cause[200] = "unknown libhdf5 error";
    memset(c->shm, 0, total * e->esize * e->per);
    hid_t a = H5Aopen_by_name(c->file, e->dset, e->attr, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Aread(a, e->memtype, c->shm);
    if (r < 0)
        h5_cause(cause, sizeof cause);
    if (a >= 0)
        H5Aclose(a);
    if (r < 0) {
        c_fail(c, NA_E_FORMAT, "reading the attribute failed: %s", cause);
        return;
    }
    if (rq->first > 0)
        memmove(c->shm, c->shm + rq->first * e->esize, rq->count * e->esize);
    if (na_h5p_send(c->sock, H5P_DATA, 0, NULL, 0, NULL, 0) != 0)
        c_die(c);
}

/* ---- the chunk index ------------------------------------------------------ */

/* Why the chunk index of entry e (open in c->cur) cannot be trusted, into
 * msg, or "" when it can. libhdf5 1.10 reads a chunk that its index does
 * not find as the fill value, without an error: an index whose root lies
 * past the end of the file, or a chunk key whose coordinates a damaged
 * byte moved outside the extent, turned a chunk of data (and its NaN)
 * into zeros, audited as such and written by clean into a "verified"
 * copy (newer libhdf5 and h5py refuse such files). So, before the first
 * read of a chunked dataset: the index must be countable
 * (H5Dget_num_chunks), hold no more chunks than the extent's grid has
 * slots, and every chunk must sit at a grid slot inside the extent, once:
 * listed (chunk_list: one by one up to 1024, else by a walk of a version
 * 1 B-tree that libhdf5's lookups confirm), else found by looking up
 * every slot, when there are at most 2^20 slots or 4 per chunk (else not
 * checked). */
static void chunk_index_why(child_t *c, c_ent_t *e, char *msg, size_t cap)
{
    msg[0] = '\0';
    uint64_t ce, gd[NA_MAX_NDIM], slots = chunk_grid(e, gd, &ce);
    hsize_t nalloc = 0, nl = 0;
    const hsize_t *offs = NULL;
    hid_t fs = H5Dget_space(c->cur);
    if (fs < 0 || H5Dget_num_chunks(c->cur, fs, &nalloc) < 0) {
        char cause[200];
        h5_cause(cause, sizeof cause);
        snprintf(msg, cap, "the chunk index cannot be read: %s", cause);
    } else if (nalloc > slots) {
        snprintf(msg, cap, "the chunk index lists %llu chunks, more than the %llu the extent "
                 "holds", (unsigned long long)nalloc, (unsigned long long)slots);
    } else if (chunk_list(c, e, nalloc, &offs, &nl) == 0) {
        uint64_t *flat = malloc((nl + 1) * sizeof *flat);
        for (hsize_t i = 0; flat != NULL && i < nl && !msg[0]; i++) {
            const hsize_t *off = offs + i * (unsigned)e->ndim;
            uint64_t f = 0;
            int in = 1;
            for (int d = 0; d < e->ndim; d++) {
                in &= off[d] < e->shape[d] && off[d] % e->chunk[d] == 0;
                f = f * (gd[d] ? gd[d] : 1) + (in ? off[d] / e->chunk[d] : 0);
            }
            if (!in) {
                char at[200] = "";
                for (int d = 0; d < e->ndim; d++)
                    cat(at, sizeof at, "%s%llu", d ? ", " : "", (unsigned long long)off[d]);
                snprintf(msg, cap, "the chunk index puts a chunk at [%s], outside the extent "
                         "or off the chunk grid (a damaged index)", at);
            }
            flat[i] = f;
        }
        /* each slot once */
        if (flat != NULL && !msg[0])
            qsort(flat, nl, sizeof *flat, u64_cmp);
        for (hsize_t i = 1; flat != NULL && !msg[0] && i < nl; i++)
            if (flat[i] == flat[i - 1])
                snprintf(msg, cap, "the chunk index lists chunk slot %llu twice (a damaged "
                         "index)", (unsigned long long)flat[i]);
        free(flat);
    } else if (c->cl_msg[0]) {
        snprintf(msg, cap, "%s", c->cl_msg);
    } else if (slots <= ((uint64_t)1 << 20) || slots / 4 <= nalloc) {
        uint64_t found = 0;
        for (uint64_t k = 0; k < slots; k++) {
            hsize_t off[H5S_MAX_RANK] = {0}, nb = 0;
            slot_offset(e, gd, k, off);
            if (H5Dget_chunk_storage_size(c->cur, off, &nb) >= 0 && nb > 0)
                found++;
        }
        if (found != nalloc)
            snprintf(msg, cap, "the chunk index lists %llu chunks but %llu of them are at the "
                     "slots of the extent's grid (a damaged index)", (unsigned long long)nalloc,
                     (unsigned long long)found);
    }
    if (fs >= 0)
        H5Sclose(fs);
    H5Eclear2(H5E_DEFAULT);
}

/* 0 when entry `entry` may be read: not a chunked dataset, or its index
 * checked sound (chunk_index_why, once); else -1 after answering
 * H5P_FAIL with NA_E_FORMAT and why (every later request too). */
static int c_index_check(child_t *c, uint64_t entry)
{
    if (entry >= c->n)
        return 0;
    c_ent_t *e = &c->ents[entry];
    if (e->dset == NULL || e->attr != NULL || !e->chunked || e->ndim < 1 || e->index_state == 1)
        return 0;
    if (e->index_state == 0) {
        if (c_open_cur(c, entry) < 0)
            return 0; /* the request says it */
        char msg[400];
        chunk_index_why(c, e, msg, sizeof msg);
        e->index_state = msg[0] ? 2 : 1;
        if (msg[0] && (e->index_msg = strdup(msg)) == NULL)
            c_die(c);
    }
    if (e->index_state == 1)
        return 0;
    c_fail(c, NA_E_FORMAT, "%s", e->index_msg);
    return -1;
}

static void c_read(child_t *c, const h5p_read_t *rq)
{
    c_fault("read");
    if (rq->entry >= c->n || c->ents[rq->entry].dset == NULL) {
        c_fail(c, NA_E_INTERNAL, "read of entry %llu, which has no data",
               (unsigned long long)rq->entry);
        return;
    }
    c_ent_t *e = &c->ents[rq->entry];
    if (e->vlen) {
        c_read_vlen(c, e, rq);
        return;
    }
    /* Stream elements [first, first+count) lie in dataset elements
     * [lo, hi); an array type can put a window boundary inside one. */
    uint64_t lo = rq->first / e->per, hi = (rq->first + rq->count + e->per - 1) / e->per;
    uint64_t skip = rq->first - lo * e->per;
    if (hi - lo > c->shm_bytes / ((uint64_t)e->esize * e->per)) {
        c_fail(c, NA_E_INTERNAL, "read of %llu elements exceeds the shared buffer",
               (unsigned long long)rq->count);
        return;
    }
    if (e->attr != NULL) {
        c_read_attr(c, e, rq);
        return;
    }
    if (c_open_cur(c, rq->entry) < 0) {
        char cause[200];
        h5_cause(cause, sizeof cause);
        c_fail(c, NA_E_FORMAT, "cannot open the dataset: %s", cause);
        return;
    }
    char cause[200] = "";
    herr_t r;
    if (range_is_fill(c, e, lo, hi - lo)) {
        r = fill_range(c, e, hi - lo);
        if (r < 0)
            h5_cause(cause, sizeof cause);
    } else {
        r = zc_check(c, e, lo, hi - lo, cause, sizeof cause);
        if (r >= 0) {
            r = c_read_sparse(c, e, lo, hi - lo, cause, sizeof cause);
            if (r < 0 && e->chunked)
                (void)optional_missing(c->cur, cause, sizeof cause);
        }
    }
    if (r < 0) {
        c_fail(c, NA_E_FORMAT, "reading elements %llu..%llu failed: %s",
               (unsigned long long)rq->first,
               (unsigned long long)(rq->first + rq->count - 1), cause);
        return;
    }
    if (skip > 0)
        memmove(c->shm, c->shm + skip * e->esize, rq->count * e->esize);
    if (na_h5p_send(c->sock, H5P_DATA, 0, NULL, 0, NULL, 0) != 0)
        c_die(c);
}

/* H5P_RAW: the stored (compressed) chunks that hold stream elements
 * [first, first+count), copied one after another into the mapping, with
 * an h5p_chunk_t per chunk as the answer's payload. Any unallocated chunk,
 * or too little room, answers H5P_FAIL with status NA_E_UNSUPPORTED: the
 * parent then asks for the window through H5Dread (H5P_READ). */
static void c_raw(child_t *c, const h5p_read_t *rq)
{
    c_fault("read");
    if (rq->entry >= c->n || c->ents[rq->entry].dset == NULL ||
        c->ents[rq->entry].chunk_elems == 0 || rq->count == 0) {
        c_fail(c, NA_E_INTERNAL, "raw chunk read of entry %llu, which has none",
               (unsigned long long)rq->entry);
        return;
    }
    c_ent_t *e = &c->ents[rq->entry];
    if (c_open_cur(c, rq->entry) < 0) {
        char cause[200];
        h5_cause(cause, sizeof cause);
        c_fail(c, NA_E_FORMAT, "cannot open the dataset: %s", cause);
        return;
    }
    /* The chunk rows (along dim 0) that hold the window's rows, and all
     * G chunks of each: chunk (k, j) has grid index k*G + j, j row-major
     * over dims 1.. (hdf5_proto.h, h5p_chunk_t). */
    uint64_t rowlen = 1, g = 1, gd[NA_MAX_NDIM];
    for (int d = 1; d < e->ndim; d++) {
        rowlen *= e->shape[d];
        gd[d] = (e->shape[d] + e->chunk[d] - 1) / e->chunk[d];
        g *= gd[d];
    }
    uint64_t k0 = rq->first / rowlen / e->chunk[0];
    uint64_t k1 = (rq->first + rq->count - 1) / rowlen / e->chunk[0];
    uint64_t nk64 = (k1 - k0 + 1) * g;
    if (k1 - k0 + 1 > 65536 || nk64 > 65536) {
        c_fail(c, NA_E_UNSUPPORTED, "%llu chunks in one window: use H5Dread",
               (unsigned long long)nk64);
        return;
    }
    size_t nk = (size_t)nk64;
    h5p_chunk_t *ck = malloc(nk * sizeof *ck);
    if (ck == NULL)
        c_die(c);
    uint64_t used = 0;
    for (size_t i = 0; i < nk; i++) {
        hsize_t off[H5S_MAX_RANK] = {0};
        uint64_t j = i % g;
        off[0] = (k0 + i / g) * e->chunk[0];
        for (int d = e->ndim - 1; d >= 1; d--) {
            off[d] = (j % gd[d]) * e->chunk[d];
            j /= gd[d];
        }
        hsize_t nbytes = 0;
        uint32_t mask = 0;
        if (H5Dget_chunk_storage_size(c->cur, off, &nbytes) < 0 || nbytes == 0 ||
            nbytes > c->shm_bytes - used) {
            H5Eclear2(H5E_DEFAULT);
            free(ck);
            c_fail(c, NA_E_UNSUPPORTED, "chunk not allocated or too large: use H5Dread");
            return;
        }
        if (H5Dread_chunk(c->cur, H5P_DEFAULT, off, &mask, c->shm + used) < 0) {
            char cause[200];
            h5_cause(cause, sizeof cause);
            free(ck);
            c_fail(c, NA_E_FORMAT, "reading chunk %llu failed: %s",
                   (unsigned long long)(k0 * g + i), cause);
            return;
        }
        ck[i].index = k0 * g + i;
        ck[i].offset = used;
        ck[i].bytes = nbytes;
        ck[i].mask = mask;
        ck[i].pad = 0;
        used += nbytes;
    }
    if (na_h5p_send(c->sock, H5P_DATA, 0, ck, nk * sizeof *ck, NULL, 0) != 0)
        c_die(c);
    free(ck);
}

/* H5P_FILL: what the parent may count without reading (na_fill_fn,
 * lib/scan_fill.c): the flat bounds of the entry's allocated chunks
 * (chunk_spans: up to 1024 of them) and the element every other element
 * reads as (fill_range: the fill value, or 0 when it is undefined or fill
 * time is "never", as H5Dread leaves the zeroed buffer). Not known
 * (n_spans UINT64_MAX) for attributes, array types, contiguous data, more
 * allocated chunks, or with NANAUDIT_HDF5_READ_ALL set (the tests' slow
 * path): the parent then reads everything. */
static void c_fill(child_t *c, const h5p_read_t *rq)
{
    c_fault("read"); /* the first request of a sparse dataset's scan */
    if (rq->entry >= c->n || c->ents[rq->entry].dset == NULL) {
        c_fail(c, NA_E_INTERNAL, "fill query of entry %llu, which has no data",
               (unsigned long long)rq->entry);
        return;
    }
    c_ent_t *e = &c->ents[rq->entry];
    h5p_fill_t hd = {UINT64_MAX, 0, 0};
    uint8_t elem[64];
    if (e->attr == NULL && e->per == 1 && e->esize <= sizeof elem && e->ndim > 0 &&
        (e->nostorage || (e->chunked && e->unalloc > 0)) &&
        getenv("NANAUDIT_HDF5_READ_ALL") == NULL && c_open_cur(c, rq->entry) == 0) {
        if (!e->nostorage && !e->have_spans)
            chunk_spans(c, e);
        if ((e->nostorage || e->n_spans != SIZE_MAX) && fill_range(c, e, 1) == 0) {
            memcpy(elem, c->shm, e->esize);
            hd.n_spans = e->nostorage ? 0 : e->n_spans;
            hd.elem_size = e->esize;
        }
    }
    H5Eclear2(H5E_DEFAULT);
    uint64_t ns = hd.n_spans == UINT64_MAX ? 0 : hd.n_spans;
    size_t len = sizeof hd + ns * sizeof *e->spans + hd.elem_size;
    uint8_t *msg = malloc(len);
    if (msg == NULL)
        c_die(c);
    memcpy(msg, &hd, sizeof hd);
    if (ns > 0)
        memcpy(msg + sizeof hd, e->spans, ns * sizeof *e->spans);
    memcpy(msg + sizeof hd + ns * sizeof *e->spans, elem, hd.elem_size);
    if (na_h5p_send(c->sock, H5P_DATA, 0, msg, len, NULL, 0) != 0)
        c_die(c);
    free(msg);
}

/* Fault injection for the tests of crash isolation (tests/cli/hdf5_*.sh):
 * NANAUDIT_HDF5_FAULT=segv|abort|hang[@read[:N]] makes this process crash
 * or hang at open (default), at the first data read or at the N-th (a
 * later pass: clean's write pass), as libhdf5 does on some hostile files.
 * Nothing else reads it. */
static void c_fault(const char *when)
{
    static unsigned long reads;
    const char *f = getenv("NANAUDIT_HDF5_FAULT");
    if (f == NULL)
        return;
    const char *at = strchr(f, '@');
    size_t wl = at != NULL ? strcspn(at + 1, ":") : 4;
    if (strncmp(at != NULL ? at + 1 : "open", when, wl) != 0 || when[wl] != '\0')
        return;
    if (at != NULL && at[1 + wl] == ':' && ++reads < strtoul(at + 2 + wl, NULL, 10))
        return;
    size_t n = at != NULL ? (size_t)(at - f) : strlen(f);
    if (n == 4 && strncmp(f, "segv", 4) == 0)
        raise(SIGSEGV);
    if (n == 5 && strncmp(f, "abort", 5) == 0)
        abort();
    if (n == 4 && strncmp(f, "hang", 4) == 0)
        for (;;)
            pause();
}

void na_h5c_main(const char *path, int sock, uint8_t *shm, uint64_t shm_bytes, int attributes)
{
    child_t c;
    memset(&c, 0, sizeof c);
    c.attributes = attributes;
    c.sock = sock;
    c.shm = shm;
    c.shm_bytes = shm_bytes;
    c.cur = -1;
    /* The tests make one read of sequences take less (hdf5_vlen_numeric.sh) */
    const char *vb = getenv("NANAUDIT_HDF5_VLEN_BATCH");
    c.vl_batch = vb != NULL && strtoull(vb, NULL, 10) > 0 ? strtoull(vb, NULL, 10) : VL_BATCH_BYTES;
    /* A crash in libhdf5 must end this process with its signal, which the
     * parent reports; a sanitizer's handler would turn it into exit 1. */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures become one line each */
    c_fault("open");
    /* The catalog reads object headers only: a damaged message size makes
     * libhdf5 allocate and clear up to 4 GiB per message (3.4 GB for the
     * 3.5 KB tests/data/hdf5/h5py_broken_fill_compound.h5), so the
     * address space may grow by VL_AS_ROOM at most until it is sent. */
    vl_cap_t cat_cap;
    vl_cap_on(&cat_cap);
    h5_header_cap = cat_cap.set;
    c.path = path;
    c.file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (c.file < 0) {
        char cause[200];
        h5_cause(cause, sizeof cause);
        /* flock's EWOULDBLOCK: HDF5 file locking (1.10+) found a writer,
         * h5py's 'r+' or 'w' (round 41a: errno 11 alone) */
        int locked = strstr(cause, "errno 11") != NULL;
        c_fail(&c, NA_E_FORMAT, "libhdf5 cannot open the file: %s%s", cause,
               locked ? " (locked: another process has it open for writing; audit it when "
                        "that one has closed it, or a copy)"
                      : "");
        _exit(0);
    }
    hid_t root = H5Gopen2(c.file, "/", H5P_DEFAULT);
    if (root < 0) {
        char cause[200];
        h5_cause(cause, sizeof cause);
        c_fail(&c, NA_E_FORMAT, "cannot open the root group: %s", cause);
        _exit(0);
    }
    H5O_info_t oi;
    size_t ix; /* the root's entries stay [0, 0): no alias for a link to it */
    if (H5Oget_info2(root, &oi, H5O_INFO_BASIC) >= 0)
        seen_before(&c, oi.addr, &ix);
    H5Eclear2(H5E_DEFAULT);
    visit_group(&c, root, "/", 0);
    soft_follow(&c);
    send_aliases(&c);
    H5Gclose(root);
    vl_cap_off(&cat_cap);
    h5_header_cap = 0;
    if (na_h5p_send(sock, H5P_DONE, 0, NULL, 0, NULL, 0) != 0)
        c_die(&c);
    for (;;) {
        h5p_hdr_t h;
        if (na_h5p_recv_all(sock, &h, sizeof h) != 0 || h.type == H5P_QUIT)
            break;
        h5p_read_t rq;
        if ((h.type != H5P_READ && h.type != H5P_RAW && h.type != H5P_FILL &&
             h.type != H5P_VLEN) ||
            h.len != sizeof rq || na_h5p_recv_all(sock, &rq, sizeof rq) != 0)
            break;
        if (c_index_check(&c, rq.entry) != 0)
            continue;
        if (h.type == H5P_VLEN)
            c_vlen(&c, &rq);
        else if (h.type == H5P_FILL)
            c_fill(&c, &rq);
        else if (h.type == H5P_RAW)
            c_raw(&c, &rq);
        else
            c_read(&c, &rq);
    }
    _exit(0);
}

/* The same rules for the writer's child (hdf5_wchild.c), one copy each. */
int na_h5c_select_range(hid_t fs, int ndim, const uint64_t *shape, uint64_t a, uint64_t n)
{
    return select_range(fs, ndim, shape, a, n);
}

hid_t na_h5c_range_space(int ndim, const uint64_t *shape, uint64_t a, uint64_t n)
{
    return range_space(ndim, shape, a, n);
}

void na_h5c_row_parts(int ndim, const uint64_t *shape, uint64_t a, uint64_t n,
                      uint64_t part[3][2])
{
    row_parts(ndim, shape, a, n, part);
}

uint64_t na_h5c_range_rows(int ndim, const uint64_t *shape, const uint64_t *chunk)
{
    uint64_t across = 1; /* chunks of one row of chunks */
    for (int d = 1; d < ndim; d++) {
        uint64_t g = chunk[d] && shape[d] ? (shape[d] - 1) / chunk[d] + 1 : 1;
        across = across <= UINT64_MAX / g ? across * g : UINT64_MAX;
    }
    return chunk[0] * (across < NA_H5_RANGE_CHUNKS ? NA_H5_RANGE_CHUNKS / across : 1);
}

/* The first prime >= n (n < 2^40: trial division is a few microseconds). */
static uint64_t prime_at_least(uint64_t n)
{
    for (n = n < 3 ? 3 : n | 1;; n += 2) {
        int prime = 1;
        for (uint64_t p = 3; prime && p * p <= n; p += 2)
            prime = n % p != 0;
        if (prime)
            return n;
    }
}

int na_h5c_chunk_cache(hid_t dapl, int ndim, const uint64_t *shape, const uint64_t *chunk,
                       size_t esize)
{
    size_t bytes = (size_t)64 << 20, cb = esize ? esize : 1; /* bytes of one chunk */
    uint64_t across = 1; /* chunks of one row of chunks */
    for (int d = 0; chunk && d < ndim; d++) {
        cb = chunk[d] && cb <= NA_H5_CACHE_MAX / chunk[d] ? cb * chunk[d] : NA_H5_CACHE_MAX;
        uint64_t g = d && chunk[d] && shape[d] ? (shape[d] - 1) / chunk[d] + 1 : 1;
        across = across <= UINT64_MAX / g ? across * g : UINT64_MAX;
    }
    if (chunk && ndim > 0)
        bytes = across > NA_H5_CACHE_MAX / cb ? NA_H5_CACHE_MAX
                : across * cb > bytes          ? across * cb
                                               : bytes;
    /* slots for the chunks of a row (not all that fit: one-element chunks
     * would make a table of 64 Mi slots, 512 MiB), at most 2^20 slots */
    uint64_t held = bytes / cb < across ? bytes / cb : across;
    held = held < (1u << 18) ? held : (1u << 18);
    size_t slots = (size_t)prime_at_least(4 * held < 12421 ? 12421 : 4 * held);
    return H5Pset_chunk_cache(dapl, slots, bytes, 0.0) < 0 ? -1 : 0;
}

void na_h5c_cause(char *buf, size_t cap) { h5_cause(buf, cap); }

int na_h5c_filter_missing(hid_t dset, hid_t dcpl, char *msg, size_t cap)
{
    return filter_missing(dset, dcpl, msg, cap, 0);
}

hid_t na_h5c_nest_memtype(char *const *names, int depth, hid_t leaf)
{
    return nest_memtype(names, depth, leaf);
}

int na_h5c_is_complex(hid_t ct) { return is_complex(ct); }

#else /* !NA_HAVE_HDF5 */

void na_h5c_main(const char *path, int sock, uint8_t *shm, uint64_t shm_bytes, int attributes)
{
    (void)attributes;
    (void)path;
    (void)sock;
    (void)shm;
    (void)shm_bytes;
    _exit(2);
}

#endif
