#!/bin/bash
# clean --dry-run reports what a real run reports (issue 4, "--dry-run:
# compute and report everything, write nothing"): the same exit code,
# tensor lines, statistics and warnings (cli/clean.c warn_emitted and
# warn_packing serve both paths); only "output", "written", "dry_run",
# "input_sha256" (no write pass hashes the input) and the closing line
# differ. A writer's refusal (cli/clean.c dry_open) ends both alike. Regressions: an empty (0-row) array had no "after" statistics
# in a dry run; overflow and marker-collision warnings were worded
# differently ("would overflow"). The HDF5 packing warning:
# clean_hdf5_packing.sh; the HDF5 writer's refusals: clean_hdf5_dry_run.sh.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
# F16: min-max to 0:70000 takes the 4 past F16's 65504: +Inf (a value=X
# fill that does not fit is refused: clean_value_fits.sh)
np.save("f16.npy", np.array([1, np.nan, 3, 4], np.float16))
x = np.arange(12, dtype=np.float64).reshape(6, 2)
x[2, 1] = np.nan
np.savez("z.npz", a=x, empty=np.zeros((0, 3)))
s = np.zeros(4, dtype=[("a", "<f8"), ("b", "<f4")])
s["a"], s["b"] = [1, 2, 3, 4], [5, 6, 7, 8]
np.save("st.npy", s)
np.savez("st.npz", s=s, p=np.arange(4.0))
PY

# same_reports ARGS...: a real run (-o) and a --dry-run, JSON and text
same_reports() {
    expect_exit "$1" "$N" clean "${@:2}" -o "real.$2" --report real.json
    cp stdout real.txt
    rm -f dry.json
    before="$(ls -A)"
    expect_exit "$1" "$N" clean "${@:2}" --dry-run --report dry.json
    cp stdout dry.txt
    assert_eq "$(ls -A | grep -vx -e dry.json -e dry.txt -e stdout -e stderr)" \
        "$(echo "$before" | grep -vx -e dry.txt -e stdout -e stderr)" "files after --dry-run"
    assert_eq "$(sed '$d' dry.txt)" "$(sed '$d' real.txt)" "text report of $2"
    assert_eq "$(tail -n 1 dry.txt)" "dry run: no output written" "closing line"
    "$NA_PYTHON" - <<'PY' || fail "JSON reports of $2 differ"
import json
r, d = json.load(open("real.json")), json.load(open("dry.json"))
assert (r["output"], r["written"], r["dry_run"]) == (r["output"], True, False), r
assert (d["output"], d["written"], d["dry_run"], d["input_sha256"]) == (None, False, True, None), d
for k in ("output", "written", "dry_run", "input_sha256"):
    del r[k], d[k]
assert r == d, (r, d)
PY
}

same_reports 1 f16.npy --nonfinite zero --normalize minmax --feature-range 0:70000
expect_json dry.json '[t["warnings"] for t in j["tensors"]]' '[["1 value(s) overflowed the output dtype"]]'
expect_json dry.json '[j["tensors"][0]["after"][k] for k in ("finite", "pos_inf")]' '[3, 1]'
expect_stdout_contains "    warning: 1 value(s) overflowed the output dtype"

same_reports 0 z.npz --zscore 3 --normalize minmax --allow-misaligned --max-drop-fraction 0.5
expect_json dry.json '[(t["name"], t["samples_dropped"]["total"], t["after"]["elements"]) for t in j["tensors"]]' \
    '[["a", 1, 10], ["empty", 0, 0]]'

# Structured arrays are copied whole by the .npy and .npz writers
# (tests/cli/clean_npy_parts.sh): a dry run reports what a real run does
# (they were a writer refusal, exit 3, in both) and writes nothing.
for f in st.npy st.npz; do
    same_reports 0 "$f" --normalize minmax
    cmp -s "$f" "real.$f" || [ "$f" = st.npz ] || fail "real.$f is not a copy"
done
expect_json dry.json '[[t["name"], t["status"]] for t in j["tensors"]]' \
    '[["s.a", "copied"], ["s.b", "copied"], ["p", "cleaned"]]'
pass
