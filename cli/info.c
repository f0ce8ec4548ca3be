/*
 * info.c - `nanaudit info`: what each input holds, from its header only
 * (tensors, dtypes, shapes, bytes, metadata). No tensor data is read, so
 * it is instant on a 100 GB checkpoint. Output:
 *
 *   model.safetensors (safetensors, 2 tensors, 32 bytes of data)
 *     metadata: format = pt
 *     tensor  dtype  shape  bytes
 *     w       F32    [2,2]     16
 *
 * A dataset of variable-length sequences (na_tensor_t.vlen) shows its
 * own shape and "variable-length, N sequences" for its bytes: their
 * values are counted only by reading them (scan does).
 *
 * Names and metadata go through na_escape_text like every other string
 * from a file. Exit code: 0, or 3 when an input cannot be opened or an
 * index (model.safetensors.index.json) disagrees with its shards, the
 * same checks as scan's (cli_shard_check, na_index_finish).
 *
 * --format json: the same facts as one JSON object on stdout (schema in
 * docs/json-schema.md, "nanaudit info"), built with jansson; strings
 * through na_json_text (invalid UTF-8 as \xHH, as scan's report). Error
 * lines still go to stderr, and each is also the "error" of its file or
 * index entry.
 */
#include "cli.h"
#include "../lib/report_util.h" /* na_json_text */

#include <jansson.h>

#include <inttypes.h> /* PRIu64 */
#include <stdio.h>    /* printf */
#include <stdlib.h>   /* calloc, malloc, free */
#include <string.h>   /* strlen */

/* Escaped copy (malloc'd) or NULL. */
static char *esc(const char *s)
{
    char probe[1];
    size_t need = na_escape_text(s ? s : "", probe, sizeof probe) + 1;
    char *b = malloc(need);
    if (b)
        na_escape_text(s ? s : "", b, need);
    return b;
}

/* The shape info lists for t into *sh, its rank returned: a
 * variable-length dataset's own (its sequences), else the tensor's. */
static int listed_shape(const na_tensor_t *t, const uint64_t **sh)
{
    *sh = t->vlen ? t->vshape : t->shape;
    return t->vlen ? t->vndim : t->ndim;
}

/* The tensor's shape; a variable-length dataset's own (sequences). */
static void shape_str(char *b, size_t cap, const na_tensor_t *t)
{
    const uint64_t *sh;
    int nd = listed_shape(t, &sh);
    size_t n = (size_t)snprintf(b, cap, "[");
    for (int d = 0; d < nd && n < cap; d++)
        n += (size_t)snprintf(b + n, cap - n, "%s%" PRIu64, d ? "," : "", sh[d]);
    if (n < cap)
        snprintf(b + n, cap - n, "]");
}

/* --format json: the document being built (NULL for text). */
typedef struct {
    json_t *files;   /* array of file objects */
    json_t *indexes; /* array of index objects, by walk index id */
} info_json_t;

/* Append v (a new reference) to array a. */
static void push(json_t *a, json_t *v) { json_array_append_new(a, v); }

/* The tensor's shape as a JSON array (a variable-length dataset's own). */
static json_t *shape_json(const na_tensor_t *t)
{
    const uint64_t *sh;
    int nd = listed_shape(t, &sh);
    json_t *a = json_array();
    for (int d = 0; d < nd; d++)
        push(a, json_integer((json_int_t)sh[d]));
    return a;
}

/* The product of shape_json's dimensions; null when it overflows 64 bits
 * (an error entry's shape may). A readable non-vlen entry: the reader's
 * count, as scan reports it (0 for an HDF5 null dataspace, whose shape is
 * [] like a scalar's; round 44a). */
static json_t *elements_json(const na_tensor_t *t, int ok)
{
    if (ok && !t->vlen)
        return json_integer((json_int_t)t->elements);
    const uint64_t *sh;
    int nd = listed_shape(t, &sh);
    uint64_t n = 1;
    for (int d = 0; d < nd; d++)
        if (__builtin_mul_overflow(n, sh[d], &n) || n > (uint64_t)INT64_MAX)
            return json_null();
    return json_integer((json_int_t)n);
}

