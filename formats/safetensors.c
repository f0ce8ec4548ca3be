/*
 * safetensors.c - the safetensors reader.
 *
 * Format (https://github.com/huggingface/safetensors, README "Format" and
 * safetensors/src/tensor.rs, SafeTensors::read_metadata and
 * Metadata::validate): 8 bytes little-endian u64 N, then N bytes of UTF-8
 * JSON object header, then the data. The header maps each tensor name to
 * {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to
 * byte 8 + N) and may hold "__metadata__", a string-to-string map.
 *
 * A file is valid when the reference loader accepts it (DESIGN.md):
 *  - N <= 100,000,000 (MAX_HEADER_SIZE; ours is o->max_header_bytes) and
 *    8 + N <= file size, both checked before anything is allocated;
 *  - every dtype known; the element count (product of shape, [] = 1) times
 *    the dtype's bits is a whole number of bytes equal to end - begin, with
 *    64-bit overflow checks; begin <= end;
 *  - sorted by data_offsets, the tensors start at 0 and are contiguous, and
 *    the last one ends exactly at the end of the file.
 * One stricter rule on purpose: duplicate keys are refused (jansson's
 * JSON_REJECT_DUPLICATES), since parsers disagree on which copy wins and a
 * NaN could hide in the copy an auditor does not look at.
 *
 * Each rule has its own one-line message naming the tensor and numbers.
 * Parsing is linear in the number of tensors apart from the O(n log n)
 * sort by offsets: jansson's hash table for the JSON (about 1 KiB per
 * tensor while it lives), then flat arrays (names in one arena, dims in
 * one array, about 100 bytes per tensor) once the tree is freed. Measured:
 * 1,000,000 tensors open in ~8 s with a 1.07 GB peak on a loaded 2-core
 * machine, most of it jansson's parse and free.
 *
 * Tensors are listed in storage (data_offsets) order; a C64 tensor is
 * listed as NAME.real and NAME.imag (F32, element stride 8, offset 0/4).
 * Data reads go through mapfile.c windows, never a whole-file mapping.
 */
#include "format.h"
#include "json_err.h"

#include <jansson.h>  /* json_loadb, JSON_REJECT_DUPLICATES */
#include <stdint.h>   /* SIZE_MAX, UINT64_MAX */
#include <stdlib.h>   /* malloc, qsort */
#include <string.h>   /* memcpy, strlen */
#include <sys/stat.h> /* fstat */
#include <unistd.h>   /* close */

#define NAME_CLIP 120 /* bytes of a name quoted in a message */

typedef struct st_tensor {
    size_t name_off;  /* into names arena: NAME\0 (C64: NAME\0NAME.real\0NAME.imag\0) */
    size_t name_len;
    size_t dims_off;  /* into dims */
    size_t ndim;
    na_dtype_t dtype;
    uint64_t elements;
    uint64_t begin, end; /* data_offsets, relative to the data start */
    size_t seq;          /* position in the header, breaks offset ties */
} st_tensor_t;

typedef struct st_input st_input_t;

typedef struct st_entry { /* one listed entry (a C64 tensor gives two) */
    st_input_t *in;
    size_t tensor;       /* index into tensors (storage order) */
    int part;            /* 0 plain, 1 real, 2 imag */
} st_entry_t;

struct st_input {
    na_input_t base;     /* first: the generic part */
    na_map_t *map;
    uint64_t data_start; /* 8 + N */
    uint64_t data_bytes; /* end of the last tensor */
    size_t n_tensors, cap_tensors;
    st_tensor_t *tensors;
    size_t n_entries;
    st_entry_t *entries;
    char *names;         /* arena */
    size_t names_len, names_cap;
    uint64_t *dims;
    size_t n_dims, cap_dims;
    const char **stored_names; /* n_tensors, storage order */
    size_t n_meta;
    char **meta;               /* 2 * n_meta strings: key, value */
};

/* ---- small helpers ------------------------------------------------ */

/* Make room for `need` elements of `elem` bytes in *p (doubling). -1 on
 * out of memory or size overflow. */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need && nc <= SIZE_MAX / 2)
        nc *= 2;
    if (nc < need || nc > SIZE_MAX / elem)
        return -1;
    void *q = realloc(*p, nc * elem);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* Quote at most NAME_CLIP bytes of a name (message length is capped). */
