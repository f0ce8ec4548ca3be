#!/bin/bash
# clean_include_list.sh - --include and --exclude take comma-separated
# lists, as --together does (round 38a: '--include /ub,/us' was one glob
# that matched nothing: a warning, nothing cleaned, exit 0). Each element
# that matches nothing gets its own warning; empty elements are a usage
# error (exit 2).
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c '
import h5py, numpy as np
with h5py.File("d.h5", "w") as f:
    for n in "abc":
        f[n] = np.arange(10.0).reshape(5, 2) + ord(n)' || fail "d.h5"
expect_exit 0 "$NANAUDIT" clean d.h5 --normalize minmax --include /a,/c -o o.h5 --format json
expect_json "$T/stdout" '[(t["name"], t["status"]) for t in j["tensors"]]' \
    '[["/a", "cleaned"], ["/b", "copied"], ["/c", "cleaned"]]'
expect_stderr_empty
expect_exit 0 "$NANAUDIT" clean d.h5 --normalize minmax --exclude '/a,/b' -o o2.h5 --format json
expect_json "$T/stdout" '[(t["name"], t["status"]) for t in j["tensors"]]' \
    '[["/a", "copied"], ["/b", "copied"], ["/c", "cleaned"]]'
# the element that matches nothing is named alone; a near miss refuses
expect_exit 0 "$NANAUDIT" clean d.h5 --normalize minmax --include '/a,/zz' -o o3.h5
expect_stderr_contains "nanaudit: warning: d.h5: --include '/zz' matches no tensor"
expect_stderr_lacks "'/a,"
expect_exit 2 "$NANAUDIT" clean d.h5 --normalize minmax --include '/a,/zz,b' -o o3b.h5
expect_stderr_contains "nanaudit: d.h5: --include 'b' matches no tensor (HDF5 paths start with '/': did you mean '/b'?)"
[ -e o3b.h5 ] && fail "o3b.h5 written"
for bad in ',/a' '/a,' '/a,,/b'; do
    expect_exit 2 "$NANAUDIT" clean d.h5 --normalize minmax --include "$bad" -o o4.h5
    expect_stderr_contains "a comma-separated list of tensor names or globs"
    expect_exit 2 "$NANAUDIT" clean d.h5 --normalize minmax --exclude "$bad" -o o4.h5
done
[ -e o4.h5 ] && fail "o4.h5 written"
# a --together element that names nothing is refused before the fit reads
# anything (round 37a: after it): a usage error, its line only
expect_exit 2 "$NANAUDIT" clean d.h5 --normalize minmax --together /a,/zz -o o5.h5 --report r.json
expect_stderr_contains "--together: '/zz' matches no tensor"
expect_stdout_lacks "/a: F64 -> F64"
[ -e r.json ] || [ -e o5.h5 ] && fail "a report or an output written"
# near misses of round 39a: blanks around an element, a leading '/' on a
# name of another format; an exact name with glob characters matches
expect_exit 2 "$NANAUDIT" clean d.h5 --normalize minmax --exclude '/a, /b' -o o6.h5
expect_stderr_contains "--exclude ' /b' matches no tensor (blanks are part of a name: did you mean '/b'?)"
"$NA_PYTHON" -c '
import numpy as np
np.savez("n.npz", **{"x": np.arange(6.0).reshape(3, 2), "br[1]": np.arange(6.0).reshape(3, 2) + 1})' ||
    fail "n.npz"
expect_exit 2 "$NANAUDIT" clean n.npz --normalize minmax --exclude /x -o o7.npz
expect_stderr_contains "--exclude '/x' matches no tensor (only HDF5 paths start with '/': did you mean 'x'?)"
expect_exit 0 "$NANAUDIT" clean n.npz --normalize minmax --exclude 'br[1]' -o o8.npz --format json
expect_json "$T/stdout" '[(t["name"], t["status"]) for t in j["tensors"]]' '[["x", "cleaned"], ["br[1]", "copied"]]'
# a comma inside a bracket expression is the pattern's: 'a[,]b' names
# "a,b" (round 39a: it was split into 'a[' and ']b', two unmatched names)
"$NA_PYTHON" -c '
import numpy as np
np.savez("c.npz", **{"a,b": np.arange(6.0).reshape(3, 2), "c": np.arange(6.0).reshape(3, 2) + 1})' ||
    fail "c.npz"
expect_exit 0 "$NANAUDIT" clean c.npz --normalize minmax --exclude 'a[,]b' -o o9.npz --format json
expect_json "$T/stdout" '[(t["name"], t["status"]) for t in j["tensors"]]' '[["a,b", "copied"], ["c", "cleaned"]]'
expect_stderr_lacks "matches no tensor"
expect_exit 0 "$NANAUDIT" clean c.npz --normalize minmax --include 'c,a[],]b' -o o10.npz --format json
expect_json "$T/stdout" '[(t["name"], t["status"]) for t in j["tensors"]]' '[["a,b", "cleaned"], ["c", "cleaned"]]'
pass