/* HDF5 hard-link paths other than the listed one, as JSON: [] for other
 * formats; *more gets those past the reader's cap. */
static json_t *aliases_json(const na_input_t *in, size_t i, uint64_t *more)
{
    const char *const *alias;
    size_t n = na_hdf5_aliases(in, i, &alias, more);
    json_t *a = json_array();
    for (size_t k = 0; k < n; k++)
        push(a, na_json_text(alias[k]));
    return a;
}

static void pad(const char *s, size_t w)
{
    fputs(s, stdout);
    for (size_t i = na_text_columns(s); i < w; i++)
        fputc(' ', stdout);
}

/* HDF5: the entry's other hard-link paths (na_hdf5_aliases), the names
 * clean's patterns also match, on one line: "also linked as /b, /c", and
 * "and N more (at most 64 kept)" past the reader's cap. */
static void print_aliases(const na_input_t *in, size_t i)
{
    const char *const *alias;
    uint64_t more = 0;
    size_t n = na_hdf5_aliases(in, i, &alias, &more);
    if (n == 0 && more == 0)
        return;
    fputs("      also linked as", stdout);
    for (size_t k = 0; k < n; k++) {
        char *a = esc(alias[k]);
        printf("%s %s", k ? "," : "", a ? a : "?");
        free(a);
    }
    if (more)
        printf(" and %" PRIu64 " more (at most %d kept)", more, NA_HDF5_MAX_ALIASES);
    fputc('\n', stdout);
}

/* The dtype info lists for t: a part of a complex tensor (NAME.real, F32
 * of a C64) as scan lists it, with *part set; NA_DT_INVALID for a member
 * without one ("?" in the table, null in JSON). */
static na_dtype_t listed_dtype(const na_tensor_t *t, int *part)
{
    *part = t->stored != NA_DT_INVALID && t->dtype != NA_DT_INVALID && t->stored != t->dtype;
    return *part || !t->stored ? t->dtype : t->stored;
}

/* --format json: the entries of in as objects appended to arr; the rules
 * of print_tensors (a damaged entry is the file's error, stderr, exit 3).
 * Keys: name, status ("ok"; "skipped": not numeric data; "unsupported":
 * listed "not auditable", no error; "error": damaged), reason (null for
 * "ok"), dtype (null when none), shape, elements (its product, null past
 * 2^63 - 1), bytes (null for variable-length
 * data), sequences (variable-length data only, else null), stored_dtype
 * (the complex dtype a .real/.imag part is of, else null), layout (HDF5: the storage line of the text table, else
 * null), aliases (HDF5 hard-link paths, else []), aliases_more. */
