/*
 * test_report.c - the report model and its writers (lib/report*.c).
 *
 * Reports are built by hand (no scanning), written to memory streams and
 * checked: the JSON is parsed back with jansson (duplicate keys refused)
 * and every contract key of issue 2 section 6 is asserted, including
 * null statistics for a tensor with no finite value, locations as index
 * arrays, and hostile names that must not reach the output raw.
 */
#include <setjmp.h> /* cmocka needs these first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nanaudit.h"

/* A 2x2 F32 tensor view with the given name. */
static na_tensor_t view(const char *name)
{
    na_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.dtype = t.stored = NA_DT_F32;
    t.ndim = 2;
    t.shape[0] = t.shape[1] = 2;
    t.elements = 4;
    t.elem_stride = 4;
    return t;
}

static uint64_t *locs2(uint64_t a, uint64_t b)
{
    uint64_t *p = malloc(2 * sizeof *p);
    assert_non_null(p);
    p[0] = a;
    p[1] = b;
    return p;
}

/* Report: file a.safetensors with "clean" (finite stats, one outlier)
 * and "allnan" (4 NaN, no finite value), plus an error file. */
static na_report_t *sample(const char *hostile)
{
    na_report_t *r = na_report_new();
    assert_non_null(r);
    na_file_report_t *f = na_report_add_file(r, "a.safetensors", "safetensors");
    assert_non_null(f);
    na_tensor_t t = view(hostile ? hostile : "clean");
    na_tensor_report_t *e = na_file_report_add_tensor(f, t.name, &t);
    assert_non_null(e);
    na_result_t res;
    memset(&res, 0, sizeof res);
    res.st.elements = res.st.finite = 4;
    res.st.min = -1.5, res.st.max = 0.1, res.st.abs_max = 1.5, res.st.mean = -0.25;
    res.std = 0.5;
    res.outliers_checked = 1, res.threshold = 6.0, res.outliers = 1;
    res.n_out_locs = 1;
    res.out_locs = locs2(3, 0);
    assert_int_equal(na_tensor_report_set_result(e, &res, NULL, 0), NA_OK);
    assert_null(res.out_locs); /* moved */

    t = view("allnan");
    e = na_file_report_add_tensor(f, t.name, &t);
    memset(&res, 0, sizeof res);
    res.st.elements = res.st.nan = 4;
    res.std = NAN, res.st.mean = NAN;
    res.outliers_checked = 1, res.threshold = 6.0;
    res.n_nan_locs = 2;
    res.nan_locs = locs2(1, 2);
    na_finding_t fd = {NA_K_NAN, 4, 1, "4 NaN values (first at [0, 1])", 0, 0};
    assert_int_equal(na_tensor_report_set_result(e, &res, &fd, 1), NA_OK);

    f = na_report_add_file(r, "bad.safetensors", "safetensors");
    assert_int_equal(na_file_report_set_error(f, "header too large"), NA_OK);
    assert_int_equal(na_report_add_skipped(r, "config.json", "not data"), NA_OK);
    na_report_summarize(r);
    r->summary.exit_code = 3;
    return r;
}

/* Write with fn into memory; returns a malloc'd NUL-terminated buffer. */
static char *render(const na_report_t *r, int json, const na_text_opts_t *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    na_status_t st = json ? na_report_write_json(r, fp) : na_report_write_text(r, o, fp);
    assert_int_equal(st, NA_OK);
    fclose(fp);
    return buf;
}

/* json_equal against a packed literal, releasing the literal. */
static int same(json_t *got, json_t *want)
{
    int eq = json_equal(got, want);
    json_decref(want);
    return eq;
}

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        fail_msg("invalid JSON: %s (line %d)", je.text, je.line);
    return j;
}

static void test_summary_counts(void **state)
{
    na_report_t *r = sample(NULL);
    assert_int_equal(r->summary.files, 2);
    assert_int_equal(r->summary.tensors, 2);
    assert_int_equal(r->summary.elements, 8);
    assert_int_equal(r->summary.nan, 4);
    assert_int_equal(r->summary.outliers, 1);
    assert_int_equal(r->summary.errors, 1);
    assert_int_equal(r->summary.failed, 1);
    na_report_free(r);
}

