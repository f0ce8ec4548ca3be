/*
 * index.c - sharded checkpoints: the Hugging Face *.safetensors.index.json.
 *
 * Format (written by transformers' save_pretrained / huggingface_hub's
 * split_torch_state_dict_into_shards, read by transformers'
 * load_sharded_checkpoint):
 *     {"metadata": {"total_size": N, ...}, "weight_map": {tensor: file}}
 * where file is a shard's name in the index's directory and total_size
 * is the sum of the tensors' data bytes (numel x element size), NOT the
 * sum of the shard file sizes (which include the headers). Checked on the
 * real 6-shard set tests/data/real/fluxml-sharded: total_size 4305 = the
 * sum of end - begin over all shards (768+420+945+840+912+420); the file
 * sizes add up to 7017.
 *
 * Rules (each an NA_E_FORMAT error naming the tensor and shards):
 *  - weight_map is an object of non-empty strings; metadata, when
 *    present, an object; total_size, when present, a non-negative integer;
 *  - a shard path must stay inside the index's directory: absolute paths
 *    and ".." components are refused. HF writes bare file names; a
 *    hostile index could otherwise make an auditor read any file on the
 *    machine (and report its name and size) - decided in issue 2. The
 *    check is on the text only: symlinks are followed, as they must be in
 *    an HF cache, where snapshots/REV/shard links to ../../blobs/HASH;
 *  - every tensor of a shard is in the weight_map, mapped to that shard;
 *    every weight_map entry of a shard is in that shard; no tensor is in
 *    two shards; every shard was read.
 * A total_size that differs from the tensors' bytes is a note
 * (na_index_total_note), not an error: transformers and safetensors never
 * read it, and mlx-examples' save_weights writes the shard files' sizes
 * (tester round 22b: such checkpoints failed the gate with exit 3).
 */
#include "format.h"
#include "json_err.h"

#include <errno.h>    /* errno */
#include <stdarg.h>   /* va_list */
#include <jansson.h>  /* json_loadb */
#include <stdio.h>    /* FILE, fopen */
#include <stdlib.h>   /* malloc, qsort, bsearch */
#include <string.h>   /* strcmp, strrchr */
#include <sys/stat.h> /* stat */

#define NONE ((size_t)-1)

typedef struct ix_entry {
    char *name;      /* tensor name */
    size_t shard;    /* shard the weight_map names */
    size_t seen_in;  /* shard it was found in (the named one), or NONE */
    size_t extra_in; /* another shard that also holds it, or NONE */
} ix_entry_t;

struct na_index {
    char *path;
    size_t n_shards;
    char **shard_files;   /* as in the index, sorted, unique */
    char **shard_paths;   /* resolved against the index's directory */
    size_t *shard_ntensors;
    unsigned char *checked; /* per shard: 1 checked, 2 an index (na_index_shard_is_index) */
    size_t n_entries;
    ix_entry_t *entries;  /* sorted by name */
    size_t *by_shard;     /* entry ids grouped by shard ... */
    size_t *shard_start;  /* ... shard s owns by_shard[shard_start[s] .. [s+1]) */
    int has_total;        /* 1 read, -1 present but not a non-negative integer */
    uint64_t total_size;
    uint64_t sum_bytes;
};

/* ---- loading ------------------------------------------------------ */

/* HF indexes are kilobytes to a few MiB (about 100 bytes per tensor); a
 * bigger "index" is refused rather than read into memory. */
#define INDEX_MAX_BYTES ((size_t)256 << 20)

