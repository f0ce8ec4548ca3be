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
 */
#include "cli.h"

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

/* The tensor's shape; a variable-length dataset's own (sequences). */
static void shape_str(char *b, size_t cap, const na_tensor_t *t)
{
    int nd = t->vlen ? t->vndim : t->ndim;
    const uint64_t *sh = t->vlen ? t->vshape : t->shape;
    size_t n = (size_t)snprintf(b, cap, "[");
    for (int d = 0; d < nd && n < cap; d++)
        n += (size_t)snprintf(b + n, cap - n, "%s%" PRIu64, d ? "," : "", sh[d]);
    if (n < cap)
        snprintf(b + n, cap - n, "]");
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
            int part = t.stored != NA_DT_INVALID && t.dtype != NA_DT_INVALID &&
                       t.stored != t.dtype;
            na_dtype_t dtv = part || !t.stored ? t.dtype : t.stored;
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

/* A shard of an index (it->from_index) is checked against the index as
 * scan checks it (cli_shard_check): a mismatch is the index's error, one
 * line, exit 3, and marks the index in bad[] so that its final check
 * (na_index_finish) does not repeat it. */
static int shard_check(const na_walk_t *w, const na_walk_item_t *it, na_input_t *in,
                       unsigned char *bad)
{
    int rc = 0;
    for (size_t j = 0; it->from_index && j <= it->n_more; j++) { /* every index naming it */
        size_t k, shard;
        na_walk_shard_ref(it, j, &k, &shard);
        na_err_t err = {{0}};
        if (w->indexes[k] == NULL || bad[k])
            continue;
        na_status_t st = cli_shard_check(w->indexes[k], shard, in, &err);
        if (st == NA_OK)
            continue;
        bad[k] = 1;
        cli_error(w->index_paths[k], "%s", err.msg[0] ? err.msg : na_status_str(st));
        rc = cli_exit_merge(rc, cli_exit_for_status(st));
    }
    return rc;
}

/* List one file; *shard_rc gets shard_check's code (0 for other files). */
static int info_file(const na_walk_t *w, const na_walk_item_t *it, const cli_opts_t *o,
                     unsigned char *bad, int *shard_rc)
{
    const char *path = it->path;
    na_input_t *in = NULL;
    na_err_t err = {{0}};
    na_open_opts_t oo = o->open;
    oo.no_measure = 1; /* no data is read */
    na_status_t st = na_input_open(path, &oo, &in, &err);
    if (st != NA_OK) {
        cli_error(path, "%s", err.msg[0] ? err.msg : na_status_str(st));
        return cli_exit_for_status(st);
    }
    size_t n = na_input_count(in);
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += na_input_tensor_bytes(in, i);
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
    *shard_rc = shard_check(w, it, in, bad);
    na_input_close(in);
    return rc;
}

/* After every shard: each shard file was there and metadata.total_size
 * matches (na_index_finish), for the indexes no shard check failed. */
static int finish_indexes(const na_walk_t *w, const unsigned char *bad)
{
    int rc = 0;
    for (size_t i = 0; i < w->n_indexes; i++) {
        na_err_t err = {{0}};
        if (w->indexes[i] == NULL || bad[i])
            continue;
        na_status_t st = na_index_finish(w->indexes[i], &err);
        char note[256];
        if (st != NA_OK) {
            cli_error(w->index_paths[i], "%s", err.msg[0] ? err.msg : na_status_str(st));
            rc = cli_exit_merge(rc, cli_exit_for_status(st));
        } else if (na_index_total_note(w->indexes[i], note, sizeof note)) {
            printf("note %s: %s\n", w->index_paths[i], note);
        }
    }
    return rc;
}

int cli_info(const cli_opts_t *o)
{
    na_walk_t w;
    na_err_t err = {{0}};
    int rc = 0;
    size_t shown = 0;
    memset(&w, 0, sizeof w);
    na_status_t st = na_walk(o->inputs, o->n_inputs, o->open.raw_dtype != NA_DT_INVALID, &w,
                             &err);
    if (st != NA_OK) {
        cli_error(NULL, "%s", err.msg[0] ? err.msg : na_status_str(st));
        return cli_exit_for_status(st);
    }
    unsigned char *bad = calloc(w.n_indexes + 1, 1); /* per index: a shard check failed */
    if (bad == NULL) {
        na_walk_free(&w);
        return 4;
    }
    for (size_t i = 0; i < w.n; i++) {
        const na_walk_item_t *it = &w.items[i];
        if (it->skip_reason)
            continue;
        if (it->error) {
            cli_error(it->path, "%s", it->error);
            rc = cli_exit_merge(rc, 3);
            continue;
        }
        if (it->kind == NA_FILE_INDEX) { /* its shards follow as items */
            char *p = esc(it->path);
            size_t n = w.indexes[it->index_id] ? na_index_shard_count(w.indexes[it->index_id]) : 0;
            if (p)
                printf("%s (index, %zu shard%s)\n", p, n, n == 1 ? "" : "s");
            free(p);
            continue;
        }
        int shard_rc = 0, r = info_file(&w, it, o, bad, &shard_rc);
        shown += r == 0;
        rc = cli_exit_merge(cli_exit_merge(rc, r), shard_rc);
    }
    rc = cli_exit_merge(rc, finish_indexes(&w, bad));
    free(bad);
    if (shown == 0 && rc < 3) {
        if (o->n_inputs == 1) /* name it, as scan does */
            cli_error(o->inputs[0], "nothing to show: no supported data file");
        else
            cli_error(NULL, "nothing to show: no supported data file in the %zu inputs",
                      o->n_inputs);
        rc = cli_exit_merge(rc, 3);
    }
    na_walk_free(&w);
    return rc;
}
