/*
 * format.h - the reader interface every file format implements, plus
 * content sniffing and the input walker.
 *
 * One table of functions per format (like curl's struct Curl_ssl), one
 * file per format: safetensors.c, raw.c (and hdf5.c later). Readers own
 * the file bytes; the engine in lib/ sees only na_tensor_t views whose
 * na_source_t reads windows of a mapping (mapfile.c) or of an inflated
 * stream.
 *
 * Error messages written to na_err_t by this layer name the problem and,
 * where there is one, the tensor ("tensor 'w': data_offsets [4, 0]: begin
 * after end"); the CLI puts the file path in front.
 */
#ifndef NA_FORMAT_H
#define NA_FORMAT_H

#include "nanaudit.h"
#include <sys/types.h> /* off_t */

/* Sanitizer runtimes before LLVM 19 (gcc 12's libasan, clang 14's TSan;
 * fixed by llvm-project pull request 96600) do not lock their allocator
 * around fork: a thread inside it when another forks (an exiting thread
 * returns its allocator cache under the allocator's lock) leaves the lock
 * held in the child, whose first malloc waits forever. The HDF5 children
 * call libhdf5, which allocates, right after fork. Builds with a
 * sanitizer therefore let no thread of ours run across a fork: clean
 * joins its hashing thread (write.h, na_sha256_file_quiesce) and
 * formats/hdf5.c pauses the OpenMP threads. glibc's malloc is fork-safe,
 * so other builds keep their threads. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NA_FORK_QUIESCE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NA_FORK_QUIESCE 1
#endif
#endif
/* NA_TSAN: a ThreadSanitizer build, which also kills a child of a
 * multi-threaded process that starts threads (formats/hdf5_write.c). */
#if defined(__SANITIZE_THREAD__)
#define NA_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NA_TSAN 1
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What a file is, decided from its content (na_sniff). */
typedef enum na_kind_of_file {
    NA_FILE_UNKNOWN = 0,
    NA_FILE_SAFETENSORS,  /* u64 LE header length, then '{' (after ws) */
    NA_FILE_HDF5,         /* \x89HDF\r\n\x1a\n at 0, 512, 1024, ... */
    NA_FILE_ZIP,          /* PK\x03\x04 / PK\x05\x06 */
    NA_FILE_GZIP,         /* \x1f\x8b */
    NA_FILE_JSON,         /* first non-ws byte '{' or '[' */
    NA_FILE_INDEX,        /* JSON with a "weight_map" object */
    NA_FILE_GIT_LFS,      /* "version https://git-lfs.github.com/spec/v1" */
    NA_FILE_NETCDF3,      /* "CDF\x01" / "CDF\x02" / "CDF\x05" */
    NA_FILE_EMPTY,        /* zero bytes */
    NA_FILE_RAW,          /* forced by --dtype */
    NA_FILE_NPY,          /* "\x93NUMPY" (npy.c) */
    NA_FILE_NPZ,          /* zip whose members are all *.npy (npz.c) */
    NA_FILE_TORCH,        /* zip with one DIR/data.pkl: torch.save (torch.c) */
    NA_FILE_PICKLE,       /* \x80 then protocol 2..5: legacy torch.save (torch.c) */
    NA_FILE_GGUF,         /* "GGUF" (llama.cpp, ggml docs/gguf.md): no reader yet */
    NA_FILE_MAT5,         /* "MATLAB 5.0 MAT-file": MATLAB v5/v7, no reader (v7.3 is HDF5) */
    NA_FILE_TAR           /* "ustar" at byte 257 (POSIX.1-1988 tar): no reader */
} na_kind_of_file_t;

/* Options that affect opening. */
typedef struct na_open_opts {
    uint64_t max_header_bytes; /* safetensors header cap, default 100,000,000 */
    /* raw: only used when raw_dtype != NA_DT_INVALID */
    na_dtype_t raw_dtype;
    na_endian_t raw_endian;
    uint64_t raw_offset;       /* bytes skipped at the start */
    int raw_ndim;              /* -1: 1-D from the size */
    uint64_t raw_shape[NA_MAX_NDIM];
    size_t window_bytes;       /* mapping window, default NA_DEFAULT_WINDOW_BYTES */
    /* raw: bytes of data after raw_offset (--length); NA_RAW_TO_EOF (the
     * default) = up to the end of the (inflated) file. Lets a user skip a
     * trailer, e.g. the 4-byte end marker of a Fortran record. */
    uint64_t raw_length;
    /* HDF5: seconds the reader process may take for one answer (catalog
     * entry or data window) before it is stopped (--hdf5-timeout); 0 =
     * no limit. Default 60. */
    double hdf5_timeout;
    /* CF missing values (_FillValue, missing_value): NA_MISSING_AUTO
     * honours them, NA_MISSING_NONE ignores them (--missing). */
    int missing_mode;
    /* HDF5: threads that inflate chunks (--threads); 0 = all cores. */
    int threads;
    /* HDF5: also audit numeric attributes, as OBJECT_PATH@NAME
     * (--attributes); 0 = datasets only. */
    int attributes;
    /* HDF5: do not measure variable-length datasets (na_tensor_t.vlen),
     * which reads every sequence; info, which reads no data, sets it. */
    int no_measure;
} na_open_opts_t;
enum { NA_MISSING_AUTO = 0, NA_MISSING_NONE = 1 };
#define NA_RAW_TO_EOF UINT64_MAX