static int tensors_json(na_input_t *in, const char *path, json_t *arr)
{
    int rc = 0;
    for (size_t i = 0; i < na_input_count(in); i++) {
        na_tensor_t t;
        na_err_t err;
        memset(&t, 0, sizeof t);
        memset(&err, 0, sizeof err);
        na_status_t st = na_input_tensor(in, i, &t, &err);
        int part;
        na_dtype_t dtv = listed_dtype(&t, &part);
        int damaged = st == NA_E_FORMAT || st == NA_E_IO;
        const char *reason = NULL, *status = "ok";
        if (st != NA_OK) {
            status = damaged ? "error" : "unsupported";
            reason = err.msg[0] ? err.msg : na_status_str(st);
        } else if (t.src.read == NULL) {
            status = "skipped";
            reason = err.msg[0] ? err.msg : "not numeric";
        }
        json_t *o = json_object();
        json_object_set_new(o, "name", na_json_text(t.name ? t.name : ""));
        json_object_set_new(o, "status", json_string(status));
        json_object_set_new(o, "reason", reason ? na_json_text(reason) : json_null());
        json_object_set_new(o, "dtype", dtv == NA_DT_INVALID ? json_null()
                                                             : json_string(na_dtype_name(dtv)));
        json_object_set_new(o, "shape", shape_json(&t));
        json_object_set_new(o, "elements", elements_json(&t, st == NA_OK));
        int vl = st == NA_OK && t.vlen;
        json_object_set_new(o, "bytes", vl ? json_null()
                                           : json_integer((json_int_t)na_input_tensor_bytes(in, i)));
        json_object_set_new(o, "sequences", vl ? json_integer((json_int_t)t.sequences)
                                               : json_null());
        json_object_set_new(o, "stored_dtype", part ? json_string(na_dtype_name(t.stored))
                                               : json_null());
        const char *det = na_hdf5_detail(in, i);
        json_object_set_new(o, "layout", det && *det ? na_json_text(det) : json_null());
        uint64_t more = 0;
        json_object_set_new(o, "aliases", aliases_json(in, i, &more));
        json_object_set_new(o, "aliases_more", json_integer((json_int_t)more));
        push(arr, o);
        if (damaged) {
            cli_error(path, "%s", reason);
            rc = 3;
        }
    }
    return rc;
}

/* Two passes over the header entries: widths, then rows. A tensor that
 * is damaged (NA_E_FORMAT, NA_E_IO: an HDF5 group that cannot be listed,
 * a link that cannot be read) is listed "(not auditable)" and is also an
 * error of the file: its line on stderr, exit 3, as scan's (info judges
 * no data, but such an input was not listed whole). One that is valid but
 * not supported (NA_E_UNSUPPORTED) is only listed. */
static int print_tensors(na_input_t *in, const char *path)
{
    int rc = 0;
    size_t n = na_input_count(in), wn = 6, ws = 5, wd = 5;
    char shape[128];
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            printf("  %-*s  %-*s  %-*s  %s\n", (int)wn, "tensor", (int)wd, "dtype", (int)ws,
                   "shape", "bytes");
        for (size_t i = 0; i < n; i++) {
            na_tensor_t t;
            na_err_t err;
            memset(&t, 0, sizeof t);
            memset(&err, 0, sizeof err);
            na_status_t st = na_input_tensor(in, i, &t, &err);
            char *name = esc(t.name);
            if (!name)
                return 4;
            shape_str(shape, sizeof shape, &t);
            /* the part of a complex tensor (NAME.real: F32 of a C64) is
             * listed as scan lists it, its bytes the part's */
            int part;
            na_dtype_t dtv = listed_dtype(&t, &part);
            /* non-numeric members have no dtype: "?" as in scan's table */
            const char *dt = dtv == NA_DT_INVALID ? "?" : na_dtype_name(dtv);
            if (!pass) {
                wd = strlen(dt) > wd ? strlen(dt) : wd;
                size_t nw = na_text_columns(name);
                wn = nw > wn ? nw : wn;
                ws = strlen(shape) > ws ? strlen(shape) : ws;
            } else {
                fputs("  ", stdout);
                pad(name, wn);
                char bytes[64];
                if (st == NA_OK && t.vlen)
                    snprintf(bytes, sizeof bytes, "variable-length, %" PRIu64 " sequence%s",
                             t.sequences, t.sequences == 1 ? "" : "s");
                else
                    snprintf(bytes, sizeof bytes, "%" PRIu64, na_input_tensor_bytes(in, i));
                char of[48] = "";
                if (part)
                    snprintf(of, sizeof of, "  (part of a %s tensor)", na_dtype_name(t.stored));
                /* why not, unless the stderr line says it (below) */
                char why[NA_ERR_LEN + 24] = "";
                if (st != NA_OK)
                    snprintf(why, sizeof why, "  (not auditable%s%s)",
                             st == NA_E_FORMAT || st == NA_E_IO || !err.msg[0] ? "" : ": ",
                             st == NA_E_FORMAT || st == NA_E_IO ? "" : err.msg);
                else if (t.src.read == NULL) /* the reader's reason, as scan's row */
                    snprintf(why, sizeof why, "  (skipped: %s)",
                             err.msg[0] ? err.msg : "not numeric");
                printf("  %-*s  %-*s  %s%s%s\n", (int)wd, dt, (int)ws, shape, bytes, of, why);
                if (st == NA_E_FORMAT || st == NA_E_IO) {
                    cli_error(path, "%s", err.msg[0] ? err.msg : na_status_str(st));
                    rc = 3;
                }
                /* HDF5: layout, chunks, filters, fill value */
                char *det = esc(na_hdf5_detail(in, i));
                if (det && *det)
                    printf("      %s\n", det);
                free(det);
                print_aliases(in, i);
            }
            free(name);
        }
    }
    return rc;
}

