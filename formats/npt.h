/*
 * npt.h - internals shared by the NumPy (.npy, .npz) and PyTorch (.pt,
 * .pth, .bin) readers: the zip wrapper (zip.c), strided views over a
 * storage (view.c), the .npy header parser (npy.c) and the restricted
 * pickle reader (pickle.c). Private to formats/: lib/ and cli/ never see
 * these names.
 *
 * The two byte-buffer parsers, na_npy_parse_header and na_pickle_load,
 * take nothing but bytes and are the entry points for fuzz targets: they
 * never read files, never execute anything, allocate memory bounded by a
 * small multiple of the input size, and return NA_E_FORMAT /
 * NA_E_UNSUPPORTED with a one-line message for every bad input.
 */
#ifndef NA_NPT_H
#define NA_NPT_H

#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* zip (zip.c): a thin wrapper over minizip (zlib contrib/minizip)      */
/* ------------------------------------------------------------------ */
typedef struct na_zip na_zip_t;

typedef struct na_zip_entry {
    char *name;        /* as stored (may hold any bytes but NUL) */
    uint64_t csize;    /* compressed bytes */
    uint64_t usize;    /* uncompressed bytes */
    int method;        /* 0 stored, 8 deflated (anything else: refused on read) */
    int encrypted;     /* general-purpose flag bit 0 */
    uint64_t data_pos; /* stored members: file offset of the data, else UINT64_MAX */
    /* As the central header holds them (APPNOTE 4.3.12), for a writer
     * that copies the member (formats/npz_write.c): */
    uint32_t crc;         /* CRC-32 of the uncompressed data */
    uint32_t flag;        /* general purpose bit flag */
    uint32_t dos_date;    /* last modification, MS-DOS date and time */
    uint32_t version;     /* version made by */
    uint32_t internal_fa; /* internal file attributes */
    uint32_t external_fa; /* external file attributes */
    /* File offsets of its local header (APPNOTE 4.3.7) and of its
     * central header (4.3.12), for a writer that patches the member's
     * CRC-32 in a copy of the archive (formats/torch_write.c). */
    uint64_t local_pos;
    uint64_t central_pos;
} na_zip_entry_t;

/* Open the zip archive in fd (which the zip takes: closed on error and by
 * na_zip_close), size bytes. Lists every member; for stored members the
 * data position (unzGetCurrentFileZStreamPos64) is read from the local
 * header, so their bytes can be mapped like any file range. Sizes and
 * offsets of 4 GiB or more come from the zip64 extra fields (APPNOTE
 * 4.5.3), read by zip.c itself. Errors: NA_E_FORMAT "not a readable zip
 * archive (...)", a zip64 field that lies (past the end of the file,
 * truncated extra field, local and central headers that disagree),
 * overlapping members, two members with the same name ("zip: duplicate
 * member name 'NAME' (refused: readers disagree on which copy wins)");
 * NA_E_NOMEM. */
na_status_t na_zip_open(int fd, uint64_t size, na_zip_t **out, na_err_t *err);
size_t na_zip_count(const na_zip_t *z);
const na_zip_entry_t *na_zip_entry(const na_zip_t *z, size_t i);
/* Index of the member named exactly `name`, or SIZE_MAX. */
size_t na_zip_find(const na_zip_t *z, const char *name);
/* z's member names sorted by strcmp, or by ASCII strcasecmp when nocase:
 * a malloc'd array of z's own strings (free the array only), NULL when
 * out of memory. For collision checks in O(n log n): duplicate names
 * (zip.c), np.load keys (npz.c), names torch.load does not tell apart
 * (torch.c). */
const char **na_zip_sorted_names(const na_zip_t *z, int nocase);
/* strcmp of two `const char *` elements (qsort, bsearch). */
int na_zip_name_cmp(const void *a, const void *b);
/* Two member names that are equal (strcmp), or equal but for ASCII case
 * when nocase, into *a and *b (the first such pair in sorted order): 1;
 * 0 when none; -1 out of memory. The strings are z's. */
