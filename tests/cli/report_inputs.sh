#!/bin/bash
# Report files never replace the run's other inputs, and a report that
# cannot be written is said (issue 4 safety; issue 5 reports):
#  - clean --report / -o naming the --apply-params file, scan --report
#    naming the --policy file: exit 2 before any work, the file unchanged
#    (before, the fitted parameters or the policy became a report);
#  - clean --report to a full device: exit 4 with one line on stderr, and
#    the JSON on stdout says exit_code 4 (before: no message, exit_code 0).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c "
import numpy as np
np.save('train.npy', np.arange(10.0)); np.save('test.npy', np.arange(5.0))" || fail "inputs"
N="$NANAUDIT"
expect_exit 0 "$N" clean --normalize zscore train.npy -o t.npy --save-params p.json
cp p.json p.orig
expect_exit 2 "$N" clean --normalize zscore --apply-params p.json test.npy -o o.npy --report p.json
expect_stderr_contains "nanaudit: p.json: --report would overwrite an input file (p.json); the input is never modified"
expect_exit 2 "$N" clean --normalize zscore --apply-params p.json test.npy -o p.json --force
expect_stderr_contains "nanaudit: p.json: is the --apply-params file; -o never replaces an input"
ln -s p.json plink.json
expect_exit 2 "$N" clean --normalize zscore --apply-params plink.json test.npy -o p.json --force
cmp -s p.json p.orig || fail "p.json changed"
[ ! -e o.npy ] || fail "o.npy written"
# and it still applies
expect_exit 0 "$N" clean --normalize zscore --apply-params p.json test.npy -o o.npy --report r.json
expect_json r.json 'j["exit_code"]' '0'

make_st m.safetensors '{"tensors": [{"name": "w", "dtype": "F32", "shape": [2], "values": [1, 2]}]}'
printf 'version: 1\ndefaults:\n  fail_on: [nan]\n' > pol.yaml
cp pol.yaml pol.orig
expect_exit 2 "$N" scan --policy pol.yaml --report pol.yaml m.safetensors
expect_stderr_contains "pol.yaml: --report would overwrite an input file (pol.yaml)"
cmp -s pol.yaml pol.orig || fail "pol.yaml changed"
expect_exit 0 "$N" scan --policy pol.yaml --report s.json m.safetensors

# (tenth fresh-user round) the inputs a walk finds are inputs too: a
# shard an index names, a file in a scanned folder; a report kept in the
# folder (skipped: not data) is written again
mkdir ck
make_st ck/s1.safetensors '{"tensors": [{"name": "a", "dtype": "F32", "shape": [2], "values": [1, 2]}]}'
make_st ck/s2.safetensors '{"tensors": [{"name": "b", "dtype": "F32", "shape": [1], "values": [3]}]}'
printf '{"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}}' > ck/model.safetensors.index.json
cp ck/s2.safetensors s2.orig
expect_exit 2 "$N" scan ck/model.safetensors.index.json --report ck/s2.safetensors
expect_stderr_contains "nanaudit: ck/s2.safetensors: --report would overwrite an input file (ck/s2.safetensors); the input is never modified"
expect_exit 2 "$N" scan ck --report ck/s1.safetensors
expect_stderr_contains "--report would overwrite an input file (ck/s1.safetensors)"
ln -s ck/s2.safetensors s2link.json
expect_exit 2 "$N" scan ck --report s2link.json
cmp -s ck/s2.safetensors s2.orig || fail "the shard changed"
expect_exit 0 "$N" scan ck --report ck/report.json
expect_exit 0 "$N" scan ck --report ck/report.json
expect_json ck/report.json '[f["path"] for f in j["files"]]' \
    '["ck/model.safetensors.index.json", "ck/s1.safetensors", "ck/s2.safetensors"]'
