/*
 * policy_file.c - the --policy file: global defaults and per-tensor rules
 * by glob, so a team commits its gate next to its training code.
 *
 * Format: YAML, read with libyaml (https://pyyaml.org/wiki/LibYAML, the
 * reference C parser behind PyYAML; Debian libyaml-dev). Why YAML: CI
 * configuration is already YAML, and libyaml gives every node its line
 * and column, so an unknown key or a bad value is reported at its line
 * (jansson, our JSON parser, reports lines only for syntax errors; TOML
 * has no C parser packaged in Debian 12). Only the plain subset below is
 * accepted; duplicate keys (which YAML forbids but libyaml loads) are
 * refused, and YAML 1.1 booleans such as yes/no/on are not booleans here:
 * only true and false are. Tags (!!str 5) are refused: libyaml's loader
 * gives every untagged scalar the str tag too, so `!!str 5` would read as
 * the number 5 here and as the string "5" in PyYAML. Merge keys (<<) are
 * refused by name: YAML 1.1's merge is not applied by libyaml's loader.
 *
 *   version: 1                     # required, must be 1
 *   defaults:                      # optional: every tensor
 *     fail_on: [nan, inf]          # or "nan,inf"; kinds as --fail-on
 *     range: [0, 255]              # [LO, HI]; null leaves a side open
 *     min: 0                       # range's LO alone (max: HI alone)
 *     max_abs: 1000
 *     nonnegative: true            # kind negative (x < 0)
 *     cast_check: F16              # F16, BF16, F8_E4M3, F8_E5M2
 *     max_nan_fraction: 0.001      # and max_inf_fraction, max_outlier_fraction
 *   rules:                         # optional: in order, later ones win
 *     - match: "*.running_var"     # fnmatch(3) glob, or a list of globs
 *       min: 0
 *     - match: "*embed*"
 *       max_abs: 10
 *
 * A scope (defaults or one rule) that sets a check (range, min, max,
 * max_abs, nonnegative, cast_check) and no fail_on also fails on that
 * check's kind (range, max_abs, negative, cast_overflow): writing a limit
 * into the committed policy is asking the gate to hold it. With fail_on
 * in the same scope, fail_on alone decides. That kind is added after the
 * command line's flags for the defaults as for a rule: --fail-on replaces
 * the defaults' fail_on, never a limit's gate (it did, silently: tester
 * round 22b).
 */
#include "nanaudit.h"

#include <fnmatch.h> /* fnmatch */
#include <math.h>    /* isfinite */
#include <stdarg.h>  /* va_list */
#include <stdio.h>   /* vsnprintf */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strcmp, strlen, memcpy */
#include <yaml.h>    /* yaml_parser_*, yaml_document_* */

typedef struct scope {
    na_checks_t v;
    uint32_t given;    /* NA_CK_* bits set by this scope */
    uint32_t fail_add; /* kinds added to fail_mask (no fail_on here) */
    char **globs;      /* rules only */
    size_t n_globs;
    int range_key;     /* range: given (both limits, a null side open) */
    int minmax_key;    /* min: or max: given */
} scope_t;

struct na_policy {
    scope_t defaults;
    scope_t *rules;
    size_t n_rules;
};

void na_checks_patch(na_checks_t *dst, const na_checks_t *src, uint32_t given)
{
    if (given & NA_CK_FAIL_ON)
        dst->fail_mask = src->fail_mask;
    if (given & NA_CK_RANGE_LO) {
        dst->range_lo_set = src->range_lo_set;
        dst->range_lo = src->range_lo;
    }
    if (given & NA_CK_RANGE_HI) {
        dst->range_hi_set = src->range_hi_set;
        dst->range_hi = src->range_hi;
    }
    if (given & NA_CK_MAX_ABS) {
        dst->max_abs_set = src->max_abs_set;
        dst->max_abs = src->max_abs;
    }
    if (given & NA_CK_NONNEG)
        dst->nonneg = src->nonneg;
    if (given & NA_CK_CAST)
        dst->cast = src->cast;
    if (given & NA_CK_FRAC_NAN)
        dst->max_fraction[NA_K_NAN] = src->max_fraction[NA_K_NAN];
    if (given & NA_CK_FRAC_INF) {
        dst->max_fraction[NA_K_POS_INF] = src->max_fraction[NA_K_POS_INF];
        dst->max_fraction[NA_K_NEG_INF] = src->max_fraction[NA_K_NEG_INF];
    }
    if (given & NA_CK_FRAC_OUT)
        dst->max_fraction[NA_K_OUTLIERS] = src->max_fraction[NA_K_OUTLIERS];
}

