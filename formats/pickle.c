/*
 * pickle.c - a restricted pickle reader for torch.save files. It never
 * executes anything and never calls Python.
 *
 * A pickle is a program for a small stack machine (CPython
 * Lib/pickle.py, opcodes documented in Lib/pickletools.py). Unpickling
 * normally imports any module and calls any function the program names
 * (GLOBAL + REDUCE), which is how a malicious checkpoint runs code. Here
 * the machine only builds plain values: None, bools, ints, floats,
 * strings, bytes, tuples, lists, dicts; GLOBAL is accepted only for the
 * names a state dict uses (the table `allowed` below, the same idea as
 * torch.load(weights_only=True)'s allowlist), and "calling" one of them
 * builds a description instead of running anything:
 *   torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)
 *     -> a tensor description (storage key, dtype, offset, shape, strides);
 *   collections.OrderedDict() -> a dict; torch.Size(t) -> a tuple;
 *   _rebuild_parameter(t, ...) -> t.
 * Storages are persistent ids (BINPERSID): ('storage', torch.FloatStorage,
 * key, location, numel[, view metadata]) (torch/serialization.py,
 * persistent_id / persistent_load). Any other global is refused at once,
 * before anything after it is read: "references posix.system: not a plain
 * tensor checkpoint; nothing was executed".
 *
 * The result is flattened from the root with dots: a dict's string keys,
 * int keys as decimal text, list positions; tensors become entries, other
 * leaves (epoch numbers, learning rates, strings) key/value notes.
 *
 * Hostile input: every read is bounds-checked; objects come from one
 * arena freed at the end (at most one new object per opcode, so memory is
 * a small multiple of the input); the memo index is capped; flattening
 * has a depth cap (a pickle can build cycles through the memo) and a leaf
 * cap (shared sub-objects can blow up exponentially).
 */
#include "npt.h"

#include <inttypes.h> /* PRId64 */
#include <stdio.h>    /* snprintf */
#include <errno.h>    /* errno */
#include <stdlib.h>   /* calloc, realloc, free, strtod, strtoll */
#include <string.h>   /* memcpy, memcmp, strcmp, strlen */

#define PK_MAX_DEPTH 200
#define PK_MAX_LEAVES 1000000u
#define PK_BYTES_PER_TENSOR 16 /* add_tensor: tensor entries per pickle byte */
/* Objects in the arena, about 190 bytes each: 3 GiB at most. A 5 MB
 * pickle of 5 M None took 5.8 GB (1.2 KB an object, eighteenth
 * fresh-user round); a checkpoint's pickle has a few dozen objects per
 * tensor, but a sampler's index list of 5 M ints is a valid one
 * (twentieth: refused at 2^22). */
#define PK_MAX_OBJECTS (16u << 20)
static size_t pk_max_objects = PK_MAX_OBJECTS; /* na_pickle_set_object_cap */

void na_pickle_set_object_cap(size_t n) { pk_max_objects = n ? n : PK_MAX_OBJECTS; }
/* Bytes of the entries' dotted names and notes kept: a 4 KB pickle of
 * 255-character keys over a tree shared 17 levels deep made a million
 * names of 4 KB each, 12 GB (nineteenth fresh-user round). */
#define PK_MAX_NAME_BYTES ((size_t)256 << 20)

typedef enum otype {
    O_NONE, O_BOOL, O_INT, O_BIGINT, O_FLOAT, O_STR, O_BYTES, O_TUPLE, O_LIST, O_DICT,
    O_GLOBAL, O_MARK, O_STORAGE, O_TENSOR
} otype_t;

/* What an accepted global is. */
typedef enum gkind {
    G_ODICT, G_REBUILD, G_REBUILD_V2, G_REBUILD_V3, G_PARAM, G_PARAM_STATE, G_FROM_TYPE,
    G_SIZE, G_STORAGE, G_DTYPE, G_TYPE
} gkind_t;

typedef struct obj obj_t;
struct obj {
    otype_t t;
    int64_t i;          /* INT, BOOL */
    double f;           /* FLOAT */
    char *s;            /* STR, BYTES, BIGINT (hex text), GLOBAL (mod.name), STORAGE (key) */
    size_t slen;
    size_t n, cap;      /* TUPLE, LIST, DICT (k, v, k, v...) */
    obj_t **it;
    gkind_t g;          /* GLOBAL */
    na_dtype_t dt;      /* GLOBAL storage/dtype, STORAGE, TENSOR (v3) */
    const char *dname;  /* GLOBAL storage/dtype name */
    /* STORAGE */
    uint64_t numel;
    char *view_key;
    uint64_t view_off;
    /* TENSOR */
    obj_t *storage;
    uint64_t off;
    int ndim;
    uint64_t *shape, *stride; /* NA_MAX_NDIM each, one allocation (TENSOR only) */
    int8_t structure;   /* has_structure's answer: 0 not known yet, 1 no, 2 yes */
};

typedef struct pk {
    const uint8_t *b;
    size_t n, pos, op_at;
    obj_t **arena;
    size_t n_arena, cap_arena;
    obj_t **stack;
    size_t sp, cap_stack;
    obj_t **memo;
    size_t n_memo, memo_limit, memo_count;
    na_err_t *err;
    na_pk_result_t *r;
    size_t leaves, cap_t, cap_m;
    size_t name_bytes; /* names and note values kept, PK_MAX_NAME_BYTES at most */
} pk_t;

/* ---- the accepted globals ----------------------------------------------- */

typedef struct allow {
    const char *mod, *name;
    gkind_t g;
    na_dtype_t dt;
} allow_t;

/* torch/_utils.py rebuild helpers, torch/storage.py typed storages,
 * torch dtypes; the element types follow safetensors' names (a storage
 * type with no safetensors counterpart is accepted and reported as an
 * unsupported dtype, so the file is still described). */
