/*
 * write.h - the writer interface of `nanaudit clean` (issue 4): one table
 * per output format, like the reader table of format.h, so HDF5 and the
 * later formats plug in beside safetensors_write.c and raw_write.c.
 *
 * A writer is opened on a file descriptor the caller owns (a hidden
 * temporary file; cli/clean.c fsyncs, closes and renames it) with the
 * complete list of output tensors - names, dtypes, shapes and byte
 * sizes are known after the fit passes, before any data is written, so
 * a header can go first. Data then arrives tensor by tensor, in list
 * order, in any number of pieces (na_writer_begin, na_writer_write);
 * na_writer_finish checks every byte arrived and flushes. A writer that
 * copies the input's objects itself (HDF5: hdf5_write.c, which needs the
 * paths of na_wopts_t) takes no bytes for copied tensors
 * (na_writer_wants) and its metadata at finish (na_writer_set_meta).
 *
 * Errors name the problem in one line ("write error: No space left on
 * device"); the caller adds the file name. All are NA_E_WRITE, except
 * NA_E_NOMEM, NA_E_INTERNAL (bytes beyond a tensor's size: a bug) and
 * NA_E_USAGE (HDF5: a compound dataset whose fields cannot be written
 * back without misaligning its records).
 */
#ifndef NA_WRITE_H
#define NA_WRITE_H

#include "format.h"

#include <sys/types.h> /* pid_t */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct na_wtensor {
    const char *name;
    na_dtype_t dtype;  /* as stored (C64 copied whole) */
    int ndim;
    uint64_t shape[NA_MAX_NDIM];
    uint64_t bytes;    /* data bytes that will be written */
    int copied;        /* unchanged input tensor (not cleaned): a writer
                        * that copies objects itself (HDF5) takes no
                        * bytes for it, see na_writer_wants */
    na_endian_t byte_order; /* of the bytes: NA_LITTLE for cleaned tensors
                             * (na_clean_emit), the input's for copied ones
                             * (the .npy writer's descr says which) */
    int normalized;    /* cleaned with --normalize: the HDF5 writer drops the
                        * attributes describing stored values (CF packing,
                        * na_tensor_t.packed) */
    int computes;      /* cleaned values may be new numbers (--normalize, a
                        * mean or value=X fill, outliers clipped or set to
                        * the mean): the HDF5 writer refuses a float type
                        * of reduced precision, which would round them */
    int big_out;       /* raw, cleaned: write it big-endian, the input's
                        * --endian (raw has no header to say which order):
                        * the raw writer reverses each element's bytes */
    size_t index;      /* the input tensor it comes from (na_input_tensor of
                        * na_wopts_t.in; a C64 tensor: its NAME.real) */
    uint64_t width, nfeat; /* cleaned: elements per row and statistics kept
                            * (na_clean_tensor_t, lib/clean.h); two cleaned views
                            * of the same bytes get the same values only
                            * when both agree (torch_write.c, tied weights) */
    /* A copied tensor whose values clean cannot read (strings) that
     * follows a --together group: row r of axis 0 (of in_rows in the
     * input) is left out when bit r % 8 of drop[r / 8] is set; shape[0]
     * is the rows kept. The writer copies the kept rows itself. NULL:
     * copied whole. Only for formats where na_writer_rowcopy is 1. */
    const uint8_t *drop;
    uint64_t in_rows;
    /* A cleaned tensor that lost rows: its na_clean_tensor_t.row_state (2
     * bits per row of in_rows, lib/clean.h na_clean_row; 0 = kept), so
     * that the HDF5 writer can refuse fields of one compound dataset that
     * keep different rows (their records would pair values of different
     * input rows). NULL otherwise. */
    const uint8_t *row_state;
    /* A cleaned HDF5 dataset with storage never written (chunks, or all of
     * it): fill_set 1 when every feature makes the same value of its fill
     * value, whose bytes (dtype, little-endian) are fill
     * (na_clean_fill_out). The HDF5 writer makes that the copy's fill
     * value, so that the pieces equal to it stay unwritten as in the input
     * (a 6 KB file declaring 4 GiB wrote 16 GiB with --normalize zscore). */
    int fill_set;
    uint8_t fill[8];
} na_wtensor_t;

/* Where the writer's file and its input are, for writers that need more
 * than the descriptor: libhdf5 opens files by name, and the HDF5 writer
 * copies the input's groups, attributes and untouched datasets. */
typedef struct na_wopts {
    const char *input;   /* the input file (read only) */
    const char *path;    /* the file behind fd (the temporary file); NULL:
                          * a check only (clean --dry-run, fd is /dev/null):
                          * the HDF5 writer validates the input's structure
                          * as a real open does and creates no file */
    double timeout;      /* seconds one answer of a helper process may
                          * take (--hdf5-timeout); <= 0: no limit */
    const na_input_t *in; /* the input, open (the PyTorch writer asks
                           * where each tensor's bytes are: torch.c) */
} na_wopts_t;

