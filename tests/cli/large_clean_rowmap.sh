#!/bin/bash
# clean keeps 2 bits per sample of every cleaned tensor (lib/clean.h
# row_state). An HDF5 dataset of 2^40 rows never written (a few KiB) with
# --normalize (so it is not copied as a constant) needs 256 GiB for it:
# the error names that map, exit 4, nothing written (audit 25a: it said
# "out of memory for 1 features"). Run only where such an allocation
# fails at once: heuristic overcommit (mode 0) and less than 256 GiB of
# memory and swap; elsewhere calloc could succeed and the run take hours.
# A state this large first goes to a file beside the output
# (na_clean_opts_t.state_file_min), which needs twice its size free
# there: the error says why that failed too. Skipped where it would fit.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
mode=$(cat /proc/sys/vm/overcommit_memory 2>/dev/null)
kib=$(awk '/^(MemTotal|SwapTotal):/ {s += $2} END {print s}' /proc/meminfo 2>/dev/null)
if [ "$mode" != 0 ] || [ -z "$kib" ] || [ "$kib" -ge $((200 * 1024 * 1024)) ]; then
    echo "SKIP $NA_TEST_NAME: overcommit mode '$mode', $kib KiB of memory and swap"
    exit 0
fi
free_kib=$(df -Pk "$T" | awk 'NR == 2 {print $4}')
if [ -z "$free_kib" ] || [ "$free_kib" -ge $((2 * 256 * 1024 * 1024)) ]; then
    echo "SKIP $NA_TEST_NAME: $free_kib KiB free in $T: the state file would fit"
    exit 0
fi
cd "$T" || exit 1
"$NA_PYTHON" -c '
import h5py
with h5py.File("r40.h5", "w") as f:
    f.create_dataset("e", shape=(2**40,), dtype="f4", chunks=(1024,))' || fail "r40.h5"
mkdir out
expect_exit 4 timeout 60 "$NANAUDIT" clean --normalize minmax -o out/r40.h5 r40.h5
msg="nanaudit: r40.h5: /e: out of memory for the state of 1099511627776 samples (274877906945 bytes: 2 bits per sample); and no room for 274877906945 bytes in 'out' ("
assert_eq "$(head -c ${#msg} stderr)" "$msg" "r40"
assert_eq "$(wc -l < stderr)" 1 "lines of stderr"
expect_stderr_contains " of them for the output)"
assert_eq "$(ls -A out)" "" "files left"
pass
