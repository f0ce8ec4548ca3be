/*
 * report_sarif.c - the report as SARIF 2.1.0 (OASIS Static Analysis
 * Results Interchange Format, https://docs.oasis-open.org/sarif/sarif/v2.1.0/),
 * the input of code-scanning UIs (GitHub code scanning, GitLab, VS Code).
 *
 * One run; tool.driver.rules lists the finding kinds (rule id = kind
 * name, as --fail-on spells it) plus "unreadable" for inputs that could
 * not be audited. Each finding is one result: level "error" when it fails
 * the policy, "warning" otherwise; message.text is "TENSOR: " and the
 * finding's text (code-scanning views show the message and the file, not
 * always the logical location, so the tensor is named in the text too);
 * the location is the file (physicalLocation.artifactLocation.uri, the
 * path as given, percent-encoded as a URI reference per RFC 3986) and the
 * tensor (logicalLocations[0].fullyQualifiedName, kind "member");
 * properties hold the tensor name and the count. invocations[0] carries
 * the exit code and executionSuccessful (false for exit >= 2).
 *
 * Built with jansson like the JSON report, so every string is escaped
 * for JSON; names that are not UTF-8 go through na_escape_text.
 */
#include "nanaudit.h"

#include "report_util.h"
#include <jansson.h>
#include <stdlib.h> /* malloc, free */
#include <string.h> /* strlen, strchr, strcpy, strcat */

#define SARIF_SCHEMA "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#define RULE_UNREADABLE NA_K_COUNT /* rule index of "unreadable" */

/* A string a person reads in the code-scanning view: bidi overrides, line
 * separators and C1 controls (na_escape_dangerous) would let a tensor name
 * display as another (tester round 22b), so such a string is written as
 * the text report writes it (na_escape_text: \xhh), and so is one with a
 * backslash (doubled there), so that an escaped character and a name's
 * own "\xe2" differ (tester round 23a); others as they are (JSON escapes
 * control characters itself). */
static json_t *jstr(const char *s)
{
    if (!s)
        s = "";
    if (!na_escape_has_dangerous(s) && !strchr(s, '\\'))
        return na_json_text(s);
    char *e = na_escape_text_dup(s);
    json_t *j = e ? json_string(e) : NULL;
    free(e);
    return j;
}

/* RFC 3986 URI reference for a path: unreserved characters and '/' stay,
 * every other byte is %HH (so spaces, '%', '#', '?' and non-ASCII bytes
 * cannot change the meaning). */
static json_t *juri(const char *path)
{
    static const char keep[] = "-._~/";
    size_t n = strlen(path);
    char *buf = malloc(3 * n + 1), *p = buf;
    if (!buf)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            (c && strchr(keep, c)))
            *p++ = (char)c;
        else
            p += sprintf(p, "%%%02X", c);
    }
    *p = '\0';
    json_t *j = json_string(buf);
    free(buf);
    return j;
}

static json_t *text_obj(json_t *s) { return s ? json_pack("{s:o}", "text", s) : NULL; }

static json_t *rules(void)
{
    json_t *a = json_array();
    for (unsigned k = 0; a && k <= NA_K_COUNT; k++) {
        const char *id = k < NA_K_COUNT ? na_kind_name((na_kind_t)k) : "unreadable";
        char desc[96];
        snprintf(desc, sizeof desc, k < NA_K_COUNT ? "nanaudit finding '%s'"
                                                   : "input could not be audited (%s)", id);
        if (json_array_append_new(a, json_pack("{s:s, s:o}", "id", id, "shortDescription",
                                               text_obj(json_string(desc)))))
            return json_decref(a), NULL;
    }
    return a;
}

/* SARIF 2.1.0, 3.27.17 partialFingerprints: what makes a result the same
 * result from run to run. Without it GitHub code scanning hashes the
 * artifact's lines around the result, which for a checkpoint means
 * nothing: findings of different tensors of one file, one rule and no
 * region could be merged into one alert, or reopened every run (tester
 * round 22b). Key "nanaudit/v1": 64-bit FNV-1a (Fowler, Noll, Vo;
 * draft-eastlake-fnv) of the path, the tensor and the rule, NUL-separated,
 * as 16 hex digits: stable, not secret. */
static json_t *fingerprint(const char *path, const char *tensor, const char *rule)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const char *part[3] = {path ? path : "", tensor ? tensor : "", rule};
    for (int k = 0; k < 3; k++)
        for (const unsigned char *p = (const unsigned char *)part[k];; p++) {
            h = (h ^ *p) * 0x100000001b3ull; /* the NUL too: "a","bc" != "ab","c" */
            if (*p == '\0')
                break;
        }
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    return json_pack("{s:s}", "nanaudit/v1", hex);
}

