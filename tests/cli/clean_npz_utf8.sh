#!/bin/bash
# .npz member names beyond ASCII keep their meaning in clean's copy: the
# zip's general purpose bit 11 (UTF-8 names, APPNOTE 4.4.4) is set, as
# Python's zipfile (np.savez) sets it. Before, cleaned and copied members
# alike came out without it and np.load read 'ünï' as '├╝n├»' (KeyError).
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c "
import numpy as np
np.savez('u.npz', **{'ünï': np.array([1.0, np.nan, 3.0]), '数据': np.arange(4.0), 'plain': np.arange(2.0)})
" || fail "input"
expect_exit 0 "$NANAUDIT" clean -q u.npz -o o.npz --nonfinite zero --exclude '数据'
"$NA_PYTHON" - <<'PY' || fail "names"
import zipfile, numpy as np
d = np.load("o.npz")
assert d.files == ["ünï", "数据", "plain"], d.files
assert d["ünï"].tolist() == [1.0, 0.0, 3.0]
assert d["数据"].tolist() == [0.0, 1.0, 2.0, 3.0]
flags = {i.filename: i.flag_bits & 0x800 for i in zipfile.ZipFile("o.npz").infolist()}
assert flags == {"ünï.npy": 0x800, "数据.npy": 0x800, "plain.npy": 0}, flags
PY
pass