static const char *clip(const char *s, size_t len, char *buf, size_t cap)
{
    size_t n = len < NAME_CLIP ? len : NAME_CLIP;
    if (n >= cap - 4)
        n = cap - 4;
    memcpy(buf, s, n);
    strcpy(buf + n, len > n ? "..." : "");
    return buf;
}

/* "[1000, 1000]"; long shapes keep their first 8 dims and "...". */
static const char *fmt_shape(const uint64_t *d, size_t ndim, char *buf, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k, "[");
    for (size_t i = 0; i < ndim && k < cap; i++) {
        if (i == 8) {
            k += (size_t)snprintf(buf + k, cap - k, ", ... (%zu dims)", ndim);
            break;
        }
        k += (size_t)snprintf(buf + k, cap - k, "%s%llu", i ? ", " : "",
                              (unsigned long long)d[i]);
    }
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
    return buf;
}

static const char *jtype(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a floating-point number"; /* 4.0 too: serde_json refuses it for a usize */
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, <= U+10FFFF), or 0 when invalid. */
static size_t utf8_len(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    size_t len;
    uint32_t min, cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, min = 0x80, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, min = 0x800, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, min = 0x10000, cp = c & 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* ---- header checks ------------------------------------------------ */

static na_status_t check_utf8(const uint8_t *h, size_t n, na_err_t *err)
{
    na_status_t st = na_json_bom_error("header", h, n, err);
    if (st != NA_OK)
        return st;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_len(h + i, n - i);
        if (l == 0)
            return na_err_set(err, NA_E_FORMAT,
                              "header is not valid UTF-8 (byte 0x%02X at header offset %zu)",
                              h[i], i);
        i += l;
    }
    return NA_OK;
}

/* One step of a scan of JSON text: 1 when byte c (at *i) lies outside
 * every string and is not a quote; a backslash inside a string also
 * steps over the byte it escapes (*i + 1). */
static int outside_string(char c, size_t *i, int *in_str)
{
    if (*in_str) {
        if (c == '\\')
            (*i)++;
        else if (c == '"')
            *in_str = 0;
        return 0;
    }
    if (c == '"') {
        *in_str = 1;
        return 0;
    }
    return 1;
}

/* jansson's duplicate-key error names the key only when it is short; its
 * position is the byte just past the key's closing quote. Find the key's
 * text and its depth (1 = a tensor name) from the raw header. */
static na_status_t dup_key_error(const char *h, size_t n, size_t pos, na_err_t *err)
{
    if (pos < 2 || pos > n || h[pos - 1] != '"')
        return na_err_set(err, NA_E_FORMAT, "header has a duplicate key (at byte %zu)", pos);
    size_t q = pos - 1; /* closing quote */
    size_t open = q;
    while (open > 0) {
        open--;
        if (h[open] != '"')
            continue;
        size_t bs = 0;
        while (open > bs && h[open - 1 - bs] == '\\')
            bs++;
        if (bs % 2 == 0)
            break;
    }
    int depth = 0, in_str = 0, in_key1 = 0;
    size_t ks = 0, ke = 0; /* the last string opened at depth 1: the entry's name */
    for (size_t i = 0; i < open; i++) {
        char c = h[i];
        int was = in_str;
        size_t at = i;
        if (!outside_string(c, &i, &in_str)) {
            if (!was && depth == 1) {
                ks = at + 1;
                in_key1 = 1;
            } else if (was && !in_str && in_key1) {
                ke = at;
                in_key1 = 0;
            }
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']')
            depth--;
    }
    char nb[NAME_CLIP + 8];
    const char *key = clip(h + open + 1, q - open - 1, nb, sizeof nb);
    if (depth == 1)
        return na_err_set(err, NA_E_FORMAT,
                          "duplicate tensor name '%s' in header (refused: readers disagree "
                          "on which copy wins)",
                          key);
    if (depth == 2 && ke > ks) { /* inside a tensor's entry (audit 25a: name it) */
        char eb[NAME_CLIP + 8];
        const char *ent = clip(h + ks, ke - ks, eb, sizeof eb);
        int meta = !strcmp(ent, "__metadata__");
        return na_err_set(err, NA_E_FORMAT, "%s%s%s: duplicate key '%s' in its entry (at byte %zu)",
                          meta ? "" : "tensor '", ent, meta ? "" : "'", key, pos);
    }
    return na_err_set(err, NA_E_FORMAT, "duplicate key '%s' in header (at byte %zu)", key,
                      pos);
}

