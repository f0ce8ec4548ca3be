/*
 * scan.c - `nanaudit scan`: expand the arguments (na_walk), open each
 * file by content (na_input_open), scan each tensor (na_scan_tensor),
 * turn results into findings under the --fail-on policy (na_findings),
 * check sharded checkpoints against their index, and write the reports.
 *
 * Every file is audited even when another fails (DESIGN.md: "the others
 * are still audited"); the exit code is the highest of all outcomes.
 * Each file is closed as soon as it is scanned, so memory is one file's
 * header plus the report entries, whatever the number of files.
 */
#include "cli.h"

#include <errno.h>    /* errno */
#include <float.h>    /* DBL_MAX */
#include <signal.h>   /* signal, SIGXFSZ */
#include <inttypes.h> /* PRIu64 */
#include <limits.h>   /* PATH_MAX */
#include <stdlib.h>   /* malloc, free, realpath */
#include <stdio.h>    /* fopen, fread, fclose */
#include <string.h>   /* strcmp, strncmp, strstr, strerror, strlen */
#include <sys/stat.h> /* stat */
#include <unistd.h>   /* isatty */

typedef struct scan_run {
    const cli_opts_t *o;
    na_report_t *rep;
    na_walk_t walk;
    size_t *index_entry;   /* report file slot of each index in walk */
    na_scan_opts_t so;
    cli_device_t dev;      /* --device: backend per tensor (device.c) */
    cli_progress_t prog;
    int exit_code;
    size_t audited;        /* data files opened successfully */
} scan_run_t;

/* Record a problem of status st with the file entry slot `slot`. */
static void file_error(scan_run_t *s, size_t slot, na_status_t st, const char *msg)
{
    na_file_report_t *f = &s->rep->files[slot];
    if (!f->ok && f->error && strstr(f->error, msg))
        return; /* said already */
    cli_error(f->path, "%s", msg);
    if (f->ok) {
        if (na_file_report_set_error(f, msg) != NA_OK)
            st = NA_E_NOMEM;
    } else if (f->error && strlen(f->error) < 4096) {
        /* another problem of the same entry (an index: one shard lacks a
         * tensor, another holds it): joined as cli_shard_check joins
         * them, so the report keeps every stderr line (round 43a: the
         * line saying where the tensor is was on stderr only) */
        size_t n = strlen(f->error) + strlen(msg) + 3;
        char *j = malloc(n);
        if (j != NULL)
            snprintf(j, n, "%s; %s", f->error, msg);
        if (j == NULL || na_file_report_set_error(f, j) != NA_OK)
            st = NA_E_NOMEM;
        free(j);
    }
    s->exit_code = cli_exit_merge(s->exit_code, cli_exit_for_status(st));
}

/* Format name for a file that did not open: its sniffed content
 * ("zip archive", "Git LFS pointer"), or null when nothing is known. */
static const char *sniffed(na_kind_of_file_t k)
{
    return k == NA_FILE_UNKNOWN ? NULL : na_kind_of_file_str(k);
}

/* A file entry for a path that could not be opened at all. */
static void unopened(scan_run_t *s, const char *path, const char *format,
                     na_status_t st, const char *msg)
{
    if (!na_report_add_file(s->rep, path, format)) {
        s->exit_code = cli_exit_merge(s->exit_code, 4);
        cli_error(path, "out of memory");
        return;
    }
    file_error(s, s->rep->n_files - 1, st, msg);
}

/* A dataset of variable-length sequences (na_tensor_t.vlen) is reported
 * with the 1-D shape of their concatenation; this note, in the text and
 * the JSON "notes", says so (JSON also has "variable_length"). */
static na_status_t vlen_note(na_file_report_t *f, const na_tensor_t *t)
{
    size_t cap = strlen(t->name) + 160;
    char *note = malloc(cap);
    if (!note)
        return NA_E_NOMEM;
    snprintf(note, cap, "%s: variable-length: %" PRIu64 " sequence%s, %" PRIu64
             " value%s, audited as their concatenation", t->name, t->sequences,
             t->sequences == 1 ? "" : "s", t->elements, t->elements == 1 ? "" : "s");
    na_status_t st = na_file_report_add_note(f, note);
    free(note);
    return st;
}

