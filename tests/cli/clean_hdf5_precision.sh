#!/bin/bash
# clean of an HDF5 float dataset whose datatype keeps fewer bits than it
# occupies (H5Tset_precision; what the n-bit filter packs, e.g.
# hdfgroup-be_data.h5's Nbit_float_data_le: "32-bit floating-point 20-bit
# precision"). libhdf5 rounds the cleaned values to that type when it
# writes them, so the copy cannot hold what clean computed: before, the
# run failed its verification (exit 4, "statistics differ from the
# prediction") after all the work. Found by the fourth fresh-user round.
# Now it is refused up front as the lossy scale-offset filter is (exit 2,
# one line with the ways out, --dry-run alike) when clean computes new
# values (--normalize, a mean or value=X fill, clip, outliers set to the
# mean); dropped rows and zero fills are exact and still written;
# --out-dtype F64 and --exclude work; a full-precision dataset beside it
# is unaffected.
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
"$NA_PYTHON" -c "
import h5py, numpy as np
t = h5py.h5t.IEEE_F32LE.copy()
t.set_fields(19, 11, 8, 0, 11)  # sign bit 19, 8-bit exponent at 11, 11-bit mantissa
t.set_offset(0); t.set_precision(20); t.set_ebias(127)
with h5py.File('p.h5', 'w') as f:
    d = h5py.h5d.create(f.id, b'x', t, h5py.h5s.create_simple((40,)))
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.linspace(0.1, 3.3, 40).astype('f4'))
    f['y'] = np.linspace(0.1, 3.3, 20).astype('f4')
" || fail "inputs"
N="$NANAUDIT"
MSG="nanaudit: p.h5: /x: its floating point type keeps 20 of its 32 bits (reduced precision, as the n-bit filter packs), so the cleaned values could not be written exactly: --out-dtype F64 or --exclude it"

expect_exit 2 "$N" clean --normalize minmax p.h5 -o out.h5
expect_stderr_contains "$MSG"
assert_eq "$(wc -l <"$T/stderr")" "1" "stderr lines"
[ ! -e out.h5 ] || fail "out.h5 written"
ls -A | grep -q nanaudit-tmp && fail "temporary file left"

expect_exit 2 "$N" clean --dry-run --normalize minmax p.h5 -o out.h5
expect_stderr_contains "$MSG"

# clipped values are new numbers too
expect_exit 2 "$N" clean --zscore 1 --outliers clip p.h5 -o out.h5
expect_stderr_contains "$MSG"
# dropping rows and zero fills write values the type holds: allowed, exact
expect_exit 0 "$N" clean --nonfinite zero --zscore 1.5 --max-drop-fraction 0.5 p.h5 -o out3.h5
"$NA_PYTHON" -c "
import h5py, numpy as np
a = h5py.File('p.h5')['x'][()].astype('f8'); b = h5py.File('out3.h5')['x']
assert b.id.get_type().get_precision() == 20
r = a[np.abs(a - a.mean()) <= 1.5 * a.std()]
assert b.shape == r.shape and np.array_equal(b[()], r), (b.shape, r.shape)
" || fail "rows dropped from the 20-bit dataset"

# the ways out: a wider output dtype, or the dataset copied unchanged
expect_exit 0 "$N" clean --normalize minmax --out-dtype F64 p.h5 -o out.h5
"$NA_PYTHON" -c "
import h5py, numpy as np
a = h5py.File('p.h5')['x'][()].astype('f8'); b = h5py.File('out.h5')['x']
assert b.dtype == np.float64, b.dtype
r = (a - a.min()) / (a.max() - a.min())
assert np.array_equal(b[()], r), np.abs(b[()] - r).max()
" || fail "--out-dtype F64 values"
expect_exit 0 "$N" clean --normalize minmax --exclude /x p.h5 -o out2.h5
"$NA_PYTHON" -c "
import h5py, numpy as np
a = h5py.File('p.h5'); b = h5py.File('out2.h5')
assert b['x'].id.get_type().get_precision() == 20
assert np.array_equal(a['x'][()], b['x'][()])
y = a['y'][()].astype('f8')
assert np.array_equal(b['y'][()], ((y - y.min()) / (y.max() - y.min())).astype('f4'))
" || fail "--exclude copy"
pass
