/*
 * npz.c - NumPy .npz archives: a zip of .npy members (np.savez stores
 * them, np.savez_compressed deflates them; numpy/lib/_npyio_impl.py,
 * _savez). Each member is one array named after the member without
 * ".npy" ("x.npy" -> "x"), in archive order; structured and complex
 * members expand as in npy.c ("x.field", "x.real"). np.load decides by
 * a member's first bytes, not its name (NpzFile.__getitem__): a member
 * not named *.npy that starts with the .npy magic is an array under its
 * full name ("weights"), any other (a README added by hand) gives bytes:
 * a skipped entry, not data (na_zip_classify takes a zip with at least
 * one .npy member and no data.pkl for an .npz, as np.load opens any zip).
 *
 * Stored members are read through mmap windows at their data position
 * (unzGetCurrentFileZStreamPos64, zip.c), exactly like a .npy file.
 * Deflated members are inflated as a stream by minizip, window by window;
 * the second pass restarts the member. A deflated member that must be
 * read out of C order (Fortran order, a subarray field) is inflated once
 * into an unlinked temporary file and mapped (zip.c, na_zip_spill): disk,
 * not memory.
 */
#include "npt.h"

#include <errno.h>  /* errno */
#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* calloc, free */
#include <string.h> /* strlen, strcmp, memcmp, strdup, strerror */
#include <unistd.h> /* lseek, close */

typedef struct npz_input {
    na_input_t base;
    na_zip_t *zip;
    na_map_t *map;         /* the archive, for stored members */
    size_t n_stores;
    na_store_t *stores;    /* one per member; views point here */
    na_map_t **spills;     /* per member: mapped temporary file or NULL */
    na_scratch_t scratch;  /* the window buffer all members share */
    na_npy_list_t list;
} npz_input_t;

static size_t npz_count(const na_input_t *in) { return ((const npz_input_t *)in)->list.n; }

static na_status_t npz_tensor(na_input_t *in, size_t i, na_tensor_t *t, na_err_t *err)
{
    return na_npy_entry_tensor(&((npz_input_t *)in)->list.e[i], t, err);
}

static size_t npz_meta_count(const na_input_t *in) { return 0; }

static void npz_meta(const na_input_t *in, size_t i, const char **k, const char **v)
{
    *k = *v = NULL;
}

static uint64_t npz_tensor_bytes(const na_input_t *in, size_t i)
{
    return ((const npz_input_t *)in)->list.e[i].bytes;
}

static void npz_close(na_input_t *in)
{
    npz_input_t *z = (npz_input_t *)in;
    if (z == NULL)
        return;
    na_npy_list_free(&z->list);
    free(z->scratch.buf);
    for (size_t i = 0; z->spills && i < z->n_stores; i++)
        na_map_close(z->spills[i]);
    free(z->spills);
    free(z->stores);
    na_map_close(z->map);
    na_zip_close(z->zip);
    free(z->base.path);
    free(z);
}

static const struct na_input_vtbl npz_vtbl = {
    npz_count, npz_tensor, npz_meta_count, npz_meta, npz_tensor_bytes, npz_close, NULL,
};

/* na_npz_member_is_array (npt.h): skipping an array member not named
 * *.npy would miss its NaN. A member whose first bytes cannot be read (a
 * compression method zip.c lacks, such as bzip2 or LZMA, which np.load
 * reads; a damaged local header) is neither: -1, an error of the archive.
 * It was taken for bytes, and an array's NaN passed the gate (sixteenth
 * fresh-user round). */
int na_npz_member_is_array(na_zip_t *z, size_t i)
{
    const na_zip_entry_t *ze = na_zip_entry(z, i);
    size_t len = strlen(ze->name);
    if (len >= 4 && !strcmp(ze->name + len - 4, ".npy"))
        return 1;
    uint8_t head[6];
    na_err_t e = {{0}};
    if (ze->usize < sizeof head)
        return 0;
    if (na_zip_read(z, i, 0, head, sizeof head, &e) != NA_OK)
        return -1;
    return memcmp(head, "\x93NUMPY", sizeof head) == 0;
}

