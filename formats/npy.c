/*
 * npy.c - NumPy .npy files: the header parser (also used for the members
 * of an .npz), the tensors of one array, and the "npy" format reader.
 *
 * Format: numpy.lib.format (NEP 1,
 * https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
 *   "\x93NUMPY" | major | minor | header length (u16 LE for 1.0, u32 LE
 *   for 2.0 and 3.0) | header | data
 * The header is the repr of a Python dict with exactly the keys 'descr',
 * 'fortran_order' and 'shape', padded with spaces and ended by '\n'
 * (latin-1 in 1.0/2.0, UTF-8 in 3.0). numpy itself reads it with
 * ast.literal_eval; we parse the same restricted literal grammar by hand
 * (strings, integers with Python 2's 'L' suffix, True/False/None, tuples,
 * lists, dicts) and evaluate nothing. numpy refuses headers longer than
 * max_header_size=10000 bytes by default (numpy >= 1.24, a defence
 * against slow literal_eval); we apply the same cap.
 *
 * descr is a type string ('<f4': byte order '<' '>' '|' '=' '!', kind,
 * size) or, for structured arrays, a list of (name, descr[, shape])
 * tuples (numpy.lib.format.descr_to_dtype). Decisions (issue 8):
 *  - object arrays ('|O') are a pickle: never read; status error, exit 3;
 *  - strings, bytes, void and datetimes are not numeric data: skipped;
 *  - structured fields are audited as NAME.field (nested: NAME.a.b),
 *    unnamed padding fields ('' of a void type or a subarray, as numpy's
 *    descr_to_dtype decides) are ignored, another field named '' is NAME.;
 *  - complex c8 / c16 / c32 are NAME.real and NAME.imag (F32, F64, F80);
 *  - long double 'f16' / 'f12' is the x87 80-bit format (F80) in 16 or 12
 *    bytes, as numpy stores it on x86; '=' (native) is taken as little;
 *  - Fortran order is read through view.c, which gathers C order, so
 *    locations are C-order indices of the logical array;
 *  - the data must hold shape x itemsize bytes; fewer is "data truncated"
 *    (numpy raises too); bytes after the data are ignored, as np.load does.
 */
#include "npt.h"

#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, realloc, free */
#include <string.h>   /* memcmp, memcpy, strdup, strlen */
#include <sys/stat.h> /* fstat */
#include <unistd.h>   /* close */

/* ---- restricted Python literal ---------------------------------------- */

typedef enum lit_type { L_STR, L_INT, L_TRUE, L_FALSE, L_NONE, L_TUPLE, L_LIST, L_DICT } lit_type_t;

typedef struct lit {
    lit_type_t type;
    char *s;          /* L_STR: decoded bytes (NUL-ended, owned by the parser arena) */
    size_t slen;
    uint64_t i;       /* L_INT: magnitude */
    int neg, big;     /* L_INT: negative; beyond 64 bits */
    size_t n;         /* children (dict: key, value, key, value, ...) */
    struct lit **kids;
} lit_t;

typedef struct lp {
    const char *p, *end;
    lit_t **all;      /* every node, for freeing */
    size_t n_all, cap_all;
    char **strs;      /* every allocation besides nodes */
    size_t n_strs, cap_strs;
    int depth;
    na_err_t *err;
    na_status_t st;
} lp_t;

#define LIT_MAX_DEPTH 32

static void *lp_keep(lp_t *L, void *p, int node)
{
    void ***arr = node ? (void ***)&L->all : (void ***)&L->strs;
    size_t *n = node ? &L->n_all : &L->n_strs, *cap = node ? &L->cap_all : &L->cap_strs;
    if (p == NULL)
        return NULL;
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        void **q = realloc(*arr, nc * sizeof *q);
        if (q == NULL) {
            free(p);
            return NULL;
        }
        *arr = q;
        *cap = nc;
    }
    (*arr)[(*n)++] = p;
    return p;
}

static void lp_free(lp_t *L)
{
    for (size_t i = 0; i < L->n_all; i++)
        free(L->all[i]);
    for (size_t i = 0; i < L->n_strs; i++)
        free(L->strs[i]);
    free(L->all);
    free(L->strs);
}

static lit_t *lp_fail(lp_t *L, na_status_t st, const char *what)
{
    if (L->st == NA_OK)
        L->st = na_err_set(L->err, st, "header is not a valid literal: %s", what);
    return NULL;
}

static void lp_ws(lp_t *L)
{
    while (L->p < L->end && (*L->p == ' ' || *L->p == '\t' || *L->p == '\n' || *L->p == '\r'))
        L->p++;
}

static lit_t *lp_node(lp_t *L, lit_type_t t)
{
    lit_t *n = lp_keep(L, calloc(1, sizeof *n), 1);
    if (n == NULL)
        return lp_fail(L, NA_E_NOMEM, "out of memory");
    n->type = t;
    return n;
}

static lit_t *lp_value(lp_t *L);