static na_status_t read_whole(const char *path, char **buf, size_t *len, na_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return na_err_set(err, errno == ENOENT ? NA_E_NOTFOUND : NA_E_IO,
                          "cannot open the index: %s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    int too_big = 0;
    char *b = malloc(cap);
    while (b != NULL) {
        n += fread(b + n, 1, cap - n, f);
        if (n < cap)
            break;
        if (cap >= INDEX_MAX_BYTES) {
            too_big = 1;
            break;
        }
        char *nb = realloc(b, cap * 2);
        if (nb == NULL)
            free(b);
        b = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (b == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory reading the index");
    if (bad || too_big) {
        free(b);
        if (bad)
            return na_err_set(err, NA_E_IO, "read error on the index");
        return na_err_set(err, NA_E_FORMAT, "index is %zu bytes or more: too big for a "
                          "sharded-checkpoint index", INDEX_MAX_BYTES);
    }
    *buf = b;
    *len = n;
    return NA_OK;
}

/* A relative path with no "." / ".." escape: no leading '/', no ".."
 * component. */
static int path_stays_inside(const char *p)
{
    if (p[0] == '\0' || p[0] == '/')
        return 0;
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return 0;
        s += n + (e != NULL);
    }
    return 1;
}

static na_status_t parse_total(na_index_t *ix, const json_t *root, na_err_t *err)
{
    const json_t *md = json_object_get(root, "metadata");
    if (md == NULL || json_is_null(md))
        return NA_OK;
    if (!json_is_object(md))
        return na_err_set(err, NA_E_FORMAT, "index: \"metadata\" is not an object");
    const json_t *t = json_object_get(md, "total_size");
    if (t == NULL)
        return NA_OK;
    double r = json_is_real(t) ? json_real_value(t) : -1;
    if (json_is_integer(t) && json_integer_value(t) >= 0) {
        ix->total_size = (uint64_t)json_integer_value(t);
    } else if (json_is_real(t) && r >= 0 && r < 1.8e19 && r == (double)(uint64_t)r) {
        ix->total_size = (uint64_t)r; /* some writers emit 1234.0 */
    } else { /* not read by loaders either: a note (na_index_total_note) */
        ix->has_total = -1;
        return NA_OK;
    }
    ix->has_total = 1;
    return NA_OK;
}

/* A shard name without "." components and repeated slashes, in a new
 * string (NULL: out of memory): "./s1.safetensors" and "s1.safetensors"
 * name one file, which transformers opens as os.path.join(folder, name)
 * (load_sharded_checkpoint); compared as written they were two shards
 * that each held the other's tensors. Symbolic links are not resolved
 * here (the walk tells files apart by st_dev and st_ino). */
static char *norm_name(const char *p)
{
    char *o = malloc(strlen(p) + 1);
    size_t n = 0;
    for (const char *s = p; o != NULL && *s;) {
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len > 0 && !(len == 1 && s[0] == '.')) {
            if (n > 0)
                o[n++] = '/';
            memcpy(o + n, s, len);
            n += len;
        }
        s += len + (e != NULL);
    }
    if (o != NULL)
        o[n] = '\0';
    return o;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const ix_entry_t *)a)->name, ((const ix_entry_t *)b)->name);
}

/* The shard of weight_map value file (normalized), NONE when absent or
 * out of memory. */
static size_t shard_id(const na_index_t *ix, const char *file)
{
    char *key = norm_name(file);
    char *const *p = key ? bsearch(&key, ix->shard_files, ix->n_shards,
                                   sizeof *ix->shard_files, cmp_str)
                         : NULL;
    free(key);
    return p ? (size_t)(p - ix->shard_files) : NONE;
}

/* Unique sorted shard list from the weight_map values (norm_name). */
static na_status_t collect_shards(na_index_t *ix, const json_t *wm, na_err_t *err)
{
    size_t n = json_object_size(wm), k = 0;
    char **files = calloc(n ? n : 1, sizeof *files);
    if (files == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)wm, key, v) files[k++] = norm_name(json_string_value(v));
    na_status_t st = NA_OK;
    for (size_t i = 0; i < n; i++)
        if (files[i] == NULL)
            st = NA_E_NOMEM;
    if (st == NA_OK)
        qsort(files, n, sizeof *files, cmp_str);
    ix->shard_files = calloc(n ? n : 1, sizeof *ix->shard_files);
    if (ix->shard_files == NULL)
        st = NA_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if (st != NA_OK ||
            (ix->n_shards > 0 && strcmp(files[i], ix->shard_files[ix->n_shards - 1]) == 0))
            free(files[i]);
        else
            ix->shard_files[ix->n_shards++] = files[i];
    }
    free(files);
    return st == NA_OK ? NA_OK : na_err_set(err, st, "out of memory");
}

static na_status_t resolve_paths(na_index_t *ix, const char *index_path, na_err_t *err)
{
    const char *slash = strrchr(index_path, '/');
    size_t dlen = slash ? (size_t)(slash - index_path) + 1 : 0;
    ix->shard_paths = calloc(ix->n_shards + 1, sizeof *ix->shard_paths);
    ix->shard_ntensors = calloc(ix->n_shards + 1, sizeof *ix->shard_ntensors);
    ix->checked = calloc(ix->n_shards + 1, 1);
    ix->shard_start = calloc(ix->n_shards + 1, sizeof *ix->shard_start);
    if (!ix->shard_paths || !ix->shard_ntensors || !ix->checked || !ix->shard_start)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    for (size_t i = 0; i < ix->n_shards; i++) {
        size_t fl = strlen(ix->shard_files[i]);
        char *p = malloc(dlen + fl + 1);
        if (p == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        memcpy(p, index_path, dlen);
        memcpy(p + dlen, ix->shard_files[i], fl + 1);
        ix->shard_paths[i] = p;
    }
    return NA_OK;
}

/* Entries sorted by name, and grouped by shard (counting sort). */
static na_status_t build_entries(na_index_t *ix, const json_t *wm, na_err_t *err)
{
    size_t n = json_object_size(wm), k = 0;
    ix->entries = calloc(n ? n : 1, sizeof *ix->entries);
    ix->by_shard = calloc(n ? n : 1, sizeof *ix->by_shard);
    if (ix->entries == NULL || ix->by_shard == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)wm, key, v) {
        ix_entry_t *e = &ix->entries[k];
        e->name = strdup(key);
        if (e->name == NULL)
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        e->shard = shard_id(ix, json_string_value(v));
        if (e->shard == NONE) /* collect_shards listed every value */
            return na_err_set(err, NA_E_NOMEM, "out of memory");
        e->seen_in = e->extra_in = NONE;
        ix->n_entries = ++k;
        ix->shard_ntensors[e->shard]++;
    }
    qsort(ix->entries, n, sizeof *ix->entries, cmp_entry);
    size_t pos = 0;
    for (size_t s = 0; s < ix->n_shards; s++) {
        ix->shard_start[s] = pos;
        pos += ix->shard_ntensors[s];
    }
    ix->shard_start[ix->n_shards] = pos;
    size_t *fill = calloc(ix->n_shards + 1, sizeof *fill);
    if (fill == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t s = ix->entries[i].shard;
        ix->by_shard[ix->shard_start[s] + fill[s]++] = i;
    }
    free(fill);
    return NA_OK;
}