/* 1 + the offset of a number -0 outside the strings of JSON text h, or
 * 0. jansson reads -0 as the integer 0; serde_json, the reference
 * loader's parser, as the float -0.0, which it refuses for a usize
 * (shape, data_offsets); nothing else in a header is a number. */
static size_t neg_zero_at(const char *h, size_t n)
{
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        if (outside_string(c, &i, &in_str) && c == '-' && i + 1 < n && h[i + 1] == '0' &&
            (i + 2 == n || !strchr("0123456789.eE", h[i + 2])))
            return i + 1;
    }
    return 0;
}

/* JSON values jansson would build for a header: each costs it about 130
 * bytes, an object (its hash table) about 230, counted twice (a 99 MB
 * header of 33 M empty arrays took 4.5 GB, a 98 MB __metadata__ of 8.3 M
 * pairs 2.1 GB: eighteenth fresh-user round; 16 M empty objects 3.9 GB:
 * nineteenth). A rank-1 tensor counts 12 (its name, the entry twice,
 * dtype, shape, data_offsets and their values), so 16 M admit the
 * 1,000,000-tensor headers the man page names and hold the parse to
 * about 2 GB. */
#define ST_MAX_JSON_VALUES (16u << 20)

/* The values (strings, keys included, numbers, literals, arrays, and
 * objects twice) of JSON text h, counted up to ST_MAX_JSON_VALUES + 1. */
static size_t json_values(const char *h, size_t n)
{
    int in_str = 0;
    size_t v = 0;
    for (size_t i = 0; i < n && v <= ST_MAX_JSON_VALUES; i++) {
        char c = h[i];
        int was_in = in_str;
        if (!outside_string(c, &i, &in_str)) {
            v += !was_in; /* a string (or key) opens */
        } else {
            /* a number or literal starts where the one before has ended */
            int word = (c >= '0' && c <= '9') || c == '-' || c == 't' || c == 'f' || c == 'n';
            char b = i ? h[i - 1] : ' ';
            int after = (b >= '0' && b <= '9') || b == '-' || b == '+' || b == '.' || b == 'e' ||
                        b == 'E' || (b >= 'a' && b <= 'z');
            v += 2 * (c == '{') + (c == '[') + (word && !after);
        }
    }
    return v;
}

static na_status_t parse_json(const char *h, size_t n, json_t **out, na_err_t *err)
{
    json_error_t je;
    if (json_values(h, n) > ST_MAX_JSON_VALUES) {
        *out = NULL;
        return na_err_set(err, NA_E_UNSUPPORTED,
                          "header holds more than %u JSON values (a tensor takes about 12): "
                          "not parsed, it would take gigabytes",
                          ST_MAX_JSON_VALUES);
    }
    *out = json_loadb(h, n, JSON_REJECT_DUPLICATES, &je);
    if (*out == NULL) {
        if (json_error_code(&je) == json_error_duplicate_key)
            return dup_key_error(h, n, (size_t)je.position, err);
        /* jansson 2.14 leaves the error blank when an allocation of its
         * lexer fails (seen under ulimit -v): out of memory too */
        if (json_error_code(&je) == json_error_out_of_memory || (je.line < 0 && !je.text[0]))
            return na_err_set(err, NA_E_NOMEM, "out of memory parsing the header");
        /* a byte-order mark, a NUL (valid JSON that serde_json takes), the rest */
        return na_json_load_error("header", &je, h, n, err);
    }
    if (!json_is_object(*out)) {
        na_status_t st = na_err_set(err, NA_E_FORMAT, "header is %s, not a JSON object",
                                    jtype(*out));
        json_decref(*out);
        *out = NULL;
        return st;
    }
    size_t nz = neg_zero_at(h, n);
    if (nz > 0) {
        json_decref(*out);
        *out = NULL;
        return na_err_set(err, NA_E_FORMAT, "header: -0 at byte %zu, which the reference "
                          "loader reads as the floating-point number -0.0, not a "
                          "non-negative integer", nz - 1);
    }
    return NA_OK;
}