void na_open_opts_init(na_open_opts_t *o);
/* 1 when raw data can be read as dt (--dtype): a decoded dtype of whole
 * bytes (not F4, whose values are 4 bits). raw.c refuses the others. */
int na_raw_dtype_ok(na_dtype_t dt);

/* An opened input file with a list of tensors. */
typedef struct na_input na_input_t;

/* The per-format table.
 * open: fd is an open read-only descriptor of path; ownership passes to
 * open in every case (it is closed on error, and by close() otherwise).
 * On success *out is a fully set na_input_t: v, format, path (the
 * format's own copy, freed by close) and file_size are filled in. */
typedef struct na_format {
    const char *name; /* "safetensors", "raw" */
    na_status_t (*open)(const char *path, int fd, const na_open_opts_t *o,
                        na_input_t **out, na_err_t *err);
} na_format_t;

extern const na_format_t na_format_safetensors;
extern const na_format_t na_format_raw;
extern const na_format_t na_format_npy;   /* npy.c */
extern const na_format_t na_format_npz;   /* npz.c */
extern const na_format_t na_format_torch; /* torch.c: zip and legacy */
extern const na_format_t na_format_hdf5;  /* hdf5.c: HDF5, netCDF-4, MATLAB v7.3 */

/* HDF5 only (hdf5.c); for an input of another format they return 0 /
 * NULL. Notes: file-level remarks (external or dangling links), valid
 * until the input is closed. Detail: entry i's storage for `info`
 * ("chunked [5,5] 4/4 chunks allocated filters=deflate(1) fill=0"). */
size_t na_hdf5_notes(const na_input_t *in, const char *const **notes);
const char *na_hdf5_detail(const na_input_t *in, size_t i);

/* HDF5 only (hdf5.c): the other hard-link paths of entry i's object. An
 * object reachable through several hard links (h5py: f['b'] = f['a']) is
 * one entry named by its first path in walk order (hdf5_child.c); these
 * are its other paths, each with the entry's suffix (a compound member
 * /a.x of /a linked as /b is also /b.x): the object's own other links
 * first, in walk order, then the paths through other links of the
 * groups above it (a group linked back into itself adds one level, not
 * every depth). clean's --include, --exclude and --together match them
 * too. At most NA_HDF5_MAX_ALIASES are kept per entry (a hostile file
 * can hold millions of links to one object) and 64 MiB of them per file;
 * *more (may be NULL) gets how many other paths were met beyond them.
 * Soft links are not listed. Other formats, or one link: 0, *names
 * NULL, *more 0. The names stay valid until the input is closed. */
#define NA_HDF5_MAX_ALIASES 64
/* The skip reason of an HDF5 dataset (or compound field) of object or
 * region references (hdf5_types.c): clean cannot select its rows, since
 * a reference names an object of the input (cli/clean.c). */
#define NA_HDF5_REASON_REFS "references"
/* ... of region references (H5T_STD_REF_DSETREG), which clean's copy
 * writes as NULL (hdf5_wchild.c translate): its report warns. */
#define NA_HDF5_REASON_REGREFS "region references"
/* The skip reason of the dimension scale netCDF-4 writes for a dimension
 * without a coordinate variable (na_h5_nc_dim_only). */
#define NA_HDF5_REASON_NC_DIM "a netCDF dimension, not a variable"
size_t na_hdf5_aliases(const na_input_t *in, size_t i, const char *const **names,
                       uint64_t *more);

/* safetensors only (safetensors.c), for checking a shard against its
 * index: the stored tensor names in storage order, one per stored tensor
 * (a C64 tensor once, without .real/.imag), and the bytes of tensor
 * data (the sum of end - begin). For an input of another format: 0 and
 * *names = NULL. The names stay valid until the input is closed. */
