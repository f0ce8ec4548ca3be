/*
 * clean_cli.h - the options of `nanaudit clean` (cli/clean_opts.c parses
 * them for the table in options.c; cli/clean.c runs the subcommand,
 * cli/clean_params.c reads and writes --save-params/--apply-params and
 * cli/clean_report.c writes the change report).
 */
#ifndef NA_CLEAN_CLI_H
#define NA_CLEAN_CLI_H

#include "clean.h"

#include <stddef.h>

struct cli_opts;

typedef struct cli_clean_opts {
    na_clean_opts_t eng;        /* the engine's options (lib/clean.h) */
    const char *output;         /* -o FILE */
    int samples;                /* CLI_AUTO (per format), CLI_OFF, CLI_ON */
    int nonfinite_given, action_given, method_given, range_given;
    int force, dry_run, allow_misaligned, no_fsync;
    double max_drop;            /* --max-drop-fraction, default 0.1 */
    const char *save_params, *apply_params;
    const char **include, **exclude; /* argv pointers */
    size_t n_include, n_exclude;
    const char **together;      /* --together values (argv pointers), one group each */
    size_t n_together;
} cli_clean_opts_t;

void cli_clean_opts_init(cli_clean_opts_t *c);
void cli_clean_opts_free(cli_clean_opts_t *c);

/* Setters for options.c's table: 0, or 2 after a usage message. */
int cli_set_output(struct cli_opts *o, const char *a, const char *n);
int cli_set_samples(struct cli_opts *o, const char *a, const char *n);
int cli_set_no_samples(struct cli_opts *o, const char *a, const char *n);
int cli_set_global(struct cli_opts *o, const char *a, const char *n);
int cli_set_nonfinite(struct cli_opts *o, const char *a, const char *n);
int cli_set_mad(struct cli_opts *o, const char *a, const char *n);
int cli_set_outliers(struct cli_opts *o, const char *a, const char *n);
int cli_set_normalize(struct cli_opts *o, const char *a, const char *n);
int cli_set_feature_range(struct cli_opts *o, const char *a, const char *n);
int cli_set_max_drop(struct cli_opts *o, const char *a, const char *n);
int cli_set_dry_run(struct cli_opts *o, const char *a, const char *n);
int cli_set_save_params(struct cli_opts *o, const char *a, const char *n);
int cli_set_apply_params(struct cli_opts *o, const char *a, const char *n);
int cli_set_out_dtype(struct cli_opts *o, const char *a, const char *n);
int cli_set_force(struct cli_opts *o, const char *a, const char *n);
int cli_set_include(struct cli_opts *o, const char *a, const char *n);
int cli_set_exclude(struct cli_opts *o, const char *a, const char *n);
int cli_set_allow_misaligned(struct cli_opts *o, const char *a, const char *n);
int cli_set_together(struct cli_opts *o, const char *a, const char *n);
int cli_set_no_fsync(struct cli_opts *o, const char *a, const char *n);

/* The text of `nanaudit clean --help` before the option list. */
extern const char cli_clean_help_head[];

#endif /* NA_CLEAN_CLI_H */