/* Member i: header, store, entries. */
static na_status_t npz_member(npz_input_t *z, size_t i, size_t win, na_err_t *err)
{
    const na_zip_entry_t *ze = na_zip_entry(z->zip, i);
    char name[1024];
    size_t len = strlen(ze->name);
    int arr = na_npz_member_is_array(z->zip, i);
    if (arr == 0)
        return na_npy_add_other(&z->list, ze->name, ze->usize, err);
    int suffix = len >= 4 && !strcmp(ze->name + len - 4, ".npy");
    snprintf(name, sizeof name, "%.*s", (int)(suffix ? len - 4 : len), ze->name);
    uint8_t head[NA_NPY_MAX_HEADER + 12];
    size_t hn = ze->usize < sizeof head ? (size_t)ze->usize : sizeof head;
    na_npy_header_t h;
    memset(&h, 0, sizeof h);
    /* arr < 0: this read fails too, and says why */
    na_status_t st = na_zip_read(z->zip, i, 0, head, hn, err);
    if (st == NA_OK && arr < 0)
        st = na_err_set(err, NA_E_IO, "its first bytes cannot be read");
    if (st == NA_OK)
        st = na_npy_parse_header(head, hn, &h, err);
    na_store_t *s = &z->stores[i];
    if (ze->data_pos != UINT64_MAX)
        *s = (na_store_t){z->map, ze->data_pos, ze->usize, NULL, 0};
    else
        *s = (na_store_t){NULL, 0, ze->usize, z->zip, i};
    size_t first = z->list.n;
    if (st == NA_OK)
        st = na_npy_add_entries(&z->list, &h, name, s, h.header_bytes, err);
    na_npy_header_free(&h);
    int gather = 0;
    for (size_t k = first; st == NA_OK && k < z->list.n; k++)
        gather |= z->list.e[k].kind == NA_NPY_NUMERIC && !z->list.e[k].view.contiguous;
    if (st == NA_OK && gather && s->map == NULL) {
        int fd = -1;
        st = na_zip_spill(z->zip, i, &fd, err);
        if (st == NA_OK)
            st = na_map_open(fd, ze->usize, win, &z->spills[i], err);
        if (st == NA_OK)
            *s = (na_store_t){z->spills[i], 0, ze->usize, NULL, 0};
    }
    if (st != NA_OK && err != NULL) {
        char msg[NA_ERR_LEN];
        snprintf(msg, sizeof msg, "%s", err->msg);
        na_err_set(err, st, "member '%.200s': %s", ze->name, msg);
    }
    return st;
}

/* np.load's key for member "K.npy" is K, and NpzFile["K"] takes a member
 * named exactly K first: with members "x.npy.npy" and "x.npy", the key
 * "x.npy" returns the second, and the first's values are reached by no
 * key np.load lists (round 31a: its NaN was reported under "x.npy", whose
 * key gives the other member). Such an archive is refused. Sorted copy
 * of the names, a binary search per key: O(n log n). */
static na_status_t npz_keys_unique(const na_zip_t *zip, na_err_t *err)
{
    size_t n = na_zip_count(zip);
    const char **v = na_zip_sorted_names(zip, 0);
    if (v == NULL)
        return na_err_set(err, NA_E_NOMEM, "out of memory");
    na_status_t st = NA_OK;
    char key[1024];
    for (size_t i = 0; i < n && st == NA_OK; i++) {
        const char *nm = na_zip_entry(zip, i)->name;
        size_t len = strlen(nm);
        /* (a key K not ending in .npy beside a member K: both are tensor K,
         * which the duplicate-name check refuses with its own line) */
        if (len < 8 || strcmp(nm + len - 8, ".npy.npy") || len - 4 >= sizeof key)
            continue;
        snprintf(key, sizeof key, "%.*s", (int)(len - 4), nm);
        const char *k = key;
        if (bsearch(&k, v, n, sizeof *v, na_zip_name_cmp))
            st = na_err_set(err, NA_E_FORMAT, "members '%.200s' and '%.200s': np.load's key "
                            "'%.200s' names the second, and the first's values are reached by "
                            "no key it lists (refused)", nm, key, key);
    }
    free(v);
    return st;
}

static na_status_t npz_open(const char *path, int fd, const na_open_opts_t *o,
                            na_input_t **out, na_err_t *err)
{
    *out = NULL;
    npz_input_t *z = calloc(1, sizeof *z);
    off_t size = lseek(fd, 0, SEEK_END);
    if (z == NULL || size < 0) {
        free(z);
        close(fd);
        return na_err_set(err, z ? NA_E_IO : NA_E_NOMEM, z ? "cannot seek" : "out of memory");
    }
    z->base.v = &npz_vtbl;
    z->base.format = "npz";
    z->base.file_size = (uint64_t)size;
    z->base.path = strdup(path ? path : "");
    z->list.scratch = &z->scratch;
    size_t win = o && o->window_bytes ? o->window_bytes : NA_DEFAULT_WINDOW_BYTES;
    na_status_t st = na_zip_open(fd, z->base.file_size, &z->zip, err);
    if (st == NA_OK && z->base.path == NULL)
        st = na_err_set(err, NA_E_NOMEM, "out of memory");
    if (st == NA_OK) {
        int fd2 = na_zip_dup_fd(z->zip);
        st = fd2 < 0 ? na_err_set(err, na_errno_status(errno), "dup failed: %s", strerror(errno))
                     : na_map_open(fd2, z->base.file_size, win, &z->map, err);
    }
    if (st == NA_OK)
        st = npz_keys_unique(z->zip, err);
    if (st == NA_OK) {
        z->n_stores = na_zip_count(z->zip);
        z->stores = calloc(z->n_stores + 1, sizeof *z->stores);
        z->spills = calloc(z->n_stores + 1, sizeof *z->spills);
        if (z->stores == NULL || z->spills == NULL)
            st = na_err_set(err, NA_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; st == NA_OK && i < z->n_stores; i++)
        st = npz_member(z, i, win, err);
    if (st != NA_OK) {
        npz_close(&z->base);
        return st;
    }
    *out = &z->base;
    return NA_OK;
}

const na_format_t na_format_npz = {"npz", npz_open};