/* The errors of each index, as scan keeps them in its report entry: a
 * problem is one stderr line the first time, joined to the index's
 * earlier ones with "; " (the JSON entry's "error"), never repeated. */
typedef struct {
    char **said; /* per walk index: its errors so far, or NULL */
    json_t **jix; /* --format json: per walk index, its object; else NULL */
} info_ix_t;

/* Index k (path) has problem msg of status st: 0 when said already, else
 * its exit code (4 out of memory). */
static int index_error(info_ix_t *x, size_t k, const char *path, na_status_t st,
                       const char *msg)
{
    char *old = x->said[k];
    if (old && strstr(old, msg))
        return 0;
    cli_error(path, "%s", msg);
    size_t n = (old ? strlen(old) + 2 : 0) + strlen(msg) + 1;
    char *j = malloc(n);
    if (j == NULL)
        return 4;
    snprintf(j, n, "%s%s%s", old ? old : "", old ? "; " : "", msg);
    free(old);
    x->said[k] = j;
    if (x->jix && x->jix[k]) {
        json_object_set_new(x->jix[k], "status", json_string("error"));
        json_object_set_new(x->jix[k], "error", na_json_text(j));
    }
    return cli_exit_for_status(st);
}

/* A shard of an index (it->from_index) is checked against every index
 * naming it as scan checks it (cli_shard_check): a mismatch is that
 * index's error (index_error). */
static int shard_check(const na_walk_t *w, const na_walk_item_t *it, na_input_t *in,
                       info_ix_t *x)
{
    int rc = 0;
    for (size_t j = 0; it->from_index && j <= it->n_more; j++) { /* every index naming it */
        size_t k, shard;
        na_walk_shard_ref(it, j, &k, &shard);
        na_err_t err = {{0}};
        if (w->indexes[k] == NULL)
            continue;
        na_status_t st = cli_shard_check(w->indexes[k], shard, in, &err);
        if (st != NA_OK)
            rc = cli_exit_merge(rc, index_error(x, k, w->index_paths[k], st,
                                                err.msg[0] ? err.msg : na_status_str(st)));
    }
    return rc;
}

/* --format json: a new file object for path, appended to files, with
 * every key (null or empty until filled: a file that cannot be opened
 * keeps them so). */
static json_t *file_json(json_t *files, const char *path)
{
    json_t *f = json_object();
    json_object_set_new(f, "path", na_json_text(path));
    json_object_set_new(f, "format", json_null());
    json_object_set_new(f, "status", json_string("ok"));
    json_object_set_new(f, "error", json_null());
    json_object_set_new(f, "index", json_null());
    json_object_set_new(f, "bytes", json_null());
    json_object_set_new(f, "metadata", json_object());
    json_object_set_new(f, "notes", json_array());
    json_object_set_new(f, "tensors", json_array());
    push(files, f);
    return f;
}

/* File object f (NULL in text mode) could not be listed: msg. */
static void file_failed(json_t *f, const char *msg)
{
    if (f == NULL)
        return;
    json_object_set_new(f, "status", json_string("error"));
    json_object_set_new(f, "error", na_json_text(msg));
}