int na_zip_name_clash(const na_zip_t *z, int nocase, const char **a, const char **b);
/* Read len bytes at uncompressed offset off of member i into buf,
 * inflating as a stream (a read before the current position restarts the
 * member). NA_E_FORMAT when the member is shorter, uses another method,
 * is encrypted, or its data is corrupt (zlib's message / CRC mismatch). */
na_status_t na_zip_read(na_zip_t *z, size_t i, uint64_t off, void *buf, size_t len,
                        na_err_t *err);
/* Read len bytes at offset off of member i's data as stored in the
 * archive (compressed bytes for a deflated member, csize in all), for a
 * byte-for-byte copy: nothing is inflated or CRC-checked. The data's file
 * position comes from the local header (zip64 ones as na_zip_open reads
 * them) and is checked against the file's size. NA_E_FORMAT for a range
 * past csize or a position past the end of the file, NA_E_UNSUPPORTED for
 * an encrypted member, NA_E_IO for a read error. */
na_status_t na_zip_read_raw(na_zip_t *z, size_t i, uint64_t off, void *buf, size_t len,
                            na_err_t *err);
/* Whole member i into a malloc'ed buffer (*buf, *len), refused when it is
 * larger than cap bytes. */
na_status_t na_zip_read_all(na_zip_t *z, size_t i, uint64_t cap, uint8_t **buf, size_t *len,
                            na_err_t *err);
/* Inflate member i into an unlinked temporary file (TMPDIR or /tmp) and
 * return its descriptor (caller owns it): for the rare deflated data that
 * must be read out of order (a Fortran-order array in a compressed .npz, a
 * re-compressed torch storage). Costs disk, never memory. */
na_status_t na_zip_spill(na_zip_t *z, size_t i, int *fd_out, na_err_t *err);
/* Another descriptor of the archive (dup), for a mapping of stored data. */
int na_zip_dup_fd(const na_zip_t *z);
/* The archive's comment (APPNOTE 4.3.16, at most 65535 bytes, after the
 * end of central directory record) as a malloc'd NUL-ended string, cut
 * at its first NUL byte; NULL when there is none (or no memory). */
char *na_zip_comment(const na_zip_t *z);
void na_zip_close(na_zip_t *z); /* NULL ok */

/* What a zip holds, from its member names: a torch.save archive has
 * exactly one "<dir>/data.pkl" at depth one (PyTorch
 * torch/serialization.py, _save: "archive/data.pkl", any folder name);
 * an .npz holds "*.npy" members (numpy/lib/_npyio_impl.py, savez): no
 * members at all (np.savez()), or at least one .npy and no data.pkl (a
 * file added by hand beside them; np.load opens any zip), or, with no
 * data.pkl, a member of another name that starts with the .npy magic
 * (read for it: na_npz_member_is_array). Anything else: NA_FILE_ZIP. */
na_kind_of_file_t na_zip_classify(na_zip_t *z);

/* ------------------------------------------------------------------ */
/* views (view.c): a tensor as (offset, shape, strides) over a storage   */
/* ------------------------------------------------------------------ */

/* Where a storage's bytes are: a mapped file range, or a zip member read
 * as a stream (then only contiguous views from offset 0). */
typedef struct na_store {
    na_map_t *map;     /* mapped: file bytes [base, base + size) */
    uint64_t base;
    uint64_t size;
    na_zip_t *zip;     /* streamed: member `member`, size bytes */
    size_t member;
} na_store_t;

/* The window buffer of gathered or inflated reads, shared by all views
 * of one input: the engine reads one tensor at a time and a pointer it
 * got is only used until its next read, so one buffer per input is
 * enough, and memory stays at one window however many tensors a file has. */
typedef struct na_scratch {
    uint8_t *buf;
    size_t cap;
} na_scratch_t;

/* A view: records of rsize bytes; record at multi-index i starts at
 * storage byte offset + sum(i[d] * stride[d]). A contiguous C-order view
 * is read straight from the storage; any other is gathered into C order
 * per window (view.c explains the cost). */