/* __metadata__: absent, null or an object of strings (reference:
 * Option<HashMap<String, String>>). */
static na_status_t parse_metadata(st_input_t *in, json_t *v, na_err_t *err)
{
    if (json_is_null(v))
        return NA_OK;
    if (!json_is_object(v))
        return na_err_set(err, NA_E_FORMAT,
                          "__metadata__ is %s; it must be an object of strings (or null)",
                          jtype(v));
    size_t n = json_object_size(v);
    in->meta = calloc(2 * n + 1, sizeof *in->meta);
    if (in->meta == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    const char *k;
    json_t *s;
    char nb[NAME_CLIP + 8];
    json_object_foreach(v, k, s) {
        if (!json_is_string(s))
            return na_err_set(err, NA_E_FORMAT, "__metadata__ value of '%s' is %s, not a string",
                              clip(k, strlen(k), nb, sizeof nb), jtype(s));
        char *kc = strdup(k), *vc = strdup(json_string_value(s));
        in->meta[2 * in->n_meta] = kc;
        in->meta[2 * in->n_meta + 1] = vc;
        in->n_meta++; /* counted even when partly allocated, freed by close */
        if (kc == NULL || vc == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    return NA_OK;
}

/* One non-negative JSON integer (shape dims, data_offsets). */
static na_status_t get_u64(const json_t *v, const char *what, size_t i, const char *tn,
                           uint64_t *out, na_err_t *err)
{
    if (!json_is_integer(v))
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': %s[%zu] is %s, not an integer", tn,
                          what, i, jtype(v));
    json_int_t x = json_integer_value(v);
    if (x < 0)
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': %s[%zu] is %lld, negative", tn, what,
                          i, (long long)x);
    *out = (uint64_t)x;
    return NA_OK;
}

static na_status_t parse_dtype(const json_t *v, const char *tn, na_dtype_t *dt, na_err_t *err)
{
    if (v == NULL)
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': missing \"dtype\"", tn);
    if (!json_is_string(v))
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': dtype is %s, not a string", tn,
                          jtype(v));
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    *dt = na_dtype_from_name(s, len);
    /* F80 is our name for x87 long double (HDF5), not a safetensors dtype */
    if (*dt == NA_DT_INVALID || *dt == NA_DT_F80) {
        char nb[NAME_CLIP + 8];
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': unknown dtype '%s'", tn,
                          clip(s, len, nb, sizeof nb));
    }
    return NA_OK;
}

static na_status_t parse_shape(st_input_t *in, st_tensor_t *t, const json_t *v, const char *tn,
                               na_err_t *err)
{
    if (v == NULL)
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': missing \"shape\"", tn);
    if (!json_is_array(v))
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': shape is %s, not an array", tn,
                          jtype(v));
    size_t nd = json_array_size(v);
    if (grow((void **)&in->dims, &in->cap_dims, in->n_dims + nd, sizeof *in->dims))
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    t->dims_off = in->n_dims;
    t->ndim = nd;
    /* dims is still NULL when every tensor so far is a scalar, and
     * NULL + 0 is undefined behaviour (clang UBSan, found by fuzzing) */
    uint64_t *d = nd ? in->dims + in->n_dims : NULL;
    uint64_t elements = 1;
    int overflow = 0;
    for (size_t i = 0; i < nd; i++) {
        na_status_t st = get_u64(json_array_get(v, i), "shape", i, tn, &d[i], err);
        if (st != NA_OK)
            return st;
        if (d[i] != 0 && elements > UINT64_MAX / d[i])
            overflow = 1;
        else
            elements *= d[i];
    }
    in->n_dims += nd;
    /* As the reference's checked product (try_fold checked_mul): an
     * overflow in a prefix is an error even when a later dim is 0. */
    if (overflow) {
        char sb[200];
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': element count of shape %s overflows "
                          "64 bits", tn, fmt_shape(d, nd, sb, sizeof sb));
    }
    t->elements = elements;
    return NA_OK;
}