# (eighteenth fresh-user round) the files the walk skips or cannot read
# are the folder's files too: notes.txt and a raw file scanned without
# --dtype were overwritten. Only a nanaudit report of an earlier run
# (every format, or an empty file) is written again.
echo "my notes" >ck/notes.txt
head -c 4096 /dev/urandom >ck/raw.bin
cp ck/notes.txt notes.orig
cp ck/raw.bin raw.orig
expect_exit 2 "$N" scan ck --report ck/notes.txt
expect_stderr_contains "nanaudit: ck/notes.txt: --report would overwrite a file of the scanned directory that is not a nanaudit report (ck/notes.txt); the input is never modified"
expect_exit 2 "$N" scan ck --report ck/out.json --report ck/raw.bin
expect_stderr_contains "(ck/raw.bin); the input is never modified"
cmp -s ck/notes.txt notes.orig || fail "notes.txt changed"
cmp -s ck/raw.bin raw.orig || fail "raw.bin changed"
rm ck/notes.txt ck/raw.bin
: >ck/empty.md
for run in 1 2; do
    expect_exit 0 "$N" scan ck --report ck/r.xml --report ck/r.md --report ck/r.sarif --report ck/empty.md
done
head -c 13 ck/empty.md | grep -q '^## nanaudit: ' || fail "empty.md not written"
# (nineteenth round) hidden files, which the walk does not list, and files
# that only name nanaudit are not reports either
echo "SECRET=1" >ck/.env
mkdir -p ck/.hid && echo h >ck/.hid/x.txt
printf '{\n  "name": "nanaudit",\n  "version": "1.0.0"\n}\n' >ck/package.json
printf '## nanaudit: notes\n\nhow we gate\n' >ck/NOTES.md
for f in ck/.env ck/.hid/x.txt ck/package.json ck/NOTES.md; do
    cp "$f" keep.orig
    expect_exit 2 "$N" scan ck --report "$f"
    expect_stderr_contains "--report would overwrite a file of the scanned directory that is not a nanaudit report"
    cmp -s "$f" keep.orig || fail "$f changed"
done
rm -r ck/.env ck/.hid ck/package.json ck/NOTES.md

# a report file bind-mounted on its own (docker -v $PWD/a.json:/out/a.json)
# cannot be renamed over (EBUSY): written in place (nineteenth round: exit 4,
# no report). Where bind mounts are not allowed, skipped.
echo '{"old": 1}' >bm.json
mkdir -p bmdir && : >bmdir/audit.json
if mount --bind bm.json bmdir/audit.json 2>/dev/null; then
    rc=0
    "$N" scan -q m.safetensors --report bmdir/audit.json >/dev/null 2>err.txt || rc=$?
    umount bmdir/audit.json
    assert_eq "$rc" 0 "--report onto a bind-mounted file ($(cat err.txt))"
    expect_json bm.json 'j["summary"]["exit_code"]' '0'
else
    echo "note: no bind mount here; the bind-mounted report case is skipped"
fi

# /dev/stdout while standard output is a file (a CI log): --report cut
# the log (O_TRUNC), --save-params and -o --force renamed a new file over
# it or over /dev/stdout itself (eighteenth fresh-user round). Refused;
# on a pipe it is where the report goes.
seq 5 >ci.log
rc=0
"$N" scan -q m.safetensors --report /dev/stdout >>ci.log 2>err.txt || rc=$?
assert_eq "$rc" 2 "--report /dev/stdout >> ci.log"
grep -q "^nanaudit: --report: '/dev/stdout' is this run's standard output, a file that writing it would truncate; give a file name of its own" err.txt ||
    fail "message: $(cat err.txt)"
rc=0
"$N" clean -q --nonfinite zero m.safetensors -o x.st --save-params /dev/fd/1 >>ci.log 2>err.txt || rc=$?
assert_eq "$rc" 2 "--save-params /dev/fd/1 >> ci.log"
# (/dev/fd/1 here: a nanaudit that renamed over /dev/stdout would break
# the test machine; /proc refuses the rename)
rc=0
"$N" clean -q --nonfinite zero m.safetensors -o /dev/fd/1 --force >>ci.log 2>err.txt || rc=$?
assert_eq "$rc" 2 "-o /dev/fd/1 --force >> ci.log"
grep -q "^nanaudit: -o: '/dev/fd/1' is this run's standard output, a file that writing it would replace" err.txt ||
    fail "message: $(cat err.txt)"