static void test_json_contract(void **state)
{
    na_report_t *r = sample(NULL);
    char *text = render(r, 1, NULL);
    json_t *j = parse(text);
    assert_int_equal(json_integer_value(json_object_get(j, "schema_version")), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "tool"), "name")),
                        "nanaudit");
    assert_string_equal(json_string_value(json_object_get(j, "device")), "cpu");
    json_t *f0 = json_array_get(json_object_get(j, "files"), 0);
    assert_string_equal(json_string_value(json_object_get(f0, "status")), "ok");
    assert_true(json_is_null(json_object_get(f0, "error")));
    json_t *t0 = json_array_get(json_object_get(f0, "tensors"), 0);
    assert_true(same(json_object_get(t0, "shape"), json_pack("[ii]", 2, 2)));
    assert_true(json_real_value(json_object_get(t0, "min")) == -1.5);
    assert_true(json_real_value(json_object_get(t0, "std")) == 0.5);
    json_t *out = json_object_get(t0, "outliers");
    assert_string_equal(json_string_value(json_object_get(out, "method")), "zscore");
    assert_int_equal(json_integer_value(json_object_get(out, "count")), 1);
    /* flat 3 in [2,2] is [1,1] */
    assert_true(same(json_object_get(out, "locations"), json_pack("[[ii]]", 1, 1)));
    json_t *t1 = json_array_get(json_object_get(f0, "tensors"), 1);
    static const char *const nulls[] = {"min", "max", "abs_max", "mean", "std"};
    for (size_t i = 0; i < 5; i++)
        assert_true(json_is_null(json_object_get(t1, nulls[i])));
    assert_int_equal(json_integer_value(json_object_get(t1, "nan")), 4);
    assert_true(same(json_object_get(t1, "nan_locations"),
                           json_pack("[[ii][ii]]", 0, 1, 1, 0)));
    json_t *fd = json_array_get(json_object_get(t1, "findings"), 0);
    assert_string_equal(json_string_value(json_object_get(fd, "kind")), "nan");
    assert_true(json_is_true(json_object_get(fd, "fails")));
    json_t *f1 = json_array_get(json_object_get(j, "files"), 1);
    assert_string_equal(json_string_value(json_object_get(f1, "status")), "error");
    assert_string_equal(json_string_value(json_object_get(f1, "error")), "header too large");
    json_t *sk = json_array_get(json_object_get(j, "skipped"), 0);
    assert_string_equal(json_string_value(json_object_get(sk, "path")), "config.json");
    json_t *s = json_object_get(j, "summary");
    assert_int_equal(json_integer_value(json_object_get(s, "exit_code")), 3);
    assert_true(json_is_true(json_object_get(s, "failed")));
    assert_null(strstr(text, ": NaN")); /* JSON has no NaN or Infinity */
    assert_null(strstr(text, "Infinity"));
    json_decref(j);
    free(text);
    na_report_free(r);
}

/* 17 significant digits: every double round-trips. */
static void test_json_precision(void **state)
{
    na_report_t *r = sample(NULL);
    r->files[0].tensors[0].res.st.mean = 0.1 + 0.2;
    char *text = render(r, 1, NULL);
    json_t *j = parse(text);
    json_t *t0 = json_array_get(json_object_get(json_array_get(json_object_get(j, "files"), 0),
                                                "tensors"), 0);
    assert_true(json_real_value(json_object_get(t0, "mean")) == 0.1 + 0.2);
    json_decref(j);
    free(text);
    na_report_free(r);
}

static const char hostile[] = "w\x1b[31mred\nline";

static void test_json_hostile_name(void **state)
{
    na_report_t *r = sample(hostile);
    na_file_report_t *bad = na_report_add_file(r, "bad\xff.bin", "raw");
    assert_non_null(bad);
    char *text = render(r, 1, NULL);
    assert_null(strchr(text, 0x1b)); /* escaped as \u001b */
    json_t *j = parse(text);
    json_t *f0 = json_array_get(json_object_get(j, "files"), 0);
    json_t *t0 = json_array_get(json_object_get(f0, "tensors"), 0);
    assert_string_equal(json_string_value(json_object_get(t0, "name")), hostile);
    json_t *f2 = json_array_get(json_object_get(j, "files"), 2);
    assert_string_equal(json_string_value(json_object_get(f2, "path")), "bad\\xff.bin");
    json_decref(j);
    free(text);
    na_report_free(r);
}

static void test_text_table(void **state)
{
    na_report_t *r = sample(hostile);
    na_text_opts_t o = {0, 0};
    char *text = render(r, 0, &o);
    assert_null(strchr(text, 0x1b));
    assert_non_null(strstr(text, "w\\x1b[31mred\\nline"));
    assert_non_null(strstr(text, "a.safetensors (safetensors)\n"));
    assert_non_null(strstr(text, "tensor"));
    assert_non_null(strstr(text, "FAIL allnan: 4 NaN values (first at [0, 1])"));
    assert_non_null(strstr(text, "error: header too large"));
    assert_non_null(strstr(text, "skipped: config.json (not data)"));
    assert_non_null(strstr(text, "2 files, 2 tensors, 8 elements: 4 NaN, 0 Inf, 1 outlier, "
                                 "1 error; FAILED (exit 3)\n"));
    free(text);
    o.color = 1;
    text = render(r, 0, &o);
    assert_non_null(strstr(text, "\x1b[1;31mFAIL\x1b[0m"));
    free(text);
    na_report_free(r);
}

static void test_text_quiet(void **state)
{
    na_report_t *r = sample(NULL);
    na_report_add_file(r, "clean.safetensors", "safetensors");
    na_report_summarize(r);
    na_text_opts_t o = {0, 1};
    char *text = render(r, 0, &o);
    assert_null(strstr(text, "dtype")); /* no table */
    assert_null(strstr(text, "clean.safetensors"));
    assert_null(strstr(text, "skipped:"));
    assert_non_null(strstr(text, "FAIL allnan"));
    assert_non_null(strstr(text, "3 files"));
    free(text);
    na_report_free(r);
}

static void test_write_error(void **state)
{
    FILE *fp = fopen("/dev/full", "w");
    if (!fp)
        skip();
    na_report_t *r = sample(NULL);
    assert_int_equal(na_report_write_json(r, fp), NA_E_WRITE);
    fclose(fp);
    na_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_counts),  cmocka_unit_test(test_json_contract),
        cmocka_unit_test(test_json_precision),  cmocka_unit_test(test_json_hostile_name),
        cmocka_unit_test(test_text_table),      cmocka_unit_test(test_text_quiet),
        cmocka_unit_test(test_write_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