size_t na_safetensors_stored_names(const na_input_t *in, const char *const **names);
uint64_t na_safetensors_data_bytes(const na_input_t *in);

/* Sniff the first bytes of a file (head, n bytes, n may be < 64) of total
 * size `size`. Never reads beyond n. */
na_kind_of_file_t na_sniff(const uint8_t *head, size_t n, uint64_t size);
/* A short description for messages: "Git LFS pointer", "zip archive". */
const char *na_kind_of_file_str(na_kind_of_file_t k);

/* What na_probe_path learned about a file. */
typedef struct na_probe {
    na_kind_of_file_t kind; /* JSON is refined to NA_FILE_INDEX here */
    uint64_t size;          /* file size in bytes */
    uint64_t dev, ino;      /* st_dev / st_ino, to find a file seen twice */
    uint64_t lfs_size;      /* Git LFS pointer: its "size N"; UINT64_MAX if none */
    /* unrecognised content under a name ending in .safetensors: 1, and
     * bytes 0-7 as safetensors' little-endian header length (0 when the
     * file is shorter), for na_probe_check's message */
    int st_named;
    uint64_t st_hlen;
} na_probe_t;

/* Probe one path: stat() following symlinks; refuse anything but a
 * regular file without opening it (a FIFO would block: "not a regular
 * file (FIFO)"); open O_RDONLY|O_NONBLOCK; sniff the first 4 KiB plus the
 * HDF5 signature at 512, 1024, 2048, ... (HDF5 spec, "Format Signature");
 * parse a JSON file (jansson, duplicate keys rejected) to tell an HF
 * index (an object with "weight_map") from other JSON. With raw_mode,
 * any non-empty regular file is NA_FILE_RAW (no sniffing).
 * On NA_OK *p is filled and, when fd_out is not NULL, *fd_out is the open
 * descriptor (the caller owns it); otherwise it is closed.
 * Errors (err gets strerror's text, one line): NA_E_NOTFOUND (ENOENT,
 * ENOTDIR), NA_E_IO (permission, ELOOP "Too many levels of symbolic
 * links", not a regular file, read error), NA_E_NOMEM. */
na_status_t na_probe_path(const char *path, int raw_mode, na_probe_t *p, int *fd_out,
                          na_err_t *err);
/* Whether a probed file can be audited: NA_OK for safetensors, an index,
 * raw, .npy, .npz, PyTorch zip and pickle (legacy torch.save); otherwise
 * the one-line message of issue 2 section 3 for its kind, with
 * NA_E_UNSUPPORTED (LFS pointer, a zip that is neither, HDF5, netCDF-3, gzip
 * without --dtype, plain JSON) or NA_E_FORMAT (empty, unrecognised). */
na_status_t na_probe_check(const na_probe_t *p, na_err_t *err);

/* Open a file by content: sniffs, then dispatches to the format; gives
 * the messages of the issue for LFS pointers, zip, HDF5 without HDF5,
 * netCDF-3, unknown content. With o->raw_dtype set, any file is raw
 * (gzip inflated). */
na_status_t na_input_open(const char *path, const na_open_opts_t *o,
                          na_input_t **out, na_err_t *err);

/* Generic accessors implemented by every format (input.c dispatches). */
const char *na_input_format(const na_input_t *in);       /* "safetensors" */
const char *na_input_path(const na_input_t *in);
size_t na_input_count(const na_input_t *in);             /* tensors listed */
/* Entry i in storage order. For a C64 tensor the input lists two entries,
 * NAME.real and NAME.imag. When the entry cannot be audited (unsupported
 * dtype), *status is NA_E_UNSUPPORTED and err says why; t still has the
 * name, dtype and shape. An entry that is not numeric data (a string
 * array in an .npy) returns NA_OK with t->src.read == NULL and the reason
 * in err: the caller lists it as skipped. */
na_status_t na_input_tensor(na_input_t *in, size_t i, na_tensor_t *t, na_err_t *err);
/* Header-level metadata (safetensors __metadata__): n pairs. */
size_t na_input_metadata_count(const na_input_t *in);
void na_input_metadata(const na_input_t *in, size_t i, const char **key, const char **value);
/* Size in bytes of the data of entry i as stored (for `info`). */
uint64_t na_input_tensor_bytes(const na_input_t *in, size_t i);
void na_input_close(na_input_t *in); /* NULL ok */