static lit_t *lp_string(lp_t *L)
{
    char q = *L->p++;
    const char *start = L->p;
    char *out = lp_keep(L, malloc((size_t)(L->end - start) + 1), 0);
    if (out == NULL)
        return lp_fail(L, NA_E_NOMEM, "out of memory");
    size_t k = 0;
    while (L->p < L->end && *L->p != q) {
        char c = *L->p++;
        if (c == '\\' && L->p < L->end)
            c = *L->p++; /* \\ \' \" : the escapes a repr of a name uses */
        out[k++] = c;
    }
    if (L->p >= L->end)
        return lp_fail(L, NA_E_FORMAT, "unterminated string");
    L->p++;
    out[k] = '\0';
    lit_t *n = lp_node(L, L_STR);
    if (n != NULL) {
        n->s = out;
        n->slen = k;
    }
    return n;
}

static lit_t *lp_int(lp_t *L)
{
    lit_t *n = lp_node(L, L_INT);
    if (n == NULL)
        return NULL;
    if (*L->p == '-' || *L->p == '+')
        n->neg = *L->p++ == '-';
    if (L->p >= L->end || *L->p < '0' || *L->p > '9')
        return lp_fail(L, NA_E_FORMAT, "expected a digit");
    while (L->p < L->end && *L->p >= '0' && *L->p <= '9') {
        unsigned d = (unsigned)(*L->p++ - '0');
        if (n->i > (UINT64_MAX - d) / 10)
            n->big = 1;
        else
            n->i = n->i * 10 + d;
    }
    if (L->p < L->end && (*L->p == 'L' || *L->p == 'l'))
        L->p++; /* Python 2 long: '(2L,)' */
    return n;
}

static int lp_word(lp_t *L, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(L->end - L->p) < n || memcmp(L->p, w, n) != 0)
        return 0;
    L->p += n;
    return 1;
}

/* '(' or '[' or '{' already seen: items up to `close`. Dicts take
 * key ':' value pairs. A one-item tuple needs its comma in Python, but
 * '(x)' is just x: handled by the caller. */
static lit_t *lp_seq(lp_t *L, lit_type_t t, char close)
{
    lit_t *n = lp_node(L, t);
    if (n == NULL)
        return NULL;
    size_t cap = 0;
    int commas = 0;
    for (;;) {
        lp_ws(L);
        if (L->p >= L->end)
            return lp_fail(L, NA_E_FORMAT, "unterminated bracket");
        if (*L->p == close) {
            L->p++;
            break;
        }
        for (int part = 0; part < (t == L_DICT ? 2 : 1); part++) {
            lit_t *v = lp_value(L);
            if (v == NULL)
                return NULL;
            if (n->n == cap) {
                cap = cap ? 2 * cap : 8;
                lit_t **k = lp_keep(L, malloc(cap * sizeof *k), 0);
                if (k == NULL)
                    return lp_fail(L, NA_E_NOMEM, "out of memory");
                if (n->n)
                    memcpy(k, n->kids, n->n * sizeof *k);
                n->kids = k;
            }
            n->kids[n->n++] = v;
            lp_ws(L);
            if (t == L_DICT && part == 0) {
                if (L->p >= L->end || *L->p != ':')
                    return lp_fail(L, NA_E_FORMAT, "expected ':' in a dict");
                L->p++;
            }
        }
        if (L->p < L->end && *L->p == ',') {
            L->p++;
            commas++;
        } else if (L->p < L->end && *L->p != close) {
            return lp_fail(L, NA_E_FORMAT, "expected ',' or a closing bracket");
        }
    }
    if (t == L_TUPLE && n->n == 1 && commas == 0)
        return n->kids[0]; /* (x) is x */
    return n;
}

