#!/usr/bin/env python3
"""HDF5 --attributes against h5py + numpy (issue 3).

Writes a file with h5py whose root group, a nested group and datasets carry
numeric attributes (scalar, 1-D, 2-D, big-endian, integer, with NaN/Inf,
a compound with float fields, a complex compound) and string attributes,
then checks:
 - without --attributes only the datasets are tensors;
 - with it every numeric attribute is a tensor named OBJECT_PATH@NAME
   ("/@NAME" for the root group), compound ones OBJECT_PATH@NAME.FIELD,
   listed after the object (a group's before its members, a dataset's right
   after it), each in h5py's name order, with the numbers numpy computes
   on what h5py's .attrs returns (counts exact, mean/std to 1e-12);
 - string attributes are skipped with reason "string data", not errors.

Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_hdf5_attrs.py
"""
import os
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402
from nacheck import Mismatch  # noqa: E402

K = 6.0
NLOC = 5
NP_TO_NA = {("f", 2): "F16", ("f", 4): "F32", ("f", 8): "F64",
            ("i", 1): "I8", ("i", 2): "I16", ("i", 4): "I32", ("i", 8): "I64",
            ("u", 1): "U8", ("u", 2): "U16", ("u", 4): "U32", ("u", 8): "U64"}


def write(path):
    rng = np.random.default_rng(7)
    with h5py.File(path, "w") as f:
        f.attrs["version"] = np.int32(3)
        f.attrs["title"] = "an audited file"
        g = f.create_group("grp")
        g.attrs["w"] = np.array([1.0, np.nan, np.inf, -2.0, -np.inf], dtype=">f8")
        g.attrs["zz"] = np.arange(-5, 5, dtype=">i8")
        d = g.create_dataset("ds", data=np.arange(6, dtype="f4").reshape(2, 3))
        d.attrs["scale"] = np.float32(0.5)
        d.attrs["names"] = np.array([b"a", b"b"])
        d.attrs["m"] = rng.normal(size=(30, 40)).astype("f2")
        d.attrs["c"] = np.array([(1.0, 2.0), (np.nan, 4.0)], dtype=[("x", "f4"), ("y", "f8")])
        d.attrs["z"] = np.array([1 + 2j, 3 - 4j], dtype="c8")
        g2 = g.create_group("sub")
        g2.attrs["u"] = np.array([0, 255, 7], dtype="u1")
        f.create_dataset("top", data=np.ones(4, dtype="f8"))


def expected(path):
    """(name, array or None for skipped) in the order nanaudit lists them."""
    out = []
    with h5py.File(path, "r") as f:
        def attrs(obj, opath):
            for a in sorted(obj.attrs.keys()):
                v = np.asarray(obj.attrs[a])
                name = f"{opath}@{a}"
                if v.dtype.kind in "SUO":
                    out.append((name, None))
                elif v.dtype.names:
                    for fld in v.dtype.names:
                        out.append((f"{name}.{fld}", np.ascontiguousarray(v[fld])))
                elif v.dtype.kind == "c":
                    out.append((f"{name}.real", np.ascontiguousarray(v.real)))
                    out.append((f"{name}.imag", np.ascontiguousarray(v.imag)))
                else:
                    out.append((name, v))

        def group(g, gpath):
            attrs(g, gpath)
            for k in sorted(g.keys()):
                p = f"{gpath.rstrip('/')}/{k}"
                obj = g[k]
                if isinstance(obj, h5py.Group):
                    group(obj, p)
                else:
                    out.append((p, np.asarray(obj[()])))
                    attrs(obj, p)
        group(f, "/")
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "attrs.h5")
        write(path)
        rc, doc = nacheck.scan([path], "--zscore", str(K))
        names = [t["name"] for t in doc["files"][0]["tensors"]]
        if names != ["/grp/ds", "/top"] or rc != 0:
            raise Mismatch(f"without --attributes: exit {rc}, tensors {names}")
        rc, doc = nacheck.scan([path], "--attributes", "--zscore", str(K))
        got = doc["files"][0]["tensors"]
        exp = expected(path)
        if [t["name"] for t in got] != [n for n, _ in exp]:
            raise Mismatch(f"names {[t['name'] for t in got]}, expected {[n for n, _ in exp]}")
        if rc != 1:  # NaN and Inf in /grp@w and /grp/ds@c.x
            raise Mismatch(f"exit {rc}, expected 1")
        for t, (name, arr) in zip(got, exp):
            if arr is None:
                if t.get("status") != "skipped" or t.get("reason") != "string data":
                    raise Mismatch(f"{name}: status {t.get('status')} reason {t.get('reason')!r}")
                print(f"ok {name}: skipped (string data)")
                continue
            dt = NP_TO_NA[(arr.dtype.kind, arr.dtype.itemsize)]
            ref = nacheck.reference_stats(arr, K, NLOC)
            nacheck.compare_tensor(t, dt, ref, K, name)
            if arr.dtype.byteorder == ">" and t.get("byte_order") != "big":
                raise Mismatch(f"{name}: byte_order {t.get('byte_order')!r}, expected big")
            print("ok", nacheck.describe(name, dt, ref))


if __name__ == "__main__":
    nacheck.run_main(main)