/* --format json: the rest of file object f for the open input in (bytes
 * of data in all), then its tensors (tensors_json's code returned). */
static int fill_file_json(json_t *f, na_input_t *in, const char *path, uint64_t bytes)
{
    json_object_set_new(f, "format", json_string(na_input_format(in)));
    json_object_set_new(f, "bytes", json_integer((json_int_t)bytes));
    json_t *meta = json_object_get(f, "metadata"); /* __metadata__: keys unique */
    for (size_t i = 0; i < na_input_metadata_count(in); i++) {
        const char *k = NULL, *v = NULL;
        na_input_metadata(in, i, &k, &v);
        char *fk = na_json_form(k ? k : "");
        if (fk)
            json_object_set_new(meta, fk, na_json_text(v ? v : ""));
        free(fk);
    }
    const char *const *notes;
    size_t n_notes = na_hdf5_notes(in, &notes);
    for (size_t k = 0; k < n_notes; k++)
        push(json_object_get(f, "notes"), na_json_text(notes[k]));
    int rc = tensors_json(in, path, json_object_get(f, "tensors"));
    if (rc)
        file_failed(f, "a tensor is damaged (its entry's reason)");
    return rc;
}

/* List one file; *shard_rc gets shard_check's code (0 for other files).
 * jf: its JSON object (NULL in text mode); x: the indexes' errors. */
static int info_file(const na_walk_t *w, const na_walk_item_t *it, const cli_opts_t *o,
                     info_ix_t *x, int *shard_rc, json_t *jf)
{
    const char *path = it->path;
    na_input_t *in = NULL;
    na_err_t err = {{0}};
    na_open_opts_t oo = o->open;
    oo.no_measure = 1; /* no data is read */
    na_status_t st = na_input_open(path, &oo, &in, &err);
    if (st != NA_OK) {
        const char *msg = err.msg[0] ? err.msg : na_status_str(st);
        cli_error(path, "%s", msg);
        file_failed(jf, msg);
        return cli_exit_for_status(st);
    }
    size_t n = na_input_count(in);
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += na_input_tensor_bytes(in, i);
    if (jf) {
        int rc = fill_file_json(jf, in, path, bytes);
        *shard_rc = shard_check(w, it, in, x);
        na_input_close(in);
        return rc;
    }
    char *p = esc(path);
    if (!p) {
        na_input_close(in);
        return 4;
    }
    printf("%s (%s, %zu tensor%s, %" PRIu64 " bytes of data)\n", p, na_input_format(in), n,
           n == 1 ? "" : "s", bytes);
    free(p);
    for (size_t i = 0; i < na_input_metadata_count(in); i++) {
        const char *k = NULL, *v = NULL;
        na_input_metadata(in, i, &k, &v);
        char *ek = esc(k), *ev = esc(v);
        if (ek && ev)
            printf("  metadata: %s = %s\n", ek, ev);
        free(ek);
        free(ev);
    }
    const char *const *notes; /* HDF5: external and dangling links */
    size_t n_notes = na_hdf5_notes(in, &notes);
    for (size_t k = 0; k < n_notes; k++) {
        char *en = esc(notes[k]);
        if (en)
            printf("  note: %s\n", en);
        free(en);
    }
    int rc = n ? print_tensors(in, path) : 0;
    *shard_rc = shard_check(w, it, in, x);
    na_input_close(in);
    return rc;
}

/* After every shard: each shard file was there (na_index_finish: a
 * missing shard is named also after a shard's mismatch, as in scan), and
 * for an index without errors the metadata.total_size note. */
