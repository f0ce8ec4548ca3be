/*
 * shards.c - check an opened shard of a sharded checkpoint against its
 * index (model.safetensors.index.json), for scan and info alike: the
 * index's rules (formats/index.c) need only the names and data bytes the
 * shard's header holds, so `info INDEX` gives the same answer as `scan`.
 */
#include "cli.h"

#include <stdlib.h> /* calloc, malloc, free */
#include <string.h> /* memcpy, memset, strcmp, strlen */

/* Names of the opened shard as the index knows them: a complex tensor
 * (safetensors C64, a PyTorch complex64 or complex128: na_tensor_t.part)
 * is listed as NAME.real + NAME.imag, the index holds NAME once. */
na_status_t cli_shard_check(na_index_t *ix, size_t shard_no, na_input_t *in, na_err_t *err)
{
    size_t n = na_input_count(in), k = 0;
    uint64_t bytes = 0;
    char **names = calloc(n + 1, sizeof *names);
    na_status_t st = names ? NA_OK : NA_E_NOMEM;
    for (size_t i = 0; st == NA_OK && i < n; i++) {
        na_tensor_t t;
        na_err_t e2;
        memset(&t, 0, sizeof t);
        na_input_tensor(in, i, &t, &e2);
        const char *nm = t.name ? t.name : "";
        size_t len = strlen(nm);
        bytes += na_input_tensor_bytes(in, i); /* each C64 part: its half */
        int cplx = t.stored == NA_DT_C64 || t.part == NA_PART_COMPLEX;
        if (cplx && len >= 5 && !strcmp(nm + len - 5, ".imag"))
            continue; /* the .real entry stands for both */
        if (cplx && len >= 5 && !strcmp(nm + len - 5, ".real"))
            len -= 5;
        if (!(names[k] = malloc(len + 1)))
            st = NA_E_NOMEM;
        else {
            memcpy(names[k], nm, len);
            names[k++][len] = '\0';
        }
    }
    if (st == NA_OK)
        st = na_index_check_shard(ix, shard_no, (const char *const *)names, k, bytes, err);
    for (size_t i = 0; names && i < k; i++)
        free(names[i]);
    free(names);
    return st;
}
