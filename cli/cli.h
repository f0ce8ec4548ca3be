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

#include "clean_cli.h"
#include "format.h"
#include "nanaudit.h"

#include <signal.h> /* sig_atomic_t */
#include <stdio.h>  /* FILE */
#include <stddef.h>
#include <stdint.h>

/* Subcommands, as bits so an option can belong to several. */
enum { CLI_SCAN = 1, CLI_INFO = 2, CLI_GLOBAL = 4, CLI_CLEAN = 8 };

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
    int device;             /* --device: CLI_DEV_AUTO (default), _CPU, _CUDA */
    int device_ordinal;     /* --device cuda:N */
    na_checks_t checks;     /* --range, --max-abs, --cast-check, --max-*-fraction
                             * (its fail_mask is replaced by fail_mask above) */
    uint32_t checks_given;  /* NA_CK_* of the flags given (they beat --policy defaults) */
    na_policy_t *policy;    /* --policy FILE, loaded while parsing (gate.c) */
    const char *policy_path; /* its path: --report may not overwrite it */
    int github;             /* --format github */
    const char **reports;   /* every --report FILE, in order (owned array) */
    size_t n_reports;
    int report_format;      /* --report-format: CLI_RF_* for other extensions */
    int report_format_given;
    na_baseline_t *baseline; /* --baseline FILE, loaded while parsing (gate.c) */
    const char **inputs;    /* FILE|DIR|INDEX arguments (argv pointers) */
    size_t n_inputs;
    int zscore_given;       /* --zscore seen (clean runs its step 2 then) */
    int argc;               /* the command line, for clean's provenance entry */
    char **argv;
    cli_clean_opts_t clean; /* `clean` options (clean_cli.h) */
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
/* Every cli_error and cli_warn line from here on also goes to fn(ud,
 * warning, path, message) (warning 1 for cli_warn; path NULL when the
 * line names none; unescaped), until a call with fn NULL: clean keeps
 * them for its report ("warnings", and "error" when no other says why).
 * One thread. */