static int finish_indexes(const na_walk_t *w, info_ix_t *x)
{
    int rc = 0;
    for (size_t i = 0; i < w->n_indexes; i++) {
        na_err_t err = {{0}};
        if (w->indexes[i] == NULL)
            continue;
        na_status_t st = na_index_finish(w->indexes[i], &err);
        char note[256];
        if (st != NA_OK) {
            rc = cli_exit_merge(rc, index_error(x, i, w->index_paths[i], st,
                                                err.msg[0] ? err.msg : na_status_str(st)));
        } else if (x->said[i] == NULL && na_index_total_note(w->indexes[i], note, sizeof note)) {
            if (x->jix && x->jix[i])
                json_object_set_new(x->jix[i], "note", na_json_text(note));
            else if (!x->jix)
                printf("note %s: %s\n", w->index_paths[i], note);
        }
    }
    return rc;
}

/* --format json: index object of walk index k, made on first use and
 * appended to arr. */
static json_t *index_json(const na_walk_t *w, size_t k, json_t **jix, json_t *arr)
{
    if (jix[k] == NULL) {
        size_t n = w->indexes[k] ? na_index_shard_count(w->indexes[k]) : 0;
        json_t *x = json_object();
        json_object_set_new(x, "path", na_json_text(w->index_paths[k]));
        json_object_set_new(x, "shards", json_integer((json_int_t)n));
        json_object_set_new(x, "status", json_string("ok"));
        json_object_set_new(x, "error", json_null());
        json_object_set_new(x, "note", json_null());
        push(arr, x);
        jix[k] = x;
    }
    return jix[k];
}

/* 1 when JSON entry o has "status": "error". */
static int is_error(json_t *o)
{
    const char *st = json_string_value(json_object_get(o, "status"));
    return st != NULL && strcmp(st, "error") == 0;
}

/* --format json: the summary and the document on stdout; 4 when it
 * cannot be written, else rc. error: the run's own error line or NULL. */
static int print_json(json_t *doc, int rc, const char *error)
{
    json_t *files = json_object_get(doc, "files"), *f;
    size_t i, n_tensors = 0, errors = 0;
    json_int_t bytes = 0;
    json_array_foreach(files, i, f) {
        json_t *ts = json_object_get(f, "tensors"), *t;
        size_t j;
        n_tensors += json_array_size(ts);
        bytes += json_integer_value(json_object_get(f, "bytes"));
        errors += is_error(f);
        json_array_foreach(ts, j, t)
            errors += is_error(t);
    }
    json_array_foreach(json_object_get(doc, "indexes"), i, f)
        errors += is_error(f);
    json_object_set_new(doc, "error", error ? na_json_text(error) : json_null());
    json_t *s = json_object();
    json_object_set_new(s, "files", json_integer((json_int_t)json_array_size(files)));
    json_object_set_new(s, "tensors", json_integer((json_int_t)n_tensors));
    json_object_set_new(s, "bytes", json_integer(bytes));
    json_object_set_new(s, "errors", json_integer((json_int_t)(errors + (error != NULL))));
    json_object_set_new(s, "exit_code", json_integer(rc));
    json_object_set_new(doc, "summary", s);
    int bad = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 ||
              fputc('\n', stdout) == EOF || fflush(stdout) != 0;
    json_decref(doc);
    if (bad) {
        cli_error(NULL, "cannot write the JSON listing to standard output");
        return 4;
    }
    return rc;
}