/* Key/value pairs of file-level metadata (safetensors __metadata__;
 * ignored by formats without metadata, such as raw). */
typedef struct na_wmeta {
    const char *key, *value;
} na_wmeta_t;

typedef struct na_writer na_writer_t;

typedef struct na_writer_format {
    const char *name; /* "safetensors", "raw", "hdf5" */
    /* t[n] and meta[n_meta] are copied as needed; fd is not closed. */
    na_status_t (*open)(int fd, const na_wopts_t *o, const na_wtensor_t *t, size_t n,
                        const na_wmeta_t *meta, size_t n_meta, na_writer_t **out,
                        na_err_t *err);
} na_writer_format_t;

extern const na_writer_format_t na_writer_safetensors; /* safetensors_write.c */
extern const na_writer_format_t na_writer_raw;         /* raw_write.c */
extern const na_writer_format_t na_writer_npy;         /* npy_write.c */
extern const na_writer_format_t na_writer_hdf5;        /* hdf5_write.c */
extern const na_writer_format_t na_writer_npz;         /* npz_write.c */
extern const na_writer_format_t na_writer_torch;       /* torch_write.c */

/* The writer for an input format name ("safetensors", "raw", "hdf5",
 * "npy", "npz", "pytorch");
 * NULL when clean cannot write that format yet. */
const na_writer_format_t *na_writer_for(const char *input_format);

/* 1 when the writer for input_format can store dtype dt, so that clean
 * refuses an --out-dtype it cannot write before any work: .npy and .npz
 * have no type for BF16 and F8_* (numpy has none; na_npy_wdtype_ok);
 * safetensors, raw and HDF5 hold every dtype clean writes. 1 as well for
 * a format without a writer (clean refuses it for that reason). */
int na_writer_dtype_ok(const char *input_format, na_dtype_t dt);

/* 1 when the writer for input_format copies a selection of the rows of
 * a tensor whose values clean does not read (na_wtensor_t.drop): HDF5,
 * whose writer reads and writes the kept rows with the dataset's own
 * type (strings, opaque data, records of any type but references), and
 * .npz, whose writer copies the kept rows' bytes of a fixed-size dtype
 * (strings, bytes, void; not object arrays) after a new header. */
int na_writer_rowcopy(const char *input_format);

/* Start tensor i (0, 1, 2, ... in order). */
na_status_t na_writer_begin(na_writer_t *w, size_t i, na_err_t *err);
/* Append len bytes to the current tensor. */
na_status_t na_writer_write(na_writer_t *w, const void *buf, size_t len, na_err_t *err);
/* Every tensor complete? Flush buffered bytes. Does not fsync. */
na_status_t na_writer_finish(na_writer_t *w, na_err_t *err);
void na_writer_free(na_writer_t *w); /* NULL ok */
/* Stop and reap the process that writes the output file by its name (the
 * HDF5 writer child), if one is running. Async-signal-safe (kill,
 * waitpid): the handlers that remove the temporary output call it first,
 * so that the child cannot create the file again after the unlink (it
 * opens it by name, with O_CREAT; a signal to the parent alone left it
 * behind). */
void na_writer_stop_child(void);
/* Set the pid na_writer_stop_child stops, -1 for none (an atomic store:
 * the handler may run on any thread): set when the child starts; set to
 * -1 before it is reaped (after it is killed, or once it has closed the
 * file), so a reaped pid is never signalled. */
void na_writer_set_child(pid_t pid);
/* 0 when the writer copies tensor i from the input itself (a copied
 * tensor of the HDF5 writer): the caller then sends it no bytes. */
int na_writer_wants(const na_writer_t *w, size_t i);
/* 1 when the writer stores metadata at na_writer_finish (HDF5 root
 * attributes), so a value known only after the data, such as the input's
 * SHA-256, is given with na_writer_set_meta before finishing. */
int na_writer_late_meta(const na_writer_t *w);
/* Set (add or replace) metadata key before na_writer_finish; NA_E_INTERNAL
 * for writers without late metadata, NA_E_NOMEM. */
na_status_t na_writer_set_meta(na_writer_t *w, const char *key, const char *value,
                               na_err_t *err);

