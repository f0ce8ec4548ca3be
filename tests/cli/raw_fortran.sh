#!/bin/bash
# raw_fortran.sh - real raw files: scipy's Fortran unformatted records
# (tests/data/real/raw, see SOURCES.md): a 4-byte record marker, 3300
# values 0..3299 (a 15x10x22 array), then a 4-byte end marker. The data
# does not reach the end of the file, so --offset 4 --shape 3300 must be
# refused with both byte counts; --length 26400 says where the data ends.
. "$(dirname "$0")/helpers.sh"
R="$NA_TEST_DATA/real/raw"
SF8="$R/scipy-fortran-sf8-15x10x22.dat"
SI4="$R/scipy-fortran-si4-15x10x22.dat"

expect_exit 3 "$NANAUDIT" scan --dtype F64 --offset 4 --shape 3300 "$SF8"
expect_stderr_contains "shape [3300] of F64 needs 26400 bytes, but the data after offset 4 is 26404 bytes"
expect_exit 3 "$NANAUDIT" scan --dtype F64 --offset 4 "$SF8"
expect_stderr_contains "data size 26404 bytes is not a multiple of the F64 element size (8 bytes); give --shape, --offset or --length"

# I32: 13204 bytes after the offset divide by 4, so without --length the
# end marker (13200) is read as a 3301st element - and the z-score test
# flags exactly it. This is why --length exists.
expect_exit 0 "$NANAUDIT" scan --format json --dtype I32 --offset 4 "$SI4"
cp "$T/stdout" "$T/si4.json"
expect_json "$T/si4.json" 'j["files"][0]["tensors"][0]["elements"]' '3301'
expect_json "$T/si4.json" 'j["files"][0]["tensors"][0]["max"]' '13200.0'
expect_json "$T/si4.json" 'j["files"][0]["tensors"][0]["outliers"]["locations"]' '[[3300]]'

if "$NANAUDIT" scan --help 2>&1 | grep -q -- '--length'; then
    for args in "--dtype F64 $SF8" "--dtype I32 $SI4"; do
        len=26400; case "$args" in *I32*) len=13200 ;; esac
        # shellcheck disable=SC2086
        expect_exit 0 "$NANAUDIT" scan --format json --offset 4 --length $len --shape 22x10x15 $args
        cp "$T/stdout" "$T/ok.json"
        expect_json "$T/ok.json" 'j["files"][0]["tensors"][0]["shape"]' '[22, 10, 15]'
        expect_json "$T/ok.json" '[j["files"][0]["tensors"][0][k] for k in ("elements", "finite", "zeros", "min", "max", "mean")]' \
            '[3300, 3300, 1, 0.0, 3299.0, 1649.5]'
        # std of 0..3299 (ddof=0) = sqrt((3300^2 - 1) / 12)
        expect_json "$T/ok.json" 'abs(j["files"][0]["tensors"][0]["std"] - ((3300**2 - 1) / 12) ** 0.5) < 1e-9' 'true'
    done
    expect_exit 3 "$NANAUDIT" scan --dtype F64 --offset 4 --length 26408 "$SF8"
    expect_stderr_contains "--length 26408 goes past the end of the file: 26404 bytes after offset 4"
else
    echo "SKIP part of $NA_TEST_NAME: this nanaudit has no --length option yet"
fi
pass