/* Common base each format embeds first in its own struct. */
struct na_input_vtbl {
    size_t (*count)(const na_input_t *);
    na_status_t (*tensor)(na_input_t *, size_t, na_tensor_t *, na_err_t *);
    size_t (*meta_count)(const na_input_t *);
    void (*meta)(const na_input_t *, size_t, const char **, const char **);
    uint64_t (*tensor_bytes)(const na_input_t *, size_t);
    void (*close)(na_input_t *);
    /* Tensor i's name without the work tensor() may do (HDF5: measuring
     * variable-length data), NULL for an entry that is an error; or NULL
     * itself: input.c then asks tensor(). */
    const char *(*name)(const na_input_t *, size_t);
};
struct na_input {
    const struct na_input_vtbl *v;
    const char *format;
    char *path;
    uint64_t file_size;
};

/* ------------------------------------------------------------------ */
/* Windowed read-only mapping of a file (mapfile.c).                    */
/* ------------------------------------------------------------------ */
typedef struct na_map na_map_t;
/* Wraps an open fd (the map takes ownership and closes it, also when
 * na_map_open fails). window_bytes > 0: the most bytes one window maps
 * (plus the sub-page slack before an unaligned offset). */
na_status_t na_map_open(int fd, uint64_t file_size, size_t window_bytes,
                        na_map_t **out, na_err_t *err);
/* Pointer to bytes [off, off+len) of the file, valid until the next call;
 * maps a page-aligned window (MADV_SEQUENTIAL). len <= window_bytes
 * (a larger len gets a window of its own size). len 0 gives a valid
 * pointer to nothing. NA_E_IO when the range is past the end of the
 * file, or the file shrank since it was opened. */
na_status_t na_map_get(na_map_t *m, uint64_t off, size_t len, const uint8_t **ptr,
                       na_err_t *err);
/* Read small ranges (headers) by pread into buf. */
na_status_t na_map_pread(na_map_t *m, uint64_t off, size_t len, void *buf, na_err_t *err);
/* NA_E_IO "file shrank from A to B bytes while being read" (and a shrink
 * counted in na_map_shrinks) when the file is now shorter than when it
 * was opened; for readers that do not map it (formats/hdf5.c: libhdf5
 * reads a truncated file's missing chunks as zeros). NA_OK otherwise. */
na_status_t na_map_check_size(na_map_t *m, na_err_t *err);
void na_map_close(na_map_t *m);

/* A file truncated by another process while one of its windows is read
 * (mapfile.c, "Safety"). The message of such a read, without file or
 * tensor name: */
#define NA_MAP_SHRANK_MSG "the file shrank while it was being read (truncated by another process?)"
/* For the SIGBUS handler (cli/sigbus.c; async-signal-safe: lock-free
 * atomics and one mmap(2) system call). addr: the fault's si_addr
 * (si_code BUS_ADRERR). When it lies in a window now mapped by any
 * na_map_t, the window from addr's page to its end is replaced by
 * anonymous zero pages, that map is marked (its next na_map_get is
 * NA_E_IO, NA_MAP_SHRANK_MSG) and the shrink count grows; returns 1 and
 * the handler may return, so the faulting load reads zeros. Otherwise
 * (another address, or mmap failed) 0: nothing changed. */
int na_map_sigbus(const void *addr);
/* How many times, in this process, a mapped input was found to have
 * shrunk: by na_map_get's size check or by a fault (na_map_sigbus).
 * A caller compares it before and after reading a tensor: a change means
 * what it read (zeros) is not the file's data. */
uint64_t na_map_shrinks(void);

/* ------------------------------------------------------------------ */
/* Sharded checkpoints (index.c): HF *.index.json with "weight_map".    */
/* ------------------------------------------------------------------ */
typedef struct na_index na_index_t;
/* Parse an index file (strict JSON via jansson). Shard paths are
 * resolved relative to the index's directory; a shard path that is
 * absolute or has a ".." component is refused (NA_E_FORMAT), so an index
 * cannot make us read files outside its directory. Missing index:
 * NA_E_NOTFOUND. */
na_status_t na_index_load(const char *path, na_index_t **out, na_err_t *err);
size_t na_index_shard_count(const na_index_t *ix);
const char *na_index_shard_path(const na_index_t *ix, size_t i); /* sorted, unique */
/* Check the tensors that shard i actually holds against the weight_map:
 * names is the list of tensor names of the opened shard (as stored: use
 * na_safetensors_stored_names, so a C64 tensor is one name), data_bytes
 * its tensor data bytes (na_safetensors_data_bytes). Returns
 * NA_E_FORMAT with a message naming the first offending tensor and the
 * shards (in index but not in shard; in shard but not in index; in two
 * shards) and how many more problems there are. Also accumulates bytes
 * for the total_size check. A shard checked twice counts once. */
na_status_t na_index_check_shard(na_index_t *ix, size_t i, const char *const *names,
                                 size_t n, uint64_t data_bytes, na_err_t *err);
