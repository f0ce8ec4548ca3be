#!/bin/bash
# summary_exact.sh - regression (tester19): the text summary rounded the
# element total to three digits ("4.1e6 elements" for 4,100,013) while
# the NaN count beside it was exact, so the two could not be compared
# (4.1e6 - 13 NaN?). Every count on the line is now an exact integer.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

# "y\n" bytes: no finding and no note, so -q prints the summary alone
yes | head -c 4100013 >z.u8
expect_exit 0 "$N" scan --dtype U8 z.u8
expect_stdout_contains "1 file, 1 tensor, 4100013 elements: 0 NaN, 0 Inf, 0 outliers; OK (exit 0)"
expect_stdout_lacks "e6"
# the tensor row and the summary agree
expect_stdout_contains " 4100013 "
# below a million (unchanged)
yes | head -c 999999 >s.u8
expect_exit 0 "$N" scan --dtype U8 s.u8
expect_stdout_contains "1 file, 1 tensor, 999999 elements: 0 NaN"
# several files add up exactly: 4100013 + 999999 + 1000000
yes | head -c 1000000 >m.u8
expect_exit 0 "$N" scan -q --dtype U8 z.u8 s.u8 m.u8
assert_eq "$(cat "$T/stdout")" "3 files, 3 tensors, 6100012 elements: 0 NaN, 0 Inf, 0 outliers; OK (exit 0)"
pass