int cli_info(const cli_opts_t *o)
{
    na_walk_t w;
    na_err_t err = {{0}};
    int rc = 0;
    size_t shown = 0;
    char run_error[NA_ERR_LEN + 64] = ""; /* JSON: the run's own error */
    json_t *doc = NULL, *files = NULL, *indexes = NULL, *skipped = NULL, **jix = NULL;
    info_ix_t x = {NULL, NULL};
    if (o->json) {
        doc = json_object();
        json_object_set_new(doc, "schema_version", json_integer(1));
        json_t *tool = json_object();
        json_object_set_new(tool, "name", json_string("nanaudit"));
        json_object_set_new(tool, "version", json_string(NA_VERSION));
        json_object_set_new(doc, "tool", tool);
        json_object_set_new(doc, "command", json_string("info"));
        json_object_set_new(doc, "files", files = json_array());
        json_object_set_new(doc, "indexes", indexes = json_array());
        json_object_set_new(doc, "skipped", skipped = json_array());
    }
    memset(&w, 0, sizeof w);
    na_status_t st = na_walk(o->inputs, o->n_inputs, o->open.raw_dtype != NA_DT_INVALID, &w,
                             &err);
    if (st != NA_OK) {
        const char *msg = err.msg[0] ? err.msg : na_status_str(st);
        cli_error(NULL, "%s", msg);
        rc = cli_exit_for_status(st);
        return doc ? print_json(doc, rc, msg) : rc;
    }
    x.said = calloc(w.n_indexes + 1, sizeof *x.said);
    if (doc)
        x.jix = jix = calloc(w.n_indexes + 1, sizeof *jix);
    if (x.said == NULL || (doc && jix == NULL)) {
        free(x.said);
        json_decref(doc);
        na_walk_free(&w);
        return 4;
    }
    for (size_t i = 0; i < w.n; i++) {
        const na_walk_item_t *it = &w.items[i];
        if (it->skip_reason) {
            if (skipped) {
                json_t *s = json_object();
                json_object_set_new(s, "path", na_json_text(it->path));
                json_object_set_new(s, "reason", na_json_text(it->skip_reason));
                push(skipped, s);
            }
            continue;
        }
        if (it->error) {
            cli_error(it->path, "%s", it->error);
            if (files)
                file_failed(file_json(files, it->path), it->error);
            rc = cli_exit_merge(rc, 3);
            continue;
        }
        if (it->kind == NA_FILE_INDEX) { /* its shards follow as items */
            if (doc) {
                index_json(&w, it->index_id, jix, indexes);
                continue;
            }
            char *p = esc(it->path);
            size_t n = w.indexes[it->index_id] ? na_index_shard_count(w.indexes[it->index_id]) : 0;
            if (p)
                printf("%s (index, %zu shard%s)\n", p, n, n == 1 ? "" : "s");
            free(p);
            continue;
        }
        if (doc) /* an index's shard before its index item: none, but safe */
            for (size_t j = 0; it->from_index && j <= it->n_more; j++) {
                size_t k, shard;
                na_walk_shard_ref(it, j, &k, &shard);
                index_json(&w, k, jix, indexes);
            }
        json_t *jf = files ? file_json(files, it->path) : NULL;
        if (jf) { /* the index naming this shard (the first, if several) */
            size_t k = 0, shard;
            if (it->from_index)
                na_walk_shard_ref(it, 0, &k, &shard);
            json_object_set_new(jf, "index", it->from_index ? na_json_text(w.index_paths[k])
                                                            : json_null());
        }
        int shard_rc = 0, r = info_file(&w, it, o, &x, &shard_rc, jf);
        shown += r == 0;
        rc = cli_exit_merge(cli_exit_merge(rc, r), shard_rc);
    }
    for (size_t k = 0; doc && k < w.n_indexes; k++)
        index_json(&w, k, jix, indexes);
    rc = cli_exit_merge(rc, finish_indexes(&w, &x));
    for (size_t k = 0; k < w.n_indexes; k++)
        free(x.said[k]);
    free(x.said);
    free(jix);
    if (shown == 0 && rc < 3) {
        if (o->n_inputs == 1) { /* name it, as scan does */
            cli_error(o->inputs[0], "nothing to show: no supported data file");
            snprintf(run_error, sizeof run_error, "%s: nothing to show: no supported data file",
                     o->inputs[0]);
        } else {
            cli_error(NULL, "nothing to show: no supported data file in the %zu inputs",
                      o->n_inputs);
            snprintf(run_error, sizeof run_error,
                     "nothing to show: no supported data file in the %zu inputs", o->n_inputs);
        }
        rc = cli_exit_merge(rc, 3);
    }
    na_walk_free(&w);
    return doc ? print_json(doc, rc, run_error[0] ? run_error : NULL) : rc;
}
