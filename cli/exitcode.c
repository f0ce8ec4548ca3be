/*
 * exitcode.c - the one mapping from statuses to exit codes and their
 * precedence (DESIGN.md, "Exit codes"; like curl's documented codes, the
 * meanings never change):
 *   0 clean, 1 a finding violates the policy, 2 usage error,
 *   3 an input could not be read / is invalid / could not be audited,
 *   4 internal or environment error (out of memory, write error).
 * When several apply the highest wins, 4 > 3 > 1 > 0; 2 is decided
 * before any input is opened, so it never meets the others.
 */
#include "cli.h"

/* The mapping itself lives with the statuses (lib/status.c), so the
 * library's documentation and the CLI cannot disagree. */
int cli_exit_for_status(na_status_t s)
{
    return na_status_exit_code(s);
}

/* Rank of a code in the precedence; unknown codes rank as internal. */
static int rank(int code)
{
    switch (code) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 2;
    case 3: return 3;
    default: return 4;
    }
}

int cli_exit_merge(int a, int b)
{
    return rank(a) >= rank(b) ? a : b;
}