/* An F80 value beyond the double range is taken as +-DBL_MAX (lib/dtype.c,
 * decode_f80: a finite class keeps a finite value): min, max, mean and
 * std are then bounds, which this note, in the text and the JSON "notes",
 * says (round 29b: [1, 1e400, -1e500, 2] showed min -1.8e308, max 1.8e308,
 * mean 0.4, with nothing to say why). */
static na_status_t f80_note(na_file_report_t *f, const na_tensor_t *t, const na_stats_t *s)
{
    if (t->dtype != NA_DT_F80 || s->finite == 0 || (s->max < DBL_MAX && s->min > -DBL_MAX))
        return NA_OK;
    size_t cap = strlen(t->name) + 200;
    char *note = malloc(cap);
    if (!note)
        return NA_E_NOMEM;
    snprintf(note, cap, "%s: F80 values at or beyond the double range (|x| >= "
             "1.7976931348623157e308) are taken as +-1.7976931348623157e308: min, max, mean "
             "and std are bounds, not stored values", t->name);
    na_status_t st = na_file_report_add_note(f, note);
    free(note);
    return st;
}

/* Scan entry i of `in` into file slot `slot`. Returns 1 when the file
 * shrank while the entry was read (formats/mapfile.c: a size check or a
 * SIGBUS resumed with zero pages, cli/sigbus.c): the entry is then an
 * error and nothing it read is reported; its line is left to the caller
 * (scan_file), which names the tensors left unread. */
static int scan_one(scan_run_t *s, na_input_t *in, size_t slot, size_t i)
{
    na_tensor_t t;
    na_err_t err = {{0}};
    na_result_t res;
    na_finding_t fnd[NA_K_COUNT];
    memset(&t, 0, sizeof t);
    memset(&res, 0, sizeof res);
    uint64_t shrinks = na_map_shrinks();
    int shrank = 0;
    na_status_t st = na_input_tensor(in, i, &t, &err);
    na_file_report_t *f = &s->rep->files[slot];
    na_tensor_report_t *e = na_file_report_add_tensor(f, t.name ? t.name : "?", &t);
    if (!e) {
        st = NA_E_NOMEM;
        snprintf(err.msg, sizeof err.msg, "out of memory");
    } else if (st == NA_OK && t.src.read == NULL) {
        /* not numeric data (format.h): listed as skipped */
        st = na_tensor_report_set_status(e, NA_TS_SKIPPED, err.msg);
    } else if (st == NA_OK) {
        na_checks_t ck; /* the flags, then --policy rules for this name (gate.c) */
        na_extra_t ex;
        na_scan_opts_t so = s->so;
        cli_gate_checks(s->o, t.name, &ck);
        na_checks_extra(&ck, t.name, &ex);
        so.extra = &ex;
        st = cli_device_scan(&s->dev, &t, &so, &res, &err);
        if (st == NA_OK && ex.n > 0 && !res.extra_done) /* a backend without them (CUDA) */
            st = na_scan_extra(&t, &so, &res, &err);
        /* Before any finding: after a fault the statistics are of zeros */
        if (na_map_shrinks() != shrinks) {
            shrank = 1;
            if (st == NA_OK || !err.msg[0])
                snprintf(err.msg, sizeof err.msg, "%s", NA_MAP_SHRANK_MSG);
            st = NA_E_IO;
        }
        if (st == NA_OK) {
            size_t n = na_findings_checked(&t, &res, &ck, fnd, NA_K_COUNT);
            n = n > NA_K_COUNT ? NA_K_COUNT : n;
            na_baseline_apply(s->o->baseline, f->path, t.name, fnd, n); /* --baseline */
            for (size_t k = 0; k < n; k++)
                if (fnd[k].fails)
                    s->exit_code = cli_exit_merge(s->exit_code, 1);
            st = na_tensor_report_set_result(e, &res, fnd, n);
            if (st == NA_OK && t.vlen)
                st = vlen_note(f, &t);
            if (st == NA_OK)
                st = f80_note(f, &t, &e->res.st);
        }
        na_result_free(&res);
    }
    if (st != NA_OK) {
        if (!err.msg[0])
            snprintf(err.msg, sizeof err.msg, "%s", na_status_str(st));
        /* one line naming the file and the tensor: a reader's message
         * may name it already (a shrunk file: scan_file's line) */
        if (!shrank && t.name && !na_reason_names(err.msg, t.name))
            cli_error(f->path, "%s: %s", t.name, err.msg);
        else if (!shrank)
            cli_error(f->path, "%s", err.msg);
        if (e)
            na_tensor_report_set_status(e, NA_TS_ERROR, err.msg);
        s->exit_code = cli_exit_merge(s->exit_code, cli_exit_for_status(st));
    }
    return shrank;
}

