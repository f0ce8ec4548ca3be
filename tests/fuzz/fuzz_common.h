/*
 * fuzz_common.h - helpers shared by the fuzz targets in tests/fuzz/.
 *
 * Each target is one file, fuzz_<parser>.c, defining
 * LLVMFuzzerTestOneInput (libFuzzer's entry point,
 * https://llvm.org/docs/LibFuzzer.html). The same file links either with
 * libFuzzer (-DNANAUDIT_FUZZ=ON, clang) or with regression_driver.c,
 * which replays the corpora in the normal build so ctest checks every
 * stored input on every run (after zstd's tests/fuzz/regression_driver.c).
 *
 * Besides "no crash, no sanitizer report, no hang", the targets check
 * properties that hold for every input, and abort() when one fails:
 *  - an error message is one line with no control bytes (DESIGN.md:
 *    "messages name the file, the tensor and the problem in one line");
 *  - the JSON report of whatever was read parses back with jansson;
 *  - the text report holds no control byte but '\n' and no C1 code
 *    point, so a hostile name cannot drive a terminal or forge lines.
 * Everything here is static inline: each target includes this header once.
 */
#ifndef NA_FUZZ_COMMON_H
#define NA_FUZZ_COMMON_H

#include "format.h"

#include <jansson.h>  /* json_loadb: the JSON report must parse back */
#include <stdio.h>    /* open_memstream */
#include <stdlib.h>   /* abort, free */
#include <string.h>   /* memset, strlen */
#include <sys/mman.h> /* memfd_create */
#include <unistd.h>   /* write, close */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An anonymous in-memory file holding data (memfd_create(2)): mmap and
 * pread work on it as on a disk file, with no file system writes.
 * Returns the descriptor, or -1 (the input is then skipped). */
/* Write all of data to fd; 0, or -1 after closing fd. */
static inline int fz_write_all(int fd, const uint8_t *data, size_t size)
{
    for (size_t done = 0; done < size;) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    return 0;
}

static inline int fz_memfd(const uint8_t *data, size_t size)
{
    int fd = memfd_create("nanaudit-fuzz", MFD_CLOEXEC);
    if (fd < 0 || fz_write_all(fd, data, size) != 0)
        return -1;
    return fd;
}

/* The message contract: non-empty when an error is returned, one line,
 * no C0 control byte, no DEL. */
static inline void fz_check_msg(na_status_t st, const na_err_t *err)
{
    if (st == NA_OK)
        return;
    size_t n = strnlen(err->msg, sizeof err->msg);
    if (n == 0 || n == sizeof err->msg)
        abort();
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)err->msg[i];
        if (c < 0x20 || c == 0x7f)
            abort();
    }
}

/* No control byte but '\n', valid UTF-8, no C1 code point (C2 80..9F). */
static inline void fz_check_text(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\n') || c == 0x7f)
            abort();
        size_t l = na_utf8_seq_len(s + i, n - i);
        if (l == 0)
            abort();
        if (l == 2 && c == 0xc2 && (unsigned char)s[i + 1] < 0xa0)
            abort();
        i += l;
    }
}

/* Write the report both ways and check both outputs. */
static inline void fz_check_report(na_report_t *rep)
{
    char *buf = NULL;
    size_t len = 0;
    na_report_summarize(rep);
    FILE *m = open_memstream(&buf, &len);
    if (m == NULL)
        return;
    na_status_t st = na_report_write_json(rep, m);
    fclose(m);
    if (st == NA_OK) {
        json_error_t je;
        json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
        if (j == NULL) {
            fprintf(stderr, "JSON report does not parse: %s\n", je.text);
            abort();
        }
        json_decref(j);
    }
    free(buf);
    buf = NULL;
    m = open_memstream(&buf, &len);
    if (m == NULL)
        return;
    na_text_opts_t to = {0, 0};
    st = na_report_write_text(rep, &to, m);
    fclose(m);
    if (st == NA_OK)
        fz_check_text(buf, len);
    free(buf);
}

/* Read every tensor of an opened input through the engine, as the CLI
 * does (cli/scan.c), with windows of window_bytes so that a small input
 * still crosses many window and block boundaries; two passes when z > 0.
 * Adds everything to a report and checks the report. */
static inline void fz_scan_input(na_input_t *in, const char *path, size_t window_bytes, double z)
{
    na_report_t *rep = na_report_new();
    if (rep == NULL)
        return;
    na_file_report_t *f = na_report_add_file(rep, path, na_input_format(in));
    na_scan_opts_t so;
    na_scan_opts_init(&so);
    so.threads = 1;
    so.zscore = z;
    so.max_locations = 3;
    so.window_bytes = window_bytes;
    size_t meta = na_input_metadata_count(in);
    for (size_t i = 0; f != NULL && i < meta; i++) {
        const char *k, *v;
        na_input_metadata(in, i, &k, &v);
        if (k == NULL || v == NULL)
            abort();
        na_file_report_add_note(f, v);
    }
    size_t n = na_input_count(in);
    for (size_t i = 0; f != NULL && i < n; i++) {
        na_tensor_t t;
        na_err_t err = {{0}};
        memset(&t, 0, sizeof t);
        (void)na_input_tensor_bytes(in, i);
        na_status_t st = na_input_tensor(in, i, &t, &err);
        fz_check_msg(st, &err);
        na_tensor_report_t *e = na_file_report_add_tensor(f, t.name ? t.name : "?", &t);
        if (st != NA_OK) {
            if (e != NULL)
                na_tensor_report_set_status(e, NA_TS_ERROR, err.msg);
            continue;
        }
        if (t.src.read == NULL) { /* not numeric data: skipped (format.h) */
            if (e != NULL)
                na_tensor_report_set_status(e, NA_TS_SKIPPED, err.msg);
            continue;
        }
        na_result_t res;
        memset(&res, 0, sizeof res);
        st = na_scan_tensor(&t, &so, &res, &err);
        fz_check_msg(st, &err);
        if (st == NA_OK) {
            if (res.st.elements != t.elements)
                abort();
            na_finding_t fnd[NA_K_COUNT];
            size_t nf = na_findings(&t, &res, NA_DEFAULT_FAIL_MASK, fnd, NA_K_COUNT);
            if (e != NULL)
                na_tensor_report_set_result(e, &res, fnd, nf < NA_K_COUNT ? nf : NA_K_COUNT);
        } else if (e != NULL) {
            na_tensor_report_set_status(e, NA_TS_ERROR, err.msg);
        }
        na_result_free(&res);
    }
    fz_check_report(rep);
    na_report_free(rep);
}

#endif /* NA_FUZZ_COMMON_H */