static na_status_t parse_offsets(st_tensor_t *t, const json_t *v, const char *tn, na_err_t *err)
{
    if (v == NULL)
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': missing \"data_offsets\"", tn);
    if (!json_is_array(v) || json_array_size(v) != 2)
        return na_err_set(err, NA_E_FORMAT,
                          "tensor '%s': data_offsets is %s of %zu, not [begin, end]", tn,
                          jtype(v), json_is_array(v) ? json_array_size(v) : (size_t)1);
    na_status_t st = get_u64(json_array_get(v, 0), "data_offsets", 0, tn, &t->begin, err);
    if (st == NA_OK)
        st = get_u64(json_array_get(v, 1), "data_offsets", 1, tn, &t->end, err);
    if (st != NA_OK)
        return st;
    if (t->begin > t->end)
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': data_offsets [%llu, %llu]: begin "
                          "after end", tn, (unsigned long long)t->begin,
                          (unsigned long long)t->end);
    return NA_OK;
}

/* Byte size = elements * bits / 8, a whole number of bytes, equal to
 * end - begin (tensor.rs Metadata::validate). */
static na_status_t check_size(st_input_t *in, const st_tensor_t *t, const char *tn,
                              na_err_t *err)
{
    unsigned bits = na_dtype_bits(t->dtype);
    char sb[200];
    const char *dn = na_dtype_name(t->dtype);
    if (t->elements > UINT64_MAX / bits)
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': size in bits of shape %s x %s overflows "
                          "64 bits", tn,
                          fmt_shape(t->ndim ? in->dims + t->dims_off : NULL, t->ndim, sb,
                                    sizeof sb),
                          dn);
    uint64_t nbits = t->elements * bits;
    if (nbits % 8 != 0)
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': %llu elements of %s are not a whole "
                          "number of bytes", tn, (unsigned long long)t->elements, dn);
    if (nbits / 8 != t->end - t->begin)
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': shape %s of %s needs %llu bytes but "
                          "data_offsets [%llu, %llu] hold %llu", tn,
                          fmt_shape(t->ndim ? in->dims + t->dims_off : NULL, t->ndim, sb,
                                    sizeof sb), dn,
                          (unsigned long long)(nbits / 8), (unsigned long long)t->begin,
                          (unsigned long long)t->end, (unsigned long long)(t->end - t->begin));
    return NA_OK;
}

/* Append NAME (and for C64 NAME.real, NAME.imag) to the names arena. */
static na_status_t add_name(st_input_t *in, st_tensor_t *t, const char *k, size_t len,
                            na_err_t *err)
{
    size_t need = len + 1;
    if (t->dtype == NA_DT_C64)
        need += 2 * (len + 6);
    if (grow((void **)&in->names, &in->names_cap, in->names_len + need, 1))
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    char *p = in->names + in->names_len;
    t->name_off = in->names_len;
    t->name_len = len;
    memcpy(p, k, len);
    p[len] = '\0';
    if (t->dtype == NA_DT_C64) {
        sprintf(p + len + 1, "%s.real", k);
        sprintf(p + 2 * len + 7, "%s.imag", k);
    }
    in->names_len += need;
    return NA_OK;
}

static na_status_t parse_tensor(st_input_t *in, const char *k, json_t *v, na_err_t *err)
{
    char nb[NAME_CLIP + 8];
    size_t klen = strlen(k); /* jansson refuses NUL in keys */
    const char *tn = clip(k, klen, nb, sizeof nb);
    if (!json_is_object(v))
        return na_err_set(err, NA_E_FORMAT, "tensor '%s': entry is %s, not an object", tn,
                          jtype(v));
    if (grow((void **)&in->tensors, &in->cap_tensors, in->n_tensors + 1, sizeof *in->tensors))
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    st_tensor_t *t = &in->tensors[in->n_tensors];
    memset(t, 0, sizeof *t);
    t->seq = in->n_tensors;
    na_status_t st = parse_dtype(json_object_get(v, "dtype"), tn, &t->dtype, err);
    if (st == NA_OK)
        st = parse_shape(in, t, json_object_get(v, "shape"), tn, err);
    if (st == NA_OK)
        st = parse_offsets(t, json_object_get(v, "data_offsets"), tn, err);
    if (st == NA_OK)
        st = check_size(in, t, tn, err);
    if (st == NA_OK)
        st = add_name(in, t, k, klen, err);
    if (st == NA_OK)
        in->n_tensors++;
    return st;
}