static json_t *result(unsigned rule, int error, const char *path, const char *tensor,
                      const char *message, uint64_t count)
{
    json_t *loc = json_pack("{s:{s:{s:o}}}", "physicalLocation", "artifactLocation", "uri",
                            juri(path));
    if (loc && tensor)
        json_object_set_new(loc, "logicalLocations",
                            json_pack("[{s:o, s:s}]", "fullyQualifiedName", jstr(tensor),
                                      "kind", "member"));
    const char *id = rule < NA_K_COUNT ? na_kind_name((na_kind_t)rule) : "unreadable";
    char *text = NULL;
    if (tensor && !na_reason_names(message, tensor) &&
        (text = malloc(strlen(tensor) + strlen(message) + 3)) != NULL) {
        strcpy(text, tensor);
        strcat(text, ": ");
        strcat(text, message);
    }
    json_t *v = json_pack("{s:s, s:i, s:s, s:o, s:[o], s:o, s:{s:o, s:I}}", "ruleId", id,
                          "ruleIndex", (int)rule, "level", error ? "error" : "warning",
                          "message", text_obj(jstr(text ? text : message)), "locations", loc,
                          "partialFingerprints", fingerprint(path, tensor, id), "properties",
                          "tensor", tensor ? jstr(tensor) : json_null(), "count",
                          (json_int_t)count);
    free(text);
    return v;
}

static int add(json_t *a, json_t *v) { return !v || json_array_append_new(a, v); }

/* Results per run: GitHub code scanning stores the first 5000 of a run
 * and rejects a file with more than 25000 ("SARIF results exceed limit",
 * docs.github.com, code scanning troubleshooting). Past 5000, the
 * results that fail the policy come first, then the others, up to 5000;
 * a notification in invocations[0] counts the rest. */
#define SARIF_MAX_RESULTS 5000

/* The results, in file order, of the levels wanted (1: "error", 0:
 * "warning", -1: both), appended to res until it holds `cap`; *left
 * counts those that did not fit. 1 when out of memory. */
static int results(const na_report_t *r, json_t *res, int want, size_t cap, uint64_t *left)
{
    int oom = 0;
#define NA_SARIF_ADD(err, call)                                                                \
    do {                                                                                   \
        if (want >= 0 && (err) != want)                                                    \
            break;                                                                         \
        if (json_array_size(res) >= cap)                                                   \
            ++*left;                                                                       \
        else                                                                               \
            oom |= add(res, call);                                                         \
    } while (0)
    for (size_t i = 0; !oom && i < r->n_files; i++) {
        const na_file_report_t *f = &r->files[i];
        if (!f->ok)
            NA_SARIF_ADD(1, result(RULE_UNREADABLE, 1, f->path, NULL,
                                   f->error ? f->error : "error", 0));
        for (size_t j = 0; !oom && j < f->n_tensors; j++) {
            const na_tensor_report_t *e = &f->tensors[j];
            if (e->status == NA_TS_ERROR)
                NA_SARIF_ADD(1, result(RULE_UNREADABLE, 1, f->path, e->name,
                                       e->reason ? e->reason : "error", 0));
            for (size_t k = 0; !oom && k < e->n_findings; k++) {
                const na_finding_t *fd = &e->findings[k];
                NA_SARIF_ADD(fd->fails != 0, result(fd->kind, fd->fails, f->path, e->name,
                                                    fd->message, fd->count));
            }
        }
    }
#undef NA_SARIF_ADD
    return oom;
}

na_status_t na_report_write_sarif(const na_report_t *r, FILE *out)
{
    json_t *res = json_array();
    uint64_t left = 0;
    int oom = !res || results(r, res, -1, SARIF_MAX_RESULTS, &left);
    if (!oom && left > 0) {
        /* too many: the failures first, then the rest */
        json_array_clear(res);
        left = 0;
        oom = results(r, res, 1, SARIF_MAX_RESULTS, &left) ||
              results(r, res, 0, SARIF_MAX_RESULTS, &left);
    }
    json_t *inv = oom ? NULL : json_pack("{s:b, s:i}", "executionSuccessful",
                                         r->summary.exit_code < 2, "exitCode",
                                         r->summary.exit_code);
    if (inv && left > 0) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "%llu more results not listed: at most %d per run, those that fail the policy "
                 "first (GitHub code scanning keeps %d and rejects more than 25000); the JSON "
                 "report lists every finding",
                 (unsigned long long)left, SARIF_MAX_RESULTS, SARIF_MAX_RESULTS);
        if (json_object_set_new(inv, "toolExecutionNotifications",
                                json_pack("[{s:s, s:o}]", "level", "warning", "message",
                                          text_obj(json_string(msg)))))
            oom = 1;
    }
    json_t *log = oom || !inv ? NULL : json_pack(
        "{s:s, s:s, s:[{s:{s:{s:s, s:s, s:o}}, s:o, s:[o]}]}",
        "$schema", SARIF_SCHEMA, "version", "2.1.0", "runs", "tool", "driver", "name",
        "nanaudit", "version", NA_VERSION, "rules", rules(), "results", res, "invocations",
        inv);
    if (!log) {
        if (oom || !inv) {
            json_decref(res);
            json_decref(inv);
        }
        return NA_E_NOMEM;
    }
    int rc = json_dumpf(log, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(log);
    if (rc == 0 && fputc('\n', out) == EOF)
        rc = -1;
    return rc || ferror(out) ? NA_E_WRITE : NA_OK;
}
