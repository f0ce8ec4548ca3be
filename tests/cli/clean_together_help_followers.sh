#!/bin/bash
# clean_together_help_followers.sh - regression (eighth fresh-user round):
# "nanaudit clean --help" said of --together "they must all be cleaned and
# have the same number of rows", while a member that is not cleaned (left
# out by --exclude, a BOOL mask, an .npz string array) follows its group
# and only loses the samples the others drop (man page, --together). A
# new user reading --help would not put the sample ids in the group. The
# help now says what the man page says, and each claim is checked here on
# an .npz against numpy: x cleaned, y excluded, m a mask, ids strings.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
N="$NANAUDIT"

expect_exit 0 "$N" clean --help
tr -s ' \n' ' ' <"$T/stdout" >help.txt
grep -qF "a member not cleaned (left out by --include/--exclude, a BOOL mask, HDF5 or .npz strings) only loses those samples" help.txt ||
    fail "--together help does not describe followers: $(grep -o -- '--together LIST.\{0,400\}' help.txt)"
grep -qF "must all be cleaned" help.txt && fail "--together help still says every member must be cleaned"

"$NA_PYTHON" - <<'PY' || fail "making input"
import numpy as np
x = np.arange(20.0).reshape(10, 2)
x[[2, 7], [0, 1]] = np.nan
np.savez("d.npz", x=x, y=np.arange(10.0) * 1.5, m=np.arange(10) % 3 == 0,
         ids=np.array(["s%02d" % i for i in range(10)]))
PY
expect_exit 0 "$N" clean d.npz -o out.npz --together x,y,m,ids --exclude y --max-drop-fraction 0.5
"$NA_PYTHON" - <<'PY' || fail "followers of out.npz"
import numpy as np
a, b = np.load("d.npz"), np.load("out.npz")
keep = np.isfinite(a["x"]).all(1)
for k in ("x", "y", "m", "ids"):
    assert b[k].dtype == a[k].dtype, (k, b[k].dtype)
    np.testing.assert_array_equal(b[k], a[k][keep])
PY
pass