static na_status_t check_weight_map(const json_t *root, const json_t **wm, na_err_t *err)
{
    if (!json_is_object(root))
        return na_err_set(err, NA_E_FORMAT, "index is not a JSON object");
    *wm = json_object_get(root, "weight_map");
    if (*wm == NULL)
        return na_err_set(err, NA_E_FORMAT, "index has no \"weight_map\"");
    if (!json_is_object(*wm))
        return na_err_set(err, NA_E_FORMAT, "index: \"weight_map\" is not an object");
    if (json_object_size(*wm) == 0) /* round 27b: "nothing to audit" said less */
        return na_err_set(err, NA_E_FORMAT, "index: \"weight_map\" is empty: it names no "
                          "tensor and no shard");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)*wm, key, v) {
        if (!json_is_string(v) || json_string_length(v) == 0)
            return na_err_set(err, NA_E_FORMAT,
                              "index: weight_map entry of tensor '%.120s' is not a file name",
                              key);
        if (!path_stays_inside(json_string_value(v)))
            return na_err_set(err, NA_E_FORMAT,
                              "index: shard path '%.200s' of tensor '%.120s' escapes the "
                              "index's directory (absolute or '..'; refused)",
                              json_string_value(v), key);
        if (strspn(json_string_value(v), "./") == json_string_length(v)) /* "./": norm_name */
            return na_err_set(err, NA_E_FORMAT,
                              "index: weight_map entry of tensor '%.120s' is not a file name",
                              key);
    }
    return NA_OK;
}

na_status_t na_index_load(const char *path, na_index_t **out, na_err_t *err)
{
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    na_status_t st = read_whole(path, &buf, &len, err);
    if (st != NA_OK)
        return st;
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL)
        st = na_json_load_error("index", &je, buf, len, err);
    free(buf);
    if (root == NULL)
        return st;
    na_index_t *ix = calloc(1, sizeof *ix);
    const json_t *wm = NULL;
    if (ix == NULL || (ix->path = strdup(path)) == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    if (st == NA_OK)
        st = check_weight_map(root, &wm, err);
    if (st == NA_OK)
        st = parse_total(ix, root, err);
    if (st == NA_OK)
        st = collect_shards(ix, wm, err);
    if (st == NA_OK)
        st = resolve_paths(ix, path, err);
    if (st == NA_OK)
        st = build_entries(ix, wm, err);
    json_decref(root);
    if (st != NA_OK) {
        na_index_free(ix);
        return st;
    }
    *out = ix;
    return NA_OK;
}

/* ---- checks ------------------------------------------------------- */

size_t na_index_shard_count(const na_index_t *ix) { return ix->n_shards; }

const char *na_index_shard_path(const na_index_t *ix, size_t i)
{
    return i < ix->n_shards ? ix->shard_paths[i] : NULL;
}

static ix_entry_t *find(na_index_t *ix, const char *name)
{
    ix_entry_t key = {.name = (char *)name};
    return bsearch(&key, ix->entries, ix->n_entries, sizeof key, cmp_entry);
}

/* The first problem goes into *first; *nprob counts them all. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
/* The first NOTE_SHOWN problems of a shard, joined by "; " into
 * first->msg (as far as it holds them); all of them counted in *nprob.
 * The line then says how many more there are. */
