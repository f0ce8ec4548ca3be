#!/bin/bash
# A file truncated by another process while scan reads it is that file's
# error, and the run goes on (README "Reliability", man page EXIT STATUS
# 3: "the other inputs are still audited and reported"). Found by a
# tester: the SIGBUS handler (cli/sigbus.c) used to end the run with one
# line and exit 3, so the other inputs were never audited and neither the
# table, the JSON nor any --report was written. Now a fault inside a
# mapped window is resumed with zero pages (formats/mapfile.c,
# na_map_sigbus) and the scanner turns the tensor and its file into
# errors; clean writes nothing under OUT but writes its report.
#
# The cut: a 60 MB tensor lies in one 64 MiB window, which scan --mad
# reads several times (about a second). Once the window shows in
# /proc/PID/maps the process is stopped, the file is cut to one page and
# the process continued, so the window it is reading loses its pages: a
# SIGBUS on its next touch. Should the scan have left the window in the
# moment between the look and the stop (a loaded machine), the next
# window's size check finds the cut instead ("file shrank from ..."),
# which is the same error; should it have finished the file, the case is
# run again.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
MSG="the file shrank while it was being read (truncated by another process?)"
"$NA_PYTHON" -c "
import numpy as np
from safetensors.numpy import save_file
w = np.random.default_rng(0).normal(size=15_000_000).astype(np.float32)
w[::1_000_000] = np.nan
save_file({'w': w, 'z': np.ones(1000, np.float32)}, 'big.safetensors')
v = np.arange(1000, dtype=np.float32)
v[::143] = np.nan  # 7 NaN
save_file({'v': v}, 'other.safetensors')
" || fail "making the inputs"

# cut_victim CMD...: run CMD (nanaudit reading victim.safetensors, a fresh copy
# of big.safetensors) in the background; once it maps the victim, stop
# it, cut the victim to 4096 bytes and continue it. Sets RC; CMD's output
# is in $T/stdout and $T/stderr.
cut_victim() {
    cp big.safetensors victim.safetensors || fail "cp"
    "$@" >"$T/stdout" 2>"$T/stderr" </dev/null &
    local pid=$! i
    for i in $(seq 3000); do
        grep -q "/victim.safetensors$" "/proc/$pid/maps" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    kill -STOP "$pid" 2>/dev/null
    truncate -s 4096 victim.safetensors
    kill -CONT "$pid" 2>/dev/null
    RC=0
    wait "$pid" || RC=$?
}

# The line of the cut file: the tensor being read and, when it was the
# first, the one after it that was not read.
LINE_RE="^nanaudit: victim\.safetensors: (w: ($(printf '%s' "$MSG" | sed 's/[().?]/\\&/g')|file shrank from [0-9]+ to 4096 bytes while being read); 1 later tensor not audited|z: $(printf '%s' "$MSG" | sed 's/[().?]/\\&/g'))$"