static int cmp_offsets(const void *a, const void *b)
{
    const st_tensor_t *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* Sorted by offsets: start at 0, contiguous, end at the end of the file. */
static na_status_t check_layout(st_input_t *in, uint64_t avail, na_err_t *err)
{
    if (in->n_tensors > 1) /* tensors is NULL for a header without tensors */
        qsort(in->tensors, in->n_tensors, sizeof *in->tensors, cmp_offsets);
    uint64_t pos = 0;
    char nb[NAME_CLIP + 8], pb[NAME_CLIP + 8];
    for (size_t i = 0; i < in->n_tensors; i++) {
        const st_tensor_t *t = &in->tensors[i];
        const char *tn = clip(in->names + t->name_off, t->name_len, nb, sizeof nb);
        if (t->begin != pos && i == 0)
            return na_err_set(err, NA_E_FORMAT, "tensor '%s' starts at data byte %llu; the "
                              "first tensor must start at 0", tn, (unsigned long long)t->begin);
        const st_tensor_t *p = i ? &in->tensors[i - 1] : NULL;
        if (t->begin > pos)
            return na_err_set(err, NA_E_FORMAT, "tensor '%s' starts at data byte %llu, leaving "
                              "a gap of %llu bytes after '%s' (ends at %llu)", tn,
                              (unsigned long long)t->begin, (unsigned long long)(t->begin - pos),
                              clip(in->names + p->name_off, p->name_len, pb, sizeof pb),
                              (unsigned long long)pos);
        if (t->begin < pos)
            return na_err_set(err, NA_E_FORMAT, "tensor '%s' starts at data byte %llu, "
                              "overlapping '%s' (ends at %llu)", tn,
                              (unsigned long long)t->begin,
                              clip(in->names + p->name_off, p->name_len, pb, sizeof pb),
                              (unsigned long long)pos);
        pos = t->end;
    }
    in->data_bytes = pos;
    if (pos > avail) {
        /* name the first tensor cut off (round 43a: which ones, not only
         * how many bytes); the layout is contiguous, so every later one
         * is cut off too */
        size_t i = 0;
        while (i + 1 < in->n_tensors && in->tensors[i].end <= avail)
            i++;
        const st_tensor_t *t = &in->tensors[i];
        size_t more = in->n_tensors - i - 1;
        char mb[48] = "";
        if (more)
            snprintf(mb, sizeof mb, " and the %zu after it", more);
        return na_err_set(err, NA_E_FORMAT, "truncated: tensor '%s'%s run%s past the end of the "
                          "file (the tensors need %llu data bytes after the header, file has "
                          "%llu: %llu bytes short)",
                          clip(in->names + t->name_off, t->name_len, nb, sizeof nb), mb,
                          more ? "" : "s", (unsigned long long)pos, (unsigned long long)avail,
                          (unsigned long long)(pos - avail));
    }
    if (pos < avail)
        return na_err_set(err, NA_E_FORMAT, "%llu trailing bytes after the last tensor (tensor "
                          "data ends at byte %llu of %llu)", (unsigned long long)(avail - pos),
                          (unsigned long long)(in->data_start + pos),
                          (unsigned long long)(in->data_start + avail));
    return NA_OK;
}

/* Build the listing (C64 -> two entries) and the stored-name list. */
static na_status_t build_entries(st_input_t *in, na_err_t *err)
{
    size_t n = in->n_tensors;
    for (size_t i = 0; i < in->n_tensors; i++)
        n += in->tensors[i].dtype == NA_DT_C64;
    in->entries = calloc(n ? n : 1, sizeof *in->entries);
    in->stored_names = calloc(in->n_tensors ? in->n_tensors : 1, sizeof *in->stored_names);
    if (in->entries == NULL || in->stored_names == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < in->n_tensors; i++) {
        in->stored_names[i] = in->names + in->tensors[i].name_off;
        int parts = in->tensors[i].dtype == NA_DT_C64 ? 2 : 0;
        for (int p = parts ? 1 : 0; p <= parts; p++)
            in->entries[k++] = (st_entry_t){in, i, p};
    }
    in->n_entries = k;
    return NA_OK;
}

/* Everything after the 8-byte length: read, validate, index. */
static na_status_t parse_header(st_input_t *in, uint64_t hlen, na_err_t *err)
{
    char *h = malloc(hlen ? hlen : 1);
    if (h == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory for a %llu-byte header",
                          (unsigned long long)hlen);
    json_t *root = NULL;
    na_status_t st = na_map_pread(in->map, 8, (size_t)hlen, h, err);
    if (st == NA_OK)
        st = check_utf8((const uint8_t *)h, (size_t)hlen, err);
    if (st == NA_OK)
        st = parse_json(h, (size_t)hlen, &root, err);
    free(h);
    const char *k;
    json_t *v;
    if (st == NA_OK) {
        json_object_foreach(root, k, v) {
            st = strcmp(k, "__metadata__") == 0 ? parse_metadata(in, v, err)
                                                : parse_tensor(in, k, v, err);
            if (st != NA_OK)
                break;
        }
    }
    json_decref(root);
    if (st == NA_OK)
        st = check_layout(in, in->base.file_size - in->data_start, err);
    if (st == NA_OK)
        st = build_entries(in, err);
    return st;
}

/* ---- the na_input_t table ----------------------------------------- */

static void st_close(na_input_t *base)
{
    st_input_t *in = (st_input_t *)base;
    if (in == NULL)
        return;
    na_map_close(in->map);
    for (size_t i = 0; i < 2 * in->n_meta; i++)
        free(in->meta[i]);
    free(in->meta);
    free(in->tensors);
    free(in->entries);
    free(in->names);
    free(in->dims);
    free(in->stored_names);
    free(in->base.path);
    free(in);
}

static size_t st_count(const na_input_t *base) { return ((const st_input_t *)base)->n_entries; }

static size_t st_meta_count(const na_input_t *base) { return ((const st_input_t *)base)->n_meta; }

static void st_meta(const na_input_t *base, size_t i, const char **key, const char **value)
{
    const st_input_t *in = (const st_input_t *)base;
    *key = i < in->n_meta ? in->meta[2 * i] : NULL;
    *value = i < in->n_meta ? in->meta[2 * i + 1] : NULL;
}

/* Stored bytes of entry i; a C64 tensor's two entries get half each, so
 * the entries add up to the file's data bytes. */
static uint64_t st_tensor_bytes(const na_input_t *base, size_t i)
{
    const st_input_t *in = (const st_input_t *)base;
    if (i >= in->n_entries)
        return 0;
    const st_tensor_t *t = &in->tensors[in->entries[i].tensor];
    uint64_t b = t->end - t->begin;
    return in->entries[i].part ? b / 2 : b;
}

/* na_read_fn: bytes [off, off+len) of one tensor's data through the map. */
static na_status_t st_read(void *ctx, uint64_t off, size_t len, const uint8_t **ptr,
                           na_err_t *err)
{
    const st_entry_t *e = ctx;
    const st_tensor_t *t = &e->in->tensors[e->tensor];
    uint64_t nbytes = t->end - t->begin;
    if (off > nbytes || len > nbytes - off)
        return na_err_set(err, NA_E_INTERNAL, "read of %zu bytes at %llu past the %llu bytes of "
                          "tensor '%s'", len, (unsigned long long)off,
                          (unsigned long long)nbytes, e->in->names + t->name_off);
    return na_map_get(e->in->map, e->in->data_start + t->begin + off, len, ptr, err);
}

static na_status_t st_tensor(na_input_t *base, size_t i, na_tensor_t *out, na_err_t *err)
{
    st_input_t *in = (st_input_t *)base;
    if (i >= in->n_entries)
        return na_err_set(err, NA_E_INTERNAL, "tensor index %zu out of range", i);
    st_entry_t *e = &in->entries[i];
    const st_tensor_t *t = &in->tensors[e->tensor];
    const char *nm = in->names + t->name_off;
    memset(out, 0, sizeof *out);
    out->name = e->part == 0 ? nm : e->part == 1 ? nm + t->name_len + 1
                                                  : nm + 2 * t->name_len + 7;
    out->stored = t->dtype;
    out->dtype = t->dtype == NA_DT_C64 ? NA_DT_F32 : t->dtype;
    out->byte_order = NA_LITTLE; /* safetensors is little-endian only */
    out->elements = t->elements;
    unsigned bits = na_dtype_bits(t->dtype);
    out->elem_stride = bits >= 8 ? bits / 8 : 1;
    out->elem_offset = e->part == 2 ? 4 : 0;
    out->src.read = st_read;
    out->src.ctx = e;
    if (t->ndim > NA_MAX_NDIM)
        return na_err_set(err, NA_E_UNSUPPORTED, "%s: %zu dimensions, at most %d are supported "
                          "(its shape is not listed)", out->name, t->ndim, NA_MAX_NDIM);
    out->ndim = (int)t->ndim;
    if (t->ndim > 0) /* dims is NULL when every tensor is a scalar */
        memcpy(out->shape, in->dims + t->dims_off, t->ndim * sizeof *out->shape);
    if (!na_dtype_supported(t->dtype))
        return na_err_set(err, NA_E_UNSUPPORTED, "%s: unsupported dtype %s", out->name,
                          na_dtype_name(t->dtype)); /* "NAME: ": na_reason_names */
    return NA_OK;
}

static const struct na_input_vtbl st_vtbl = {
    .count = st_count,
    .tensor = st_tensor,
    .meta_count = st_meta_count,
    .meta = st_meta,
    .tensor_bytes = st_tensor_bytes,
    .close = st_close,
};

/* The size checks come before any allocation that depends on the file
 * (tensor.rs read_metadata: HeaderTooSmall, HeaderTooLarge,
 * InvalidHeaderLength). */
static na_status_t check_prefix(uint64_t size, const uint8_t len8[8], uint64_t cap,
                                uint64_t *hlen, na_err_t *err)
{
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | len8[i];
    *hlen = n;
    if (n > cap)
        return na_err_set(err, NA_E_FORMAT, "header length %llu bytes exceeds the limit of %llu "
                          "bytes (raise it with --max-header-bytes)", (unsigned long long)n,
                          (unsigned long long)cap);
    if (n > size - 8)
        return na_err_set(err, NA_E_FORMAT, "header length %llu bytes runs past the end of the "
                          "file (8 + %llu > %llu bytes)", (unsigned long long)n,
                          (unsigned long long)n, (unsigned long long)size);
    if (n > SIZE_MAX)
        return na_err_set(err, NA_E_NOMEM, "header of %llu bytes does not fit in memory",
                          (unsigned long long)n);
    return NA_OK;
}

static na_status_t st_open(const char *path, int fd, const na_open_opts_t *o, na_input_t **out,
                           na_err_t *err)
{
    *out = NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        return na_err_set(err, NA_E_IO, "cannot stat the file");
    }
    uint64_t size = (uint64_t)sb.st_size;
    if (size < 8) {
        close(fd);
        return na_err_set(err, NA_E_FORMAT, "file is %llu bytes, too short for a safetensors "
                          "header (needs at least 8)", (unsigned long long)size);
    }
    st_input_t *in = calloc(1, sizeof *in);
    if (in == NULL) {
        close(fd);
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    in->base.v = &st_vtbl;
    in->base.format = "safetensors";
    in->base.file_size = size;
    in->base.path = strdup(path ? path : "");
    size_t win = o && o->window_bytes ? o->window_bytes : NA_DEFAULT_WINDOW_BYTES;
    uint64_t cap = o && o->max_header_bytes ? o->max_header_bytes : 100000000u;
    na_status_t st = na_map_open(fd, size, win, &in->map, err);
    uint8_t len8[8];
    uint64_t hlen = 0;
    if (st == NA_OK && in->base.path == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    if (st == NA_OK)
        st = na_map_pread(in->map, 0, 8, len8, err);
    if (st == NA_OK)
        st = check_prefix(size, len8, cap, &hlen, err);
    if (st == NA_OK) {
        in->data_start = 8 + hlen;
        st = parse_header(in, hlen, err);
    }
    if (st != NA_OK) {
        st_close(&in->base);
        return st;
    }
    *out = &in->base;
    return NA_OK;
}

const na_format_t na_format_safetensors = {"safetensors", st_open};

/* ---- safetensors-specific accessors (sharded checkpoints) ---------- */

size_t na_safetensors_stored_names(const na_input_t *in, const char *const **names)
{
    if (in == NULL || in->v != &st_vtbl) {
        *names = NULL;
        return 0;
    }
    const st_input_t *s = (const st_input_t *)in;
    *names = s->stored_names;
    return s->n_tensors;
}

uint64_t na_safetensors_data_bytes(const na_input_t *in)
{
    if (in == NULL || in->v != &st_vtbl)
        return 0;
    return ((const st_input_t *)in)->data_bytes;
}