typedef struct na_view {
    const na_store_t *store;
    uint64_t offset;   /* bytes */
    uint32_t rsize;    /* bytes per record */
    int ndim;
    uint64_t shape[NA_MAX_NDIM];
    uint64_t stride[NA_MAX_NDIM]; /* bytes */
    uint64_t elements;
    int contiguous;    /* set by na_view_prepare */
    uint8_t *buf;      /* own gather buffer, when scratch is NULL */
    size_t cap;
    na_scratch_t *scratch; /* the input's shared buffer, or NULL */
} na_view_t;

/* Check the view against its storage (every record inside it, 64-bit
 * overflow included) and decide contiguity. NA_E_FORMAT with "view ...
 * reaches byte N of a storage of M bytes" otherwise; `what` names the
 * tensor in messages. */
na_status_t na_view_prepare(na_view_t *v, const char *what, na_err_t *err);
/* na_read_fn over a na_view_t (ctx): bytes [off, off+len) of the view in
 * C order (off and len multiples of rsize). */
na_status_t na_view_read(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                         na_err_t *err);
void na_view_free(na_view_t *v); /* frees the gather buffer */

/* ------------------------------------------------------------------ */
/* .npy header (npy.c)                                                 */
/* ------------------------------------------------------------------ */
#define NA_NPY_MAX_HEADER 10000u /* numpy.lib.format's default max_header_size */
#define NA_NPY_MAX_FIELDS 4096

typedef enum na_npy_kind {
    NA_NPY_NUMERIC = 0, /* decodable: dtype/parts below */
    NA_NPY_SKIP,        /* strings, bytes, void, datetime: not data */
    NA_NPY_OBJECT,      /* |O: a pickle, never read */
    NA_NPY_UNSUPPORTED  /* numeric but not decodable ('<i16', '<f3'): error, exit 3 */
} na_npy_kind_t;

/* One audited leaf of a (possibly structured) dtype. */
typedef struct na_npy_field {
    char *name;          /* "" for a plain array, ".x" or ".a.b" for fields (a
                          * field named '' is ".": NAME.) */
    na_npy_kind_t kind;
    char descr[24];      /* the leaf's type string as in the header, "<f4" */
    na_dtype_t dtype;    /* decoded element type (F64 for a c16 part) */
    na_dtype_t stored;   /* C64 for c8 parts, else dtype */
    na_endian_t order;
    uint32_t offset;     /* byte offset of the leaf in a record */
    uint32_t esize;      /* bytes per leaf element */
    int nparts;          /* 2 for complex (.real/.imag at +0, +esize/2), else 1 */
    int sub_ndim;        /* subarray dims of the field, appended to the shape */
    uint64_t sub_shape[8];
} na_npy_field_t;

typedef struct na_npy_header {
    int major, minor;
    uint64_t header_bytes;  /* magic + length + header text: data starts here */
    char descr_text[64];    /* descr as written (clipped), for messages */
    int fortran;
    int ndim;
    uint64_t shape[NA_MAX_NDIM];
    uint64_t elements;      /* product of shape */
    uint64_t itemsize;      /* bytes per record */
    uint64_t data_bytes;    /* elements * itemsize */
    size_t n_fields;
    na_npy_field_t *fields; /* owned */
} na_npy_header_t;

/* Parse a .npy header from the first n bytes of a file (n may be less
 * than the whole file; NA_E_FORMAT "truncated header" when it is less
 * than the header). Format: numpy's NEP 1 / numpy.lib.format docstring
 * (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
 * "\x93NUMPY", major, minor, a u16 (v1) or u32 (v2, v3) little-endian
 * header length, then a Python dict literal with exactly the keys
 * 'descr', 'fortran_order' and 'shape', parsed here as a restricted
 * literal (strings, ints with an optional Python-2 'L', True/False,
 * tuples, lists; nothing is evaluated). Header length above
 * NA_NPY_MAX_HEADER (numpy's own default cap, max_header_size=10000) is
 * refused. Elements and bytes are checked for 64-bit overflow. */