/* The file in slot `slot` shrank while its entry i of n was read
 * (scan_one): one line, "FILE: TENSOR: the file shrank ...", which is
 * also the file's error in the reports; its later entries are not read
 * (their bytes are gone or are no longer the file that was opened), and
 * the line says how many. The other inputs are still audited. */
static void shrank_file(scan_run_t *s, size_t slot, size_t i, size_t n)
{
    na_file_report_t *f = &s->rep->files[slot];
    const na_tensor_report_t *e = f->n_tensors ? &f->tensors[f->n_tensors - 1] : NULL;
    const char *why = e && e->reason ? e->reason : NA_MAP_SHRANK_MSG;
    char msg[NA_ERR_LEN + 512];
    int k = e && !na_reason_names(why, e->name)
                ? snprintf(msg, sizeof msg, "%s: %s", e->name, why)
                : snprintf(msg, sizeof msg, "%s", why);
    size_t left = n - i - 1;
    if (left > 0 && k >= 0 && (size_t)k < sizeof msg)
        snprintf(msg + k, sizeof msg - (size_t)k, "; %zu later tensor%s not audited", left,
                 left == 1 ? "" : "s");
    file_error(s, slot, NA_E_IO, msg);
}

/* The report slot of index k, created at its first mention (its own
 * walk item, or a shard the walk reached before the index): format
 * "index", with the load error when it did not parse. SIZE_MAX on out of
 * memory. */
static size_t index_slot(scan_run_t *s, size_t k)
{
    if (s->index_entry[k] != SIZE_MAX)
        return s->index_entry[k];
    if (!na_report_add_file(s->rep, s->walk.index_paths[k], "index")) {
        s->exit_code = cli_exit_merge(s->exit_code, 4);
        return SIZE_MAX;
    }
    s->index_entry[k] = s->rep->n_files - 1;
    if (s->walk.index_errors && s->walk.index_errors[k])
        file_error(s, s->index_entry[k], NA_E_FORMAT, s->walk.index_errors[k]);
    return s->index_entry[k];
}

/* The opened shard against its index (cli_shard_check), and against
 * every other index that names the same file; a mismatch is an error of
 * that index's report entry. */
static void shard_check(scan_run_t *s, const na_walk_item_t *it, na_input_t *in)
{
    for (size_t j = 0; j <= it->n_more; j++) {
        size_t k, shard;
        na_walk_shard_ref(it, j, &k, &shard);
        na_err_t err = {{0}};
        na_status_t st = cli_shard_check(s->walk.indexes[k], shard, in, &err);
        size_t slot = st == NA_OK ? SIZE_MAX : index_slot(s, k);
        if (slot != SIZE_MAX)
            file_error(s, slot, st, err.msg[0] ? err.msg : na_status_str(st));
    }
}

/* A file that no index names, in the folder of an index whose shards it
 * could be: a loader that reads the index never opens it (a leftover
 * shard, Mistral's consolidated.safetensors beside its shards; round 43a:
 * audited without a word). Could be: any safetensors file beside a
 * NAME.safetensors.index.json; a PyTorch file named NAME... beside a
 * NAME.bin.index.json (not a Trainer's optimizer.pt). Its note into buf,
 * or 0. */
static int stray_note(const scan_run_t *s, const na_walk_item_t *it, char *buf, size_t cap)
{
    int st = it->kind == NA_FILE_SAFETENSORS;
    if (it->from_index || (!st && it->kind != NA_FILE_TORCH && it->kind != NA_FILE_PICKLE))
        return 0;
    const char *slash = strrchr(it->path, '/'), *base = slash ? slash + 1 : it->path;
    size_t dl = (size_t)(base - it->path);
    static const char sti[] = ".safetensors.index.json", bini[] = ".bin.index.json";
    for (size_t k = 0; k < s->walk.n_indexes; k++) {
        const char *ix = s->walk.index_paths[k], *is = strrchr(ix, '/');
        const char *ib = is ? is + 1 : ix;
        size_t il = (size_t)(ib - ix), bl = strlen(ib);
        if (s->walk.indexes[k] == NULL || il != dl || strncmp(ix, it->path, dl) != 0)
            continue;
        int ix_st = bl > sizeof sti - 1 && strcmp(ib + bl - (sizeof sti - 1), sti) == 0;
        int ix_bin = bl > sizeof bini - 1 && strcmp(ib + bl - (sizeof bini - 1), bini) == 0;
        if (st ? !ix_st : (!ix_bin || strncmp(base, ib, bl - (sizeof bini - 1)) != 0))
            continue;
        snprintf(buf, cap, "not a shard of %s in the same folder: a loader that reads the index "
                 "never opens this file", ib);
        return 1;
    }
    return 0;
}

