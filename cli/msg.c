/*
 * msg.c - the only place nanaudit prints its own messages to stderr,
 * after curl's src/tool_msgs.c: "nanaudit: FILE: problem" for errors,
 * "nanaudit: warning: FILE: problem" for warnings and
 * "nanaudit: problem (try 'nanaudit CMD --help')" for usage errors.
 * Every path and message is passed through na_escape_text, so bytes from
 * a hostile file name or tensor name cannot reach the terminal raw.
 */
#include "cli.h"

#include <stdarg.h> /* va_list */
#include <stdio.h>  /* vsnprintf, fputs */
#include <stdlib.h> /* malloc, free */

/* Write s escaped; falls back to '?' when memory is short. */
static void put_escaped(const char *s)
{
    char probe[1];
    size_t need = na_escape_text(s, probe, sizeof probe) + 1;
    char *buf = malloc(need);
    if (!buf) {
        fputs("?", stderr);
        return;
    }
    na_escape_text(s, buf, need);
    fputs(buf, stderr);
    free(buf);
}

static cli_msg_sink_fn g_sink;
static void *g_sink_ud;

void cli_msg_sink(cli_msg_sink_fn fn, void *ud)
{
    g_sink = fn;
    g_sink_ud = ud;
}

static void vmsg(const char *kind, const char *path, const char *fmt, va_list ap)
{
    char line[NA_ERR_LEN + 256];
    vsnprintf(line, sizeof line, fmt, ap);
    if (g_sink) /* the report's too */
        g_sink(g_sink_ud, *kind != '\0', path, line);
    fputs("nanaudit: ", stderr);
    fputs(kind, stderr);
    if (path) {
        put_escaped(path);
        fputs(": ", stderr);
    }
    put_escaped(line);
    fputc('\n', stderr);
}

void cli_error(const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", path, fmt, ap);
    va_end(ap);
}

void cli_warn(const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("warning: ", path, fmt, ap);
    va_end(ap);
}

int cli_usage(int cmd, const char *fmt, ...)
{
    char line[NA_ERR_LEN + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    const char *name = cli_cmd_name(cmd);
    fputs("nanaudit: ", stderr);
    put_escaped(line);
    fprintf(stderr, " (try 'nanaudit%s%s --help')\n", *name ? " " : "", name);
    return 2;
}