/* ---- shared by the writers (write.c) ------------------------------- */
struct na_writer_vtbl {
    na_status_t (*begin)(na_writer_t *, size_t, na_err_t *);
    na_status_t (*finish)(na_writer_t *, na_err_t *);
    void (*free)(na_writer_t *);
    /* NULL: data goes through the buffer to fd (na_writer_put); else
     * the writer's own transport (HDF5: to its libhdf5 process). */
    na_status_t (*data)(na_writer_t *, const void *, size_t, na_err_t *);
    /* NULL: metadata is written at open; else na_writer_set_meta. */
    na_status_t (*meta)(na_writer_t *, const char *, const char *, na_err_t *);
};
struct na_writer {
    const struct na_writer_vtbl *v;
    int fd;
    uint8_t *buf;          /* output buffer (NA_WBUF bytes) */
    size_t used;
    uint64_t written;      /* bytes handed to write(2) so far */
    size_t n, cur;         /* tensors; current one (n before the first) */
    uint64_t *bytes;       /* expected bytes per tensor */
    uint64_t cur_done;     /* bytes of the current tensor so far */
    char *header;          /* bytes before the data (may be NULL) */
    size_t header_len;
    uint8_t *copies;       /* per tensor, 1: copied by the writer itself
                            * (na_writer_wants); NULL: none */
};
#define NA_WBUF (1u << 20)
/* Set up the common part (buffer, byte counts). */
na_status_t na_writer_base_init(na_writer_t *w, int fd, const na_wtensor_t *t, size_t n,
                                na_err_t *err);
void na_writer_base_free(na_writer_t *w);
/* Buffered append of bytes that are not tensor data (headers). */
na_status_t na_writer_put(na_writer_t *w, const void *buf, size_t len, na_err_t *err);
na_status_t na_writer_flush(na_writer_t *w, na_err_t *err);

/* The .npy header np.save writes for t (magic, version, u16/u32 length,
 * the dict, spaces, '\n'; a multiple of 64 bytes: numpy.lib.format, see
 * npy_write.c) into out[cap], its length in bytes in *len. Shared by the
 * .npy and .npz writers. NA_E_UNSUPPORTED ".npy has no type for dtype X"
 * for dtypes numpy lacks (BF16, F8_*); NA_E_INTERNAL when cap is short
 * (NA_NPY_WHEADER_MAX always suffices). */
#define NA_NPY_WHEADER_MAX (NA_MAX_NDIM * 24 + 256)
/* The .npy header around dict[0..dl) (a Python dict literal, growth
 * spaces included): magic, version major.0 (1, or 2 when the header passes
 * 64 KiB; 3 for UTF-8 text, as numpy writes field names beyond latin-1),
 * the length (2 bytes in 1.0, else 4), dict, spaces to a multiple of 64
 * bytes and '\n', as numpy.lib.format's _wrap_header. Into out[cap],
 * length in *len. NA_E_INTERNAL when dl is 0 or cap is short. */
na_status_t na_npy_header_wrap(const char *dict, size_t dl, int major, uint8_t *out,
                               size_t cap, size_t *len, na_err_t *err);
/* 1 when a .npy header can name dtype dt (na_npy_header_build succeeds). */
int na_npy_wdtype_ok(na_dtype_t dt);
na_status_t na_npy_header_build(const na_wtensor_t *t, uint8_t *out, size_t cap, size_t *len,
                                na_err_t *err);

/* File offset of the first occurrence of needle (len bytes) in what the
 * writer wrote before the tensor data (the safetensors header), or
 * UINT64_MAX (raw: no header). Lets the caller fill in a value known only
 * after the data, such as the input's SHA-256, with one pwrite of the
 * same length. */
uint64_t na_writer_header_find(const na_writer_t *w, const char *needle, size_t len);

/* SHA-256 (FIPS 180-4, through OpenSSL's libcrypto EVP interface) of the
 * file at path, as 64 lowercase hex digits plus NUL in hex[65]. Reads
 * the file once, sequentially. NA_E_IO on a read error. */
na_status_t na_sha256_file(const char *path, char hex[65], na_err_t *err);

/* na_sha256_file on a thread of its own (POSIX threads), so that hashing
 * overlaps the passes that read the same file (cli/clean.c starts it
 * before fitting: on two cores the 1 GB/s of SHA-256 is otherwise a
 * serial second of a 1 GiB clean). start: NULL when no thread could be
 * made (the caller hashes with na_sha256_file); the thread is detached
 * (joinable with NA_FORK_QUIESCE, format.h) and blocks every signal.
 * join: waits, gives na_sha256_file's result and errors, frees the
 * job. cancel: stops it at its next 1 MiB, waits, frees (NULL ok). */
typedef struct na_sha_job na_sha_job_t;
na_sha_job_t *na_sha256_file_start(const char *path);
na_status_t na_sha256_file_join(na_sha_job_t *j, char hex[65], na_err_t *err);
void na_sha256_file_cancel(na_sha_job_t *j);

/* With NA_FORK_QUIESCE: wait until j's thread has ended (its hash done),
 * so that a fork may follow; j stays valid for join or cancel. Other
 * builds: nothing. NULL ok. */
void na_sha256_file_quiesce(na_sha_job_t *j);

#ifdef __cplusplus
}
#endif
#endif /* NA_WRITE_H */
