/*
 * clean_params.h - --save-params / --apply-params files (clean_params.c;
 * the schema is described there and in man/nanaudit.1).
 */
#ifndef NA_CLEAN_PARAMS_H
#define NA_CLEAN_PARAMS_H

#include "clean.h"

#include <jansson.h>
#include <stddef.h>

json_t *cli_params_new(void);
/* Add one tensor's parameters; 0 or -1 (out of memory). */
int cli_params_add(json_t *root, const char *name, const na_clean_tensor_t *ct);
/* Write the file; 0 or -1. */
int cli_params_save(json_t *root, const char *path);
/* Read and check a file; NULL with why filled (one line). */
json_t *cli_params_load(const char *path, char *why, size_t cap);
/* Fill ct->feat from the file (ct->fixed = 1); -1 with why when the file
 * has no entry for name or another feature count. */
int cli_params_apply(json_t *root, const char *name, na_clean_tensor_t *ct, char *why, size_t cap);

#endif /* NA_CLEAN_PARAMS_H */
