#!/bin/bash
# hdf5_damaged_index.sh - damage that libhdf5 1.10 reads without an error
# (thirteenth fresh-user round): a chunk index whose root lies past the end
# of the file, or a chunk key moved outside the extent, made libhdf5 read
# the lost chunks as the fill value: the NaN in them was missed ("OK",
# exit 0) and clean wrote zeros into a "verified" copy; h5py (newer HDF5)
# refuses both. A group whose links are listed but cannot be read (a
# damaged local heap) was a note, its datasets silently not audited (exit
# 0, nothing shown with -q), and info listed a group that cannot be listed
# as "(not auditable)" with exit 0. Each is now one line naming the
# dataset or link, exit 3, in scan, info and clean (nothing written).
. "$(dirname "$0")/helpers.sh"
skip_without_hdf5
cd "$T" || exit 1
N="$NANAUDIT"

"$NA_PYTHON" - <<'PY' || fail "making inputs"
import h5py, numpy as np, re, struct
x = np.ones((1000, 4), "f4"); x[5, 1] = np.nan
with h5py.File("bt.h5", "w") as f:
    f.create_dataset("x", data=x, chunks=(100, 4), compression="gzip")
b = bytearray(open("bt.h5", "rb").read())
tree = [m.start() for m in re.finditer(b"TREE\x01", b)][0]  # v1 B-tree of the chunk index
ref = b.find(struct.pack("<Q", tree))                      # its address in the layout message
b[ref + 4] = 0x7c                                          # now far past the end of the file
open("bt_root.h5", "wb").write(b)
# a chunk key's first coordinate: chunk 0 (with the NaN) claims row 250 of 200
y = np.ones((200, 4), "f4"); y[5, 1] = np.nan
with h5py.File("key.h5", "w") as f:
    f.create_dataset("x", data=y, chunks=(50, 4), compression="gzip")
    f.create_dataset("ok", data=np.arange(10.0))
b = bytearray(open("key.h5", "rb").read())
t = [m.start() for m in re.finditer(b"TREE\x01", b)][0]
b[t + 24 + 8 + 1] = 0x01   # header 24 bytes; key: size 4, mask 4, dim-0 offset 8
open("key_moved.h5", "wb").write(b)
# more than 1024 chunks (listed by a walk of the B-tree, or found slot by
# slot): one key moved the same way
z = np.ones((3000, 2), "f4"); z[7, 0] = np.nan
with h5py.File("many.h5", "w") as f:
    f.create_dataset("x", data=z, chunks=(2, 2))
b = bytearray(open("many.h5", "rb").read())
for t in (m.start() for m in re.finditer(b"TREE\x01\x00", b)):  # leaf nodes
    struct.pack_into("<Q", b, t + 24 + 8, 5000)  # the leaf's first chunk: row 5000 of 3000
    break
open("many_moved.h5", "wb").write(b)
# a three-level chunk B-tree (3000 chunks) whose root points at a leaf
# where a level-1 node belongs: libhdf5 1.10.8 reads it without an error
# and counts the chunks it no longer reaches (and their NaN) as never
# written (round 35a)
v = np.arange(4, dtype="f4"); v[3] = np.nan
with h5py.File("deep.h5", "w") as f:
    d = f.create_dataset("x", shape=(1 << 24,), dtype="f4", chunks=(4,))
    step = (1 << 22) // 3000
    for i in np.random.default_rng(1).permutation(3000):
        d[i * step * 4:(i * step + 1) * 4] = v
b = bytearray(open("deep.h5", "rb").read())
nodes = [m.start() for m in re.finditer(b"TREE\x01", b)]
root = max(nodes, key=lambda a: b[a + 5])
leaf = [a for a in nodes if b[a + 5] == 0][0]
used = struct.unpack_from("<H", b, root + 6)[0]
assert b[root + 5] == 2 and used >= 2, (b[root + 5], used)
# the last entry's child (keys of 24 bytes, children of 8): libhdf5 still
# counts more than 1024 chunks, so they are listed by the walk
struct.pack_into("<Q", b, root + 24 + (used - 1) * 32 + 24, leaf)
open("deep_level.h5", "wb").write(b)
# group /g's local heap: link names read from other bytes
with h5py.File("lh.h5", "w") as f:
    f.create_dataset("g/x", data=y)
    f.create_dataset("g/y", data=y)