static const allow_t allowed[] = {
    {"collections", "OrderedDict", G_ODICT, NA_DT_INVALID},
    {"torch._utils", "_rebuild_tensor", G_REBUILD, NA_DT_INVALID},
    {"torch._utils", "_rebuild_tensor_v2", G_REBUILD_V2, NA_DT_INVALID},
    {"torch._utils", "_rebuild_tensor_v3", G_REBUILD_V3, NA_DT_INVALID},
    {"torch._utils", "_rebuild_parameter", G_PARAM, NA_DT_INVALID},
    {"torch._utils", "_rebuild_parameter_with_state", G_PARAM_STATE, NA_DT_INVALID},
    {"torch._tensor", "_rebuild_from_type_v2", G_FROM_TYPE, NA_DT_INVALID},
    {"torch", "Tensor", G_TYPE, NA_DT_INVALID},
    {"torch.nn.parameter", "Parameter", G_TYPE, NA_DT_INVALID},
    {"torch", "Size", G_SIZE, NA_DT_INVALID},
    {"torch", "FloatStorage", G_STORAGE, NA_DT_F32},
    {"torch", "DoubleStorage", G_STORAGE, NA_DT_F64},
    {"torch", "HalfStorage", G_STORAGE, NA_DT_F16},
    {"torch", "BFloat16Storage", G_STORAGE, NA_DT_BF16},
    {"torch", "LongStorage", G_STORAGE, NA_DT_I64},
    {"torch", "IntStorage", G_STORAGE, NA_DT_I32},
    {"torch", "ShortStorage", G_STORAGE, NA_DT_I16},
    {"torch", "CharStorage", G_STORAGE, NA_DT_I8},
    {"torch", "ByteStorage", G_STORAGE, NA_DT_U8},
    {"torch", "BoolStorage", G_STORAGE, NA_DT_BOOL},
    {"torch", "ComplexFloatStorage", G_STORAGE, NA_DT_C64},
    {"torch", "ComplexDoubleStorage", G_STORAGE, NA_DT_INVALID},
    {"torch", "QInt8Storage", G_STORAGE, NA_DT_INVALID},
    {"torch", "QUInt8Storage", G_STORAGE, NA_DT_INVALID},
    {"torch", "QInt32Storage", G_STORAGE, NA_DT_INVALID},
    {"torch", "UntypedStorage", G_STORAGE, NA_DT_U8},
    {"torch", "float32", G_DTYPE, NA_DT_F32},
    {"torch", "float", G_DTYPE, NA_DT_F32},
    {"torch", "float64", G_DTYPE, NA_DT_F64},
    {"torch", "double", G_DTYPE, NA_DT_F64},
    {"torch", "float16", G_DTYPE, NA_DT_F16},
    {"torch", "half", G_DTYPE, NA_DT_F16},
    {"torch", "bfloat16", G_DTYPE, NA_DT_BF16},
    {"torch", "float8_e4m3fn", G_DTYPE, NA_DT_F8_E4M3},
    {"torch", "float8_e5m2", G_DTYPE, NA_DT_F8_E5M2},
    {"torch", "float8_e4m3fnuz", G_DTYPE, NA_DT_F8_E4M3FNUZ},
    {"torch", "float8_e5m2fnuz", G_DTYPE, NA_DT_F8_E5M2FNUZ},
    {"torch", "float8_e8m0fnu", G_DTYPE, NA_DT_F8_E8M0},
    {"torch", "int64", G_DTYPE, NA_DT_I64},
    {"torch", "long", G_DTYPE, NA_DT_I64},
    {"torch", "int32", G_DTYPE, NA_DT_I32},
    {"torch", "int", G_DTYPE, NA_DT_I32},
    {"torch", "int16", G_DTYPE, NA_DT_I16},
    {"torch", "short", G_DTYPE, NA_DT_I16},
    {"torch", "int8", G_DTYPE, NA_DT_I8},
    {"torch", "uint8", G_DTYPE, NA_DT_U8},
    {"torch", "uint16", G_DTYPE, NA_DT_U16},
    {"torch", "uint32", G_DTYPE, NA_DT_U32},
    {"torch", "uint64", G_DTYPE, NA_DT_U64},
    {"torch", "bool", G_DTYPE, NA_DT_BOOL},
    {"torch", "complex64", G_DTYPE, NA_DT_C64},
    {"torch", "cfloat", G_DTYPE, NA_DT_C64},
    {"torch", "complex128", G_DTYPE, NA_DT_INVALID},
};

/* ---- errors and allocation ---------------------------------------------- */

static na_status_t bad(pk_t *p, const char *what)
{
    return na_err_set(p->err, NA_E_FORMAT, "pickle: %s (opcode at byte %zu)", what, p->op_at);
}

static na_status_t nomem(pk_t *p)
{
    if (p->n_arena >= pk_max_objects) /* new_obj's refusal */
        return na_err_set(p->err, NA_E_UNSUPPORTED,
                          "pickle: more than %zu objects (a tensor checkpoint has a few dozen "
                          "per tensor; opcode at byte %zu)", pk_max_objects, p->op_at);
    return na_err_set(p->err, NA_E_NOMEM, "out of memory");
}

/* A new object in the arena; NULL when out of memory or past
 * the object cap (nomem tells which). */
static obj_t *new_obj(pk_t *p, otype_t t)
{
    if (p->n_arena >= pk_max_objects)
        return NULL;
    if (p->n_arena == p->cap_arena) {
        size_t nc = p->cap_arena ? 2 * p->cap_arena : 256;
        obj_t **a = realloc(p->arena, nc * sizeof *a);
        if (a == NULL)
            return NULL;
        p->arena = a;
        p->cap_arena = nc;
    }
    obj_t *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->t = t;
    p->arena[p->n_arena++] = o;
    return o;
}

static void free_arena(pk_t *p)
{
    for (size_t i = 0; i < p->n_arena; i++) {
        free(p->arena[i]->s);
        free(p->arena[i]->it);
        free(p->arena[i]->view_key);
        free(p->arena[i]->shape);
        free(p->arena[i]);
    }
    free(p->arena);
    free(p->stack);
    free(p->memo);
}

static na_status_t push(pk_t *p, obj_t *o)
{
    if (o == NULL)
        return nomem(p);
    if (p->sp == p->cap_stack) {
        size_t nc = p->cap_stack ? 2 * p->cap_stack : 64;
        obj_t **s = realloc(p->stack, nc * sizeof *s);
        if (s == NULL)
            return nomem(p);
        p->stack = s;
        p->cap_stack = nc;
    }
    p->stack[p->sp++] = o;
    return NA_OK;
}

static obj_t *pop(pk_t *p)
{
    if (p->sp == 0 || p->stack[p->sp - 1]->t == O_MARK)
        return NULL;
    return p->stack[--p->sp];
}

static obj_t *top(pk_t *p)
{
    return p->sp == 0 || p->stack[p->sp - 1]->t == O_MARK ? NULL : p->stack[p->sp - 1];
}

static int add_item(obj_t *c, obj_t *v)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 4;
        obj_t **a = realloc(c->it, nc * sizeof *a);
        if (a == NULL)
            return -1;
        c->it = a;
        c->cap = nc;
    }
    c->it[c->n++] = v;
    return 0;
}

/* Position of the topmost MARK, or SIZE_MAX. */
static size_t find_mark(pk_t *p)
{
    for (size_t i = p->sp; i > 0; i--)
        if (p->stack[i - 1]->t == O_MARK)
            return i - 1;
    return SIZE_MAX;
}

/* ---- reading the program --------------------------------------------------- */

static int need(pk_t *p, size_t k) { return p->n - p->pos >= k; }

