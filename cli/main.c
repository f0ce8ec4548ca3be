/*
 * main.c - nanaudit's entry point, kept short after curl's
 * src/tool_main.c: pick the subcommand, parse its options (options.c),
 * run it (scan.c, info.c) and return its exit code (exitcode.c).
 */
#include "cli.h"

#include <stdio.h>  /* printf */
#include <stdlib.h> /* free */
#include <string.h> /* strcmp */

static int dispatch(int argc, char **argv)
{
    cli_opts_t o;
    cli_opts_init(&o);
    if (argc < 2)
        return cli_usage(CLI_GLOBAL, "no command given");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "scan"))
        o.cmd = CLI_SCAN;
    else if (!strcmp(cmd, "info"))
        o.cmd = CLI_INFO;
    else if (!strcmp(cmd, "clean"))
        o.cmd = CLI_CLEAN;
    else if (cmd[0] != '-')
        return cli_usage(CLI_GLOBAL, "unknown command '%s'", cmd);

    int rc = cli_parse(argc, argv, o.cmd ? 2 : 1, &o);
    if (rc == 0 && o.help) {
        cli_print_help(o.cmd ? o.cmd : CLI_GLOBAL);
    } else if (rc == 0 && o.version) {
        printf("nanaudit %s\n", NA_VERSION);
    } else if (rc == 0 && !o.cmd) {
        rc = cli_usage(CLI_GLOBAL, "no command given");
    } else if (rc == 0) {
        rc = o.cmd == CLI_SCAN ? cli_scan(&o) : (o.cmd == CLI_CLEAN ? cli_clean(&o) : cli_info(&o));
    }
    free(o.inputs);
    cli_clean_opts_free(&o.clean);
    cli_gate_free(&o);
    return rc;
}

int main(int argc, char **argv)
{
    cli_sigbus_install();
    int rc = dispatch(argc, argv);
    /* A failed write to stdout (a full disk, a closed pipe) is exit 4. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(NULL, "write error on standard output");
        rc = cli_exit_merge(rc, 4);
    }
    return rc;
}
