#!/usr/bin/env python3
"""NumPy files written by numpy itself (np.save, np.savez,
np.savez_compressed, numpy.lib.format.write_array for versions 1.0, 2.0
and 3.0), audited by nanaudit and compared with numpy on np.load.

Cases: every numeric dtype (bool, ints, f2/f4/f8, long double as F80,
complex64/complex128 as NAME.real/NAME.imag), big-endian arrays, Fortran
order (2-D and 3-D; locations must be C-order indices of the logical
array), 0-d and empty arrays, structured dtypes (fields NAME.field, a
subarray field, a nested struct, padding), string arrays (skipped), object
arrays (error, exit 3, never unpickled), stored and deflated .npz members,
a Fortran-order member of a compressed .npz (inflated to a temporary file).
The numbers are those of nacheck.compare_tensor: counts and min/max exact,
mean/std to 1e-12*(|mean|+std), NaN/Inf/outlier locations exact.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_numpy.py
"""
import os
import sys
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nacheck  # noqa: E402
from nacheck import Mismatch  # noqa: E402

K = 6.0
N_LOC = 5


def st_name(dt):
    """safetensors dtype name of a numpy numeric dtype (parts for complex)."""
    k, n = dt.kind, dt.itemsize
    if k == "b":
        return "BOOL"
    if k in "iu":
        return ("I" if k == "i" else "U") + str(8 * n)
    if k == "f":
        return {2: "F16", 4: "F32", 8: "F64"}.get(n, "F80")
    if k == "c":
        return {8: "F32", 16: "F64"}.get(n, "F80")
    raise ValueError(dt)


def leaves(name, arr):
    """[(tensor name, dtype name, ndarray in C order)] as nanaudit lists them."""
    dt = arr.dtype
    if dt.names:
        out = []
        for f in dt.names:
            if f == "":
                continue
            out += leaves(f"{name}.{f}", arr[f])
        return out
    if dt.subdtype is not None:
        return leaves(name, arr)
    if dt.kind == "c":
        return [(name + ".real", st_name(dt), arr.real.copy(order="C")),
                (name + ".imag", st_name(dt), arr.imag.copy(order="C"))]
    if dt.kind in "biuf":
        return [(name, st_name(dt), arr.copy(order="C"))]
    return [(name, None, None)]  # string / void: skipped


