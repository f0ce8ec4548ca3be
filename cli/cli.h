/*
 * cli.h - internal interface between the files of cli/ (not installed).
 *
 * One concern per file, after curl's src/ (STYLE.md): options.c holds the
 * single option table that parses arguments and prints --help; msg.c is
 * the only place that writes "nanaudit: ..." lines to stderr; exitcode.c
 * maps statuses to exit codes; progress.c draws the progress line;
 * scan.c and info.c run the two subcommands. Functions carry a cli_
 * prefix; no statistics are computed here.
 */
#ifndef NA_CLI_H
#define NA_CLI_H

#include "format.h"
#include "nanaudit.h"

#include <stddef.h>
#include <stdint.h>

/* Subcommands, as bits so an option can belong to several. */
enum { CLI_SCAN = 1, CLI_INFO = 2, CLI_GLOBAL = 4 };

/* Tri-state settings: auto (decide from the terminal), off, on. */
enum { CLI_AUTO = -1, CLI_OFF = 0, CLI_ON = 1 };

typedef struct cli_opts {
    int cmd;                /* CLI_SCAN or CLI_INFO; 0 before parsing */
    int help, version;      /* --help / --version given */
    double zscore;          /* --zscore K, 0 disables */
    size_t max_locations;   /* --max-locations N */
    int threads;            /* --threads N, 0 = all cores */
    uint32_t fail_mask;     /* --fail-on LIST */
    int json;               /* --format json */
    const char *report;     /* --report FILE.json or NULL */
    int quiet;              /* --quiet */
    int progress;           /* --progress / --no-progress / CLI_AUTO */
    int color;              /* --color always|never|auto */
    int raw_only_given;     /* --shape/--endian/--offset seen (need --dtype) */
    const char *raw_only_name;
    na_open_opts_t open;    /* --max-header-bytes and the raw options */
    const char **inputs;    /* FILE|DIR|INDEX arguments (argv pointers) */
    size_t n_inputs;
} cli_opts_t;

/* options.c: parse argv[first..] for subcommand o->cmd into o. Returns 0,
 * or 2 after printing a usage error (via cli_usage). Never opens input. */
int cli_parse(int argc, char **argv, int first, cli_opts_t *o);
void cli_opts_init(cli_opts_t *o);
/* Print --help for cmd (CLI_SCAN, CLI_INFO or CLI_GLOBAL) to stdout. */
void cli_print_help(int cmd);
const char *cli_cmd_name(int cmd); /* "scan", "info", "" */

/* msg.c: the only writer of nanaudit's own stderr lines. Paths and
 * messages are escaped (na_escape_text) so a file name cannot inject
 * terminal escapes. */
void cli_error(const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void cli_warn(const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* "nanaudit: MESSAGE (try 'nanaudit CMD --help')"; returns 2. */
int cli_usage(int cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* exitcode.c */
int cli_exit_for_status(na_status_t s);  /* 0, 2, 3 or 4 */
int cli_exit_merge(int a, int b);        /* precedence 4 > 3 > 1 > 0 */

/* progress.c: a progress line on stderr (bytes, GB/s, ETA). */
typedef struct cli_progress {
    int mode;          /* CLI_AUTO: only on a tty after ~1 s; CLI_ON; CLI_OFF */
    int tty;           /* stderr is a terminal */
    int drawn;         /* something is on the line */
    uint64_t total, done, drawn_done;
    double t0, last;   /* seconds (CLOCK_MONOTONIC) */
} cli_progress_t;
void cli_progress_init(cli_progress_t *p, int mode, uint64_t total_bytes);
void cli_progress_add(void *ud, uint64_t bytes); /* na_scan_opts_t.progress */
void cli_progress_end(cli_progress_t *p);

/* Subcommands: return the exit code. */
int cli_scan(const cli_opts_t *o);
int cli_info(const cli_opts_t *o);

#endif /* NA_CLI_H */