static void scope_apply(const scope_t *s, na_checks_t *c)
{
    na_checks_patch(c, &s->v, s->given);
    c->fail_mask |= s->fail_add;
}

void na_policy_checks(const na_policy_t *p, const na_checks_t *flags, uint32_t flags_given,
                      const char *name, na_checks_t *out)
{
    na_checks_init(out);
    if (p)
        scope_apply(&p->defaults, out);
    na_checks_patch(out, flags, flags_given);
    if (p)
        out->fail_mask |= p->defaults.fail_add;
    for (size_t r = 0; p && name && r < p->n_rules; r++)
        for (size_t g = 0; g < p->rules[r].n_globs; g++)
            if (fnmatch(p->rules[r].globs[g], name, 0) == 0) {
                scope_apply(&p->rules[r], out);
                break;
            }
}

void na_policy_free(na_policy_t *p)
{
    if (!p)
        return;
    for (size_t r = 0; r < p->n_rules; r++) {
        for (size_t g = 0; g < p->rules[r].n_globs; g++)
            free(p->rules[r].globs[g]);
        free(p->rules[r].globs);
    }
    free(p->rules);
    free(p);
}

/* ---- parsing ---- */

typedef struct pctx {
    yaml_document_t *doc;
    const char *fname;
    na_err_t *err;
    const yaml_node_t **key; /* the key each_key is at: "unknown key" names its line
                              * (its value's line is an anchor's for an alias) */
} pctx_t;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static na_status_t bad(const pctx_t *c, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[NA_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return na_err_set(c->err, NA_E_USAGE, "%s:%lu: %s", c->fname,
                      (unsigned long)(n ? n->start_mark.line + 1 : 1), msg);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A plain null (~, null, empty) as YAML 1.1/1.2 core schemas read it. */
static int is_null(const yaml_node_t *n)
{
    const char *s = scalar(n);
    return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
            !strcmp(s, "NULL"));
}

static na_status_t get_num(const pctx_t *c, const yaml_node_t *n, const char *key, double *v)
{
    const char *s = scalar(n);
    if (!s || !*s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return bad(c, n, "%s: expected a number", key);
    /* Decimal only: YAML 1.1 (PyYAML) reads 010 as octal 8 and 1.2 as
     * 10, and 0x10 / 0o10 are 1.2 forms that 1.1 reads as strings; a
     * gate's limit must read the same in every tool. */
    const char *d = s + (*s == '-' || *s == '+');
    if ((d[0] == '0' && d[1] >= '0' && d[1] <= '9') ||
        (d[0] == '0' && (d[1] == 'x' || d[1] == 'X' || d[1] == 'o' || d[1] == 'O')))
        return bad(c, n, "%s: '%.60s' is not a decimal number (YAML 1.1 and 1.2 read it "
                   "differently)", key, s);
    if (na_parse_double(s, v))
        return bad(c, n, "%s: '%.60s' is not a finite number", key, s);
    return NA_OK;
}

static na_status_t get_fraction(const pctx_t *c, const yaml_node_t *n, const char *key,
                                double *v)
{
    na_status_t st = get_num(c, n, key, v);
    if (st == NA_OK && (*v < 0 || *v > 1))
        return bad(c, n, "%s: %g is not a fraction from 0 to 1", key, *v);
    return st;
}

static na_status_t get_fail_on(const pctx_t *c, const yaml_node_t *n, uint32_t *mask)
{
    na_err_t e;
    *mask = 0;
    if (n->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = n->data.sequence.items.start;
             it < n->data.sequence.items.top; it++) {
            const yaml_node_t *item = yaml_document_get_node(c->doc, *it);
            uint32_t m;
            if (!scalar(item))
                return bad(c, item, "fail_on: expected kind names");
            if (na_parse_fail_on(scalar(item), &m, &e) != NA_OK)
                return bad(c, item, "fail_on: %s", e.msg + strlen("--fail-on: "));
            *mask |= m;
        }
        return NA_OK;
    }
    if (!scalar(n))
        return bad(c, n, "fail_on: expected a list of kinds");
    if (na_parse_fail_on(scalar(n), mask, &e) != NA_OK)
        return bad(c, n, "fail_on: %s", e.msg + strlen("--fail-on: "));
    return NA_OK;
}

static na_status_t get_range(const pctx_t *c, const yaml_node_t *n, scope_t *s)
{
    if (s->minmax_key) /* it would overwrite them, a null side dropping one */
        return bad(c, n, "range: min or max already sets a limit in this scope: give range "
                   "or min and max, not both");
    s->range_key = 1;
    if (n->type != YAML_SEQUENCE_NODE ||
        n->data.sequence.items.top - n->data.sequence.items.start != 2)
        return bad(c, n, "range: expected [LO, HI] (null for an open side)");
    const yaml_node_t *lo = yaml_document_get_node(c->doc, n->data.sequence.items.start[0]);
    const yaml_node_t *hi = yaml_document_get_node(c->doc, n->data.sequence.items.start[1]);
    na_status_t st = NA_OK;
    s->v.range_lo_set = !is_null(lo);
    s->v.range_hi_set = !is_null(hi);
    if (s->v.range_lo_set)
        st = get_num(c, lo, "range", &s->v.range_lo);
    if (st == NA_OK && s->v.range_hi_set)
        st = get_num(c, hi, "range", &s->v.range_hi);
    if (st == NA_OK && s->v.range_lo_set && s->v.range_hi_set &&
        s->v.range_lo > s->v.range_hi)
        return bad(c, n, "range: LO %g is above HI %g", s->v.range_lo, s->v.range_hi);
    s->given |= NA_CK_RANGE_LO | NA_CK_RANGE_HI;
    return st;
}

static na_status_t get_globs(const pctx_t *c, const yaml_node_t *n, scope_t *s)
{
    size_t cnt = n->type == YAML_SEQUENCE_NODE
                     ? (size_t)(n->data.sequence.items.top - n->data.sequence.items.start)
                     : 1;
    if ((n->type != YAML_SEQUENCE_NODE && !scalar(n)) || cnt == 0)
        return bad(c, n, "match: expected a glob or a list of globs");
    if (!(s->globs = calloc(cnt, sizeof *s->globs)))
        return na_err_set(c->err, NA_E_NOMEM, "%s: out of memory", c->fname);
    for (size_t i = 0; i < cnt; i++) {
        const yaml_node_t *g = n->type == YAML_SEQUENCE_NODE
            ? yaml_document_get_node(c->doc, n->data.sequence.items.start[i]) : n;
        if (!scalar(g) || !*scalar(g))
            return bad(c, g, "match: expected a non-empty glob");
        size_t len = strlen(scalar(g));
        if (!(s->globs[i] = malloc(len + 1)))
            return na_err_set(c->err, NA_E_NOMEM, "%s: out of memory", c->fname);
        memcpy(s->globs[i], scalar(g), len + 1);
        s->n_globs++;
    }
    return NA_OK;
}

#define SCOPE_KEYS "fail_on, range, min, max, max_abs, nonnegative, cast_check, " \
                   "max_nan_fraction, max_inf_fraction, max_outlier_fraction"

/* One key of a scope; `rule` allows match. */
static na_status_t scope_key(const pctx_t *c, const char *k, const yaml_node_t *v, scope_t *s,
                             int rule)
{
    double x;
    na_status_t st = NA_OK;
    if (rule && !strcmp(k, "match"))
        return get_globs(c, v, s);
    if (!strcmp(k, "fail_on")) {
        st = get_fail_on(c, v, &s->v.fail_mask);
        s->given |= NA_CK_FAIL_ON;
    } else if (!strcmp(k, "range")) {
        st = get_range(c, v, s);
    } else if (!strcmp(k, "min") || !strcmp(k, "max")) {
        int lo = k[1] == 'i';
        if (s->range_key)
            return bad(c, v, "%s: range already sets the limits in this scope: give range or "
                       "min and max, not both", k);
        s->minmax_key = 1;
        if ((st = get_num(c, v, k, &x)) != NA_OK)
            return st;
        *(lo ? &s->v.range_lo : &s->v.range_hi) = x;
        *(lo ? &s->v.range_lo_set : &s->v.range_hi_set) = 1;
        if (s->v.range_lo_set && s->v.range_hi_set && s->v.range_lo > s->v.range_hi)
            return bad(c, v, "%s: min %g is above max %g", k, s->v.range_lo, s->v.range_hi);
        s->given |= lo ? NA_CK_RANGE_LO : NA_CK_RANGE_HI;
    } else if (!strcmp(k, "max_abs")) {
        if ((st = get_num(c, v, k, &s->v.max_abs)) == NA_OK && s->v.max_abs < 0)
            return bad(c, v, "max_abs: %g is below 0", s->v.max_abs);
        s->v.max_abs_set = 1;
        s->given |= NA_CK_MAX_ABS;
    } else if (!strcmp(k, "nonnegative")) {
        const char *b = scalar(v);
        if (!b || (strcmp(b, "true") && strcmp(b, "false")))
            return bad(c, v, "nonnegative: expected true or false");
        s->v.nonneg = !strcmp(b, "true");
        s->given |= NA_CK_NONNEG;
    } else if (!strcmp(k, "cast_check")) {
        const char *d = scalar(v);
        double o, u;
        int strict;
        na_dtype_t dt = d ? na_dtype_from_name(d, strlen(d)) : NA_DT_INVALID;
        if (na_cast_limits(dt, &o, &strict, &u) != NA_OK)
            return bad(c, v, "cast_check: expected F16, BF16, F8_E4M3 or F8_E5M2");
        s->v.cast = dt;
        s->given |= NA_CK_CAST;
    } else if (!strcmp(k, "max_nan_fraction")) {
        st = get_fraction(c, v, k, &s->v.max_fraction[NA_K_NAN]);
        s->given |= NA_CK_FRAC_NAN;
    } else if (!strcmp(k, "max_inf_fraction")) {
        st = get_fraction(c, v, k, &s->v.max_fraction[NA_K_POS_INF]);
        s->v.max_fraction[NA_K_NEG_INF] = s->v.max_fraction[NA_K_POS_INF];
        s->given |= NA_CK_FRAC_INF;
    } else if (!strcmp(k, "max_outlier_fraction")) {
        st = get_fraction(c, v, k, &s->v.max_fraction[NA_K_OUTLIERS]);
        s->given |= NA_CK_FRAC_OUT;
    } else {
        return bad(c, *c->key, "unknown key '%.60s' in %s (valid: %s%s)", k,
                   rule ? "a rule" : "defaults", rule ? "match, " : "", SCOPE_KEYS);
    }
    return st;
}

/* Walk mapping n calling fn for each key; refuses non-string and
 * duplicate keys. */
typedef na_status_t (*key_fn)(const pctx_t *c, const char *k, const yaml_node_t *v, void *ud);

static na_status_t each_key(const pctx_t *c, const yaml_node_t *n, const char *what, key_fn fn,
                            void *ud)
{
    if (!n || n->type != YAML_MAPPING_NODE)
        return bad(c, n, "%s: expected a mapping of keys", what);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        if (!scalar(k))
            return bad(c, k, "%s: keys must be plain words", what);
        for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
            const char *s = scalar(yaml_document_get_node(c->doc, q->key));
            if (s && !strcmp(s, scalar(k)))
                return bad(c, k, "duplicate key '%.60s' in %s", s, what);
        }
        if (!strcmp(scalar(k), "<<"))
            return bad(c, k, "%s: merge keys (<<) are not supported: write the keys out", what);
        *c->key = k;
        na_status_t st = fn(c, scalar(k), v, ud);
        if (st != NA_OK)
            return st;
    }
    return NA_OK;
}

