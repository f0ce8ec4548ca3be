#!/usr/bin/env python3
# Writes the seeds of tests/fuzz/corpus/h5chunks (fuzz_h5chunks.c) from small h5py files:
#   python3 tests/tools/h5chunks_seeds.py tests/fuzz/corpus/h5chunks
# Seeds for tests/fuzz/fuzz_h5chunks.c: [sizes and rank][object header address][file]
import h5py, numpy as np, struct, os, sys
import tempfile
out = sys.argv[1]
tmp = tempfile.mkdtemp()
def seed(name, path, dset, rank):
    with h5py.File(path) as f:
        addr = h5py.h5o.get_info(f[dset].id).addr
    data = open(path, 'rb').read()
    ctl = 2 | (2 << 2) | ((rank - 1) << 4)  # sizeof_addr 8, sizeof_length 8
    open(os.path.join(out, name), 'wb').write(bytes([ctl]) + struct.pack('<Q', addr) + data)
with h5py.File(os.path.join(tmp, 'seed1.h5'), 'w') as f:  # 1-D, 205 chunks of 4: a two-level tree
    d = f.create_dataset('x', shape=(4096,), dtype='f4', chunks=(4,))
    for i in range(0, 4096, 30):
        d[i:i+4] = np.arange(4)
with h5py.File(os.path.join(tmp, 'seed2.h5'), 'w') as f:  # 2-D, deflate
    d = f.create_dataset('y', shape=(64, 64), dtype='f8', chunks=(8, 8), compression='gzip')
    d[0:16, 8:40] = 1.5
with h5py.File(os.path.join(tmp, 'seed3.h5'), 'w', libver='latest') as f:  # version 2 header, layout 4
    d = f.create_dataset('z', shape=(100,), dtype='i2', chunks=(10,))
    d[5:30] = 7
seed('h5py_1d_many', os.path.join(tmp, 'seed1.h5'), 'x', 1)
seed('h5py_2d_gzip', os.path.join(tmp, 'seed2.h5'), 'y', 2)
seed('h5py_latest_v2_header', os.path.join(tmp, 'seed3.h5'), 'z', 1)
