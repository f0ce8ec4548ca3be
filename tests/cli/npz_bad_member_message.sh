#!/bin/bash
# An .npz member named *.npy that is not a .npy file is exit 3 with one
# line that reads as written. Found by the sixth fresh-user round: the
# line said "(no \\x93NUMPY magic)", with a doubled backslash: the
# message's own "\x93" went through the escaping that makes file names
# safe to print (lib/escape.c writes a backslash as "\\"). The message no
# longer holds a backslash.
. "$(dirname "$0")/helpers.sh"
cd "$T" || exit 1
"$NA_PYTHON" -c "
import io, zipfile, numpy as np
b = io.BytesIO()
np.save(b, np.arange(3.0))
with zipfile.ZipFile('bad.npz', 'w') as z:
    z.writestr('g.npy', b'garbage, not an array')
    z.writestr('ok.npy', b.getvalue())
" || fail "making bad.npz"
refused_everywhere bad.npz \
    "nanaudit: bad.npz: member 'g.npy': not a .npy file (it does not start with 0x93 'NUMPY')"
pass