static uint32_t checks_kinds(uint32_t given)
{
    uint32_t m = 0;
    if (given & (NA_CK_RANGE_LO | NA_CK_RANGE_HI))
        m |= NA_KIND_BIT(NA_K_RANGE);
    if (given & NA_CK_MAX_ABS)
        m |= NA_KIND_BIT(NA_K_MAX_ABS);
    if (given & NA_CK_NONNEG)
        m |= NA_KIND_BIT(NA_K_NEGATIVE);
    if (given & NA_CK_CAST)
        m |= NA_KIND_BIT(NA_K_CAST_OVERFLOW);
    return m;
}

static na_status_t defaults_key(const pctx_t *c, const char *k, const yaml_node_t *v, void *ud)
{
    return scope_key(c, k, v, ud, 0);
}

static na_status_t rule_key(const pctx_t *c, const char *k, const yaml_node_t *v, void *ud)
{
    return scope_key(c, k, v, ud, 1);
}

static void scope_finish(scope_t *s)
{
    if (!(s->given & NA_CK_FAIL_ON))
        s->fail_add = checks_kinds(s->given);
    if ((s->given & NA_CK_NONNEG) && !s->v.nonneg)
        s->fail_add &= ~NA_KIND_BIT(NA_K_NEGATIVE);
}

