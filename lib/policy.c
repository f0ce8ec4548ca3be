/*
 * policy.c - finding kinds, the --fail-on list and the findings of one
 * scanned tensor.
 *
 * Kind names are the closed snake_case list of DESIGN.md ("Definitions"):
 * nan, pos_inf, neg_inf, outliers, subnormal, zero_tensor, range, max_abs,
 * cast_overflow, cast_underflow, negative. Findings are data: this file
 * only marks which ones the policy fails on; cli/ turns that into exit 1.
 */
#include "nanaudit.h"

#include <math.h>   /* fabs, signbit */
#include <stdarg.h> /* va_list */
#include <stdio.h>  /* snprintf, vsnprintf */
#include <string.h> /* strlen, memcpy */

static const char *const kind_names[NA_K_COUNT] = {
    "nan", "pos_inf", "neg_inf", "outliers", "subnormal", "zero_tensor",
    "range", "max_abs", "cast_overflow", "cast_underflow", "negative",
};

#define VALID_KINDS                                                             \
    "nan, pos_inf, neg_inf, inf, outliers, subnormal, zero_tensor, range, "    \
    "max_abs, cast_overflow, cast_underflow, negative, none"

const char *na_kind_name(na_kind_t k)
{
    return (unsigned)k < NA_K_COUNT ? kind_names[k] : "unknown";
}

/* Mask of one word of a --fail-on list (len bytes at w, '-' read as '_',
 * ASCII case ignored); 0 with *ok = 0 when the word is not a kind. */