assert_eq "$(cat ci.log)" "$(seq 5)" "ci.log"
"$N" scan -q m.safetensors --report /dev/stdout 2>/dev/null | grep -q '"schema_version": 1' ||
    fail "--report /dev/stdout on a pipe"
# clean --report through a dangling link to the output (the output is
# not there yet): refused before any work; it replaced the cleaned copy
ln -s o3.npy r3.json
expect_exit 2 "$N" clean --normalize zscore test.npy -o o3.npy --report r3.json
expect_stderr_contains "nanaudit: r3.json: --report would overwrite the -o output"
[ ! -e o3.npy ] || fail "o3.npy written"

# An existing data file that is not an input is not replaced either
# (round 27b HIGH: `scan --report shards/model-*.safetensors`, the report
# name left out, made the first shard the report: not audited, exit 0,
# the shard became JSON). By content (safetensors, HDF5, npy, a
# sharded-checkpoint index, ...) or by name (raw data has no signature);
# an earlier report, an empty file or other JSON is overwritten as before.
mkdir g
make_st g/model-00001.safetensors '{"tensors": [{"name": "w", "dtype": "F32", "shape": [2], "values": [1, "nan"]}]}'
make_st g/model-00002.safetensors '{"tensors": [{"name": "w", "dtype": "F32", "shape": [2], "values": [1, 2]}]}'
cp g/model-00001.safetensors shard1.orig
expect_exit 2 "$N" scan --fail-on nan,inf --report g/model-00001.safetensors g/model-00002.safetensors
expect_stderr_contains "nanaudit: g/model-00001.safetensors: --report: the file exists and holds safetensors data, which --report never replaces (a report name left out before a glob?); nothing done: give another name, or remove the file first"
assert_eq "$(wc -l <"$T/stderr")" "1" "stderr lines"
cmp -s g/model-00001.safetensors shard1.orig || fail "the shard was replaced"
cp test.npy data.out
expect_exit 2 "$N" scan -q m.safetensors --report data.out
expect_stderr_contains "nanaudit: data.out: --report: the file exists and holds NumPy .npy data, which --report never replaces"
printf '{"metadata": {"total_size": 8}, "weight_map": {"w": "m.safetensors"}}' > idx.json
expect_exit 2 "$N" scan -q m.safetensors --report idx.json
expect_stderr_contains "nanaudit: idx.json: --report: the file exists and holds sharded-checkpoint index data"
printf 'xyz' > band.bin
expect_exit 2 "$N" scan -q m.safetensors --report band.bin
expect_stderr_contains "nanaudit: band.bin: --report: the file exists and is named like a data file, which --report never replaces"
expect_exit 2 "$N" clean --normalize zscore test.npy -o o4.npy --save-params data.out
expect_stderr_contains "nanaudit: data.out: --save-params: the file exists and holds NumPy .npy data, which --save-params never replaces; nothing done"
expect_exit 2 "$N" clean --normalize zscore test.npy -o o4.npy --report band.bin
expect_stderr_contains "nanaudit: band.bin: --report: the file exists and is named like a data file"
[ ! -e o4.npy ] || fail "o4.npy written"
cmp -s data.out test.npy || fail "data.out replaced"
assert_eq "$(cat band.bin)" "xyz" "band.bin"
# what is overwritten: an earlier report, an empty file (even one named
# like data), other JSON
: > empty.safetensors
echo '{"other": 1}' > other.json
for f in r.json empty.safetensors other.json; do
    expect_exit 0 "$N" scan -q m.safetensors --report "$f"
    expect_json "$f" 'j["summary"]["files"]' '1'
done

if [ -w /dev/full ]; then
    expect_exit 4 "$N" clean --format json test.npy -o o2.npy --report /dev/full
    # exit 4, but the copy is there: the line says so (round 25b)
    expect_stderr_contains "nanaudit: /dev/full: cannot write the report: No space left on device; o2.npy was written and verified"
    assert_eq "$(wc -l <"$T/stderr")" "1" "stderr lines"
    [ -f o2.npy ] || fail "o2.npy not written"
    expect_json "$T/stdout" 'j["exit_code"]' '4'
    [ -c /dev/full ] || fail "/dev/full removed"
fi
pass
