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
    NA_FILE_RAW           /* forced by --dtype */
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
} na_open_opts_t;

void na_open_opts_init(na_open_opts_t *o);

/* An opened input file with a list of tensors. */
typedef struct na_input na_input_t;

/* The per-format table. */
typedef struct na_format {
    const char *name; /* "safetensors", "raw" */
    na_status_t (*open)(const char *path, int fd, const na_open_opts_t *o,
                        na_input_t **out, na_err_t *err);
} na_format_t;

extern const na_format_t na_format_safetensors;
extern const na_format_t na_format_raw;

/* Sniff the first bytes of a file (head, n bytes, n may be < 64) of total
 * size `size`. Never reads beyond n. */
na_kind_of_file_t na_sniff(const uint8_t *head, size_t n, uint64_t size);
/* A short description for messages: "Git LFS pointer", "zip archive". */
const char *na_kind_of_file_str(na_kind_of_file_t k);

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
 * name, dtype and shape. */
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
/* Wraps an open fd (the map takes ownership and closes it). */
na_status_t na_map_open(int fd, uint64_t file_size, size_t window_bytes,
                        na_map_t **out, na_err_t *err);
/* Pointer to bytes [off, off+len) of the file, valid until the next call;
 * maps a page-aligned window (MADV_SEQUENTIAL). len <= window_bytes.
 * NA_E_IO when the range is past the end of the file. */
na_status_t na_map_get(na_map_t *m, uint64_t off, size_t len, const uint8_t **ptr,
                       na_err_t *err);
/* Read small ranges (headers) by pread into buf. */
na_status_t na_map_pread(na_map_t *m, uint64_t off, size_t len, void *buf, na_err_t *err);
void na_map_close(na_map_t *m);

/* ------------------------------------------------------------------ */
/* Sharded checkpoints (index.c): HF *.index.json with "weight_map".    */
/* ------------------------------------------------------------------ */
typedef struct na_index na_index_t;
/* Parse an index file (strict JSON via jansson). Shard paths are
 * resolved relative to the index's directory. */
na_status_t na_index_load(const char *path, na_index_t **out, na_err_t *err);
size_t na_index_shard_count(const na_index_t *ix);
const char *na_index_shard_path(const na_index_t *ix, size_t i); /* sorted, unique */
/* Check the tensors that shard i actually holds against the weight_map:
 * names is the list of tensor names of the opened shard. Returns
 * NA_E_FORMAT with a message naming the first offending tensor (in index
 * but not in shard; in shard but not in index). Also accumulates bytes
 * for the total_size check. */
na_status_t na_index_check_shard(na_index_t *ix, size_t i, const char *const *names,
                                 size_t n, uint64_t data_bytes, na_err_t *err);
/* After all shards: metadata.total_size (when present) equals the sum
 * of data bytes; every tensor of the weight_map was seen exactly once. */
na_status_t na_index_finish(na_index_t *ix, na_err_t *err);
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
    char *skip_reason;       /* non-NULL: listed as skipped (not data) */
    char *error;             /* non-NULL: open/stat problem -> exit 3 */
} na_walk_item_t;

typedef struct na_walk {
    size_t n, cap;
    na_walk_item_t *items;
    size_t n_indexes;
    na_index_t **indexes;    /* loaded index files (item from_index refers here) */
    char **index_paths;
    char **index_errors;     /* per index: NULL or a load error */
} na_walk_t;

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