#define NOTE_SHOWN 3
static void note(size_t *nprob, na_err_t *first, const char *fmt, ...)
{
    if ((*nprob)++ >= NOTE_SHOWN)
        return;
    size_t at = strlen(first->msg);
    if (at > 0 && at + 2 < sizeof first->msg) {
        memcpy(first->msg + at, "; ", 3);
        at += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    if (at + 1 < sizeof first->msg)
        vsnprintf(first->msg + at, sizeof first->msg - at, fmt, ap);
    va_end(ap);
}

na_status_t na_index_check_shard(na_index_t *ix, size_t i, const char *const *names, size_t n,
                                 uint64_t data_bytes, na_err_t *err)
{
    if (i >= ix->n_shards)
        return na_err_set(err, NA_E_INTERNAL, "shard %zu out of range", i);
    if (ix->checked[i] == 1)
        return NA_OK; /* reached twice (symlink): counted once */
    ix->checked[i] = 1;
    ix->sum_bytes += data_bytes;
    size_t nprob = 0;
    na_err_t first;
    first.msg[0] = '\0';
    const char *here = ix->shard_files[i];
    for (size_t k = 0; k < n; k++) {
        ix_entry_t *e = find(ix, names[k]);
        if (e == NULL) {
            note(&nprob, &first, "tensor '%.120s' is in shard '%s' but not in the index",
                 names[k], here);
        } else if (e->shard == i) {
            e->seen_in = i;
            if (e->extra_in != NONE)
                note(&nprob, &first, "tensor '%.120s' is in two shards: '%s' and '%s'",
                     names[k], here, ix->shard_files[e->extra_in]);
        } else {
            e->extra_in = i;
            if (e->seen_in != NONE)
                note(&nprob, &first, "tensor '%.120s' is in two shards: '%s' and '%s'",
                     names[k], ix->shard_files[e->seen_in], here);
            else
                note(&nprob, &first,
                     "tensor '%.120s' is in shard '%s' but the index puts it in '%s'", names[k],
                     here, ix->shard_files[e->shard]);
        }
    }
    for (size_t k = ix->shard_start[i]; k < ix->shard_start[i + 1]; k++) {
        const ix_entry_t *e = &ix->entries[ix->by_shard[k]];
        if (e->seen_in != i)
            note(&nprob, &first, "tensor '%.120s' is in the index (shard '%s') but not in "
                 "that shard", e->name, here);
    }
    if (nprob == 0)
        return NA_OK;
    if (nprob <= NOTE_SHOWN)
        return na_err_set(err, NA_E_FORMAT, "%s", first.msg);
    return na_err_set(err, NA_E_FORMAT, "%s (and %zu more index problems)", first.msg,
                      nprob - NOTE_SHOWN);
}

void na_index_shard_is_index(na_index_t *ix, size_t i)
{
    if (i < ix->n_shards && !ix->checked[i])
        ix->checked[i] = 2;
}

na_status_t na_index_finish(na_index_t *ix, na_err_t *err)
{
    for (size_t i = 0; i < ix->n_shards; i++) {
        if (ix->checked[i] == 1)
            continue;
        if (ix->checked[i] == 2)
            return na_err_set(err, NA_E_FORMAT,
                              "shard '%s' is an index file, not a safetensors or PyTorch file, "
                              "so it was not checked against the index",
                              ix->shard_files[i]);
        struct stat sb;
        if (stat(ix->shard_paths[i], &sb) != 0)
            return na_err_set(err, NA_E_NOTFOUND,
                              "missing shard file '%s' (the index puts %zu tensor%s in it)",
                              ix->shard_files[i], ix->shard_ntensors[i],
                              ix->shard_ntensors[i] == 1 ? "" : "s");
        return na_err_set(err, NA_E_FORMAT,
                          "shard '%s' is invalid or unreadable, so it was not checked against "
                          "the index",
                          ix->shard_files[i]);
    }
    return NA_OK;
}

int na_index_total_note(const na_index_t *ix, char *buf, size_t cap)
{
    if (ix->has_total < 0) {
        snprintf(buf, cap, "index metadata.total_size is not a non-negative integer (loaders do "
                 "not read it)");
        return 1;
    }
    if (!ix->has_total || ix->total_size == ix->sum_bytes)
        return 0;
    snprintf(buf, cap, "index metadata.total_size is %llu bytes but the shards hold %llu bytes "
             "of tensor data (loaders do not read it; some writers add up file sizes)",
             (unsigned long long)ix->total_size, (unsigned long long)ix->sum_bytes);
    return 1;
}

void na_index_free(na_index_t *ix)
{
    if (ix == NULL)
        return;
    for (size_t i = 0; i < ix->n_shards; i++) {
        free(ix->shard_files[i]);
        if (ix->shard_paths)
            free(ix->shard_paths[i]);
    }
    for (size_t i = 0; i < ix->n_entries; i++)
        free(ix->entries[i].name);
    free(ix->shard_files);
    free(ix->shard_paths);
    free(ix->shard_ntensors);
    free(ix->checked);
    free(ix->entries);
    free(ix->by_shard);
    free(ix->shard_start);
    free(ix->path);
    free(ix);
}
