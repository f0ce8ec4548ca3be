#!/bin/bash
# help_ranges.sh - regression (tester19): the accepted ranges of
# --threads (1..4096), --max-locations (0..1000000) and --hdf5-timeout
# (0, or 0.001..86400 s) were stated only in the error for a bad value.
# They are now in --help (scan and clean) and man/nanaudit.1, and each
# bound is checked: the last value in is accepted, the first out is exit 2
# with that range in its one line.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
"$N" scan --help >h.scan
"$N" clean --help >h.clean
# --help wraps lines: join them to search phrases
tr -s ' \n' ' ' <h.scan >scan.txt
tr -s ' \n' ' ' <h.clean >clean.txt
sed 's/\\-/-/g' "$NA_SRC/man/nanaudit.1" | tr -s ' \n' ' ' >man.txt
for f in scan.txt clean.txt; do
    grep -qF "threads, 1 to 4096" $f || fail "$f: no --threads range"
    grep -qF "(0 to 1000000; default 5)" $f || fail "$f: no --max-locations range"
    grep -qF "(0.001 to 86400; default 60, 0 = no limit" $f || fail "$f: no --hdf5-timeout range"
done
grep -qF "Scan with N threads, 1 to 4096" man.txt || fail "man: no scan --threads range"
grep -qF "Fit, write and verify with N threads, 1 to 4096" man.txt || fail "man: no clean --threads range"
grep -qF "N from 0 to 1000000" man.txt || fail "man: no --max-locations range"
grep -qF "SECONDS is 0 or from 0.001" man.txt || fail "man: no --hdf5-timeout range"
grep -qF "to 86400; default 60" man.txt || fail "man: no --hdf5-timeout maximum"

printf '\0\0\200\77' >one.f32 # 1.0f
ok() { expect_exit 0 "$N" scan -q --dtype F32 "$@" one.f32; }
bad() {
    local want="$1"; shift
    expect_exit 2 "$N" scan --dtype F32 "$@" one.f32
    assert_eq "$(cat "$T/stderr")" "nanaudit: $want (try 'nanaudit scan --help')"
}
ok --threads 1
ok --threads 4096
bad "--threads: '0' is not a thread count from 1 to 4096" --threads 0
bad "--threads: '4097' is not a thread count from 1 to 4096" --threads 4097
ok --max-locations 0
ok --max-locations 1000000
bad "--max-locations: '1000001' is not a count from 0 to 1000000" --max-locations 1000001
ok --hdf5-timeout 0
ok --hdf5-timeout 0.001
ok --hdf5-timeout 86400
bad "--hdf5-timeout: '0.0009' is not 0 (no limit) or a number of seconds from 0.001 to 86400" --hdf5-timeout 0.0009
bad "--hdf5-timeout: '86401' is not 0 (no limit) or a number of seconds from 0.001 to 86400" --hdf5-timeout 86401
pass