static na_status_t parse_rules(const pctx_t *c, const yaml_node_t *n, na_policy_t *p)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return bad(c, n, "rules: expected a list of rules (- match: GLOB ...)");
    size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (cnt && !(p->rules = calloc(cnt, sizeof *p->rules)))
        return na_err_set(c->err, NA_E_NOMEM, "%s: out of memory", c->fname);
    for (size_t i = 0; i < cnt; i++) {
        const yaml_node_t *r = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
        scope_t *s = &p->rules[p->n_rules++];
        na_checks_init(&s->v);
        na_status_t st = each_key(c, r, "rule", rule_key, s);
        if (st != NA_OK)
            return st;
        if (s->n_globs == 0)
            return bad(c, r, "rule %zu has no match: GLOB", i + 1);
        scope_finish(s);
    }
    return NA_OK;
}

static na_status_t top_key(const pctx_t *c, const char *k, const yaml_node_t *v, void *ud)
{
    na_policy_t *p = ud;
    if (!strcmp(k, "version")) {
        const char *s = scalar(v);
        if (s && v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) /* "1": a string */
            return bad(c, v, "version: expected the number 1, not a quoted string");
        if (!s || strcmp(s, "1"))
            return bad(c, v, "version: only version 1 is known");
        return NA_OK;
    }
    if (!strcmp(k, "defaults")) {
        na_status_t st = each_key(c, v, "defaults", defaults_key, &p->defaults);
        scope_finish(&p->defaults);
        return st;
    }
    if (!strcmp(k, "rules"))
        return parse_rules(c, v, p);
    return bad(c, *c->key, "unknown key '%.60s' (valid: version, defaults, rules)", k);
}

