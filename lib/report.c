/*
 * report.c - the report model: files, tensor entries, skipped files and
 * the summary that the writers (report_json.c, report_text.c) print.
 *
 * The model owns copies of every string and the location arrays of each
 * scan result, so the CLI can close an input as soon as it is scanned
 * (memory is per tensor entry, never per element). Arrays grow by
 * doubling; an entry pointer is valid until the next add on its parent.
 */
#include "nanaudit.h"

#include <stdlib.h> /* malloc, realloc, free */
#include <string.h> /* memset, memcpy, strlen */

static char *dupstr(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Make room for one more element of size `elem` in *arr (n used, *cap
 * allocated). 0 on success, -1 on out of memory (arr unchanged). */
static int grow(void **arr, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 1; /* most files hold one tensor */
    if (ncap > ((size_t)-1) / elem)
        return -1;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return -1;
    memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
    *arr = p;
    *cap = ncap;
    return 0;
}

na_report_t *na_report_new(void)
{
    na_report_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->device = "cpu";
    r->zscore = NA_DEFAULT_ZSCORE;
    r->max_locations = NA_DEFAULT_MAX_LOCATIONS;
    r->fail_mask = NA_DEFAULT_FAIL_MASK;
    return r;
}

static void tensor_free(na_tensor_report_t *e)
{
    free(e->name);
    free(e->shape); /* and vshape */
    free(e->reason);
    free(e->findings);
    if (e->scanned)
        na_result_free(&e->res);
}

static void file_free(na_file_report_t *f)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        tensor_free(&f->tensors[i]);
    free(f->tensors);
    for (size_t i = 0; i < f->n_notes; i++)
        free(f->notes[i]);
    free(f->notes);
    free(f->path);
    free(f->error);
}

void na_report_free(na_report_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_files; i++)
        file_free(&r->files[i]);
    free(r->files);
    for (size_t i = 0; i < r->n_skipped; i++) {
        free(r->skipped_paths[i]);
        free(r->skipped_reasons[i]);
    }
    free(r->skipped_paths);
    free(r->skipped_reasons);
    free(r);
}

na_file_report_t *na_report_add_file(na_report_t *r, const char *path, const char *format)
{
    if (grow((void **)&r->files, r->n_files, &r->cap_files, sizeof *r->files))
        return NULL;
    na_file_report_t *f = &r->files[r->n_files];
    memset(f, 0, sizeof *f);
    f->path = dupstr(path ? path : "");
    if (!f->path)
        return NULL;
    f->format = format;
    f->ok = 1;
    r->n_files++;
    return f;
}

na_status_t na_file_report_set_error(na_file_report_t *f, const char *msg)
{
    char *m = dupstr(msg ? msg : "error");
    if (!m)
        return NA_E_NOMEM;
    free(f->error);
    f->error = m;
    f->ok = 0;
    return NA_OK;
}

na_status_t na_file_report_add_note(na_file_report_t *f, const char *note)
{
    size_t cap = f->n_notes; /* notes are few: grow to exactly n + 1 */
    char **p = realloc(f->notes, (cap + 1) * sizeof *p);
    if (!p)
        return NA_E_NOMEM;
    f->notes = p;
    if (!(p[f->n_notes] = dupstr(note)))
        return NA_E_NOMEM;
    f->n_notes++;
    return NA_OK;
}

na_tensor_report_t *na_file_report_add_tensor(na_file_report_t *f, const char *name,
                                              const na_tensor_t *t)
{
    if (grow((void **)&f->tensors, f->n_tensors, &f->cap_tensors, sizeof *f->tensors))
        return NULL;
    na_tensor_report_t *e = &f->tensors[f->n_tensors];
    memset(e, 0, sizeof *e);
    e->name = dupstr(name ? name : (t && t->name ? t->name : ""));
    if (!e->name)
        return NULL;
    e->status = NA_TS_OK;
    if (t) {
        int nd = t->ndim < 0 ? 0 : (t->ndim > NA_MAX_NDIM ? NA_MAX_NDIM : t->ndim);
        int vnd = t->vndim < 0 ? 0 : (t->vndim > NA_MAX_NDIM ? NA_MAX_NDIM : t->vndim);
        if (nd + vnd > 0 && !(e->shape = malloc((size_t)(nd + vnd) * sizeof e->shape[0]))) {
            free(e->name);
            e->name = NULL;
            return NULL;
        }
        e->dtype = t->dtype;
        e->stored = t->stored;
        e->byte_order = t->byte_order;
        e->ndim = nd;
        e->vndim = vnd;
        e->vshape = e->shape ? e->shape + nd : NULL;
        if (nd)
            memcpy(e->shape, t->shape, (size_t)nd * sizeof e->shape[0]);
        if (vnd)
            memcpy(e->vshape, t->vshape, (size_t)vnd * sizeof e->vshape[0]);
        e->elements = t->elements;
        /* a shape whose product overflows (an HDF5 dataset of shape
         * (2, 2^40, 2^40): an error) has no element count; its wrapped
         * product was shown as one (audit 25a). A variable-length
         * tensor's elements are its sequences' total, not the product. */
        uint64_t p = 1;
        int over = 0, zero = 0; /* a 0 anywhere: 0 elements */
        for (int d = 0; d < e->ndim; d++) {
            zero |= e->shape[d] == 0;
            over |= e->shape[d] != 0 && p > UINT64_MAX / e->shape[d];
            p = over ? p : p * e->shape[d];
        }
        e->elements_overflow = over && !zero && !t->vlen;
        e->report_missing = t->report_missing;
        e->unallocated_chunks = t->unallocated_chunks;
        e->vlen = t->vlen;
        e->sequences = t->sequences;
    }
    f->n_tensors++;
    return e;
}