b = bytearray(open("lh.h5", "rb").read())
h = [m.start() for m in re.finditer(b"HEAP", b)][-1]
struct.pack_into("<Q", b, h + 16, 1)
addr = struct.unpack_from("<Q", b, h + 24)[0]
struct.pack_into("<Q", b, h + 24, addr + 0x100)
open("links.h5", "wb").write(b)
# its free list: the group cannot be listed at all
b = bytearray(open("lh.h5", "rb").read())
b[h + 16] ^= 0x40
open("list.h5", "wb").write(b)
PY

# the undamaged files: the NaN is found
for f in bt.h5 key.h5 many.h5 lh.h5; do
    expect_exit 1 "$N" scan -q "$f"
    expect_stdout_contains "1 NaN"
done
one_line() { # CMD FILE LINE: exit 3, exactly LINE on stderr
    expect_exit 3 "$N" "$1" "$2"
    assert_eq "$(cat "$T/stderr")" "$3" "$1 of $2"
}
# (libhdf5's own words after the colon: addresses depend on the writer)
expect_exit 3 "$N" scan bt_root.h5
expect_stderr_contains "nanaudit: bt_root.h5: /x: the chunk index cannot be read: addr overflow, addr = "
assert_eq "$(wc -l < "$T/stderr")" "1" "lines on stderr for bt_root.h5"
expect_stdout_lacks "are zero"
one_line scan key_moved.h5 "nanaudit: key_moved.h5: /x: the chunk index puts a chunk at [250, 0], outside the extent or off the chunk grid (a damaged index)"
expect_stdout_contains "/ok" # the other dataset is audited
expect_exit 3 "$N" scan many_moved.h5
expect_stderr_contains "many_moved.h5: /x: the chunk index puts a chunk at [5000, 0], outside the extent or off the chunk grid (a damaged index)"
expect_exit 3 "$N" scan deep_level.h5
expect_stderr_contains "deep_level.h5: /x: the chunk index is damaged: the chunk B-tree node at address "
expect_stderr_contains " has level 0, not its parent's less one"
# without the B-tree walk (hdf5_chunks.c; what a version 4 layout's index
# gets): found by looking up every slot of the grid
NANAUDIT_HDF5_NO_WALK=1 expect_exit 3 "$N" scan many_moved.h5
expect_stderr_contains "many_moved.h5: /x: the chunk index lists 1500 chunks but 1499 of them are at the slots of the extent's grid (a damaged index)"
expect_exit 3 "$N" scan -q links.h5
assert_eq "$(cat "$T/stderr")" "nanaudit: links.h5: /g/: the link cannot be read: no name specified
nanaudit: links.h5: /g/: the link cannot be read: no name specified" "scan of links.h5"
expect_stdout_contains "2 errors; FAILED (exit 3)"
expect_exit 3 "$N" scan -q links.h5 --report r.xml
grep -q 'errors="2"' r.xml || fail "JUnit report of links.h5: $(head -c 300 r.xml)"
# info: the same lines, exit 3 (it was 0 with "(not auditable)")
one_line info list.h5 "nanaudit: list.h5: /g: cannot list the group: bad heap free list"
expect_exit 3 "$N" info links.h5
expect_stderr_contains "links.h5: /g/: the link cannot be read: no name specified"
# clean writes nothing
mkdir out
for f in bt_root.h5 key_moved.h5 many_moved.h5 deep_level.h5 links.h5; do
    expect_exit 3 "$N" clean -q "$f" -o "out/$f"
    assert_eq "$(ls -A out)" "" "clean of $f left a file"
done
pass