/* Collections nested deeper than this are refused before the document
 * is built: libyaml's scanner takes time quadratic in the depth of flow
 * collections ({a: {a: ...}}: 11 s for 30000 levels, minutes within the
 * 1 MiB cap; fifteenth fresh-user round). A policy needs 4 levels. */
#define POLICY_MAX_DEPTH 64

/* The line (1-based) of the first explicit tag in text, or of the first
 * collection nested deeper than POLICY_MAX_DEPTH, with why it is refused
 * in why; 0 if none. Events stop there, so the scanner never reaches the
 * deep part. A syntax error is left to yaml_parser_load, which reports it. */
static size_t prescan(const char *text, size_t len, char *why, size_t cap)
{
    yaml_parser_t ps;
    if (!yaml_parser_initialize(&ps))
        return 0;
    yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
    size_t line = 0;
    int depth = 0;
    for (int done = 0; !done && line == 0;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&ps, &ev))
            break;
        const yaml_char_t *t = ev.type == YAML_SCALAR_EVENT ? ev.data.scalar.tag
                             : ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.tag
                             : ev.type == YAML_MAPPING_START_EVENT ? ev.data.mapping_start.tag
                             : NULL;
        if (t != NULL) {
            line = ev.start_mark.line + 1;
            const char *y = "tag:yaml.org,2002:"; /* the expansion of !! */
            size_t yn = strlen(y);
            if (!strncmp((const char *)t, y, yn))
                snprintf(why, cap, "YAML tag '!!%.58s': tags are not supported in a policy (a "
                         "value's type is its key's)", (const char *)t + yn);
            else
                snprintf(why, cap, "YAML tag '%.60s': tags are not supported in a policy (a "
                         "value's type is its key's)", (const char *)t);
        }
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)
            depth++;
        else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT)
            depth--;
        if (line == 0 && depth > POLICY_MAX_DEPTH) {
            line = ev.start_mark.line + 1;
            snprintf(why, cap, "collections nested more than %d deep", POLICY_MAX_DEPTH);
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&ps);
    return line;
}