typedef void (*cli_msg_sink_fn)(void *ud, int warning, const char *path, const char *msg);
void cli_msg_sink(cli_msg_sink_fn fn, void *ud);
/* "nanaudit: MESSAGE (try 'nanaudit CMD --help')"; returns 2. */
int cli_usage(int cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* 1 when standard output was closed at start (`>&-`; main.c put /dev/null
 * there): clean refuses to run (and clears it, having said so); main.c
 * ends every other command with "write error on standard output", exit 4. */
extern int cli_stdout_closed;
/* 1 when standard output failed: closed at start, or a write or the
 * flush failed (a full disk), except that a pipe whose reader has gone
 * (`| head`) is not a failure: stdout is then /dev/null. main.c. */
int cli_stdout_failed(void);

/* threads.c: before a scan or clean, start o's OpenMP threads (--threads,
 * else every core) as the pool libgomp keeps, after trying them with
 * POSIX threads: when fewer can run (RLIMIT_AS, RLIMIT_NPROC, pids.max),
 * one warning and o->threads = o->open.threads = that many, instead of
 * libgomp's exit(1) in the middle of the run. Its omp_set_num_threads
 * holds for every region of the run (clean's passes, the verification). */
void cli_threads_start(cli_opts_t *o);

/* exitcode.c */
int cli_exit_for_status(na_status_t s);  /* 0, 2, 3 or 4 */
int cli_exit_merge(int a, int b);        /* precedence 4 > 3 > 1 > 0 */
/* sigbus.c: a SIGBUS in a mapped input window (the file truncated while
 * read) is resumed with zero pages and marked for the reader
 * (na_map_sigbus, na_map_shrinks); any other SIGBUS becomes one
 * "nanaudit: bus error reading an input: ..." line and exit 3. */
void cli_sigbus_install(void);
/* clean: the temporary output file (path, and a flag that is nonzero
 * while it exists) the SIGBUS handler unlinks before it exits, so a bus
 * error mid-clean leaves no file behind. Both must outlive the run. */
void cli_sigbus_unlink(const char *path, volatile sig_atomic_t *live);

/* The signals whose default action ends the run and that an owner of a
 * temporary file catches to remove it (signal(7): INT, TERM, HUP, QUIT,
 * USR1, USR2, ALRM, VTALRM, XCPU - a CPU-time limit -, SYS - a seccomp
 * filter -, TRAP, and Linux's IO, PWR, STKFLT: round 34b); not the
 * real-time signals (nothing sends them to a tool uninvited), not SIGPROF, which a profiler handles, nor the faults
 * (SEGV, BUS: cli/sigbus.c's), and SIGKILL cannot be caught (a temporary
 * file, never an output, may stay). One list for clean's output and
 * cli_write_file's reports (paths.c). */
#define CLI_END_SIGNALS 14
extern const int cli_end_signals[CLI_END_SIGNALS];
/* The input now being read (NULL: none), named by the SIGBUS line:
 * "nanaudit: PATH: bus error: the file shrank ...". Call it before the
 * input is read, and with NULL after (not from a signal handler). */
void cli_sigbus_input(const char *path);

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

/* paths.c: 1 when paths a and b name the same file (same st_dev/st_ino
 * when both exist, else the same canonical path). */
int cli_same_path(const char *a, const char *b);
/* The file a write to path reaches: path with its last component's
 * symbolic links followed, also to a target that does not exist yet
 * (a relative target is taken from the link's folder). The folders on
 * the way are not resolved. 0, or -1 with errno (ELOOP after 40 links;
 * ENAMETOOLONG). out has PATH_MAX bytes. */
int cli_link_target(const char *path, char *out);
/* A file written besides -o (flag "--report", "--save-params"): 2 after a
 * message when it names one of inputs[n_inputs] (regular files) or the
 * -o output (NULL: none) or a directory; with `creatable`, 4 when it
 * cannot be written or created (access(2), before any work: clean, whose
 * output would otherwise be written first); 0 otherwise. */
int cli_check_side_output(const char *path, const char *flag, const char *const *inputs,
                          size_t n_inputs, const char *output, int creatable);
/* After the checks against the run's inputs (their messages are the more
 * precise): 2 after a message when path (flag "--report",
 * "--save-params") is an existing, non-empty regular file that holds
 * data nanaudit reads (na_sniff) or is named like data
 * (na_name_claims_data), which a report or parameter file never
 * replaces; 0 otherwise. */
int cli_check_not_data(const char *path, const char *flag);
/* Whether path can be written, by access(2): 0, or the errno when the
 * existing file is not writable or the directory that would hold it
 * (dir, PATH_MAX bytes; a dangling link's target's) is missing or not
 * writable. */
int cli_cannot_write(const char *path, char *dir);
/* A file nanaudit writes (flag "-o", "--report", "--save-params") named
 * "-", or one that is this run's standard output or error while that is a
 * regular file (/dev/stdout >> ci.log): 2 after a usage error of command
 * cmd (CLI_SCAN, CLI_CLEAN; hint: NULL or where the same output goes to
 * standard output), since '-' is never standard output here and the log
 * would be cut or replaced; 0 for any other path (./- included, and
 * /dev/stdout on a pipe or terminal). */
int cli_check_dash(int cmd, const char *path, const char *flag, const char *hint);
/* clean writes the input's format (format: na_input_format's name) under
 * any name: one warning line when OUT's extension names another format
 * (.safetensors, .npy, .npz, .h5/.hdf5/.nc), one when it is .gz (clean
 * writes no compression), none otherwise. */
void cli_warn_out_format(const char *out, const char *format);

/* names.c: 1 when glob pat (fnmatch(3), no flags) matches tensor i of
 * in, whose name is `name`, or another name of the same object (the
 * other hard-link paths of an HDF5 dataset, na_hdf5_aliases). */
int cli_name_match(const na_input_t *in, size_t i, const char *name, const char *pat);
/* shards.c: na_index_check_shard for shard shard_no of index ix, opened
 * as in (its names as the index lists them, its tensor data bytes), for
 * scan and info. NA_OK, NA_E_FORMAT with err's one line, NA_E_NOMEM. */
na_status_t cli_shard_check(na_index_t *ix, size_t shard_no, na_input_t *in, na_err_t *err);

/* device.c: --device auto|cpu|cuda[:N] and the backend of each tensor. */
enum { CLI_DEV_AUTO = 0, CLI_DEV_CPU, CLI_DEV_CUDA };
typedef struct cli_device {
    int mode, ordinal;
    na_backend_t cpu, gpu;
    int gpu_state;            /* 0 not tried, 1 open, -1 unusable */
    int run_too_small;        /* auto: the CPU is faster for this run */
    uint64_t on_gpu, on_cpu;  /* tensors scanned on each */
    uint64_t on_cpu_kept;     /* of on_cpu: missing values, no stored data */
    char name[40];            /* the report's "device" */
    char note[NA_ERR_LEN + 64]; /* the report's "device_note" */
    const char *verb;         /* the notes' "scanned" (default) or "cleaned" */
} cli_device_t;
/* "auto", "cpu", "cuda", "cuda:N" (N < 10000); -1 otherwise. */
int cli_device_parse(const char *arg, int *mode, int *ordinal);
/* 0, or 4 after printing why --device cuda cannot be used. */
int cli_device_open(cli_device_t *d, int mode, int ordinal);
/* auto: decide from the run's total input size (bytes of the files to
 * scan) and the thread count (0: OpenMP's default) whether CUDA may be
 * tried at all; call before the first cli_device_scan. */
void cli_device_plan(cli_device_t *d, uint64_t total_bytes, int threads);
na_status_t cli_device_scan(cli_device_t *d, const na_tensor_t *t, const na_scan_opts_t *so,
                            na_result_t *r, na_err_t *err);
/* clean's write pass of t (na_clean_emit's contract) on the GPU when
 * the same rule as cli_device_scan's picks it (gpu/cuda_clean.c), else on
 * the CPU; a tensor the GPU refuses before any byte reaches sink (and,
 * under auto, a CUDA failure at that point) is cleaned on the CPU, with
 * a note. */
na_status_t cli_device_clean(cli_device_t *d, const na_tensor_t *t, const na_clean_opts_t *o,
                             na_clean_tensor_t *ct, na_clean_sink_fn sink, void *ud,
                             na_err_t *err);
/* Fill d->name ("cpu", "cuda:0", "cuda:0+cpu") and d->note ("" or why
 * some work ran elsewhere than asked) from what ran. */
void cli_device_names(cli_device_t *d);
/* cli_device_names, then rep->device = d->name and rep->device_note. */
void cli_device_report(cli_device_t *d, na_report_t *rep);
void cli_device_close(cli_device_t *d);

/* gate.c: setters of the CI-gate flags (option table in options.c);
 * 0, or 2 after a usage message. */
int cli_set_range(cli_opts_t *o, const char *a, const char *n);
int cli_set_max_abs(cli_opts_t *o, const char *a, const char *n);
int cli_set_cast_check(cli_opts_t *o, const char *a, const char *n);
int cli_set_max_fraction(cli_opts_t *o, const char *a, const char *n);
int cli_set_policy(cli_opts_t *o, const char *a, const char *n);
int cli_set_report_format(cli_opts_t *o, const char *a, const char *n);
int cli_set_baseline(cli_opts_t *o, const char *a, const char *n);
/* Append a --report FILE (0, or 4 on out of memory). */
int cli_add_report(cli_opts_t *o, const char *path);
/* Write every --report file of o (format by extension, then
 * --report-format) with r->summary.exit_code = exit_code; returns
 * exit_code merged with 4 for each that could not be written. */
int cli_gate_write_reports(const cli_opts_t *o, na_report_t *r, int exit_code);
enum { CLI_RF_JSON = 0, CLI_RF_JUNIT, CLI_RF_MARKDOWN, CLI_RF_SARIF };
/* CLI_RF_* of a --report path: by extension (.json, .xml, .md/.markdown,
 * .sarif; ASCII case ignored), else --report-format (default JSON). */
int cli_report_kind(const cli_opts_t *o, const char *path);
/* 1 when --report-format was given but no --report path takes it (none
 * given, or every one has a known extension): scan warns. */
int cli_report_format_idle(const cli_opts_t *o);
/* Write a file nanaudit makes besides -o (scan's and clean's --report,
 * --save-params) with write(ctx, fp) (0 or -1), through a symbolic link
 * to its target: a regular file (or none yet) is written to a temporary
 * file beside it (.nanaudit-tmp-XXXXXX, the old file's permission bits),
 * fsynced and renamed over it, so that a full disk, a SIGINT/SIGTERM/
 * SIGHUP (which remove the temporary file) or a crash leaves the old
 * file, never a truncated one; anything else (a pipe, /dev/null) is
 * written as it is. With stale set (reports), a failed write also
 * removes the old file: an earlier run's report is not left for a CI step
 * to upload as this run's. 0, or the errno of the failure (-1 when the
 * writer failed without one: out of memory). */
int cli_write_file(const char *path, int (*write)(void *ctx, FILE *fp), void *ctx, int stale);
/* The checks for tensor `name`: --policy defaults, the flags (with
 * --fail-on's mask), then the policy's matching rules. */
void cli_gate_checks(const cli_opts_t *o, const char *name, na_checks_t *c);
/* The run-wide fail mask: --policy defaults, then --fail-on (no rule). */
uint32_t cli_gate_fail_mask(const cli_opts_t *o);
/* Free what the gate setters loaded (policy, baseline, report list). */
void cli_gate_free(cli_opts_t *o);

/* Subcommands: return the exit code. */
int cli_scan(const cli_opts_t *o);
int cli_info(const cli_opts_t *o);
int cli_clean(const cli_opts_t *o); /* clean.c */

#endif /* NA_CLI_H */