static void scan_file(scan_run_t *s, const na_walk_item_t *it)
{
    na_input_t *in = NULL;
    na_err_t err = {{0}};
    na_status_t st = na_input_open(it->path, &s->o->open, &in, &err);
    if (st != NA_OK) {
        unopened(s, it->path, sniffed(it->kind), st,
                 err.msg[0] ? err.msg : na_status_str(st));
        return; /* the index reports the missing tensors at na_index_finish */
    }
    s->audited++;
    if (!na_report_add_file(s->rep, it->path, na_input_format(in))) {
        s->exit_code = cli_exit_merge(s->exit_code, 4);
        na_input_close(in);
        return;
    }
    size_t slot = s->rep->n_files - 1, n = na_input_count(in);
    char stray[NA_ERR_LEN + 128];
    if (stray_note(s, it, stray, sizeof stray) &&
        na_file_report_add_note(&s->rep->files[slot], stray) != NA_OK)
        s->exit_code = cli_exit_merge(s->exit_code, 4);
    const char *const *notes; /* HDF5: external and dangling links */
    size_t n_notes = na_hdf5_notes(in, &notes);
    for (size_t k = 0; k < n_notes; k++)
        if (na_file_report_add_note(&s->rep->files[slot], notes[k]) != NA_OK)
            s->exit_code = cli_exit_merge(s->exit_code, 4);
    for (size_t i = 0; i < n; i++)
        if (scan_one(s, in, slot, i)) {
            shrank_file(s, slot, i, n);
            break;
        }
    if (it->from_index)
        shard_check(s, it, in);
    na_input_close(in);
}

static int alloc_indexes(scan_run_t *s)
{
    s->index_entry = malloc((s->walk.n_indexes + 1) * sizeof *s->index_entry);
    if (!s->index_entry)
        return -1;
    for (size_t i = 0; i < s->walk.n_indexes; i++)
        s->index_entry[i] = SIZE_MAX;
    return 0;
}

static void finish_indexes(scan_run_t *s)
{
    for (size_t i = 0; i < s->walk.n_indexes; i++) {
        na_err_t err = {{0}};
        if (!s->walk.indexes[i] || s->index_entry[i] == SIZE_MAX)
            continue;
        na_file_report_t *f = &s->rep->files[s->index_entry[i]];
        na_status_t st = na_index_finish(s->walk.indexes[i], &err);
        char note[256];
        if (!f->ok) {
            /* a shard's problem is the entry's error already; a missing
             * shard is still named (round 29b: only the first was said),
             * joined to it by file_error */
            if (st != NA_OK && err.msg[0])
                file_error(s, s->index_entry[i], st, err.msg);
            continue;
        }
        if (st != NA_OK)
            file_error(s, s->index_entry[i], st, err.msg[0] ? err.msg : na_status_str(st));
        else if (na_index_total_note(s->walk.indexes[i], note, sizeof note) &&
                 na_file_report_add_note(&s->rep->files[s->index_entry[i]], note) != NA_OK)
            s->exit_code = cli_exit_merge(s->exit_code, 4);
    }
}

/* Sum of file sizes, for the progress line's total and ETA. */
static uint64_t total_bytes(const na_walk_t *w)
{
    uint64_t sum = 0;
    struct stat sb;
    for (size_t i = 0; i < w->n; i++)
        if (!w->items[i].skip_reason && !w->items[i].error && !stat(w->items[i].path, &sb))
            sum += (uint64_t)sb.st_size;
    return sum;
}