def spiky(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1)
    if flat.size >= 8 and np.dtype(dtype).kind in "fc":
        flat[3] = np.nan
        flat[5] = np.inf
        flat[-2] = -np.inf
        flat[flat.size // 2] = 1e4
    return a


def arrays():
    """name -> array, covering the cases of the module docstring."""
    rng = np.random.default_rng(7)
    a = {}
    a["f32"] = spiky((40, 30), np.float32, 1)
    a["f64"] = spiky((1000,), np.float64, 2)
    a["f16"] = spiky((17, 3), np.float16, 3)
    a["f16"][0, 0] = np.float16(1e-6)  # a subnormal F16
    a["i8"] = rng.integers(-128, 127, 50, dtype=np.int8)
    a["u8"] = rng.integers(0, 255, (5, 5), dtype=np.uint8)
    a["i16"] = rng.integers(-3000, 3000, 64, dtype=np.int16)
    a["u16"] = rng.integers(0, 60000, 64, dtype=np.uint16)
    a["i32"] = rng.integers(-10**9, 10**9, 64, dtype=np.int32)
    a["u32"] = rng.integers(0, 4 * 10**9, 64, dtype=np.uint32)
    a["i64"] = np.arange(-20, 44, dtype=np.int64)
    a["u64"] = np.arange(0, 64, dtype=np.uint64) * 12345
    a["bool"] = rng.integers(0, 2, (3, 4, 5)).astype(bool)
    a["c64"] = np.zeros((6, 7), np.complex64)
    a["c64"].real, a["c64"].imag = spiky((6, 7), np.float32, 4), spiky((6, 7), np.float32, 5)
    a["c128"] = np.zeros(20, np.complex128)
    a["c128"].real, a["c128"].imag = spiky((20,), np.float64, 6), -spiky((20,), np.float64, 8)
    a["be_f4"] = spiky((9, 11), np.float32, 9).astype(">f4")
    a["be_f8"] = spiky((33,), np.float64, 10).astype(">f8")
    a["be_i4"] = np.arange(-7, 30, dtype=">i4")
    a["be_c8"] = a["c64"].astype(">c8")
    a["fortran2"] = np.asfortranarray(spiky((13, 17), np.float32, 11))
    a["fortran3"] = np.asfortranarray(spiky((4, 5, 6), np.float64, 12))
    a["fortran_be"] = np.asfortranarray(spiky((7, 9), ">f8", 13))
    a["scalar"] = np.array(2.5, dtype=np.float32)
    a["empty"] = np.zeros((0, 3), dtype=np.float32)
    if np.dtype(np.longdouble).itemsize in (12, 16) and np.finfo(np.longdouble).nmant == 63:
        a["longdouble"] = spiky((25,), np.longdouble, 14)
    st = np.zeros(30, dtype=[("x", "<f8"), ("n", "<i4"), ("v", "<f4", (3,)),
                             ("z", "<c8"), ("s", "S4"),
                             ("p", [("a", "<f2"), ("b", ">i2")])])
    st["x"] = spiky((30,), np.float64, 15)
    st["n"] = np.arange(30)
    st["v"] = spiky((30, 3), np.float32, 16)
    st["z"] = np.arange(30) * (1 + 2j)
    st["s"] = b"ab"
    st["p"]["a"] = np.linspace(-2, 2, 30)
    st["p"]["b"] = np.arange(30) - 15
    a["struct"] = st
    # padding between fields ('' names in the descr)
    a["padded"] = np.zeros(8, dtype=np.dtype({"names": ["a", "b"], "formats": ["<i2", "<f8"],
                                              "offsets": [0, 8], "itemsize": 16}))
    a["padded"]["a"] = np.arange(8)
    a["padded"]["b"] = np.arange(8) / 3
    a["fortran_struct"] = np.asfortranarray(np.zeros((3, 4), dtype=[("u", "<f4"), ("w", "<i8")]))
    a["fortran_struct"]["u"] = np.arange(12, dtype=np.float32).reshape(3, 4)
    a["fortran_struct"]["w"] = -np.arange(12).reshape(3, 4)
    return a


def check_file(path, expected, want_exit=None):
    """expected: [(name, dtype, ndarray or None)] in order; None = skipped."""
    code, doc = nacheck.scan([path])
    has_nan_inf = any(x is not None and x.dtype.kind == "f" and not np.isfinite(
        x.astype(np.float64)).all() for _, _, x in expected)
    want = want_exit if want_exit is not None else (1 if has_nan_inf else 0)
    if code != want:
        raise Mismatch(f"{path}: exit {code}, expected {want}")
    f = doc["files"][0]
    got = f["tensors"]
    names = [t["name"] for t in got]
    if names != [n for n, _, _ in expected]:
        raise Mismatch(f"{path}: tensors {names}, expected {[n for n, _, _ in expected]}")
    for t, (name, dt, arr) in zip(got, expected):
        if arr is None:
            if t["status"] != "skipped":
                raise Mismatch(f"{path}: {name}: status {t['status']}, expected skipped")
            continue
        exp = nacheck.reference_stats(arr, K, N_LOC)
        nacheck.compare_tensor(t, dt, exp, K, f"{path}: {name}",
                               check_outliers=exp["margin"] > nacheck.BORDERLINE)
    return doc


def test_npy(tmp, arrs):
    n = 0
    for name, arr in arrs.items():
        for ver in ((1, 0), (2, 0), (3, 0)):
            p = os.path.join(tmp, f"{name}-v{ver[0]}.npy")
            with open(p, "wb") as f:
                np.lib.format.write_array(f, arr, version=ver)
            back = np.load(p)  # the reference reads what numpy wrote
            check_file(p, leaves("data", back))
            n += 1
    # np.save: the common writer (version chosen by numpy)
    p = os.path.join(tmp, "saved.npy")
    np.save(p, arrs["fortran3"])
    doc = check_file(p, leaves("data", np.load(p)))
    if doc["files"][0]["format"] != "npy":
        raise Mismatch(f"{p}: format {doc['files'][0]['format']!r}")
    print(f"ok: {n + 1} .npy files (versions 1.0/2.0/3.0), every dtype, Fortran, big-endian, "
          "structured")


def test_big_endian_json(tmp, arrs):
    p = os.path.join(tmp, "be.npy")
    np.save(p, arrs["be_f4"])
    _, doc = nacheck.scan([p])
    t = doc["files"][0]["tensors"][0]
    if t.get("byte_order") != "big":
        raise Mismatch(f"{p}: byte_order {t.get('byte_order')!r}, expected 'big'")
    print("ok: big-endian .npy reports byte_order big")


def test_npz(tmp, arrs):
    pick = {k: v for k, v in arrs.items() if k not in ("struct", "padded")}
    for fn, how in ((np.savez, "stored"), (np.savez_compressed, "deflated")):
        p = os.path.join(tmp, f"{how}.npz")
        fn(p, **pick)
        exp = []
        with np.load(p) as z:
            for name in z.files:
                exp += leaves(name, z[name])
        doc = check_file(p, exp)
        if doc["files"][0]["format"] != "npz":
            raise Mismatch(f"{p}: format {doc['files'][0]['format']!r}")
        print(f"ok: np.{fn.__name__}: {len(exp)} tensors ({how} members, Fortran members "
              "included)")


def test_object_and_strings(tmp):
    p = os.path.join(tmp, "obj.npy")
    np.save(p, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    code, doc = nacheck.scan([p])
    t = doc["files"][0]["tensors"][0]
    if code != 3 or t["status"] != "error" or "never unpickled" not in (t.get("reason") or ""):
        raise Mismatch(f"{p}: object array: exit {code}, tensor {t}")
    p = os.path.join(tmp, "mixed.npz")
    np.savez(p, s=np.array(["abc", "de"]), w=np.arange(5.0))
    check_file(p, [("s", None, None), ("w", "F64", np.arange(5.0))])
    print("ok: object array is an error (exit 3), string arrays are skipped")


def _header_dtype(fh):
    """dtype from a .npy header, without reading (or unpickling) the data."""
    major, _ = np.lib.format.read_magic(fh)
    read = {1: np.lib.format.read_array_header_1_0}.get(major, np.lib.format.read_array_header_2_0)
    return read(fh)[2]


def test_real_files():
    """tests/data/real/npy and npz (files written by other software; see
    tests/data/real/SOURCES.md): the same numbers as np.load; object
    arrays (np.load refuses them without allow_pickle; nobody unpickles
    them here either) are tensor errors, exit 3."""
    data = os.environ.get("NA_TEST_DATA") or os.path.join(HERE, "..", "data")
    n = 0
    for kind in ("npy", "npz"):
        folder = os.path.join(data, "real", kind)
        for fn in sorted(os.listdir(folder)):
            p = os.path.join(folder, fn)
            exp, objects = [], 0
            if kind == "npy":
                with open(p, "rb") as fh:
                    members = [("data", _header_dtype(fh), lambda: np.load(p))]
            else:
                zf = zipfile.ZipFile(p)
                members = []
                for m in zf.namelist():
                    with zf.open(m) as fh:
                        dt = _header_dtype(fh)
                    members.append((m[:-4], dt, (lambda m=m: np.load(zf.open(m)))))
            for name, dt, load in members:
                if dt.hasobject:
                    exp.append((name, "object", None))
                    objects += 1
                else:
                    exp += leaves(name, load())
            code, doc = nacheck.scan([p])
            if objects:
                ts = doc["files"][0]["tensors"]
                if code != 3 or [t["status"] for t in ts].count("error") != objects:
                    raise Mismatch(f"{p}: object arrays: exit {code}, {[t['status'] for t in ts]}")
            else:
                check_file(p, exp)
            n += 1
    print(f"ok: {n} real .npy/.npz files agree with np.load")


def main():
    test_real_files()
    arrs = arrays()
    with tempfile.TemporaryDirectory() as tmp:
        test_npy(tmp, arrs)
        test_big_endian_json(tmp, arrs)
        test_npz(tmp, arrs)
        test_object_and_strings(tmp)


if __name__ == "__main__":
    nacheck.run_main(main)