na_status_t na_policy_parse(const char *text, size_t len, const char *fname, na_policy_t **out,
                            na_err_t *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    const yaml_node_t *key = NULL;
    pctx_t c = {&doc, fname ? fname : "policy", err, &key};
    *out = NULL;
    char why[160];
    size_t tl = prescan(text, len, why, sizeof why);
    if (tl > 0)
        return na_err_set(err, NA_E_USAGE, "%s:%lu: %s", c.fname, (unsigned long)tl, why);
    na_policy_t *p = calloc(1, sizeof *p);
    if (!p || !yaml_parser_initialize(&parser)) {
        free(p);
        return na_err_set(err, NA_E_NOMEM, "%s: out of memory", c.fname);
    }
    na_checks_init(&p->defaults.v);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    na_status_t st = NA_OK;
    if (!yaml_parser_load(&parser, &doc)) {
        /* libyaml's reader (encoding) errors give a byte offset, not a
         * mark (round 27b: a bad byte on line 4 was said on line 1) */
        unsigned long line = (unsigned long)parser.problem_mark.line + 1;
        if (parser.error == YAML_READER_ERROR)
            for (size_t i = line = 1; i <= parser.problem_offset && i <= len; i++)
                line += text[i - 1] == '\n';
        st = na_err_set(err, NA_E_USAGE, "%s:%lu: YAML error: %s%s%s", c.fname, line,
                        parser.problem ? parser.problem : "unreadable",
                        parser.context ? " " : "", parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        free(p);
        return st;
    }
    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    int version = 0;
    yaml_document_t next; /* a second document ("---") would be silently ignored */
    if (root) {
        int loaded = yaml_parser_load(&parser, &next);
        int more = !loaded || yaml_document_get_root_node(&next) != NULL;
        size_t line = !loaded ? parser.problem_mark.line + 1
                      : more ? yaml_document_get_root_node(&next)->start_mark.line + 1 : 0;
        if (loaded)
            yaml_document_delete(&next);
        if (more) {
            yaml_document_delete(&doc);
            yaml_parser_delete(&parser);
            free(p);
            return na_err_set(err, NA_E_USAGE, "%s:%lu: a second YAML document; a policy is "
                              "one document", c.fname, (unsigned long)line);
        }
    }
    if (!root) {
        st = na_err_set(err, NA_E_USAGE, "%s:1: empty policy (needs version: 1)", c.fname);
    } else {
        st = each_key(&c, root, "policy", top_key, p);
        for (yaml_node_pair_t *q = root->data.mapping.pairs.start;
             st == NA_OK && q < root->data.mapping.pairs.top; q++)
            version |= !strcmp(scalar(yaml_document_get_node(&doc, q->key)), "version");
        if (st == NA_OK && !version)
            st = bad(&c, root, "missing 'version: 1'");
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (st != NA_OK) {
        na_policy_free(p);
        return st;
    }
    *out = p;
    return NA_OK;
}