static uint64_t le(const uint8_t *b, int k)
{
    uint64_t v = 0;
    for (int i = k - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static obj_t *make_str(pk_t *p, otype_t t, const uint8_t *s, size_t len)
{
    obj_t *o = new_obj(p, t);
    if (o == NULL || (o->s = malloc(len + 1)) == NULL)
        return NULL;
    memcpy(o->s, s, len);
    o->s[len] = '\0';
    o->slen = len;
    return o;
}

/* LONG1/LONG4: little-endian two's complement of k bytes. Up to 8 bytes
 * fit an int64; longer ones keep their hex text (the legacy magic number
 * 0x1950a86a20f9469cfc6c is 10 bytes). */
static obj_t *make_long(pk_t *p, const uint8_t *b, size_t k)
{
    if (k <= 8) {
        obj_t *o = new_obj(p, O_INT);
        if (o == NULL)
            return NULL;
        uint64_t v = k ? le(b, (int)k) : 0;
        if (k > 0 && k < 8 && (b[k - 1] & 0x80))
            v |= ~(uint64_t)0 << (8 * k);
        o->i = (int64_t)v;
        return o;
    }
    obj_t *o = new_obj(p, O_BIGINT);
    size_t cap = 2 * k + 4;
    if (o == NULL || (o->s = malloc(cap)) == NULL)
        return NULL;
    size_t top_i = k;
    while (top_i > 1 && b[top_i - 1] == 0)
        top_i--;
    size_t w = (size_t)snprintf(o->s, cap, "%s0x", (b[k - 1] & 0x80) ? "-" : "");
    for (size_t i = top_i; i > 0; i--)
        w += (size_t)snprintf(o->s + w, cap - w, i == top_i ? "%x" : "%02x", b[i - 1]);
    o->slen = w;
    return o;
}

/* A text line ending in '\n' (GLOBAL, INT, LONG, GET, PUT, PERSID). */
static int line(pk_t *p, const char **s, size_t *len)
{
    const uint8_t *nl = memchr(p->b + p->pos, '\n', p->n - p->pos);
    if (nl == NULL)
        return -1;
    *s = (const char *)p->b + p->pos;
    *len = (size_t)(nl - (p->b + p->pos));
    p->pos += *len + 1;
    return 0;
}

static na_status_t do_global(pk_t *p, const char *mod, size_t ml, const char *name, size_t nl)
{
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        const allow_t *a = &allowed[i];
        if (strlen(a->mod) == ml && memcmp(a->mod, mod, ml) == 0 && strlen(a->name) == nl &&
            memcmp(a->name, name, nl) == 0) {
            obj_t *o = new_obj(p, O_GLOBAL);
            if (o == NULL)
                return nomem(p);
            o->g = a->g;
            o->dt = a->dt;
            o->dname = a->name;
            return push(p, o);
        }
    }
    return na_err_set(p->err, NA_E_FORMAT, "references %.*s.%.*s: not a plain tensor "
                      "checkpoint; nothing was executed", (int)(ml > 100 ? 100 : ml), mod,
                      (int)(nl > 100 ? 100 : nl), name);
}

static int as_u64(const obj_t *o, uint64_t *v)
{
    if (o == NULL || (o->t != O_INT && o->t != O_BOOL) || o->i < 0)
        return -1;
    *v = (uint64_t)o->i;
    return 0;
}

/* size / stride tuples (or torch.Size, already a tuple) */
static int dims(const obj_t *o, uint64_t *out, int *nd)
{
    if (o == NULL || (o->t != O_TUPLE && o->t != O_LIST) || o->n > NA_MAX_NDIM)
        return -1;
    for (size_t i = 0; i < o->n; i++)
        if (as_u64(o->it[i], &out[i]) != 0)
            return -1;
    *nd = (int)o->n;
    return 0;
}

/* torch._utils._rebuild_tensor* (storage, offset, size, stride, ...) */
static na_status_t rebuild_tensor(pk_t *p, obj_t *args, int v3, obj_t **out)
{
    if (args->t != O_TUPLE || args->n < 4 || (v3 && args->n < 7))
        return bad(p, "tensor rebuild with too few arguments");
    obj_t *t = new_obj(p, O_TENSOR);
    if (t == NULL || (t->shape = calloc(2 * NA_MAX_NDIM, sizeof *t->shape)) == NULL)
        return nomem(p);
    t->stride = t->shape + NA_MAX_NDIM;
    int nd2 = 0;
    if (args->it[0]->t != O_STORAGE || as_u64(args->it[1], &t->off) != 0 ||
        dims(args->it[2], t->shape, &t->ndim) != 0 || dims(args->it[3], t->stride, &nd2) != 0 ||
        nd2 != t->ndim)
        return bad(p, "tensor rebuild with bad arguments (storage, offset, size, stride)");
    t->storage = args->it[0];
    t->dt = args->it[0]->dt;
    if (v3) {
        obj_t *d = args->it[6];
        if (d->t != O_GLOBAL || d->g != G_DTYPE)
            return bad(p, "_rebuild_tensor_v3 without a dtype");
        t->dt = d->dt;
    }
    *out = t;
    return NA_OK;
}

/* 1 when o holds a tensor or a storage (itself, or in its items, to a
 * depth of 32: the memo can make cycles). */
static int holds_tensor(const obj_t *o, int depth)
{
    if (o == NULL || depth > 32)
        return 0;
    if (o->t == O_TENSOR || o->t == O_STORAGE)
        return 1;
    if (o->t == O_TUPLE || o->t == O_LIST || o->t == O_DICT)
        for (size_t i = 0; i < o->n; i++)
            if (holds_tensor(o->it[i], depth + 1))
                return 1;
    return 0;
}

/* The state a tensor rebuild applies after building it
 * (_rebuild_from_type_v2's args[3], _rebuild_parameter_with_state's): torch
 * sets each key as an attribute, and 'data' replaces the tensor's values
 * (round 31a: a NaN tensor there was what torch.load returned). One that
 * holds a tensor or storage is refused; other attributes change no value. */
static na_status_t state_ok(pk_t *p, const obj_t *state, const char *what)
{
    if (holds_tensor(state, 0))
        return na_err_set(p->err, NA_E_FORMAT, "pickle: %s with a state holding a tensor, "
                          "which torch.load would put in place of its data: not audited, "
                          "refused (opcode at byte %zu)", what, p->op_at);
    return NA_OK;
}

static na_status_t call(pk_t *p, obj_t *f, obj_t *args, obj_t **out)
{
    if (f->t != O_GLOBAL || args->t != O_TUPLE)
        return bad(p, "REDUCE of something that is not an accepted global");
    switch (f->g) {
    case G_ODICT:
        if (args->n != 0)
            return bad(p, "OrderedDict with arguments");
        *out = new_obj(p, O_DICT);
        return *out ? NA_OK : nomem(p);
    case G_REBUILD:
    case G_REBUILD_V2:
    case G_REBUILD_V3:
        return rebuild_tensor(p, args, f->g == G_REBUILD_V3, out);
    case G_PARAM:
    case G_PARAM_STATE:
        if (args->n < 1 || args->it[0]->t != O_TENSOR)
            return bad(p, "_rebuild_parameter without a tensor");
        for (size_t k = 1; k < args->n; k++) /* (data, requires_grad, hooks[, state]) */
            if (state_ok(p, args->it[k], "_rebuild_parameter") != NA_OK)
                return NA_E_FORMAT;
        *out = args->it[0];
        return NA_OK;
    case G_FROM_TYPE: /* (func, type, args, state) */
        if (args->n < 3 || args->it[1]->t != O_GLOBAL || args->it[1]->g != G_TYPE ||
            args->it[2]->t != O_TUPLE)
            return bad(p, "_rebuild_from_type_v2 with bad arguments");
        if (args->n > 3 && state_ok(p, args->it[3], "_rebuild_from_type_v2") != NA_OK)
            return NA_E_FORMAT;
        return call(p, args->it[0], args->it[2], out);
    case G_SIZE:
        if (args->n != 1 || (args->it[0]->t != O_TUPLE && args->it[0]->t != O_LIST))
            return bad(p, "torch.Size without a tuple");
        *out = args->it[0];
        return NA_OK;
    default:
        break;
    }
    return na_err_set(p->err, NA_E_FORMAT, "pickle: torch.%s cannot be called (opcode at "
                      "byte %zu)", f->dname ? f->dname : "?", p->op_at);
}

/* BINPERSID: ('storage', type, key, location, numel[, view]) */
static na_status_t persid(pk_t *p, obj_t *pid)
{
    if (pid == NULL || pid->t != O_TUPLE || pid->n < 5 || pid->it[0]->t != O_STR ||
        strcmp(pid->it[0]->s, "storage") != 0)
        return bad(p, "persistent id is not ('storage', type, key, location, size)");
    obj_t *ty = pid->it[1], *key = pid->it[2];
    obj_t *s = new_obj(p, O_STORAGE);
    if (s == NULL)
        return nomem(p);
    if (ty->t != O_GLOBAL || ty->g != G_STORAGE || (key->t != O_STR && key->t != O_INT) ||
        as_u64(pid->it[4], &s->numel) != 0)
        return bad(p, "persistent id with a bad storage type, key or size");
    /* a key names a zip member (DIR/data/KEY): one holding a NUL would be
     * cut at it here and found, while torch.load looks for the whole
     * name and fails (round 43b) */
    if (key->t == O_STR && memchr(key->s, 0, key->slen) != NULL)
        return bad(p, "storage key holds a NUL character");
    char kb[32];
    const char *k = key->s;
    if (key->t == O_INT) {
        snprintf(kb, sizeof kb, "%" PRId64, key->i);
        k = kb;
    }
    if ((s->s = strdup(k)) == NULL)
        return nomem(p);
    s->dt = ty->dt;
    s->dname = ty->dname;
    if (pid->n >= 6 && pid->it[5]->t == O_TUPLE) { /* legacy: (view_key, offset, size) */
        obj_t *v = pid->it[5];
        uint64_t vs = 0;
        if (v->n != 3 || (v->it[0]->t != O_STR && v->it[0]->t != O_INT) ||
            as_u64(v->it[1], &s->view_off) != 0 || as_u64(v->it[2], &vs) != 0)
            return bad(p, "legacy storage view metadata is not (key, offset, size)");
        if (v->it[0]->t == O_INT)
            snprintf(kb, sizeof kb, "%" PRId64, v->it[0]->i);
        if ((s->view_key = strdup(v->it[0]->t == O_INT ? kb : v->it[0]->s)) == NULL)
            return nomem(p);
        s->numel = vs;
    }
    return push(p, s);
}

static na_status_t memo_put(pk_t *p, uint64_t idx)
{
    obj_t *o = top(p);
    if (o == NULL)
        return bad(p, "memo put with an empty stack");
    if (idx >= p->memo_limit)
        return bad(p, "memo index too large");
    if (idx >= p->n_memo) {
        size_t nn = (size_t)idx + 1;
        size_t nc = nn < 64 ? 64 : nn * 2 > p->memo_limit ? p->memo_limit : nn * 2;
        obj_t **m = realloc(p->memo, nc * sizeof *m);
        if (m == NULL)
            return nomem(p);
        memset(m + p->n_memo, 0, (nc - p->n_memo) * sizeof *m);
        p->memo = m;
        p->n_memo = nc;
    }
    p->memo_count += p->memo[idx] == NULL;
    p->memo[idx] = o;
    return NA_OK;
}

static na_status_t memo_get(pk_t *p, uint64_t idx)
{
    if (idx >= p->n_memo || p->memo[idx] == NULL)
        return bad(p, "memo get of an unset index");
    return push(p, p->memo[idx]);
}

/* Pop items above the topmost MARK into container c (and the MARK). */
static na_status_t collect(pk_t *p, obj_t *c, int pairs)
{
    size_t m = find_mark(p);
    if (m == SIZE_MAX)
        return bad(p, "no MARK on the stack");
    size_t k = p->sp - m - 1;
    if (pairs && k % 2)
        return bad(p, "odd number of items for a dict");
    for (size_t i = m + 1; i < p->sp; i++)
        if (add_item(c, p->stack[i]) != 0)
            return nomem(p);
    p->sp = m;
    return NA_OK;
}

static na_status_t tuple_n(pk_t *p, size_t k)
{
    obj_t *t = new_obj(p, O_TUPLE);
    if (t == NULL)
        return nomem(p);
    if (p->sp < k)
        return bad(p, "stack underflow");
    for (size_t i = p->sp - k; i < p->sp; i++) {
        if (p->stack[i]->t == O_MARK)
            return bad(p, "MARK inside a tuple");
        if (add_item(t, p->stack[i]) != 0)
            return nomem(p);
    }
    p->sp -= k;
    return push(p, t);
}

/* Length-prefixed string/bytes opcodes. */
static na_status_t sized(pk_t *p, otype_t t, int lenbytes)
{
    if (!need(p, (size_t)lenbytes))
        return bad(p, "truncated");
    uint64_t len = le(p->b + p->pos, lenbytes);
    if (lenbytes == 4 && t == O_BYTES && (p->b[p->op_at] == 'T') && (len & 0x80000000u))
        return bad(p, "negative string length");
    p->pos += (size_t)lenbytes;
    if (len > p->n - p->pos)
        return bad(p, "truncated (a string runs past the end)");
    obj_t *o = make_str(p, t, p->b + p->pos, (size_t)len);
    p->pos += (size_t)len;
    return push(p, o);
}

static na_status_t setitems(pk_t *p, int many)
{
    /* SETITEMS may have no items: CPython's pickler writes a dict in
     * batches of 1000 and ends one of exactly 1000 k entries with an
     * empty MARK SETITEMS (a top-level dict then leaves just the dict and
     * the MARK on the stack: refused; sixteenth fresh-user round) */
    size_t m = many ? find_mark(p) : p->sp - 2;
    if (m == SIZE_MAX || (many && m == 0) || (!many && p->sp < 3))
        return bad(p, "SETITEM(S) without a dict below");
    size_t d = many ? m - 1 : p->sp - 3;
    obj_t *dict = p->stack[d];
    if (dict->t != O_DICT)
        return bad(p, "SETITEM(S) on something that is not a dict");
    size_t from = many ? m + 1 : p->sp - 2;
    if ((p->sp - from) % 2)
        return bad(p, "odd number of items for a dict");
    for (size_t i = from; i < p->sp; i++) {
        if (p->stack[i]->t == O_MARK)
            return bad(p, "MARK inside SETITEM");
        if (add_item(dict, p->stack[i]) != 0)
            return nomem(p);
    }
    p->sp = d + 1;
    return NA_OK;
}

static na_status_t appends(pk_t *p, int many)
{
    size_t m = many ? find_mark(p) : p->sp - 1;
    if (m == SIZE_MAX || m == 0 || p->sp < 2)
        return bad(p, "APPEND(S) without a list below");
    size_t l = m - 1;
    obj_t *list = p->stack[l];
    if (list->t != O_LIST)
        return bad(p, "APPEND(S) on something that is not a list");
    for (size_t i = many ? m + 1 : m; i < p->sp; i++) {
        if (p->stack[i]->t == O_MARK)
            return bad(p, "MARK inside APPEND");
        if (add_item(list, p->stack[i]) != 0)
            return nomem(p);
    }
    p->sp = l + 1;
    return NA_OK;
}

/* A non-negative protocol 0/1 LONG beyond int64 (n decimal digits at s):
 * the O_BIGINT that LONG1 gives for it (make_long), for the magic number
 * torch.save(..., pickle_protocol=1) writes as text (round 28b: such a
 * checkpoint was "unrecognised content"). At most 64 digits. */
static na_status_t big_text_long(pk_t *p, const char *s, size_t n)
{
    uint8_t b[28] = {0}; /* 64 digits < 2^213: 27 bytes and a sign byte 0 */
    if (n > 64)
        return bad(p, "bad or too large integer text");
    for (size_t j = 0; j < n; j++) { /* b = b * 10 + digit, little-endian */
        unsigned c = (unsigned)(s[j] - '0');
        for (size_t k = 0; k < sizeof b; k++) {
            c += b[k] * 10u;
            b[k] = (uint8_t)c;
            c >>= 8;
        }
    }
    obj_t *big = make_long(p, b, sizeof b);
    return big ? push(p, big) : nomem(p);
}

static na_status_t text_int(pk_t *p, int is_long)
{
    const char *s;
    size_t len;
    if (line(p, &s, &len) != 0)
        return bad(p, "truncated (unterminated line)");
    obj_t *o = new_obj(p, O_INT);
    if (o == NULL)
        return nomem(p);
    if (!is_long && len == 2 && (memcmp(s, "00", 2) == 0 || memcmp(s, "01", 2) == 0)) {
        o->t = O_BOOL; /* protocol 0 True/False: I01 / I00 */
        o->i = s[1] == '1';
        return push(p, o);
    }
    if (!is_long) {
        /* INT is read as CPython's C unpickler reads it (torch.load uses
         * it): strtol base 0, so I010 is 8 (octal) and I0x8 is 8 (round
         * 31a: read as decimal 10, a storage offset pointed elsewhere).
         * The whole line must be the number (leading blanks and a sign as
         * strtol takes them); past a long it is refused. */
        char b[64];
        if (len >= sizeof b)
            return bad(p, "bad or too large integer text");
        memcpy(b, s, len);
        b[len] = '\0';
        char *end;
        errno = 0;
        long long v = strtoll(b, &end, 0);
        if (end == b || *end != '\0' || errno)
            return bad(p, "bad or too large integer text");
        o->i = (int64_t)v;
        return push(p, o);
    }
    if (len > 0 && s[len - 1] == 'L')
        len--;
    size_t i = 0;
    int neg = len > 0 && s[0] == '-';
    i += (size_t)neg;
    if (i == len)
        return bad(p, "bad integer text");
    uint64_t v = 0;
    for (size_t j = i; j < len; j++) {
        if (s[j] < '0' || s[j] > '9')
            return bad(p, "bad or too large integer text");
        if (v > (UINT64_MAX / 2 - 9) / 10)
            return is_long && !neg ? big_text_long(p, s + i, len - i) /* o: unused */
                                   : bad(p, "bad or too large integer text");
        v = v * 10 + (uint64_t)(s[j] - '0');
    }
    o->i = neg ? -(int64_t)v : (int64_t)v;
    return push(p, o);
}

static na_status_t text_memo(pk_t *p, int put)
{
    const char *s;
    size_t len;
    if (line(p, &s, &len) != 0 || len == 0 || len > 18)
        return bad(p, "bad memo index text");
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return bad(p, "bad memo index text");
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    return put ? memo_put(p, v) : memo_get(p, v);
}

static na_status_t op_global_text(pk_t *p)
{
    const char *m, *n;
    size_t ml, nl;
    if (line(p, &m, &ml) != 0 || line(p, &n, &nl) != 0)
        return bad(p, "truncated (unterminated GLOBAL)");
    return do_global(p, m, ml, n, nl);
}

static na_status_t op_stack_global(pk_t *p)
{
    obj_t *n = pop(p), *m = pop(p);
    if (n == NULL || m == NULL || n->t != O_STR || m->t != O_STR)
        return bad(p, "STACK_GLOBAL without two strings");
    return do_global(p, m->s, m->slen, n->s, n->slen);
}

static na_status_t op_reduce(pk_t *p, int newobj)
{
    obj_t *args = pop(p), *f = pop(p), *out = NULL;
    if (args == NULL || f == NULL)
        return bad(p, "stack underflow");
    na_status_t st = call(p, f, args, &out);
    return st == NA_OK ? push(p, out) : st;
}

static na_status_t op_scalar(pk_t *p, uint8_t op)
{
    obj_t *o;
    switch (op) {
    case 'N': return push(p, new_obj(p, O_NONE));
    case 0x88:
    case 0x89:
        if ((o = new_obj(p, O_BOOL)) != NULL)
            o->i = op == 0x88;
        return push(p, o);
    case 'J':
        if (!need(p, 4))
            return bad(p, "truncated");
        if ((o = new_obj(p, O_INT)) != NULL)
            o->i = (int32_t)(uint32_t)le(p->b + p->pos, 4);
        p->pos += 4;
        return push(p, o);
    case 'K':
    case 'M': {
        int k = op == 'K' ? 1 : 2;
        if (!need(p, (size_t)k))
            return bad(p, "truncated");
        if ((o = new_obj(p, O_INT)) != NULL)
            o->i = (int64_t)le(p->b + p->pos, k);
        p->pos += (size_t)k;
        return push(p, o);
    }
    case 0x8a:
    case 0x8b: {
        int k = op == 0x8a ? 1 : 4;
        if (!need(p, (size_t)k))
            return bad(p, "truncated");
        uint64_t len = le(p->b + p->pos, k);
        p->pos += (size_t)k;
        if (len > p->n - p->pos || len > 4096)
            return bad(p, len > 4096 ? "LONG of more than 4096 bytes" : "truncated (a LONG runs past the end)");
        o = make_long(p, p->b + p->pos, (size_t)len);
        p->pos += (size_t)len;
        return push(p, o);
    }
    case 'G': {
        if (!need(p, 8))
            return bad(p, "truncated");
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v = v << 8 | p->b[p->pos + (size_t)i]; /* big-endian IEEE double */
        p->pos += 8;
        if ((o = new_obj(p, O_FLOAT)) != NULL)
            memcpy(&o->f, &v, 8);
        return push(p, o);
    }
    }
    return bad(p, "internal: scalar opcode");
}

/* One opcode. *stop set at STOP. */
static na_status_t step(pk_t *p, int *stop)
{
    p->op_at = p->pos;
    uint8_t op = p->b[p->pos++];
    switch (op) {
    case 0x80: /* PROTO */
        if (!need(p, 1) || p->b[p->pos] > 5)
            return bad(p, "unsupported pickle protocol");
        p->pos++;
        return NA_OK;
    case 0x95: /* FRAME: a length hint; frames are transparent */
        if (!need(p, 8))
            return bad(p, "truncated");
        /* but CPython reads the frame whole: one longer than what is left
         * is "pickle data was truncated" (round 43b: a FRAME of 2^62 bytes
         * was read past, torch.load refuses the file) */
        if (le(p->b + p->pos, 8) > p->n - p->pos - 8)
            return bad(p, "FRAME longer than the rest of the pickle (truncated data)");
        p->pos += 8;
        return NA_OK;
    case '.': *stop = 1; return NA_OK;
    case '(': return push(p, new_obj(p, O_MARK));
    case '0':
        return pop(p) ? NA_OK : bad(p, "POP of an empty stack");
    case '1': {
        size_t m = find_mark(p);
        if (m == SIZE_MAX)
            return bad(p, "POP_MARK without a MARK");
        p->sp = m;
        return NA_OK;
    }
    case '2': {
        obj_t *t = top(p);
        return t ? push(p, t) : bad(p, "DUP of an empty stack");
    }
    case 'N': case 0x88: case 0x89: case 'J': case 'K': case 'M': case 0x8a: case 0x8b:
    case 'G':
        return op_scalar(p, op);
    case 'I': return text_int(p, 0);
    case 'L': return text_int(p, 1);
    case 0x8c: return sized(p, O_STR, 1);
    case 'X': return sized(p, O_STR, 4);
    case 0x8d: return sized(p, O_STR, 8);
    case 'U': return sized(p, O_STR, 1);  /* SHORT_BINSTRING (py2 str) */
    case 'T': return sized(p, O_STR, 4);  /* BINSTRING */
    case 'C': return sized(p, O_BYTES, 1);
    case 'B': return sized(p, O_BYTES, 4);
    case 0x8e: return sized(p, O_BYTES, 8);
    case 0x96: return sized(p, O_BYTES, 8); /* BYTEARRAY8 */
    case ')': return tuple_n(p, 0);
    case 0x85: return tuple_n(p, 1);
    case 0x86: return tuple_n(p, 2);
    case 0x87: return tuple_n(p, 3);
    case 't': {
        obj_t *t = new_obj(p, O_TUPLE);
        na_status_t st = t ? collect(p, t, 0) : nomem(p);
        return st == NA_OK ? push(p, t) : st;
    }
    case ']': case 0x8f: return push(p, new_obj(p, O_LIST)); /* EMPTY_SET as a list */
    case 'l': case 0x91: {                                    /* LIST, FROZENSET */
        obj_t *t = new_obj(p, O_LIST);
        na_status_t st = t ? collect(p, t, 0) : nomem(p);
        return st == NA_OK ? push(p, t) : st;
    }
    case 'a': return appends(p, 0);
    case 'e': case 0x90: return appends(p, 1); /* APPENDS, ADDITEMS */
    case '}': return push(p, new_obj(p, O_DICT));
    case 'd': {
        obj_t *t = new_obj(p, O_DICT);
        na_status_t st = t ? collect(p, t, 1) : nomem(p);
        return st == NA_OK ? push(p, t) : st;
    }
    case 's': return setitems(p, 0);
    case 'u': return setitems(p, 1);
    case 'c': return op_global_text(p);
    case 0x93: return op_stack_global(p);
    case 'R': return op_reduce(p, 0);
    case 0x81: return op_reduce(p, 1); /* NEWOBJ cls(*args): same table */
    case 'b': { /* BUILD: state is attributes (OrderedDict._metadata, ...) */
        obj_t *state = pop(p), *o = top(p);
        if (state == NULL || o == NULL)
            return bad(p, "BUILD with a short stack");
        /* On a tensor, torch's __setstate__ replaces its data or storage;
         * a tensor in an object's attributes is reached by no name (round
         * 31a): torch.save writes neither */
        if (o->t == O_TENSOR)
            return bad(p, "BUILD on a tensor (torch.load would replace its data with the "
                       "state; torch.save does not write it)");
        if (holds_tensor(state, 0))
            return bad(p, "BUILD state holds a tensor (an object's attribute, which no name "
                       "reaches; torch.save does not write it)");
        return NA_OK;
    }
    case 'Q': return persid(p, pop(p));
    case 'q': case 'r': {
        int k = op == 'q' ? 1 : 4;
        if (!need(p, (size_t)k))
            return bad(p, "truncated");
        uint64_t idx = le(p->b + p->pos, k);
        p->pos += (size_t)k;
        return memo_put(p, idx);
    }
    case 0x94: return memo_put(p, p->memo_count); /* MEMOIZE: index = len(memo) */
    case 'h': case 'j': {
        int k = op == 'h' ? 1 : 4;
        if (!need(p, (size_t)k))
            return bad(p, "truncated");
        uint64_t idx = le(p->b + p->pos, k);
        p->pos += (size_t)k;
        return memo_get(p, idx);
    }
    case 'p': return text_memo(p, 1);
    case 'g': return text_memo(p, 0);
    case 'P': { /* PERSID: a text id; torch only writes BINPERSID */
        const char *s;
        size_t len;
        if (line(p, &s, &len) != 0)
            return bad(p, "truncated (unterminated PERSID)");
        return bad(p, "text persistent id (not written by torch.save)");
    }
    case 'i': { /* INST module\nname\n: instantiates a class */
        const char *m, *n;
        size_t ml, nl;
        if (line(p, &m, &ml) != 0 || line(p, &n, &nl) != 0)
            return bad(p, "truncated (unterminated INST)");
        return na_err_set(p->err, NA_E_FORMAT, "references %.*s.%.*s: not a plain tensor "
                          "checkpoint; nothing was executed", (int)(ml > 100 ? 100 : ml), m,
                          (int)(nl > 100 ? 100 : nl), n);
    }
    }
    char msg[64];
    snprintf(msg, sizeof msg, "unsupported opcode 0x%02x", op);
    return bad(p, msg);
}

/* ---- flattening ------------------------------------------------------------ */

/* The fewest digits (15 to 17) that read back as v, as Python's repr
 * does: 0.1, not %.17g's 0.10000000000000001 (sixteenth fresh-user
 * round). */
static int short_digits(double v)
{
    char t[40];
    for (int p = 15; p < 17; p++) {
        snprintf(t, sizeof t, "%.*g", p, v);
        if (strtod(t, NULL) == v)
            return p;
    }
    return 17;
}

static size_t repr(const obj_t *o, char *buf, size_t cap, int depth)
{
    size_t w = 0;
#define PUT(...) (w += (size_t)snprintf(buf + (w < cap ? w : cap - 1), w < cap ? cap - w : 1, __VA_ARGS__))
    switch (o->t) {
    case O_NONE: PUT("None"); break;
    case O_BOOL: PUT("%s", o->i ? "True" : "False"); break;
    case O_INT: PUT("%" PRId64, o->i); break;
    case O_BIGINT: PUT("%s", o->s); break;
    case O_FLOAT: PUT("%.*g", short_digits(o->f), o->f); break;
    case O_STR: PUT("'%.*s'", (int)(o->slen > 200 ? 200 : o->slen), o->s); break;
    case O_BYTES: PUT("<%zu bytes>", o->slen); break;
    case O_GLOBAL: PUT("torch.%s", o->dname ? o->dname : "?"); break;
    case O_TUPLE:
    case O_LIST:
    case O_DICT:
        PUT("%s", o->t == O_TUPLE ? "(" : o->t == O_LIST ? "[" : "{");
        for (size_t i = 0; i < o->n && w < cap && depth < 8; i++) {
            if (i)
                PUT("%s", o->t == O_DICT && i % 2 ? ": " : ", ");
            w += repr(o->it[i], buf + (w < cap ? w : cap - 1), w < cap ? cap - w : 1, depth + 1);
        }
        PUT("%s", o->t == O_TUPLE ? ")" : o->t == O_LIST ? "]" : "}");
        break;
    default: PUT("<%s>", o->t == O_STORAGE ? "storage" : "object"); break;
    }
#undef PUT
    return w;
}

/* Does o contain a tensor or a dict (then it is flattened, not a note)?
 * Lists nested deeper than PK_MAX_DEPTH count as structure, so flatten
 * goes down to them and refuses the file: a tensor at depth 202 was a
 * note, and the scan passed (fifteenth fresh-user round). The answer is
 * kept in each object: sub-objects shared through the memo (a list of
 * two references to one list, 60 times over) are visited once, not 2^60
 * times. */
static int has_structure(obj_t *o, int depth)
{
    if (o->t == O_TENSOR || o->t == O_DICT)
        return 1;
    if (o->t != O_LIST && o->t != O_TUPLE)
        return 0;
    if (depth > PK_MAX_DEPTH)
        return 1;
    if (o->structure == 0) {
        o->structure = 1;
        for (size_t i = 0; i < o->n && o->structure == 1; i++)
            if (has_structure(o->it[i], depth + 1))
                o->structure = 2;
    }
    return o->structure == 2;
}

static char *join(const char *prefix, const char *key)
{
    size_t a = strlen(prefix), b = strlen(key);
    char *s = malloc(a + b + 2);
    if (s != NULL)
        snprintf(s, a + b + 2, "%s%s%s", prefix, a ? "." : "", key);
    return s;
}

/* Count len more bytes of names and notes: the error past the cap. */
static na_status_t keep_bytes(pk_t *p, size_t len, const char *name)
{
    p->name_bytes += len + 1;
    if (p->name_bytes <= PK_MAX_NAME_BYTES)
        return NA_OK;
    return na_err_set(p->err, NA_E_UNSUPPORTED,
                      "pickle: entry names take more than %zu MiB (long keys over shared "
                      "sub-objects; at '%.120s')", PK_MAX_NAME_BYTES >> 20, name);
}

static na_status_t add_tensor(pk_t *p, const obj_t *t, const char *name)
{
    na_pk_result_t *r = p->r;
    /* Tensor entries cost ~2.3 KB each here, while a torch.save pickle
     * spends ~90 bytes per tensor (its rebuild call); one tensor object
     * referenced again and again costs 2 bytes of pickle per entry (a 2 MB
     * file made 990,000 entries and 2.2 GB: round 43b). At most one entry
     * per PK_BYTES_PER_TENSOR bytes of pickle, 65536 whatever its size. */
    size_t cap = p->n / PK_BYTES_PER_TENSOR > 65536 ? p->n / PK_BYTES_PER_TENSOR : 65536;
    if (r->n_tensors >= cap)
        return na_err_set(p->err, NA_E_FORMAT, "pickle: more than %zu tensor entries in %zu "
                          "bytes of pickle (a checkpoint's pickle spends about 90 bytes per "
                          "tensor; one tensor referenced over and over?)", cap, p->n);
    na_status_t st = keep_bytes(p, strlen(name), name);
    if (st != NA_OK)
        return st;
    if (r->n_tensors == p->cap_t) {
        size_t nc = p->cap_t ? 2 * p->cap_t : 16;
        na_pk_tensor_t *a = realloc(r->tensors, nc * sizeof *a);
        if (a == NULL)
            return nomem(p);
        r->tensors = a;
        p->cap_t = nc;
    }
    na_pk_tensor_t *e = &r->tensors[r->n_tensors];
    memset(e, 0, sizeof *e);
    e->name = strdup(*name ? name : "tensor");
    e->storage_key = strdup(t->storage->s);
    if (t->storage->view_key != NULL)
        e->view_key = strdup(t->storage->view_key);
    r->n_tensors++;
    if (e->name == NULL || e->storage_key == NULL ||
        (t->storage->view_key != NULL && e->view_key == NULL))
        return nomem(p);
    e->dtype = t->dt;
    snprintf(e->dtype_name, sizeof e->dtype_name, "%s", t->storage->dname);
    e->storage_numel = t->storage->numel;
    e->view_offset = t->storage->view_off;
    e->offset = t->off;
    e->ndim = t->ndim;
    memcpy(e->shape, t->shape, sizeof e->shape);
    memcpy(e->stride, t->stride, sizeof e->stride);
    return NA_OK;
}

static na_status_t add_note(pk_t *p, const obj_t *o, const char *name)
{
    na_pk_result_t *r = p->r;
    if (2 * r->n_meta + 2 > p->cap_m) {
        size_t nc = p->cap_m ? 2 * p->cap_m : 32;
        char **a = realloc(r->meta, nc * sizeof *a);
        if (a == NULL)
            return nomem(p);
        r->meta = a;
        p->cap_m = nc;
    }
    char val[256];
    size_t w = repr(o, val, sizeof val, 0);
    if (w >= sizeof val)
        memcpy(val + sizeof val - 4, "...", 4);
    na_status_t st = keep_bytes(p, strlen(name) + strlen(val), name);
    if (st != NA_OK)
        return st;
    r->meta[2 * r->n_meta] = strdup(*name ? name : "(root)");
    r->meta[2 * r->n_meta + 1] = strdup(val);
    r->n_meta++;
    if (r->meta[2 * r->n_meta - 2] == NULL || r->meta[2 * r->n_meta - 1] == NULL)
        return nomem(p);
    return NA_OK;
}

static na_status_t flatten(pk_t *p, obj_t *o, const char *name, int depth)
{
    if (depth > PK_MAX_DEPTH)
        return na_err_set(p->err, NA_E_FORMAT, "pickle: objects nested more than %d deep "
                          "(or a cycle) at '%.200s'", PK_MAX_DEPTH, name);
    if (++p->leaves > PK_MAX_LEAVES)
        return na_err_set(p->err, NA_E_FORMAT, "pickle: more than %u entries (shared "
                          "sub-objects repeated too often)", PK_MAX_LEAVES);
    if (o->t == O_TENSOR)
        return add_tensor(p, o, name);
    int dict = o->t == O_DICT;
    if (!(dict || ((o->t == O_LIST || o->t == O_TUPLE) && has_structure(o, depth))) ||
        o->n == 0)
        return add_note(p, o, name);
    for (size_t i = 0; i < o->n; i += dict ? 2 : 1) {
        char kb[256];
        obj_t *k = dict ? o->it[i] : NULL;
        if (dict && has_structure(k, depth + 1)) /* never dropped unaudited */
            return na_err_set(p->err, NA_E_UNSUPPORTED, "pickle: a dict key at '%.200s' "
                              "holds a tensor or a dict, which cannot be audited there",
                              *name ? name : "(root)");
        if (!dict)
            snprintf(kb, sizeof kb, "%zu", i);
        else if (k->t == O_STR)
            snprintf(kb, sizeof kb, "%s", k->s);
        else
            repr(k, kb, sizeof kb, 0);
        char *child = join(name, kb);
        if (child == NULL)
            return nomem(p);
        na_status_t st = flatten(p, o->it[dict ? i + 1 : i], child, depth + 1);
        free(child);
        if (st != NA_OK)
            return st;
    }
    return NA_OK;
}

static int is_key_list(const obj_t *o)
{
    if (o->t != O_LIST && o->t != O_TUPLE)
        return 0;
    for (size_t i = 0; i < o->n; i++)
        if (o->it[i]->t != O_STR && o->it[i]->t != O_INT)
            return 0;
    return 1;
}

static na_status_t key_list(pk_t *p, const obj_t *o)
{
    na_pk_result_t *r = p->r;
    r->is_keys = 1;
    r->keys = calloc(o->n + 1, sizeof *r->keys);
    if (r->keys == NULL)
        return nomem(p);
    for (size_t i = 0; i < o->n; i++) {
        char kb[32];
        if (o->it[i]->t == O_INT)
            snprintf(kb, sizeof kb, "%" PRId64, o->it[i]->i);
        r->keys[i] = strdup(o->it[i]->t == O_INT ? kb : o->it[i]->s);
        r->n_keys = i + 1;
        if (r->keys[i] == NULL)
            return nomem(p);
    }
    return NA_OK;
}

na_status_t na_pickle_load(const uint8_t *buf, size_t n, na_pk_result_t *r, na_err_t *err)
{
    memset(r, 0, sizeof *r);
    pk_t p;
    memset(&p, 0, sizeof p);
    p.b = buf;
    p.n = n;
    p.err = err;
    p.r = r;
    p.memo_limit = n > 1024 ? n : 1024;
    int stop = 0;
    na_status_t st = NA_OK;
    while (st == NA_OK && !stop) {
        if (p.pos >= p.n) {
            st = na_err_set(err, NA_E_FORMAT, "pickle: truncated (no STOP opcode in %zu bytes)",
                            n);
            break;
        }
        st = step(&p, &stop);
    }
    obj_t *root = NULL;
    if (st == NA_OK && (p.sp != 1 || (root = p.stack[0])->t == O_MARK))
        st = na_err_set(err, NA_E_FORMAT, "pickle: %zu objects left on the stack at STOP "
                        "(expected 1)", p.sp);
    if (st == NA_OK) {
        r->consumed = p.pos;
        if (root->t == O_INT) {
            r->is_int = 1;
            snprintf(r->int_text, sizeof r->int_text, "%" PRId64, root->i);
        } else if (root->t == O_BIGINT) {
            r->is_int = 1;
            snprintf(r->int_text, sizeof r->int_text, "%s", root->s);
        } else if (is_key_list(root)) {
            st = key_list(&p, root);
        } else {
            st = flatten(&p, root, "", 0);
        }
    }
    free_arena(&p);
    if (st != NA_OK)
        na_pickle_result_free(r);
    return st;
}

void na_pickle_result_free(na_pk_result_t *r)
{
    for (size_t i = 0; i < r->n_tensors; i++) {
        free(r->tensors[i].name);
        free(r->tensors[i].storage_key);
        free(r->tensors[i].view_key);
    }
    free(r->tensors);
    for (size_t i = 0; i < 2 * r->n_meta; i++)
        free(r->meta[i]);
    free(r->meta);
    for (size_t i = 0; i < r->n_keys; i++)
        free(r->keys[i]);
    free(r->keys);
    memset(r, 0, sizeof *r);
}