/* Shard i is an index file the walk lists as an input of its own: it
 * stays that input, and na_index_finish says why shard i was not checked
 * (it was "invalid or unreadable", without the reason; round 40a). */
void na_index_shard_is_index(na_index_t *ix, size_t i);
/* After all shards: every shard was checked (a missing file gives
 * NA_E_NOTFOUND "missing shard file 'X'", an unchecked one NA_E_FORMAT). */
na_status_t na_index_finish(na_index_t *ix, na_err_t *err);
/* After na_index_finish: 1 with a note in buf when metadata.total_size is
 * present and is not the sum of the tensors' data bytes (HF's meaning:
 * numel x element size). Not an error: no loader reads it, and writers
 * disagree (mlx-examples adds up the shard files' sizes, headers
 * included). */
int na_index_total_note(const na_index_t *ix, char *buf, size_t cap);
void na_index_free(na_index_t *ix);

/* ------------------------------------------------------------------ */
/* Input expansion (walk.c): command-line arguments -> list of files.   */
/* ------------------------------------------------------------------ */
typedef struct na_walk_item {
    char *path;              /* path to open */
    na_kind_of_file_t kind;  /* sniffed kind */
    int from_dir;            /* found by walking a directory */
    int from_index;          /* a shard listed by an index */
    size_t index_id;         /* which entry of na_walk_t.indexes, when from_index */
    size_t shard_no;         /* shard position in that index */
    /* Other indexes of the run that name this same file (two index
     * files over one folder): n_more pairs {index_id, shard_no}, each
     * checked as the first; the file is audited once. */
    size_t n_more;
    size_t (*more)[2];
    char *skip_reason;       /* non-NULL: listed as skipped (not data) */
    char *error;             /* non-NULL: open/stat problem -> exit 3 */
} na_walk_item_t;

/* The j-th index naming shard item it (j = 0 .. it->n_more): j 0 is
 * index_id/shard_no, the others more[j - 1]. */
static inline void na_walk_shard_ref(const na_walk_item_t *it, size_t j, size_t *index_id,
                                     size_t *shard_no)
{
    *index_id = j ? it->more[j - 1][0] : it->index_id;
    *shard_no = j ? it->more[j - 1][1] : it->shard_no;
}

typedef struct na_walk {
    size_t n, cap;
    na_walk_item_t *items;
    size_t n_indexes;
    na_index_t **indexes;    /* loaded index files (item from_index refers here) */
    char **index_paths;
    char **index_errors;     /* per index: NULL or a load error */
} na_walk_t;

/* Items, in order: every argument (a file) or every file found under a
 * directory argument, sorted by strcmp per directory. For each item the
 * CLI does exactly one of:
 *  - error != NULL: report the file as an error (exit 3);
 *  - skip_reason != NULL: list it as skipped (not data, or the same file
 *    as an earlier item);
 *  - kind == NA_FILE_INDEX: the index itself, indexes[index_id] (NULL
 *    when it failed to load: then error is set); call na_index_finish
 *    after its shards;
 *  - otherwise: na_input_open(path) and audit; when from_index, check it
 *    with na_index_check_shard(indexes[index_id], shard_no, ...), and
 *    against each pair of more[] alike.
 * A shard found in the directory before its index is the same item,
 * marked from_index when the index is read. A run whose items are all
 * skipped audited nothing: the CLI exits 3 (DESIGN.md).
 * na_walk returns NA_OK, or NA_E_NOMEM (then *w is empty); a problem with
 * one path (missing, FIFO, symlink loop, unreadable) is that item's
 * error, never the walk's. With raw_mode no file is sniffed and no index
 * is expanded: every non-empty regular file is an NA_FILE_RAW item. */

/* 1 when path's name says it is a checkpoint or data file (.safetensors,
 * .bin, .pt, .pth, .ckpt, .h5, .hdf5, .nc, .npy, .npz, .gguf, .mat): a
 * walk reports such a file that it cannot read as an error, not a skip,
 * and a --report or --save-params path never replaces one (cli/paths.c). */
int na_name_claims_data(const char *path);

/* Expand arguments: a file is taken as is; a directory is walked
 * recursively in sorted order following symlinks (hidden entries
 * skipped, loops broken); an index expands to its shards. A file reached
 * twice (same st_dev/st_ino) is kept once. raw_mode: every regular file is
 * data (--dtype given). */
na_status_t na_walk(const char *const *args, size_t nargs, int raw_mode, na_walk_t *w,
                    na_err_t *err);
void na_walk_free(na_walk_t *w);

#ifdef __cplusplus
}
#endif
#endif /* NA_FORMAT_H */