# scan_case FORMAT: scan the victim and other.safetensors (text or json on
# stdout, a --report file either way) until a cut lands in the victim.
scan_case() {
    local fmt=$1 try
    for try in 1 2 3 4 5; do
        rm -f rep.json
        cut_victim "$NANAUDIT" scan --threads 1 --mad 3.5 --format "$fmt" --report rep.json \
            victim.safetensors other.safetensors
        if [ "$RC" = 1 ] && [ ! -s "$T/stderr" ]; then
            echo "note: the scan ended before the cut (try $try); again"
            continue
        fi
        assert_eq "$RC" 3 "scan exit (stderr: $(cat "$T/stderr"))"
        assert_eq "$(wc -l <"$T/stderr")" 1 "stderr lines"
        grep -qE "$LINE_RE" "$T/stderr" || fail "stderr: $(cat "$T/stderr")"
        # the other file is audited: exact counts, in the report
        expect_json rep.json "[f['path'] for f in j['files']]" '["victim.safetensors", "other.safetensors"]'
        expect_json rep.json "[(f['status'], f['error']) for f in j['files']][1]" '["ok", null]'
        expect_json rep.json "[(t['name'], t['status'], t['nan'], t['finite']) for t in j['files'][1]['tensors']]" \
            '[["v", "ok", 7, 993]]'
        # the cut file: an error naming the tensor, and nothing read from
        # it after the cut is presented as data
        expect_json rep.json "j['files'][0]['status']" '"error"'
        local bad
        bad=$(json_get rep.json "j['files'][0]['tensors'][-1]['name']")
        # the file's error is the line, without "nanaudit: FILE: "
        expect_json rep.json "'nanaudit: victim.safetensors: ' + j['files'][0]['error'] == \
open('$T/stderr').read().rstrip('\\n')" true
        expect_json rep.json "[(t['status'], t['nan'], t['mean'], t['findings']) for t in j['files'][0]['tensors']][-1]" \
            '["error", null, null, []]'
        expect_json rep.json "'shrank' in j['files'][0]['tensors'][-1]['reason']" true
        if [ "$bad" = '"w"' ]; then # z after it was not read
            expect_json rep.json "len(j['files'][0]['tensors'])" 1
        fi
        expect_json rep.json "(j['summary']['exit_code'], j['summary']['errors'])" '[3, 2]'
        if [ "$fmt" = json ]; then
            cmp -s rep.json "$T/stdout" || fail "the JSON on stdout differs from --report's"
        else
            expect_stdout_contains "other.safetensors (safetensors)"
            grep -qE "^  v +F32 +\[1000\] +1000 +7 " "$T/stdout" || fail "other.safetensors' row"
            expect_stdout_contains "  error: $(sed 's/^nanaudit: victim.safetensors: //' "$T/stderr")"
            # once: the tensor's own error is part of the file's line
            # (it was printed a second time, without "; 1 later ...")
            assert_eq "$(grep -c "shrank" "$T/stdout")" 1 "lines naming the cut"
            expect_stdout_contains "2 errors; FAILED (exit 3)"
        fi
        return 0
    done
    fail "the scan ended before the cut in 5 tries"
}
scan_case text
scan_case json

# clean: nothing under OUT (no temporary file either), the report is
# written, exit 3. First with the same cut (while clean fits the
# tensors, or later in the write pass); then deterministically in the
# write pass: the NANAUDIT_TEST_SIGNAL=STOP hook stops clean after its
# first write to the temporary file (clean_shrank_names_input.sh), the
# cut is made, and clean is continued at each stop. A copied tensor
# (--exclude '*') goes to write(2) straight from the mapping, where the
# lost page is EFAULT instead of SIGBUS (formats/write.c); a cleaned one
# is read by the engine (SIGBUS).
mkdir out
clean_checks() {
    assert_eq "$RC" 3 "clean exit (stderr: $(cat "$T/stderr"))"
    grep -q "^nanaudit: victim.safetensors: .*shrank" "$T/stderr" || fail "stderr: $(cat "$T/stderr")"
    assert_eq "$(ls -A out)" "" "files left under out/"
    expect_json crep.json "(j['exit_code'], j['written'])" '[3, false]'
    expect_json crep.json "[t['name'] for t in j['tensors'] if t['status'] == 'error' and 'shrank' in t['reason']] in (['w'], ['z'])" true
}
for try in 1 2 3 4 5; do
    rm -f crep.json
    cut_victim "$NANAUDIT" clean --threads 1 --zscore 3 --outliers clip --report crep.json \
        victim.safetensors -o out/c.safetensors
    if [ "$RC" = 0 ]; then
        echo "note: clean ended before the cut (try $try); again"
        rm -f out/c.safetensors
        continue
    fi
    clean_checks
    break
done
[ "$RC" != 0 ] || fail "clean ended before the cut in 5 tries"

hooked() {
    cp big.safetensors victim.safetensors || fail "cp"
    rm -f crep.json
    NANAUDIT_TEST_SIGNAL=STOP "$NANAUDIT" clean --threads 1 "$@" --report crep.json \
        victim.safetensors -o out/c.safetensors >"$T/stdout" 2>"$T/stderr" </dev/null &
    local pid=$!
    wait_stopped "$pid"
    truncate -s 4096 victim.safetensors
    continue_to_end "$pid"
    RC=0
    wait "$pid" || RC=$?
}
hooked --exclude '*'
clean_checks
assert_eq "$(cat "$T/stderr")" "nanaudit: victim.safetensors: w: $MSG; nothing written" "stderr"
hooked --zscore 3 --outliers clip
clean_checks
grep -qE "^nanaudit: victim\.safetensors: [wz]: $(printf '%s' "$MSG" | sed 's/[().?]/\\&/g'); nothing written$" \
    "$T/stderr" || fail "stderr: $(cat "$T/stderr")"
pass