na_status_t na_npy_parse_header(const uint8_t *buf, size_t n, na_npy_header_t *h,
                                na_err_t *err);
void na_npy_header_free(na_npy_header_t *h);
/* "(4,)" / "(2, 3)" like Python's repr of the shape tuple. */
const char *na_npy_shape_str(const uint64_t *shape, int ndim, char *buf, size_t cap);

/* The tensors of one .npy (file or .npz member) over a store: entries are
 * appended to a growing list owned by the caller's reader. */
typedef struct na_npy_entry {
    char *name;        /* owned */
    na_npy_kind_t kind;
    char *reason;      /* skip / error reason, owned, or NULL */
    na_dtype_t dtype, stored;
    na_endian_t order;
    uint32_t part_offset; /* added to the field offset (imag part) */
    uint32_t field_offset;
    uint64_t bytes;    /* stored bytes of this entry (info) */
    int part;          /* na_tensor_t.part: 0, NA_PART_FIELD, NA_PART_COMPLEX */
    na_view_t view;
} na_npy_entry_t;

typedef struct na_npy_list {
    size_t n, cap;
    na_npy_entry_t *e;
    na_scratch_t *scratch; /* given to every entry's view (may be NULL) */
} na_npy_list_t;

/* Entries of one parsed header whose data starts at byte `data` of
 * store (and has store->size - data bytes there). prefix names them
 * ("" for a .npy file; the member name without ".npy" for an .npz).
 * A truncated data region is an error for the whole array (NA_E_FORMAT,
 * "data truncated: shape (4,) x <f4 needs 16 bytes, the file has 8"). */
na_status_t na_npy_add_entries(na_npy_list_t *l, const na_npy_header_t *h, const char *prefix,
                               const na_store_t *store, uint64_t data, na_err_t *err);
/* One skipped entry for an .npz member that is not a .npy file (np.load
 * lists it under its full name and returns its bytes; numpy/lib/
 * _npyio_impl.py, NpzFile): named `name`, `bytes` stored bytes (info),
 * not numeric data (na_input_tensor: NA_OK, src.read NULL). NA_E_NOMEM. */
na_status_t na_npy_add_other(na_npy_list_t *l, const char *name, uint64_t bytes, na_err_t *err);
/* 1 when np.load gives member i of an .npz as an array: it decides by the
 * member's first bytes, the .npy magic "\x93NUMPY", not by its name
 * (NpzFile.__getitem__). "x.npy" is taken for one whatever its bytes (its
 * header is then checked, and refused when bad); another name only with
 * the magic ("weights": listed under its full name): 1, else 0, and -1
 * for a member whose first bytes cannot be read (an error: np.load may
 * read it as an array). The .npz writer must decide the same
 * way (npz_write.c, read_member), or its members and the reader's
 * tensors disagree. */
int na_npz_member_is_array(na_zip_t *z, size_t i);
void na_npy_list_free(na_npy_list_t *l);
/* The na_input_t tensor accessor over one entry. */
na_status_t na_npy_entry_tensor(na_npy_entry_t *e, na_tensor_t *t, na_err_t *err);

/* ------------------------------------------------------------------ */
/* restricted pickle (pickle.c)                                        */
/* ------------------------------------------------------------------ */

/* One tensor found in a torch pickle. */
typedef struct na_pk_tensor {
    char *name;             /* flattened with dots: "model.fc1.weight" */
    char *storage_key;      /* persistent id key: "0", "140245" */
    na_dtype_t dtype;       /* NA_DT_INVALID: a storage type we cannot decode */
    char dtype_name[32];    /* torch storage type, e.g. "ComplexDoubleStorage" */
    uint64_t storage_numel; /* elements the persistent id declares */
    uint64_t offset;        /* storage offset, elements */
    int ndim;
    uint64_t shape[NA_MAX_NDIM];
    uint64_t stride[NA_MAX_NDIM]; /* elements */
    /* legacy format: the storage is a view (view_key, view_offset) */
    char *view_key;
    uint64_t view_offset;
} na_pk_tensor_t;