int na_reason_names(const char *reason, const char *name)
{
    if (!reason || !name)
        return 0;
    size_t nl = strlen(name);
    return !strncmp(reason, name, nl) && reason[nl] == ':' && reason[nl + 1] == ' ';
}

na_status_t na_tensor_report_set_status(na_tensor_report_t *e, na_tstatus_t st,
                                        const char *reason)
{
    char *m = NULL;
    if (reason && !(m = dupstr(reason)))
        return NA_E_NOMEM;
    free(e->reason);
    e->reason = m;
    e->status = st;
    return NA_OK;
}

na_status_t na_tensor_report_set_result(na_tensor_report_t *e, na_result_t *res,
                                        const na_finding_t *findings, size_t n)
{
    na_finding_t *copy = NULL;
    if (n) {
        copy = malloc(n * sizeof *copy);
        if (!copy)
            return NA_E_NOMEM;
        memcpy(copy, findings, n * sizeof *copy);
    }
    if (e->scanned)
        na_result_free(&e->res);
    free(e->findings);
    e->res = *res;
    memset(res, 0, sizeof *res); /* the arrays now belong to the report */
    e->scanned = 1;
    e->findings = copy;
    e->n_findings = n;
    return NA_OK;
}

na_status_t na_report_add_skipped(na_report_t *r, const char *path, const char *reason)
{
    size_t cap = r->cap_skipped;
    if (grow((void **)&r->skipped_paths, r->n_skipped, &cap, sizeof(char *)))
        return NA_E_NOMEM;
    cap = r->cap_skipped;
    if (grow((void **)&r->skipped_reasons, r->n_skipped, &cap, sizeof(char *)))
        return NA_E_NOMEM;
    r->cap_skipped = cap;
    char *p = dupstr(path ? path : "");
    char *q = dupstr(reason ? reason : "not data");
    if (!p || !q) {
        free(p);
        free(q);
        return NA_E_NOMEM;
    }
    r->skipped_paths[r->n_skipped] = p;
    r->skipped_reasons[r->n_skipped] = q;
    r->n_skipped++;
    return NA_OK;
}

const char *na_summary_tensors(const na_summary_t *s, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%llu tensor%s", (unsigned long long)s->tensors,
                     s->tensors == 1 ? "" : "s");
    if (s->skipped && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, " (%llu skipped)", (unsigned long long)s->skipped);
    return buf;
}

/* Summary counts: files = file entries; tensors = tensor entries (any
 * status), skipped = those of status skipped; elements/nan/inf/outliers
 * over scanned entries; errors = file
 * errors + tensor entries with status error; failed = some finding's
 * kind is in the fail mask. exit_code is left to the CLI. */
void na_report_summarize(na_report_t *r)
{
    int exit_code = r->summary.exit_code;
    memset(&r->summary, 0, sizeof r->summary);
    r->summary.exit_code = exit_code;
    na_summary_t *s = &r->summary;
    s->files = r->n_files;
    for (size_t i = 0; i < r->n_files; i++) {
        const na_file_report_t *f = &r->files[i];
        s->errors += !f->ok;
        s->tensors += f->n_tensors;
        for (size_t j = 0; j < f->n_tensors; j++) {
            const na_tensor_report_t *e = &f->tensors[j];
            s->errors += e->status == NA_TS_ERROR;
            s->skipped += e->status == NA_TS_SKIPPED;
            if (!e->scanned)
                continue;
            s->elements += e->res.st.elements;
            s->nan += e->res.st.nan;
            s->pos_inf += e->res.st.pos_inf;
            s->neg_inf += e->res.st.neg_inf;
            s->outliers += e->res.outliers;
            for (size_t k = 0; k < e->n_findings; k++)
                s->failed |= e->findings[k].fails != 0;
        }
    }
}