static void audit_all(scan_run_t *s)
{
    for (size_t i = 0; i < s->walk.n; i++) {
        const na_walk_item_t *it = &s->walk.items[i];
        /* an index named as another's shard (add_shard: an error item,
         * "shard is not a safetensors file (index)") is its own entry */
        if (it->kind == NA_FILE_INDEX && !it->skip_reason && !(it->from_index && it->error)) {
            index_slot(s, it->index_id); /* the index's own entry */
        } else if (it->skip_reason) { /* an index too: the same file reached twice (round 29a) */
            if (na_report_add_skipped(s->rep, it->path, it->skip_reason) != NA_OK)
                s->exit_code = cli_exit_merge(s->exit_code, 4);
        } else if (it->error) {
            unopened(s, it->path, sniffed(it->kind), NA_E_IO, it->error);
        } else {
            cli_sigbus_input(it->path); /* a truncation names it */
            scan_file(s, it);
            cli_sigbus_input(NULL);
        }
    }
    finish_indexes(s);
    /* An error entry per input (an empty or wrong directory), so that
     * every report says why the run failed: JUnit had tests="0"
     * errors="0" and SARIF no result (fifteenth fresh-user round). */
    if (s->audited == 0 && s->exit_code < 3)
        for (size_t i = 0; i < s->o->n_inputs; i++)
            unopened(s, s->o->inputs[i], NULL, NA_E_NOTFOUND,
                     "nothing to audit: no supported data file");
}

static int use_color(const cli_opts_t *o)
{
    const char *nc = getenv("NO_COLOR"); /* https://no-color.org */
    if (o->color != CLI_AUTO)
        return o->color == CLI_ON;
    return isatty(1) && !(nc && *nc);
}

/* --report FILEs: written first so a failure shows in every report. */
static void write_outputs(scan_run_t *s)
{
    na_report_t *r = s->rep;
    s->exit_code = cli_gate_write_reports(s->o, r, s->exit_code); /* gate.c */
    r->summary.exit_code = s->exit_code;
    na_text_opts_t to = {use_color(s->o), s->o->quiet};
    na_status_t st = s->o->github ? na_report_write_github(r, stdout)
                     : s->o->json ? na_report_write_json(r, stdout)
                                  : na_report_write_text(r, &to, stdout);
    int memory = st != NA_OK && !ferror(stdout); /* not the write: memory */
    if (memory)
        cli_error(NULL, "cannot write the report to standard output: %s", na_status_str(st));
    /* A failed write leaves stdout's error flag set, and main.c says
     * "write error on standard output" for it (one line, not two); a
     * buffered one shows only at the flush, and a closed stdout was put
     * on /dev/null (main.c). The run is then exit 4, and the --report
     * files, written first, say so too. */
    if (memory || cli_stdout_failed()) { /* a pipe whose reader went: not failed */
        int rc = cli_exit_merge(s->exit_code, 4);
        if (rc != s->exit_code && s->o->n_reports)
            rc = cli_gate_write_reports(s->o, r, rc);
        s->exit_code = rc;
    }
}

/* --mad K (the modified z-score, lib/scan_mad.c) replaces the z-score
 * test: both flags given is a usage error, as for clean. The CUDA
 * backend has no median, so --device cuda is refused (exit 2, before any
 * input) and auto stays on the CPU. Returns 0 or 2; *device: the mode to
 * open. */
/* 1 when the file at path is empty or begins as one of the reports
 * nanaudit writes, as its writers lay them out: JSON ({, "schema_version",
 * then "tool": {"name": "nanaudit"), or clean's ("command": "clean"), SARIF (the OASIS $schema, then the
 * driver "name": "nanaudit"), JUnit (<testsuites name="nanaudit") or
 * Markdown ("## nanaudit: VERDICT (exit N)"); a package.json or a NOTES.md
 * that merely names nanaudit is not one (nineteenth fresh-user round). */
