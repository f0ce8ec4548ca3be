/*
 * clean_params.h - --save-params / --apply-params files (clean_params.c;
 * the schema is described there and in man/nanaudit.1).
 */
#ifndef NA_CLEAN_PARAMS_H
#define NA_CLEAN_PARAMS_H

#include "clean.h"
#include "clean_report.h" /* cli_params_null_t */

#include <jansson.h>
#include <stddef.h>

/* An empty parameter file (schema_version 2) recording the run's options
 * o (clean_params.c describes the schema); NULL when out of memory. */
json_t *cli_params_new(const na_clean_opts_t *o);
/* Add one tensor's parameters, fitted with options o (its engine's); 0 or
 * -1 (out of memory). */
int cli_params_add(json_t *root, const char *name, const na_clean_tensor_t *ct,
                   const na_clean_opts_t *o);
/* Write the file; 0, or -1 with errno set. A regular file (or a new
 * one) is written as a hidden temporary file beside it
 * (.nanaudit-tmp-XXXXXX, cli_write_file), fsync'ed and renamed over it: a failure
 * leaves the previous file as it was, or no file. Anything else
 * (/dev/stdout, a FIFO) is written as given. */
int cli_params_save(json_t *root, const char *path);
/* Read and check a file; NULL with why filled (one line). */
json_t *cli_params_load(const char *path, char *why, size_t cap);
/* Check a loaded file against the run's settled options o, once before
 * any tensor is read: the options that give the numbers their meaning
 * (outlier method and K, normalization, a non-finite fill) must be the
 * fit's. A schema_version 1 file (no options) is accepted
 * with a warning on stderr naming path. 0, or -1 with why filled (one
 * line, the whole message after "PATH: "). */
int cli_params_check(json_t *root, const char *path, const na_clean_opts_t *o, char *why,
                     size_t cap);
/* Fill ct->feat from the file (ct->fixed = 1) for the run's options o;
 * -1 with why (one line) when the file has no entry for name or another
 * feature count. The first null of a statistic o uses, of a feature that
 * is not passthrough, goes to *pend (field 0: none): it is harmless when
 * no sample is left to take it (a fit that dropped every row saved it,
 * and the same data drops them again: round 36b), which only the fit
 * knows; cli_params_null_msg then says why the run is refused. */
int cli_params_apply(json_t *root, const char *name, const na_clean_opts_t *o,
                     na_clean_tensor_t *ct, cli_params_null_t *pend, char *why, size_t cap);
/* The refusal for *p (tensor name, rows the samples kept) into why. */
void cli_params_null_msg(const cli_params_null_t *p, const char *name, const na_clean_opts_t *o,
                         uint64_t rows, char *why, size_t cap);
/* names.c: the key of tensor i of in (named name) in a loaded file: its
 * name when the file has it, else the first other hard-link path of the
 * HDF5 dataset that the file has (saved from a file where that link came
 * first in walk order), else the name with its leading '/' added or
 * taken away ('/X' of an HDF5 fit for 'X' of an .npz), else name. Never
 * NULL for a non-NULL name; a key of root lives as long as root. */
struct na_input; /* format.h's na_input_t */
const char *cli_params_key(json_t *root, const struct na_input *in, size_t i, const char *name);

#endif /* NA_CLEAN_PARAMS_H */
