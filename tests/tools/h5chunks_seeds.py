#!/usr/bin/env python3
# Writes the seeds of tests/fuzz/corpus/h5chunks (fuzz_h5chunks.c) from small h5py files:
#   python3 tests/tools/h5chunks_seeds.py tests/fuzz/corpus/h5chunks
# Seeds for tests/fuzz/fuzz_h5chunks.c: [sizes and rank][log2 of the maximum dims]
# [object header address][file]
import h5py, numpy as np, struct, os, sys
import tempfile
out = sys.argv[1]
tmp = tempfile.mkdtemp()
def seed(name, path, dset, rank, maxbits=0):
    with h5py.File(path) as f:
        addr = h5py.h5o.get_info(f[dset].id).addr
    data = open(path, 'rb').read()
    ctl = 2 | (2 << 2) | ((rank - 1) << 4)  # sizeof_addr 8, sizeof_length 8
    open(os.path.join(out, name), 'wb').write(bytes([ctl, maxbits]) + struct.pack('<Q', addr) + data)
with h5py.File(os.path.join(tmp, 'seed1.h5'), 'w') as f:  # 1-D, 205 chunks of 4: a two-level tree
    d = f.create_dataset('x', shape=(4096,), dtype='f4', chunks=(4,))
    for i in range(0, 4096, 30):
        d[i:i+4] = np.arange(4)
with h5py.File(os.path.join(tmp, 'seed2.h5'), 'w') as f:  # 2-D, deflate
    d = f.create_dataset('y', shape=(64, 64), dtype='f8', chunks=(8, 8), compression='gzip')
    d[0:16, 8:40] = 1.5
with h5py.File(os.path.join(tmp, 'seed3.h5'), 'w', libver='v110') as f:  # version 2 header, layout 4
    d = f.create_dataset('z', shape=(1024,), dtype='i2', chunks=(16,))  # fixed array of 64
    d[5:300] = 7
with h5py.File(os.path.join(tmp, 'seed4.h5'), 'w', libver='v110') as f:  # paged fixed array
    d = f.create_dataset('p', shape=(32768,), dtype='f4', chunks=(16,), compression='gzip')
    for i in range(0, 32768, 700):  # 2048 slots in 2 pages, 47 chunks
        d[i:i+16] = 1.5
with h5py.File(os.path.join(tmp, 'seed5.h5'), 'w', libver='v110') as f:  # unlimited: not read
    d = f.create_dataset('u', shape=(64,), maxshape=(None,), dtype='f4', chunks=(8,))
    d[:] = 2.0
seed('h5py_1d_many', os.path.join(tmp, 'seed1.h5'), 'x', 1)
seed('h5py_2d_gzip', os.path.join(tmp, 'seed2.h5'), 'y', 2)
seed('h5py_v110_fixed_array', os.path.join(tmp, 'seed3.h5'), 'z', 1, 10)
seed('h5py_v110_fixed_array_paged_gzip', os.path.join(tmp, 'seed4.h5'), 'p', 1, 15)
seed('h5py_v110_extensible_array', os.path.join(tmp, 'seed5.h5'), 'u', 1, 6)