static int own_report(const char *path)
{
    char b[1025];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(b, 1, sizeof b - 1, f);
    fclose(f);
    b[n] = '\0';
    static const char json[] = "{\n  \"schema_version\": ";
    static const char sarif[] = "{\n  \"$schema\": \"https://docs.oasis-open.org/sarif/";
    static const char junit[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                "<testsuites name=\"nanaudit\"";
    if (n == 0 || !strncmp(b, junit, sizeof junit - 1))
        return 1;
    if (!strncmp(b, json, sizeof json - 1)) /* scan's report, or clean's */
        return strstr(b, "\n  \"tool\": {\n    \"name\": \"nanaudit\",") != NULL ||
               strstr(b, "\n  \"command\": \"clean\",\n  \"version\": ") != NULL;
    if (!strncmp(b, sarif, sizeof sarif - 1))
        return strstr(b, "\"driver\": {\n          \"name\": \"nanaudit\",") != NULL;
    char verdict[16];
    int code = -1, end = 0;
    return sscanf(b, "## nanaudit: %15[A-Za-z] (exit %d)%n", verdict, &code, &end) == 2 &&
           end > 0 && b[end] == '\n';
}

/* 1 when path (a --report that exists) lies inside directory dir, at any
 * depth, hidden folders included: canonical paths compared. */
static int inside_dir(const char *path, const char *dir)
{
    char rp[PATH_MAX], rd[PATH_MAX];
    if (!realpath(path, rp) || !realpath(dir, rd))
        return 0;
    size_t n = strlen(rd);
    return !strncmp(rp, rd, n) && (rp[n] == '/' || (n == 1 && rd[0] == '/'));
}

/* A --report may not replace a file of the run, nor any data file: the arguments were
 * checked before the walk, but a shard an index names and every file
 * found in a directory are inputs too (the man page, --report), those
 * the walk skips or cannot read included (notes.txt, a raw file without
 * --dtype: they were overwritten, eighteenth fresh-user round), and the
 * hidden ones it does not list (d/.env, nineteenth). Only a report of an
 * earlier run kept in the scanned folder (ckpt/report.json) is written
 * again. 2 after a message, or 0. */
static int reports_vs_walk(const cli_opts_t *o, const na_walk_t *w)
{
    for (size_t k = 0; k < o->n_reports; k++) {
        struct stat sr;
        if (stat(o->reports[k], &sr) != 0 || !S_ISREG(sr.st_mode))
            continue; /* not there yet: no file of the walk */
        int own = own_report(o->reports[k]);
        for (size_t i = 0; i < w->n; i++) {
            const na_walk_item_t *it = &w->items[i];
            struct stat si;
            if (stat(it->path, &si) != 0 || si.st_dev != sr.st_dev || si.st_ino != sr.st_ino)
                continue;
            int audited = !it->skip_reason && !it->error;
            if (!audited && own)
                continue;
            cli_error(o->reports[k], "--report would overwrite %s (%s); the input is never "
                      "modified", audited ? "an input file" : "a file of the scanned directory "
                      "that is not a nanaudit report", it->path);
            return 2;
        }
        for (size_t i = 0; !own && i < o->n_inputs; i++) {
            struct stat sd;
            if (stat(o->inputs[i], &sd) == 0 && S_ISDIR(sd.st_mode) &&
                inside_dir(o->reports[k], o->inputs[i])) {
                cli_error(o->reports[k], "--report would overwrite a file of the scanned "
                          "directory that is not a nanaudit report (%s); the input is never "
                          "modified", o->reports[k]);
                return 2;
            }
        }
        if (cli_check_not_data(o->reports[k], "--report")) /* nor other data (paths.c) */
            return 2;
    }
    return 0;
}

static int settle_mad(const cli_opts_t *o, int *device)
{
    *device = o->device;
    if (o->clean.eng.method != NA_OM_MAD)
        return 0;
    if (o->zscore_given)
        return cli_usage(CLI_SCAN, "give one of --zscore and --mad");
    if (o->device == CLI_DEV_CUDA)
        return cli_usage(CLI_SCAN, "--mad runs on the CPU only (the CUDA backend has no "
                                   "median); use --device cpu or auto");
    *device = CLI_DEV_CPU;
    return 0;
}

int cli_scan(const cli_opts_t *o)
{
    scan_run_t s;
    na_err_t err = {{0}};
    memset(&s, 0, sizeof s);
    s.o = o;
    int device;
    if (settle_mad(o, &device) != 0)
        return 2;
    /* a file-size limit (RLIMIT_FSIZE) is then a report write error,
     * EFBIG: one line and exit 4, not a kill by SIGXFSZ, as in clean */
    signal(SIGXFSZ, SIG_IGN);
    for (size_t k = 0; k < o->n_reports; k++) { /* before any work (paths.c) */
        /* scan changes nothing: a report that cannot be written is exit
         * 4 at the end, after the others (tests/cli/gate_reports.sh) */
        int rc = cli_check_dash(CLI_SCAN, o->reports[k], "--report",
                                "--format json prints the JSON report on standard output");
        if (!rc)
            rc = cli_check_side_output(o->reports[k], "--report", o->inputs, o->n_inputs, NULL, 0);
        if (!rc && o->policy_path) /* the policy is an input too */
            rc = cli_check_side_output(o->reports[k], "--report", &o->policy_path, 1, NULL, 0);
        if (rc)
            return rc;
        /* ... but said at once, so that a typo in a report's directory
         * does not cost a scan of terabytes before the line (tester
         * round 22b) */
        char dir[PATH_MAX];
        int e = cli_cannot_write(o->reports[k], dir);
        if (e)
            cli_warn(o->reports[k], "--report: cannot %s: %s; the scan goes on, and the run "
                     "will end with exit 4", dir[0] ? "create the file in its directory" : "write it",
                     strerror(e));
    }
    if (cli_device_open(&s.dev, device, o->device_ordinal) != 0)
        return 4; /* --device cuda without a usable GPU: before any input */
    if (!(s.rep = na_report_new())) {
        cli_device_close(&s.dev);
        cli_error(NULL, "out of memory");
        return 4;
    }
    s.rep->zscore = o->zscore;
    s.rep->max_locations = o->max_locations;
    s.rep->fail_mask = cli_gate_fail_mask(o); /* --policy defaults, --fail-on */
    /* A kind whose check is not switched on is never found: failing on
     * it alone would pass every file (a policy can switch it on per
     * tensor, so only without one) */
    static const struct { int kind; uint32_t need; const char *flag; } idle[] = {
        {NA_K_RANGE, NA_CK_RANGE_LO | NA_CK_RANGE_HI, "--range"},
        {NA_K_MAX_ABS, NA_CK_MAX_ABS, "--max-abs"},
        {NA_K_CAST_OVERFLOW, NA_CK_CAST, "--cast-check"},
        {NA_K_CAST_UNDERFLOW, NA_CK_CAST, "--cast-check"},
    };
    for (size_t k = 0; !o->policy && k < sizeof idle / sizeof idle[0]; k++)
        if ((s.rep->fail_mask & NA_KIND_BIT(idle[k].kind)) && !(o->checks_given & idle[k].need))
            cli_warn(NULL, "--fail-on %s finds nothing without %s", na_kind_name(idle[k].kind),
                     idle[k].flag);
    if (cli_report_format_idle(o)) /* round 27b: it was silently ignored */
        cli_warn(NULL, "--report-format applies to --report files whose name does not end in "
                 ".json, .xml, .md or .sarif, and there is none; the report on standard output "
                 "follows --format");
    na_scan_opts_init(&s.so);
    s.so.threads = o->threads;
    s.so.zscore = o->zscore;
    if (o->clean.eng.method == NA_OM_MAD) { /* settle_mad: it replaces --zscore */
        s.rep->mad = s.so.mad = o->clean.eng.k;
        s.rep->zscore = 0;
    }
    s.so.max_locations = o->max_locations;
    s.so.progress = cli_progress_add;
    s.so.progress_ud = &s.prog;
    na_status_t st = na_walk(o->inputs, o->n_inputs, o->open.raw_dtype != NA_DT_INVALID,
                             &s.walk, &err);
    if (st == NA_OK && (s.exit_code = reports_vs_walk(o, &s.walk)) != 0) {
        na_walk_free(&s.walk);
        cli_device_close(&s.dev);
        na_report_free(s.rep);
        return s.exit_code;
    }
    if (st != NA_OK) {
        cli_error(NULL, "%s", err.msg[0] ? err.msg : na_status_str(st));
        s.exit_code = cli_exit_for_status(st);
    } else if (alloc_indexes(&s) < 0) {
        cli_error(NULL, "out of memory");
        s.exit_code = 4;
    } else {
        uint64_t total = total_bytes(&s.walk);
        cli_progress_init(&s.prog, o->progress, total);
        cli_device_plan(&s.dev, total, o->threads);
        audit_all(&s);
        cli_progress_end(&s.prog);
    }
    na_report_summarize(s.rep);
    cli_device_report(&s.dev, s.rep);
    write_outputs(&s);
    cli_device_close(&s.dev);
    na_walk_free(&s.walk);
    free(s.index_entry);
    na_report_free(s.rep);
    return s.exit_code;
}
