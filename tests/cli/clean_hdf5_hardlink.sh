#!/bin/bash
# An HDF5 dataset with two hard links is one tensor, listed under the
# first link the walk meets ('/hard' before '/rs' in name order), and
# every one of its hard-link paths names it: --include, --exclude and
# --together match a tensor by its listed name or by any other link
# (formats/hdf5_child.c keeps at most 64 other paths per object), `info`
# shows them, and --apply-params finds a tensor saved under another of
# its links. Values checked with h5py.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c "
import h5py, numpy as np
with h5py.File('h.h5', 'w') as f:
    f['rs'] = np.array([1.0, np.nan, 3.0]); f['hard'] = f['rs']; f['y'] = np.arange(3.0)
# the same object first met as /a: its parameters are saved as /hard
with h5py.File('g.h5', 'w') as f:
    f['hard'] = np.array([2.0, 4.0, 6.0]); f['a'] = f['hard']
# 100 more hard links to one dataset: 64 of its other paths are kept
with h5py.File('c.h5', 'w') as f:
    f['d'] = np.array([1.0, np.nan])
    for k in range(100):
        f['l%03d' % k] = f['d']
" || fail "input"
N="$NANAUDIT"
check() { # FILE PYTHON-CONDITION on f
    "$NA_PYTHON" -c "
import h5py, numpy as np
f = h5py.File('$1')
assert ($2), [(k, f[k][:].tolist()) for k in f]
" || fail "values of $1: $2"
}
# the other link selects it, without a warning; both links see the copy
expect_exit 0 "$N" clean -q h.h5 --include /rs --nonfinite zero -o o.h5
expect_stderr_empty
check o.h5 "f['hard'][:].tolist() == [1.0, 0.0, 3.0] and f['rs'][:].tolist() == [1.0, 0.0, 3.0]
    and f['y'][:].tolist() == [0.0, 1.0, 2.0] and f['rs'].id == f['hard'].id"
# a glob over the other link matches too; the report keeps the listed name
expect_exit 0 "$N" clean -q h.h5 --include '/r?' --nonfinite zero --report r.json -o o1.h5
expect_json r.json "[e['name'] for e in j['tensors'] if e['status'] == 'cleaned']" \
    '["/hard"]'
# --exclude by the other link leaves the NaN, under both links
expect_exit 0 "$N" clean -q h.h5 --exclude /rs --nonfinite zero -o o2.h5
expect_stderr_empty
check o2.h5 "np.isnan(f['rs'][1]) and np.isnan(f['hard'][1]) and f['rs'].id == f['hard'].id"
# --together by the other link: row 1 leaves both, and both links show it
expect_exit 0 "$N" clean -q h.h5 --together /rs,/y --max-drop-fraction 0.5 -o o3.h5
check o3.h5 "f['rs'][:].tolist() == [1.0, 3.0] and f['hard'][:].tolist() == [1.0, 3.0]
    and f['y'][:].tolist() == [0.0, 2.0]"
# under the listed name it is cleaned as before
expect_exit 0 "$N" clean -q h.h5 --include /hard --nonfinite zero -o o4.h5
check o4.h5 "f['hard'][:].tolist() == [1.0, 0.0, 3.0] and f['rs'][:].tolist() == [1.0, 0.0, 3.0]"
# a name that is no link at all still warns, without the hard-link hint
expect_exit 0 "$N" clean -q h.h5 --include /nope --nonfinite zero -o o5.h5
expect_stderr_contains "nanaudit: warning: h.h5: --include '/nope' matches no tensor"
expect_stderr_lacks "hard link"
expect_exit 2 "$N" clean -q h.h5 --together /nope,/y -o o6.h5
expect_stderr_contains "nanaudit: h.h5: --together: '/nope' matches no tensor"
# info shows the other link; scan still sees one tensor
expect_exit 0 "$N" info h.h5
expect_stdout_contains "also linked as /rs"
assert_eq "$(grep -c 'also linked as' "$T/stdout")" 1 "alias lines"
expect_exit 1 "$N" scan h.h5 --report s.json
expect_json s.json "[t['name'] for t in j['files'][0]['tensors']]" '["/hard", "/y"]'
# parameters saved as /hard apply to g.h5, where the object is listed as /a
expect_exit 0 "$N" clean -q h.h5 --include /hard --nonfinite zero --normalize minmax \
    --save-params p.json -o o7.h5
expect_json p.json "sorted(j['tensors'])" '["/hard"]'
expect_exit 0 "$N" clean -q g.h5 --apply-params p.json --nonfinite zero --normalize minmax \
    -o o8.h5
check o8.h5 "np.allclose(f['a'][:], [2/3, 4/3, 2.0]) and f['a'].id == f['hard'].id"
# the cap: 100 other links, 64 kept (the first in name order), 36 counted
expect_exit 0 "$N" info c.h5
expect_stdout_contains "also linked as /l000, /l001,"
expect_stdout_contains ", /l063 and 36 more (at most 64 kept)"
expect_stdout_lacks "/l064"
expect_exit 0 "$N" clean -q c.h5 --include /l063 --nonfinite zero -o c1.h5
expect_stderr_empty
check c1.h5 "f['l099'][:].tolist() == [1.0, 0.0] and f['d'][:].tolist() == [1.0, 0.0]"
expect_exit 0 "$N" clean -q c.h5 --include /l064 --nonfinite zero -o c2.h5
expect_stderr_contains "--include '/l064' matches no tensor (an HDF5 dataset is matched by at most 64 of its other hard-link paths: see \`nanaudit info\`)"
# paths through other links of a group (and a group linked into itself,
# one level) and of compound datasets, whose fields keep their suffix
"$NA_PYTHON" -c "
import h5py, numpy as np
with h5py.File('n.h5', 'w') as f:
    g = f.create_group('g'); g['x'] = np.array([1.0, np.nan]); g['x2'] = g['x']
    f['g2'] = g; g['self'] = g
    f['c'] = np.array([(1.0, np.nan)], dtype=[('a', 'f4'), ('b', 'f8')]); f['cc'] = f['c']
" || fail "input n.h5"
expect_exit 0 "$N" info n.h5
expect_stdout_contains "also linked as /cc.a"
expect_stdout_contains "also linked as /cc.b"
expect_stdout_contains \
    "also linked as /g/x2, /g/self/x, /g/self/x2, /g2/x, /g2/x2, /g2/self/x, /g2/self/x2"
expect_exit 0 "$N" clean -q n.h5 --include /g2/self/x2 --nonfinite zero -o n1.h5
expect_stderr_empty
check n1.h5 "f['g/x'][:].tolist() == [1.0, 0.0] and f['g2/x2'][:].tolist() == [1.0, 0.0]"
pass
