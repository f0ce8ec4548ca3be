/*
 * clean_report.h - state of one `nanaudit clean` run, shared by clean.c
 * (which fills it) and clean_report.c (which prints it).
 */
#ifndef NA_CLEAN_REPORT_H
#define NA_CLEAN_REPORT_H

#include "clean.h"

#include <stdio.h>

#define CLI_CLEAN_MAX_WARN 6
#define CLI_CLEAN_RUN_WARN 8 /* run warnings kept for the report (cli_clean_run_t) */

/* A null in an --apply-params file for a statistic the run uses, of a
 * feature that is not passthrough (clean_params.h): field is the
 * statistic's index + 1 (0: none), feat the feature. */
typedef struct cli_params_null {
    int field;
    size_t feat;
} cli_params_null_t;

typedef struct cli_clean_entry {
    const char *name;      /* entry name (owned by the input) */
    na_dtype_t dtype;      /* as stored */
    int ndim;
    uint64_t shape[NA_MAX_NDIM];
    const char *status;    /* "cleaned", "copied", "error" */
    char reason[NA_ERR_LEN];
    int cleaned, emitted, samples;
    int fixed;             /* copied because clean cannot clean it (a dtype
                            * it cannot write, a part of a NumPy record or
                            * complex array, not numeric): --together
                            * cannot make it lose samples */
    int follower;          /* named by --together, and not
                            * selected or an HDF5 dimension scale (without
                            * --include): loses its partners' rows, no step
                            * runs on its values */
    int rowcopy;           /* not numeric, but the writer can copy a
                            * selection of its rows (na_writer_rowcopy):
                            * --together can name it */
    int regrefs;           /* an HDF5 dataset of region references (the copy
                            * writes NULL those into datasets that lose
                            * samples: finish warns) */
    int rowfollow;         /* a rowcopy entry named by --together: ct holds
                            * only its rows (na_clean_rows_prepare), it stays
                            * copied ("copied", not cleaned) without the
                            * samples its partners drop */
    cli_params_null_t pnull; /* --apply-params: a null the run would use,
                              * refused when samples are kept (after the
                              * fit: params_nulls) */
    uint64_t scale0[NA_SCALES0]; /* na_tensor_t.scale0 */
    int scale_other_axis;  /* na_tensor_t.scale_other_axis */
    na_clean_tensor_t ct;
    size_t n_warn;
    char warn[CLI_CLEAN_MAX_WARN][256];
} cli_clean_entry_t;

typedef struct cli_clean_run {
    const char *input, *output, *format;
    char sha[65];
    int written, dry_run, exit_code;
    char refused[NA_ERR_LEN];
    char error[NA_ERR_LEN];  /* the input could not be opened, or clean cannot
                              * write its format: the stderr line's text */
    char last_error[NA_ERR_LEN]; /* the last error line (keep_msg): "error" when none else */
    size_t n_warn;           /* run warnings (stderr's "warning:" lines), the first */
    char warn[CLI_CLEAN_RUN_WARN][NA_ERR_LEN]; /* CLI_CLEAN_RUN_WARN as "PATH: message" */
    const char *device;      /* what ran the write pass: "cpu", "cuda:N", "cuda:N+cpu" */
    const char *device_note; /* why some of it ran elsewhere, or NULL */
    size_t n;
    cli_clean_entry_t *e;
} cli_clean_run_t;

int cli_clean_report_json(const cli_clean_run_t *r, FILE *out); /* 0 or -1 */
/* 1 when entry e holds no value (a dimension of its shape is 0: (0, 3),
 * (5, 0)): nothing is read or written but its shape. */
int cli_clean_no_values(const cli_clean_entry_t *e);
int cli_clean_report_text(const cli_clean_run_t *r, int quiet, FILE *out);

#endif /* NA_CLEAN_REPORT_H */