static uint32_t word_mask(const char *w, size_t len, int *ok)
{
    char buf[32];
    *ok = 1;
    if (len == 0 || len >= sizeof buf) {
        *ok = 0;
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        char c = w[i] == '-' ? '_' : w[i];
        buf[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    buf[len] = '\0';
    if (strcmp(buf, "none") == 0)
        return 0;
    if (strcmp(buf, "inf") == 0)
        return NA_KIND_BIT(NA_K_POS_INF) | NA_KIND_BIT(NA_K_NEG_INF);
    for (unsigned k = 0; k < NA_K_COUNT; k++)
        if (strcmp(buf, kind_names[k]) == 0)
            return NA_KIND_BIT(k);
    *ok = 0;
    return 0;
}

na_status_t na_parse_fail_on(const char *list, uint32_t *mask, na_err_t *err)
{
    uint32_t m = 0;
    const char *p = list ? list : "";
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        /* Spaces around a word are tolerated ("nan, inf" from a shell). */
        while (len > 0 && *p == ' ') {
            p++;
            len--;
        }
        while (len > 0 && p[len - 1] == ' ')
            len--;
        int ok;
        m |= word_mask(p, len, &ok);
        if (!ok) {
            if (len == 0)
                return na_err_set(err, NA_E_USAGE, "--fail-on: empty kind name in '%s' "
                                  "(valid: %s)", list ? list : "", VALID_KINDS);
            return na_err_set(err, NA_E_USAGE, "--fail-on: unknown kind '%.*s' (valid: %s)",
                              (int)(len < 64 ? len : 64), p, VALID_KINDS);
        }
        if (!end)
            break;
        p = end + 1;
    }
    *mask = m;
    return NA_OK;
}

/* "[i, j, k]" for flat index `flat` of t's shape. */
static void format_index(const na_tensor_t *t, uint64_t flat, char *out, size_t cap)
{
    uint64_t idx[NA_MAX_NDIM];
    int nd = t->ndim < 0 ? 0 : t->ndim > NA_MAX_NDIM ? NA_MAX_NDIM : t->ndim;
    na_unravel(flat, nd, t->shape, idx);
    size_t used = 0;
    out[0] = '\0';
    for (int d = 0; d <= nd && used < cap; d++) {
        int w;
        if (d == nd)
            w = snprintf(out + used, cap - used, "]");
        else
            w = snprintf(out + used, cap - used, "%s%llu", d ? ", " : "[",
                         (unsigned long long)idx[d]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (nd == 0)
        snprintf(out, cap, "[]");
}

typedef struct fsink {
    na_finding_t *out;
    size_t cap, n;
    uint32_t fail_mask;
} fsink_t;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void add(fsink_t *s, na_kind_t k, uint64_t count, const char *fmt, ...)
{
    if (s->n < s->cap) {
        na_finding_t *f = &s->out[s->n];
        f->kind = k;
        f->count = count;
        f->fails = (s->fail_mask & NA_KIND_BIT(k)) != 0;
        f->in_baseline = 0;
        f->baseline = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->message, sizeof f->message, fmt, ap);
        va_end(ap);
    }
    s->n++;
}

/* " (first at [i, j])", or "" when the location is unknown. */
static void first_at(const na_tensor_t *t, uint64_t flat, int known, char *out, size_t cap)
{
    char idx[160];
    out[0] = '\0';
    if (!known)
        return;
    format_index(t, flat, idx, sizeof idx);
    snprintf(out, cap, " (first at %s)", idx);
}

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

size_t na_findings(const na_tensor_t *t, const na_result_t *r, uint32_t fail_mask,
                   na_finding_t *out, size_t cap)
{
    fsink_t s = {out, out ? cap : 0, 0, fail_mask};
    const na_stats_t *st = &r->st;
    char at[180];
    unsigned long long c;
    if ((c = st->nan) > 0) {
        first_at(t, r->n_nan_locs ? r->nan_locs[0] : 0, r->n_nan_locs > 0, at, sizeof at);
        add(&s, NA_K_NAN, c, "%llu NaN value%s%s", c, plural(c), at);
    }
    if ((c = st->pos_inf) > 0) {
        /* n_inf_locs > 0: with --max-locations 0 no location is reported for
         * any kind, as for NaN (pass 1 still tracks the first +Inf). */
        first_at(t, r->first_pos_inf, r->first_pos_inf != UINT64_MAX && r->n_inf_locs > 0,
                 at, sizeof at);
        add(&s, NA_K_POS_INF, c, "%llu +Inf value%s%s", c, plural(c), at);
    }
    if ((c = st->neg_inf) > 0) {
        first_at(t, r->first_neg_inf, r->first_neg_inf != UINT64_MAX && r->n_inf_locs > 0,
                 at, sizeof at);
        add(&s, NA_K_NEG_INF, c, "%llu -Inf value%s%s", c, plural(c), at);
    }
    if ((c = r->outliers) > 0) {
        first_at(t, r->n_out_locs ? r->out_locs[0] : 0, r->n_out_locs > 0, at, sizeof at);
        /* x - c, written x + 0.5 for c = -0.5 (not "x - -0.5") */
        double ctr = r->method == NA_OUTLIER_MAD ? r->median : st->mean;
        const char *op = signbit(ctr) ? "+" : "-";
        if (r->method == NA_OUTLIER_MAD && r->mad > 0) /* scan --mad (DESIGN.md) */
            add(&s, NA_K_OUTLIERS, c, "%llu outlier%s with modified z-score "
                "|0.6745 (x %s %.6g) / %.6g| > %g (median, MAD)%s",
                c, plural(c), op, fabs(ctr), r->mad, r->threshold, at);
        else if (r->method == NA_OUTLIER_MAD)
            add(&s, NA_K_OUTLIERS, c, "%llu outlier%s with |x %s %.6g| / (1.253314 * %.6g) > %g "
                "(median, MeanAD: MAD is 0)%s",
                c, plural(c), op, fabs(ctr), r->meanad, r->threshold, at);
        else
            add(&s, NA_K_OUTLIERS, c,
                "%llu outlier%s beyond mean +- %g*std (|x %s %.6g| > %.6g)%s", c, plural(c),
                r->threshold, op, fabs(ctr), r->threshold * r->std, at);
    }
    if ((c = st->subnormal) > 0)
        add(&s, NA_K_SUBNORMAL, c, "%llu subnormal value%s in %s", c, plural(c),
            na_dtype_name(t->dtype));
    if (st->elements > 0 && st->zeros == st->elements)
        add(&s, NA_K_ZERO_TENSOR, st->elements, st->elements == 1 ? "%llu value, zero"
            : "all %llu values are zero", (unsigned long long)st->elements);
    return s.n;
}