static lit_t *lp_value(lp_t *L)
{
    lp_ws(L);
    if (L->p >= L->end)
        return lp_fail(L, NA_E_FORMAT, "unexpected end");
    if (++L->depth > LIT_MAX_DEPTH)
        return lp_fail(L, NA_E_FORMAT, "nested too deeply");
    lit_t *v;
    char c = *L->p;
    if ((c == 'u' || c == 'b') && L->p + 1 < L->end && (L->p[1] == '\'' || L->p[1] == '"')) {
        L->p++; /* u'x' (Python 2 unicode) or b'x' */
        c = *L->p;
    }
    if (c == '\'' || c == '"')
        v = lp_string(L);
    else if (c == '-' || c == '+' || (c >= '0' && c <= '9'))
        v = lp_int(L);
    else if (c == '(' || c == '[' || c == '{') {
        L->p++;
        v = lp_seq(L, c == '(' ? L_TUPLE : c == '[' ? L_LIST : L_DICT,
                   c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (lp_word(L, "True"))
        v = lp_node(L, L_TRUE);
    else if (lp_word(L, "False"))
        v = lp_node(L, L_FALSE);
    else if (lp_word(L, "None"))
        v = lp_node(L, L_NONE);
    else
        v = lp_fail(L, NA_E_FORMAT, "unexpected character");
    L->depth--;
    return v;
}

/* ---- descr -> fields -------------------------------------------------- */

typedef struct fb {       /* field builder */
    na_npy_header_t *h;
    na_err_t *err;
} fb_t;

static na_status_t add_field(fb_t *b, const char *name, na_npy_field_t *f)
{
    na_npy_header_t *h = b->h;
    if (h->n_fields >= NA_NPY_MAX_FIELDS)
        return na_err_set(b->err, NA_E_FORMAT, "more than %d fields in descr",
                          NA_NPY_MAX_FIELDS);
    na_npy_field_t *a = realloc(h->fields, (h->n_fields + 1) * sizeof *a);
    if (a == NULL)
        return na_err_set(b->err, NA_E_NOMEM, "out of memory");
    h->fields = a;
    f->name = strdup(name);
    if (f->name == NULL)
        return na_err_set(b->err, NA_E_NOMEM, "out of memory");
    a[h->n_fields++] = *f;
    return NA_OK;
}

/* Parse a type string into f (kind, dtype, order, esize); *size gets the
 * bytes of one item. */
static na_status_t parse_typestr(fb_t *b, const char *s, na_npy_field_t *f, uint64_t *size)
{
    snprintf(f->descr, sizeof f->descr, "%s", s);
    char bo = '|';
    if (*s == '<' || *s == '>' || *s == '|' || *s == '=' || *s == '!')
        bo = *s++;
    f->order = (bo == '>' || bo == '!') ? NA_BIG : NA_LITTLE;
    char kind = *s ? *s++ : '\0';
    uint64_t n = 0;
    int digits = 0;
    while (*s >= '0' && *s <= '9' && digits < 12) {
        n = n * 10 + (uint64_t)(*s++ - '0');
        digits++;
    }
    int unit = *s == '[' && (kind == 'M' || kind == 'm'); /* '<M8[ns]' */
    if (kind == '\0' || (*s != '\0' && !unit) || (digits == 0 && kind != 'O'))
        return na_err_set(b->err, NA_E_FORMAT, "descr '%s' is not a NumPy type string",
                          f->descr);
    if (kind == 'O') {
        f->kind = NA_NPY_OBJECT;
        *size = 8;
        return NA_OK;
    }
    *size = n;
    f->esize = (uint32_t)n;
    f->nparts = 1;
    na_dtype_t dt = NA_DT_INVALID;
    switch (kind) {
    case 'b': dt = n == 1 ? NA_DT_BOOL : NA_DT_INVALID; break;
    case 'i': dt = n == 1 ? NA_DT_I8 : n == 2 ? NA_DT_I16 : n == 4 ? NA_DT_I32
                 : n == 8 ? NA_DT_I64 : NA_DT_INVALID; break;
    case 'u': dt = n == 1 ? NA_DT_U8 : n == 2 ? NA_DT_U16 : n == 4 ? NA_DT_U32
                 : n == 8 ? NA_DT_U64 : NA_DT_INVALID; break;
    case 'f': dt = n == 2 ? NA_DT_F16 : n == 4 ? NA_DT_F32 : n == 8 ? NA_DT_F64
                 : (n == 12 || n == 16) ? NA_DT_F80 : NA_DT_INVALID; break;
    case 'c':
        dt = n == 8 ? NA_DT_F32 : n == 16 ? NA_DT_F64 : (n == 24 || n == 32) ? NA_DT_F80
                                                                            : NA_DT_INVALID;
        f->nparts = 2;
        break;
    case 'S': case 'U': case 'a': case 'V': case 'M': case 'm':
        f->kind = NA_NPY_SKIP;
        /* 'U' counts characters, stored as UCS-4: 4 bytes each (numpy
         * dtype.itemsize of '<U4' is 16); the rest count bytes. The
         * fields after it in a record start that much further. */
        if (kind == 'U') {
            *size = n * 4;
            f->esize = (uint32_t)*size;
        }
        return NA_OK;
    default:
        return na_err_set(b->err, NA_E_FORMAT, "descr '%s' has unknown kind '%c'", f->descr,
                          kind);
    }
    if (dt == NA_DT_INVALID) {
        f->kind = NA_NPY_UNSUPPORTED;
        return NA_OK;
    }
    f->kind = NA_NPY_NUMERIC;
    f->dtype = dt;
    f->stored = (kind == 'c' && n == 8) ? NA_DT_C64 : dt;
    if (n == 1)
        f->order = NA_LITTLE;
    return NA_OK;
}

static na_status_t parse_descr(fb_t *b, const lit_t *d, const char *prefix, uint64_t base,
                               const uint64_t *sub, int sub_ndim, uint64_t *size, int depth);

/* One (name, descr[, shape]) tuple of a structured descr. */
static na_status_t parse_member(fb_t *b, const lit_t *m, const char *prefix, uint64_t base,
                                uint64_t *size, int depth)
{
    if (m->type != L_TUPLE || m->n < 2 || m->n > 3)
        return na_err_set(b->err, NA_E_FORMAT, "structured descr item is not (name, type[, "
                          "shape])");
    const lit_t *nm = m->kids[0];
    int titled = nm->type == L_TUPLE && nm->n == 2;
    if (titled) /* (title, name) */
        nm = nm->kids[1];
    if (nm->type != L_STR)
        return na_err_set(b->err, NA_E_FORMAT, "structured descr field name is not a string");
    uint64_t sub[8];
    int sub_ndim = 0;
    if (m->n == 3) {
        const lit_t *sh = m->kids[2];
        if (sh->type == L_INT) {
            sub[sub_ndim++] = sh->i;
        } else if (sh->type == L_TUPLE) {
            if (sh->n > 8)
                return na_err_set(b->err, NA_E_UNSUPPORTED, "field '%.100s': subarray of %zu "
                                  "dimensions (at most 8)", nm->s, sh->n);
            for (size_t i = 0; i < sh->n; i++) {
                if (sh->kids[i]->type != L_INT || sh->kids[i]->neg || sh->kids[i]->big)
                    return na_err_set(b->err, NA_E_FORMAT, "field '%.100s': bad subarray "
                                      "shape", nm->s);
                sub[sub_ndim++] = sh->kids[i]->i;
            }
        } else {
            return na_err_set(b->err, NA_E_FORMAT, "field '%.100s': bad subarray shape", nm->s);
        }
    }
    char name[512]; /* ".x", ".a.b": the field's path, joined to the array's name */
    snprintf(name, sizeof name, "%s.%s", prefix, nm->s);
    /* Padding, as numpy's descr_to_dtype decides it: a name '' (not a
     * title's) whose type is void without fields ('|V4') or a subarray.
     * Any other field named '' is data np.load returns as a[''] (round
     * 30a: ('', '<f4') was taken for padding and its NaN never audited):
     * audited as NAME. (its path "."). */
    const lit_t *ty = m->kids[1];
    const char *ts = ty->type == L_STR ? ty->s : "";
    ts += *ts == '<' || *ts == '>' || *ts == '|' || *ts == '=';
    if (nm->slen == 0 && !titled && (*ts == 'V' || m->n == 3))
        name[0] = '\0'; /* padding: measured, not audited */
    return parse_descr(b, m->kids[1], name, base, sub, sub_ndim, size, depth + 1);
}

/* descr d at byte `base` of a record: appends its leaves, sets *size. */
static na_status_t parse_descr(fb_t *b, const lit_t *d, const char *prefix, uint64_t base,
                               const uint64_t *sub, int sub_ndim, uint64_t *size, int depth)
{
    if (depth > 16)
        return na_err_set(b->err, NA_E_FORMAT, "structured descr nested too deeply");
    uint64_t count = 1;
    for (int i = 0; i < sub_ndim; i++) {
        if (sub[i] != 0 && count > UINT32_MAX / sub[i])
            return na_err_set(b->err, NA_E_UNSUPPORTED, "subarray too large");
        count *= sub[i];
    }
    uint64_t one = 0;
    if (d->type == L_STR) {
        na_npy_field_t f;
        memset(&f, 0, sizeof f);
        na_status_t st = parse_typestr(b, d->s, &f, &one);
        if (st != NA_OK)
            return st;
        if (one > UINT32_MAX || base > UINT32_MAX)
            return na_err_set(b->err, NA_E_UNSUPPORTED, "item of %llu bytes is too large",
                              (unsigned long long)one);
        f.offset = (uint32_t)base;
        f.sub_ndim = sub_ndim;
        if (sub_ndim > 0)
            memcpy(f.sub_shape, sub, (size_t)sub_ndim * sizeof *sub);
        *size = one * count;
        if (prefix[0] == '\0' && depth > 0)
            return NA_OK; /* an unnamed padding field */
        return add_field(b, prefix, &f);
    }
    if (d->type != L_LIST)
        return na_err_set(b->err, NA_E_FORMAT, "descr is neither a type string nor a list of "
                          "fields");
    if (sub_ndim > 0)
        return na_err_set(b->err, NA_E_UNSUPPORTED, "'%.100s': subarrays of structured types "
                          "are not supported", prefix + (*prefix == '.'));
    uint64_t off = 0;
    for (size_t i = 0; i < d->n; i++) {
        uint64_t fs = 0;
        na_status_t st = parse_member(b, d->kids[i], prefix, base + off, &fs, depth);
        if (st != NA_OK)
            return st;
        if (fs > UINT32_MAX - off)
            return na_err_set(b->err, NA_E_UNSUPPORTED, "record too large");
        off += fs;
    }
    *size = off;
    return NA_OK;
}

/* ---- header ------------------------------------------------------------ */

const char *na_npy_shape_str(const uint64_t *shape, int ndim, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < ndim && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%llu", i ? ", " : "",
                              (unsigned long long)shape[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, "%s)", ndim == 1 ? "," : "");
    return buf;
}

static const lit_t *dict_get(const lit_t *d, const char *key)
{
    for (size_t i = 0; i + 1 < d->n; i += 2)
        if (d->kids[i]->type == L_STR && strcmp(d->kids[i]->s, key) == 0)
            return d->kids[i + 1];
    return NULL;
}

static na_status_t check_dict(const lit_t *d, na_err_t *err)
{
    if (d->type != L_DICT)
        return na_err_set(err, NA_E_FORMAT, "header is not a dict literal");
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    for (size_t i = 0; i + 1 < d->n; i += 2) {
        const lit_t *k = d->kids[i];
        int known = 0;
        for (size_t j = 0; j < 3; j++)
            known |= k->type == L_STR && strcmp(k->s, keys[j]) == 0;
        if (!known)
            return na_err_set(err, NA_E_FORMAT, "header has the key '%.60s'; a .npy header "
                              "has exactly 'descr', 'fortran_order' and 'shape'",
                              k->type == L_STR ? k->s : "?");
        for (size_t j = i + 2; j + 1 < d->n; j += 2)
            if (d->kids[j]->type == L_STR && strcmp(d->kids[j]->s, k->s) == 0)
                return na_err_set(err, NA_E_FORMAT, "header has the key '%s' twice", k->s);
    }
    for (size_t j = 0; j < 3; j++)
        if (dict_get(d, keys[j]) == NULL)
            return na_err_set(err, NA_E_FORMAT, "header has no '%s' key", keys[j]);
    return NA_OK;
}

static na_status_t header_shape(na_npy_header_t *h, const lit_t *s, na_err_t *err)
{
    /* '(12)' is 12 in Python, not a tuple: np.load refuses it ("shape is
     * not valid"), and a copy written with it would not load either */
    if (s->type != L_TUPLE)
        return na_err_set(err, NA_E_FORMAT, "header 'shape' is not a tuple (a one-item shape "
                          "is written (12,))");
    size_t n = s->n;
    if (n > NA_MAX_NDIM)
        return na_err_set(err, NA_E_UNSUPPORTED, "shape has %zu dimensions; at most %d are "
                          "supported", n, NA_MAX_NDIM);
    h->ndim = (int)n;
    h->elements = 1;
    int overflow = 0;
    /* numpy's sizes are signed 64-bit (npy_intp): the product of the
     * non-zero dimensions must fit one, also beside a 0 that makes the
     * array empty - (0, 2**32, 2**32) and (0, 2**64-1) do not load. */
    uint64_t nz = 1;
    for (size_t i = 0; i < n; i++) {
        const lit_t *v = s->kids[i];
        if (v->type != L_INT || v->neg || v->big)
            return na_err_set(err, NA_E_FORMAT, "header 'shape' item %zu is not a "
                              "non-negative integer", i);
        h->shape[i] = v->i;
        if (v->i != 0 && nz > (uint64_t)INT64_MAX / v->i)
            overflow = 1;
        else if (v->i != 0)
            nz *= v->i;
        h->elements *= v->i;
    }
    char sb[256];
    if (overflow)
        return na_err_set(err, NA_E_FORMAT, "shape %s: more elements than numpy's 64-bit sizes "
                          "hold (2^63 - 1)",
                          na_npy_shape_str(h->shape, h->ndim, sb, sizeof sb));
    return NA_OK;
}

static void descr_text(const lit_t *d, const char *hdr, size_t hlen, char *out, size_t cap)
{
    if (d->type == L_STR) {
        snprintf(out, cap, "%s", d->s);
        return;
    }
    /* structured: quote the header text of the list, clipped */
    const char *p = strstr(hdr, "'descr'");
    const char *lb = p ? strchr(p, '[') : NULL;
    size_t n = lb ? strcspn(lb, "]") + 1 : 0;
    if (lb == NULL || (size_t)(lb - hdr) + n > hlen)
        snprintf(out, cap, "structured");
    else
        snprintf(out, cap, "%.*s%s", (int)(n < cap - 4 ? n : cap - 4), lb,
                 n < cap - 4 ? "" : "...");
}

na_status_t na_npy_parse_header(const uint8_t *buf, size_t n, na_npy_header_t *h,
                                na_err_t *err)
{
    memset(h, 0, sizeof *h);
    if (n < 6 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return na_err_set(err, NA_E_FORMAT,
                          "not a .npy file (it does not start with 0x93 'NUMPY')");
    if (n < 10) /* the magic, then less than a version and a length */
        return na_err_set(err, NA_E_FORMAT, "truncated .npy header (%zu bytes)", n);
    h->major = buf[6];
    h->minor = buf[7];
    if (h->major < 1 || h->major > 3)
        return na_err_set(err, NA_E_UNSUPPORTED, ".npy format version %d.%d is not supported "
                          "(1.0, 2.0 and 3.0 are)", h->major, h->minor);
    size_t lenbytes = h->major == 1 ? 2 : 4;
    if (n < 8 + lenbytes)
        return na_err_set(err, NA_E_FORMAT, "truncated .npy header");
    uint64_t hl = buf[8] | (uint64_t)buf[9] << 8;
    if (lenbytes == 4)
        hl |= (uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
    if (hl > NA_NPY_MAX_HEADER)
        return na_err_set(err, NA_E_FORMAT, "header of %llu bytes is larger than %u bytes, "
                          "numpy's default limit (max_header_size)", (unsigned long long)hl,
                          NA_NPY_MAX_HEADER);
    h->header_bytes = 8 + lenbytes + hl;
    if (n < h->header_bytes)
        return na_err_set(err, NA_E_FORMAT, "truncated .npy header: %llu bytes announced, the "
                          "file has %zu", (unsigned long long)hl, n - 8 - lenbytes);
    const uint8_t *txt = buf + 8 + lenbytes;
    /* a 3.0 header is UTF-8, which numpy decodes strictly (np.load raises
     * UnicodeDecodeError; round 37b: one with 0xff 0xfe was read) */
    for (size_t i = 0, len; h->major >= 3 && i < hl; i += len)
        if ((len = na_utf8_seq_len(txt + i, hl - i)) == 0)
            return na_err_set(err, NA_E_FORMAT, "format 3.0 header is not valid UTF-8 (byte %zu "
                              "of the header: 0x%02x)", i, txt[i]);
    char *copy = malloc(2 * hl + 1);
    if (copy == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    /* 1.0 and 2.0 headers are latin-1 (numpy decodes them so): a field
     * named 'ü' is the byte 0xFC there. Names are kept as UTF-8, as a 3.0
     * header holds them, so that 'data.ü' is the name users see and type. */
    size_t cl = 0;
    for (size_t i = 0; i < hl; i++) {
        if (h->major < 3 && txt[i] >= 0x80) {
            copy[cl++] = (char)(0xC0 | txt[i] >> 6);
            copy[cl++] = (char)(0x80 | (txt[i] & 0x3F));
        } else {
            copy[cl++] = (char)txt[i];
        }
    }
    copy[cl] = '\0';
    hl = cl;
    lp_t L = {copy, copy + hl, NULL, 0, 0, NULL, 0, 0, 0, err, NA_OK};
    if (memchr(copy, '\0', hl) != NULL)
        L.st = na_err_set(err, NA_E_FORMAT, "header holds a NUL byte");
    lit_t *root = L.st == NA_OK ? lp_value(&L) : NULL;
    if (root != NULL) {
        lp_ws(&L);
        if (L.p != L.end)
            L.st = na_err_set(err, NA_E_FORMAT, "header has text after its dict");
    }
    na_status_t st = L.st;
    if (st == NA_OK)
        st = check_dict(root, err);
    if (st == NA_OK) {
        const lit_t *fo = dict_get(root, "fortran_order");
        if (fo->type != L_TRUE && fo->type != L_FALSE)
            st = na_err_set(err, NA_E_FORMAT, "header 'fortran_order' is not True or False");
        h->fortran = fo->type == L_TRUE;
    }
    if (st == NA_OK)
        st = header_shape(h, dict_get(root, "shape"), err);
    if (st == NA_OK) {
        const lit_t *d = dict_get(root, "descr");
        descr_text(d, copy, hl, h->descr_text, sizeof h->descr_text);
        fb_t b = {h, err};
        st = parse_descr(&b, d, "", 0, NULL, 0, &h->itemsize, 0);
    }
    if (st == NA_OK && h->itemsize != 0 && h->elements > UINT64_MAX / h->itemsize)
        st = na_err_set(err, NA_E_FORMAT, "array size in bytes overflows 64 bits");
    h->data_bytes = h->elements * h->itemsize;
    lp_free(&L);
    free(copy);
    if (st != NA_OK)
        na_npy_header_free(h);
    return st;
}

void na_npy_header_free(na_npy_header_t *h)
{
    for (size_t i = 0; i < h->n_fields; i++)
        free(h->fields[i].name);
    free(h->fields);
    h->fields = NULL;
    h->n_fields = 0;
}

/* ---- entries ------------------------------------------------------------ */

static na_npy_entry_t *new_entry(na_npy_list_t *l, const char *name, na_err_t *err)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 8;
        na_npy_entry_t *e = realloc(l->e, nc * sizeof *e);
        if (e == NULL)
            return NULL;
        l->e = e;
        l->cap = nc;
    }
    na_npy_entry_t *e = &l->e[l->n];
    memset(e, 0, sizeof *e);
    if ((e->name = strdup(name)) == NULL)
        return NULL;
    l->n++;
    return e;
}

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

/* The view of one field: whole records when the field is a scalar (the
 * engine's elem_stride/elem_offset pick the field out), its own elements
 * when it has a subarray shape. */
static void field_view(na_view_t *v, const na_npy_header_t *h, const na_npy_field_t *f,
                       const na_store_t *s, uint64_t data)
{
    memset(v, 0, sizeof *v);
    v->store = s;
    int nd = h->ndim;
    uint64_t rec = h->itemsize;
    v->rsize = f->sub_ndim ? f->esize : (uint32_t)rec;
    v->offset = data + (f->sub_ndim ? f->offset : 0);
    v->ndim = nd + f->sub_ndim;
    /* array dims: C or Fortran order over records */
    uint64_t acc = rec;
    for (int i = 0; i < nd; i++) {
        int d = h->fortran ? i : nd - 1 - i;
        v->shape[d] = h->shape[d];
        v->stride[d] = acc;
        acc *= h->shape[d] ? h->shape[d] : 1;
    }
    /* subarray dims: C order inside the field (numpy stores subarrays C) */
    acc = f->esize;
    for (int i = f->sub_ndim - 1; i >= 0; i--) {
        v->shape[nd + i] = f->sub_shape[i];
        v->stride[nd + i] = acc;
        acc *= f->sub_shape[i] ? f->sub_shape[i] : 1;
    }
}

static na_status_t add_field_entries(na_npy_list_t *l, const na_npy_header_t *h,
                                     const na_npy_field_t *f, const char *prefix,
                                     const na_store_t *s, uint64_t data, int pickled,
                                     na_err_t *err)
{
    char name[1024];
    /* a field's path starts with its dot (parse_member): NAME.x */
    snprintf(name, sizeof name, "%s%s", prefix, f->name);
    if (h->ndim + f->sub_ndim > NA_MAX_NDIM)
        return na_err_set(err, NA_E_UNSUPPORTED, "'%s' has more than %d dimensions", name,
                          NA_MAX_NDIM);
    int parts = f->kind == NA_NPY_NUMERIC ? f->nparts : 1;
    for (int p = 0; p < parts; p++) {
        char pn[1100];
        snprintf(pn, sizeof pn, "%s%s", name, parts == 2 ? (p ? ".imag" : ".real") : "");
        na_npy_entry_t *e = new_entry(l, pn, err);
        if (e == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        e->kind = pickled ? NA_NPY_OBJECT : f->kind;
        e->dtype = f->dtype;
        e->stored = f->stored;
        e->order = f->order;
        e->field_offset = f->sub_ndim ? 0 : f->offset;
        e->part_offset = (uint32_t)(p * (f->esize / 2));
        /* a named field is a record's (np.dtype([('x', '<f4')]) has one) */
        e->part = h->n_fields > 1 || *f->name ? NA_PART_FIELD
                  : parts == 2                ? NA_PART_COMPLEX
                                              : 0;
        field_view(&e->view, h, f, s, data);
        e->view.scratch = l->scratch;
        uint64_t n = 1;
        for (int d = 0; d < e->view.ndim; d++)
            n *= e->view.shape[d];
        e->bytes = n * f->esize / (uint64_t)parts;
        char why[1500];
        why[0] = '\0';
        if (pickled && f->kind != NA_NPY_OBJECT)
            snprintf(why, sizeof why, "a field of a structured array with an object field: "
                     "np.save pickles the whole array, never unpickled, not audited");
        else if (f->kind == NA_NPY_SKIP)
            snprintf(why, sizeof why, "dtype %s is not numeric data (string, bytes, "
                     "void or datetime)", f->descr);
        else if (f->kind == NA_NPY_OBJECT)
            snprintf(why, sizeof why, "object array (dtype %s) holds pickled Python objects: "
                     "never unpickled, not audited", f->descr);
        else if (f->kind == NA_NPY_UNSUPPORTED)
            snprintf(why, sizeof why, "unsupported numeric dtype %s in '%s'", f->descr, pn);
        if (why[0] && (e->reason = xstrdup(why)) == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        if (e->kind == NA_NPY_NUMERIC) {
            na_status_t st = na_view_prepare(&e->view, pn, err);
            if (st != NA_OK)
                return st;
        }
    }
    return NA_OK;
}

na_status_t na_npy_add_entries(na_npy_list_t *l, const na_npy_header_t *h, const char *prefix,
                               const na_store_t *store, uint64_t data, na_err_t *err)
{
    /* An object field anywhere makes np.save pickle the whole array
     * (numpy/lib/format.py, write_array: dtype.hasobject): the bytes
     * after the header are a pickle, not records, and the numeric fields
     * were decoded from them (sixteenth fresh-user round). */
    int pickled = 0;
    for (size_t i = 0; i < h->n_fields; i++)
        pickled |= h->fields[i].kind == NA_NPY_OBJECT;
    uint64_t avail = store->size > data ? store->size - data : 0;
    if (!pickled && h->data_bytes > avail) {
        char sb[300];
        return na_err_set(err, NA_E_FORMAT, "data truncated: shape %s × %s needs %llu bytes, "
                          "the file has %llu",
                          na_npy_shape_str(h->shape, h->ndim, sb, sizeof sb), h->descr_text,
                          (unsigned long long)h->data_bytes, (unsigned long long)avail);
    }
    for (size_t i = 0; i < h->n_fields; i++) {
        na_status_t st = add_field_entries(l, h, &h->fields[i], prefix, store, data, pickled,
                                           err);
        if (st != NA_OK)
            return st;
    }
    return NA_OK;
}

na_status_t na_npy_add_other(na_npy_list_t *l, const char *name, uint64_t bytes, na_err_t *err)
{
    na_npy_entry_t *e = new_entry(l, name, err);
    if (e == NULL || (e->reason = strdup("not an .npy member (np.load gives its bytes): not "
                                         "numeric data")) == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    e->kind = NA_NPY_SKIP;
    e->dtype = e->stored = NA_DT_INVALID;
    e->bytes = bytes;
    return NA_OK;
}

void na_npy_list_free(na_npy_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->e[i].name);
        free(l->e[i].reason);
        na_view_free(&l->e[i].view);
    }
    free(l->e);
    memset(l, 0, sizeof *l);
}

na_status_t na_npy_entry_tensor(na_npy_entry_t *e, na_tensor_t *t, na_err_t *err)
{
    memset(t, 0, sizeof *t);
    t->name = e->name;
    t->dtype = e->dtype;
    t->stored = e->stored;
    t->byte_order = e->order;
    t->ndim = e->view.ndim;
    memcpy(t->shape, e->view.shape, (size_t)t->ndim * sizeof *t->shape);
    t->elements = 1;
    for (int d = 0; d < t->ndim; d++)
        t->elements *= t->shape[d];
    t->elem_stride = e->view.rsize;
    t->elem_offset = e->field_offset + e->part_offset;
    t->part = e->part;
    if (e->kind == NA_NPY_SKIP) {
        /* src.read NULL + NA_OK: listed as skipped (format.h) */
        na_err_set(err, NA_OK, "%s", e->reason);
        return NA_OK;
    }
    if (e->kind != NA_NPY_NUMERIC)
        return na_err_set(err, NA_E_UNSUPPORTED, "%s", e->reason);
    t->src.read = na_view_read;
    t->src.ctx = &e->view;
    return NA_OK;
}

/* ---- the "npy" reader --------------------------------------------------- */

typedef struct npy_input {
    na_input_t base;
    na_map_t *map;
    na_store_t store;
    na_scratch_t scratch;
    na_npy_list_t list;
} npy_input_t;

static size_t npy_count(const na_input_t *in) { return ((const npy_input_t *)in)->list.n; }

static na_status_t npy_tensor(na_input_t *in, size_t i, na_tensor_t *t, na_err_t *err)
{
    return na_npy_entry_tensor(&((npy_input_t *)in)->list.e[i], t, err);
}

static size_t npy_meta_count(const na_input_t *in) { return 0; }

static void npy_meta(const na_input_t *in, size_t i, const char **k, const char **v)
{
    *k = *v = NULL;
}

static uint64_t npy_tensor_bytes(const na_input_t *in, size_t i)
{
    return ((const npy_input_t *)in)->list.e[i].bytes;
}

static void npy_close(na_input_t *in)
{
    npy_input_t *n = (npy_input_t *)in;
    if (n == NULL)
        return;
    na_npy_list_free(&n->list);
    free(n->scratch.buf);
    na_map_close(n->map);
    free(n->base.path);
    free(n);
}

static const struct na_input_vtbl npy_vtbl = {
    npy_count, npy_tensor, npy_meta_count, npy_meta, npy_tensor_bytes, npy_close, NULL,
};

static na_status_t npy_open(const char *path, int fd, const na_open_opts_t *o,
                            na_input_t **out, na_err_t *err)
{
    *out = NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        return na_err_set(err, NA_E_IO, "cannot stat the file");
    }
    npy_input_t *n = calloc(1, sizeof *n);
    if (n == NULL) {
        close(fd);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    n->base.v = &npy_vtbl;
    n->base.format = "npy";
    n->base.file_size = (uint64_t)sb.st_size;
    n->base.path = strdup(path ? path : "");
    size_t win = o && o->window_bytes ? o->window_bytes : NA_DEFAULT_WINDOW_BYTES;
    na_status_t st = na_map_open(fd, n->base.file_size, win, &n->map, err);
    uint8_t head[NA_NPY_MAX_HEADER + 12];
    size_t hn = n->base.file_size < sizeof head ? (size_t)n->base.file_size : sizeof head;
    if (st == NA_OK && n->base.path == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    if (st == NA_OK)
        st = na_map_pread(n->map, 0, hn, head, err);
    na_npy_header_t h;
    memset(&h, 0, sizeof h);
    if (st == NA_OK)
        st = na_npy_parse_header(head, hn, &h, err);
    if (st == NA_OK) {
        n->store = (na_store_t){n->map, 0, n->base.file_size, NULL, 0};
        n->list.scratch = &n->scratch;
        st = na_npy_add_entries(&n->list, &h, "data", &n->store, h.header_bytes, err);
    }
    na_npy_header_free(&h);
    if (st != NA_OK) {
        npy_close(&n->base);
        return st;
    }
    *out = &n->base;
    return NA_OK;
}

const na_format_t na_format_npy = {"npy", npy_open};
