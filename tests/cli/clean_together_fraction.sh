#!/bin/bash
# --max-drop-fraction with --together (issue 4): a group drops the union of
# its members' samples, so the fraction is the union's, per step. Before,
# each member was checked alone: a and b losing a different 10 % each
# (20 % together) passed the default 0.1 and wrote 80 of 100 samples.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" - <<'PY' || fail "making inputs"
import numpy as np
a = np.ones((100, 2)); b = np.ones(100)
a[0:10, 0] = np.nan; b[50:60] = np.nan
np.savez("m.npz", a=a, b=b)
# step 1 drops 8 rows of c, step 2 drops 8 others of d: 8 % then 8/92
c = np.zeros((100, 2)); c[:, 1] = np.arange(100) % 2
d = np.arange(100, dtype=np.float64) % 2
c[0:8, 0] = np.nan
d[20:28] = 1e6
np.savez("s.npz", c=c, d=d)
PY
N="$NANAUDIT"
expect_exit 1 "$N" clean -q --together a,b m.npz -o o.npz
expect_stderr_contains "tensor 'a' with its --together partners: the non-finite step would drop 20 of 100 samples (20.0%), more than --max-drop-fraction 0.1; nothing written"
[ ! -e o.npz ] || fail "o.npz written"
expect_exit 0 "$N" clean -q --together a,b m.npz -o o.npz --max-drop-fraction 0.2
"$NA_PYTHON" -c "
import numpy as np
o = np.load('o.npz')
assert o['a'].shape == (80, 2) and o['b'].shape == (80,), (o['a'].shape, o['b'].shape)
" || fail "shapes"
# one step each, on different members: 8 % and 8/92 = 8.7 %, each under 0.1
expect_exit 0 "$N" clean -q --together c,d s.npz -o s.out.npz --zscore 3
"$NA_PYTHON" -c "
import numpy as np
o = np.load('s.out.npz')
assert o['c'].shape == (84, 2) and o['d'].shape == (84,), (o['c'].shape, o['d'].shape)
" || fail "per-step shapes"
expect_exit 1 "$N" clean -q --together c,d s.npz -o s2.npz --zscore 3 --max-drop-fraction 0.085
expect_stderr_contains "tensor 'c' with its --together partners: the outlier step would drop 8 of 92 samples (8.7%)"
pass