typedef struct na_pk_result {
    size_t n_tensors;
    na_pk_tensor_t *tensors;
    size_t n_meta;          /* non-tensor leaves: key, value (repr) pairs */
    char **meta;
    /* the top-level object when it is a plain int (legacy magic number
     * and protocol pickles); big ints as decimal text */
    int is_int;
    char int_text[48];
    size_t consumed;        /* bytes up to and including STOP */
    /* the top-level object when it is a list of strings or ints (the
     * legacy format's storage key list), as decimal/strings */
    int is_keys;
    size_t n_keys;
    char **keys;
} na_pk_result_t;

/* Read one pickle (protocols 2-5, plus the text opcodes torch never
 * writes but old pickles use: INT, LONG, GET, PUT) from buf[0..n) without
 * executing anything. Only these globals are accepted: collections
 * .OrderedDict, torch._utils._rebuild_tensor, _rebuild_tensor_v2,
 * _rebuild_tensor_v3, _rebuild_parameter, _rebuild_parameter_with_state,
 * torch.Size, torch.<Type>Storage for every storage type, torch.<dtype>
 * objects; every other global (builtins.eval, posix.system, ...) makes
 * the file refused with "references MODULE.NAME: not a plain tensor
 * checkpoint; nothing was executed" (NA_E_FORMAT). Opcode semantics:
 * CPython Lib/pickle.py and Lib/pickletools.py. Limits: nesting depth
 * 200, 1,000,000 flattened entries and 256 MiB of their names, 16 Mi
 * objects (na_pickle_set_object_cap); memo indices below max(1024, n).
 * Tensors are flattened from the root with dots in pickle order; dict
 * keys that are ints become their decimal text; list items their index. */
na_status_t na_pickle_load(const uint8_t *buf, size_t n, na_pk_result_t *r, na_err_t *err);
/* The most objects na_pickle_load builds (0: the default, 16 Mi, about
 * 3 GiB); past it the pickle is refused, NA_E_UNSUPPORTED. For tests,
 * which check the refusal without the default's memory. */
void na_pickle_set_object_cap(size_t n);
void na_pickle_result_free(na_pk_result_t *r);

/* ------------------------------------------------------------------ */
/* torch.c, for clean's PyTorch writer (torch_write.c)                  */
/* ------------------------------------------------------------------ */

/* Where tensor i of a PyTorch input keeps its bytes in the file. */
typedef struct na_torch_loc {
    uint64_t lo, hi;  /* file bytes [lo, hi) its view can touch; lo == hi:
                       * none (no elements, or a storage that is not kept
                       * as it is in the file: re-compressed) */
    int direct;       /* its elements are bytes [lo, hi) in C order, as
                       * stored: a C-contiguous view over a stored zip
                       * member or a legacy storage (a writer can replace
                       * them in place) */
    const char *why;  /* when not direct: why ("a non-contiguous view") */
    const na_zip_entry_t *member; /* the storage's zip member; NULL for a
                                   * legacy (pre-1.6) checkpoint */
    na_endian_t order;            /* the checkpoint's byteorder */
} na_torch_loc_t;

/* loc for tensor i of in, which na_input_open gave for a PyTorch file
 * (na_input_format "pytorch"). NA_E_INTERNAL for another input or i out
 * of range; NA_E_UNSUPPORTED (the reader's reason) for a tensor it
 * cannot decode (a quantized storage). */
na_status_t na_torch_locate(const na_input_t *in, size_t i, na_torch_loc_t *loc,
                            na_err_t *err);

/* Bytes [off, off + len) of the file a PyTorch input has open, read from
 * its descriptor, not by its path (which may name another file by now:
 * a checkpoint saved again over it). NA_E_IO past the end of the file or
 * on a read error; NA_E_INTERNAL for another input. */
na_status_t na_torch_pread(const na_input_t *in, uint64_t off, size_t len, void *buf,
                           na_err_t *err);

#ifdef __cplusplus
}
#endif
#endif /* NA_NPT_H */
