#!/usr/bin/env python3
"""Conformance of `nanaudit clean` writing HDF5 (issue 4), read back with h5py.

What the HDF5 writer (formats/hdf5_write.c, hdf5_wchild.c) must keep, each
checked against the input as h5py reads it:
  - groups (nested), attributes of the root, groups and datasets (numbers,
    arrays, fixed and variable-length strings), soft and external links,
    name order and tracked creation order, string and compound datasets it
    does not touch, dimension scales and a reference dataset (object
    references point at the copies);
  - untouched datasets byte-identical: the same stored chunk bytes
    (h5py's read_direct_chunk), chunk shape, gzip + shuffle, fletcher32,
    fill value and fill time;
  - a cleaned dataset keeps its creation properties and attributes, gets
    the new row count, and its chunk shrinks when it becomes shorter than
    a chunk; big-endian >f8 stays >f8; integers with --normalize become
    F32 (of the input's byte order);
  - values: `--zscore 3` with --together /x,/y drops the rows numpy's
    per-feature |x - mean| > 3 std (ddof=0) flags, from both; the seed
    example (1-D float64, --zscore 3 --normalize minmax) equals numpy's
    (x - min) / (max - min) to 1e-12;
  - compound fields: --nonfinite zero writes one field back and leaves the
    others (a string among them) as they were; --together over every field
    drops the same rows from the records; a drop that would leave a field
    behind is refused (exit 2) naming the dataset;
  - a dataset whose filter nanaudit's libhdf5 lacks (LZF) is copied with
    its stored chunks; a CF _FillValue is left alone, converted with the
    dtype, and does not upset the verification;
    array datatypes are written back; the root's creation order and a
    user block are kept; a 0-row result is a valid dataset; the root gets a "nanaudit"
    attribute whose input_sha256 is hashlib's; `nanaudit scan` reads the
    output (exit 0, the counts h5py gives);
  - every run is first made with --dry-run instead of -o (clean()): the
    same exit code and stderr, refusals included, and no file written.
Run: NANAUDIT=build/nanaudit .venv/bin/python tests/conformance/test_clean_hdf5.py
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nacheck  # noqa: E402

EXE = nacheck.nanaudit_path()
TMP = tempfile.mkdtemp(prefix="nacleanh5.")
FAILS = []


def path(name):
    return os.path.join(TMP, name)


def clean(args, expect=0, quiet=True):
    """Run clean ARGS (input first, -o OUT); the same with --dry-run instead
    of -o first: it must end as the real run does (exit code, stderr with
    the input named for the output: cli/clean.c dry_open checks the HDF5
    structure with the writer's own code) and write nothing."""
    cmd = [EXE, "clean"] + (["-q"] if quiet else [])
    if "-o" in args:
        i = args.index("-o")
        before = sorted(os.listdir(TMP))
        d = subprocess.run(cmd + args[:i] + args[i + 2:] + ["--dry-run"], capture_output=True,
                           text=True)
        check(f"--dry-run of {args}: exit", d.returncode == expect,
              f"{d.returncode}, want {expect}: {d.stderr}")
        check(f"--dry-run of {args}: nothing written", sorted(os.listdir(TMP)) == before,
              str(set(os.listdir(TMP)) - set(before)))
    p = subprocess.run(cmd + args, capture_output=True, text=True)
    if p.returncode != expect:
        raise AssertionError(f"exit {p.returncode} (want {expect}) for {args}:\n{p.stdout}\n{p.stderr}")
    if "-o" in args:
        want = p.stderr.replace(f"nanaudit: {args[i + 1]}: ", f"nanaudit: {args[0]}: ", 1)
        check(f"--dry-run of {args}: message", d.stderr == want, f"{d.stderr!r} != {want!r}")
    return p


def check(name, cond, msg=""):
    if not cond:
        FAILS.append(f"{name}: {msg}")
        print(f"FAIL {name}: {msg}")


def dcpl(ds):
    """The creation properties the writer must keep, as h5py shows them."""
    p = ds.id.get_create_plist()
    return (ds.chunks, ds.compression, ds.compression_opts, ds.shuffle, ds.fletcher32,
            ds.fillvalue.tobytes() if hasattr(ds.fillvalue, "tobytes") else ds.fillvalue,
            p.get_fill_time(), ds.maxshape, ds.dtype.str if ds.dtype.names is None else ds.dtype)


def attrs(obj):
    """Attributes as plain values; those holding object references (whose
    values differ between files by nature) are checked by name only here
    and by what they point at in test_round_trip."""
    return {k: ("<refs>" if k in ("DIMENSION_LIST", "REFERENCE_LIST") else
                v.tolist() if hasattr(v, "tolist") else v) for k, v in obj.attrs.items()}


def raw_chunks(ds):
    """Every stored chunk's bytes, in chunk order (byte identity)."""
    out = []
    for i in range(ds.id.get_num_chunks()):
        info = ds.id.get_chunk_info(i)
        out.append((info.chunk_offset, ds.id.read_direct_chunk(info.chunk_offset)))
    return out


# ---------------------------------------------------------------------------
def make_structure(fn):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(300, 3))
    x[11, 1] = 40.0
    x[222, 0] = -55.0
    y = np.arange(300.0)
    with h5py.File(fn, "w") as f:
        f.attrs["title"] = "demo"
        f.attrs["version"] = np.int32(3)
        f.attrs.create("vstr", "héllo", dtype=h5py.string_dtype())
        f.create_dataset("x", data=x, chunks=(64, 3), compression="gzip", shuffle=True,
                         fillvalue=-1.0, fletcher32=True)
        f["x"].attrs["units"] = "m"
        f["x"].attrs["scale"] = np.array([1.0, 2.0, 3.0])
        g = f.create_group("grp")
        g.attrs["k"] = [1, 2, 3]
        g.create_dataset("y", data=y, chunks=(50,), maxshape=(None,))
        sub = g.create_group("deeper")
        sub.attrs["note"] = np.bytes_(b"fixed")
        kept = sub.create_dataset("kept", data=rng.normal(size=(40, 2)).astype(np.float32),
                                  chunks=(16, 2), compression="gzip", compression_opts=6,
                                  shuffle=True, fillvalue=np.float32(7.5))
        kept.id.get_create_plist()  # (fill time default: ifset)
        f.create_dataset("names", data=np.array([b"alpha", b"beta"]))
        rec = np.zeros(4, dtype=[("id", "<i4"), ("tag", "S4")])
        rec["id"] = [1, 2, 3, 4]
        rec["tag"] = [b"a", b"b", b"c", b"d"]
        f.create_dataset("records", data=rec)
        f["soft"] = h5py.SoftLink("/grp/y")
        f["ext"] = h5py.ExternalLink("other.h5", "/z")
        for name in ("b_second", "a_first", "c_third"):
            f.create_dataset("order/" + name, data=np.zeros(3, np.int16))
        tr = f.create_group("tracked", track_order=True)
        for name in ("zz", "aa", "mm"):
            tr.create_dataset(name, data=np.ones(2))
            tr.attrs[name] = 1
        # dimension scales and a reference dataset: object references
        f["time"] = np.arange(300.0)
        f["time"].make_scale("time")
        f["x"].dims[0].attach_scale(f["time"])
        f["grp/y"].dims[0].attach_scale(f["time"])
        refs = f.create_dataset("refs", shape=(2,), dtype=h5py.ref_dtype)
        refs[0] = f["x"].ref
        refs[1] = f["grp/deeper"].ref
    return x, y


def test_round_trip():
    src, out = path("struct.h5"), path("struct.clean.h5")
    x, y = make_structure(src)
    # /time, the dimension scale of /x and /grp/y, loses the same rows
    clean([src, "--zscore", "3", "--together", "/x,/grp/y,/time", "--exclude", "/order/*",
           "--exclude", "/grp/deeper/*", "--exclude", "/tracked/*", "-o", out])
    with h5py.File(src) as a, h5py.File(out) as b:
        names_a, names_b = [], []
        a.visit(names_a.append)
        b.visit(names_b.append)
        check("round trip: same objects in name order", names_a == names_b,
              f"{names_a} vs {names_b}")
        check("round trip: group order", list(b["order"]) == ["a_first", "b_second", "c_third"],
              str(list(b["order"])))
        ra, rb = attrs(a), attrs(b)
        prov = json.loads(rb.pop("nanaudit", "{}"))
        check("round trip: root attributes", ra == rb, f"{ra} vs {rb}")
        for obj in ("x", "grp", "grp/y", "grp/deeper", "grp/deeper/kept", "records"):
            check(f"round trip: attributes of {obj}", attrs(a[obj]) == attrs(b[obj]),
                  f"{attrs(a[obj])} vs {attrs(b[obj])}")
        with open(src, "rb") as fh:
            sha = hashlib.sha256(fh.read()).hexdigest()
        check("provenance: input_sha256", prov.get("input_sha256") == sha, str(prov))
        check("provenance: command and version",
              "clean" in prov.get("command", "") and prov.get("version"), str(prov))
        # untouched: byte-identical chunks and the same properties
        ka, kb = a["grp/deeper/kept"], b["grp/deeper/kept"]
        check("untouched: creation properties", dcpl(ka) == dcpl(kb), f"{dcpl(ka)} vs {dcpl(kb)}")
        check("untouched: stored chunks byte-identical", raw_chunks(ka) == raw_chunks(kb))
        check("untouched: strings", list(a["names"][:]) == list(b["names"][:]))
        check("untouched: compound", a["records"][:].tobytes() == b["records"][:].tobytes())
        check("untouched: dtype kept", b["order/a_first"].dtype == np.dtype("<i2"))
        check("soft link kept", b.get("soft", getlink=True).path == "/grp/y")
        check("creation order kept", list(b["tracked"]) == ["zz", "aa", "mm"] and
              list(b["tracked"].attrs) == ["zz", "aa", "mm"], str(list(b["tracked"])))
        check("dimension scale of a cleaned dataset",
              [s.name for s in b["x"].dims[0].values()] == ["/time"])
        check("dimension scale of a cleaned dataset in a group",
              [s.name for s in b["grp/y"].dims[0].values()] == ["/time"])
        check("scale's back references", sorted(b[r].name for r, _ in
              b["time"].attrs["REFERENCE_LIST"]) == ["/grp/y", "/x"])
        check("reference dataset points at the copies",
              [b[r].name for r in b["refs"][:]] == ["/x", "/grp/deeper"])
        el = b.get("ext", getlink=True)
        check("external link kept", (el.filename, el.path) == ("other.h5", "/z"))
        # cleaned: same properties except the row count, rows as numpy drops them
        keep = np.all(np.abs(x - x.mean(axis=0)) <= 3 * x.std(axis=0), axis=1)
        check("zscore drop: numpy flags 2 rows", (~keep).sum() == 2, str(np.where(~keep)))
        check("zscore drop: /x rows", np.array_equal(b["x"][:], x[keep]))
        check("together: /grp/y keeps aligned rows", np.array_equal(b["grp/y"][:], y[keep]))
        check("together: the scale /time too", np.array_equal(b["time"][:], y[keep]) and
              b["time"].is_scale)
        pa, pb = dcpl(a["x"]), dcpl(b["x"])
        check("cleaned: gzip+shuffle+fletcher32, chunks, fill value kept",
              pa[:7] + pa[8:] == pb[:7] + pb[8:], f"{pa} vs {pb}")
        check("cleaned: a fixed maxshape follows the rows", b["x"].maxshape == (298, 3))
        check("cleaned: shape", b["x"].shape == (298, 3) and b["grp/y"].shape == (298,))
        check("cleaned: unlimited maxshape kept", b["grp/y"].maxshape == (None,))
    p = subprocess.run([EXE, "scan", "--format", "json", out], capture_output=True, text=True)
    check("scan of the output: exit 0", p.returncode == 0, p.stderr)
    if p.returncode == 0:
        t = {e["name"]: e for e in json.loads(p.stdout)["files"][0]["tensors"]}
        xs = x[keep]
        check("scan of the output: /x as numpy", t["/x"]["finite"] == 894 and
              t["/x"]["shape"] == [298, 3] and t["/x"]["min"] == xs.min() and
              t["/x"]["max"] == xs.max(), str(t["/x"]))
        check("scan of the output: /grp/y", t["/grp/y"]["shape"] == [298] and
              t["/grp/y"]["nan"] == 0, str(t["/grp/y"]))


def test_seed_example():
    """1-D float64, --zscore 3 --normalize minmax: numpy's quotient to 1e-12."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.normal(5.0, 2.0, 997), [80.0, -70.0, 95.0]])
    src, out = path("seed.h5"), path("seed.clean.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("x", data=x, chunks=(256,))
    clean([src, "--zscore", "3", "--normalize", "minmax", "-o", out])
    ref = x[np.abs(x - x.mean()) <= 3 * x.std()]
    ref = (ref - ref.min()) / (ref.max() - ref.min())
    with h5py.File(out) as f:
        got = f["x"][:]
        check("seed: dtype F64", f["x"].dtype == np.dtype("<f8"))
        check("seed: length", got.shape == ref.shape, f"{got.shape} vs {ref.shape}")
        if got.shape == ref.shape:
            check("seed: values to 1e-12", np.max(np.abs(got - ref)) <= 1e-12,
                  str(np.max(np.abs(got - ref))))


def test_chunk_shrink_and_dtypes():
    n = 100
    v = np.linspace(-1.0, 1.0, n)
    v[::2] = np.nan  # 50 rows go: fewer rows (50) than a chunk (64)
    src, out = path("shrink.h5"), path("shrink.clean.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("v", data=v, chunks=(64,), compression="gzip")
        f.create_dataset("be", data=np.linspace(0.0, 1.0, n).astype(">f8"), chunks=(64,))
        f.create_dataset("counts", data=np.arange(n, dtype=">i2"), chunks=(64,))
    # each dataset alone: a drop from /v only, with the others copied
    clean([src, "--include", "/v", "--max-drop-fraction", "0.6", "--allow-misaligned",
           "-o", out])
    with h5py.File(out) as f:
        check("shrink: 50 rows", f["v"].shape == (50,), str(f["v"].shape))
        check("shrink: chunk shrunk to the rows", f["v"].chunks == (50,), str(f["v"].chunks))
        check("shrink: fixed maxshape follows", f["v"].maxshape == (50,), str(f["v"].maxshape))
        check("shrink: values", np.array_equal(f["v"][:], v[1::2]))
        check("shrink: gzip kept", f["v"].compression == "gzip")
    out2 = path("dtypes.clean.h5")
    clean([src, "--exclude", "/v", "--normalize", "minmax", "-o", out2])
    with h5py.File(out2) as f:
        check("big-endian >f8 stays >f8", f["be"].dtype == np.dtype(">f8"), str(f["be"].dtype))
        check("big-endian values", np.allclose(f["be"][:], np.linspace(0.0, 1.0, n), atol=1e-15))
        check("integers with --normalize become F32 (big-endian kept)",
              f["counts"].dtype == np.dtype(">f4"), str(f["counts"].dtype))
        ref = (np.arange(n) / (n - 1)).astype(np.float32)
        check("integers normalized", np.array_equal(f["counts"][:], ref))
        check("untouched chunk kept", f["counts"].chunks == (64,))


def test_missing_filter():
    """A dataset compressed with a filter nanaudit's libhdf5 lacks (LZF,
    which h5py bundles) cannot be read. Selected, it fails closed (DESIGN.md):
    exit 3, nothing written (it used to be copied with exit 0, its NaN left
    unseen). Excluded, it is copied whole: the same stored chunks, still
    readable where the filter exists."""
    src, out = path("lzf.h5"), path("lzf.clean.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("z", data=np.arange(1000.0), chunks=(250,), compression="lzf")
        f.create_dataset("a", data=np.arange(10.0))
    p = clean([src, "--normalize", "minmax", "-o", out], expect=3, quiet=False)
    check("missing filter: an error", "/z: error: HDF5 filter 32000 (lzf)" in p.stdout, p.stdout)
    check("missing filter: one line naming the way out",
          p.stderr.endswith("clean cannot read it, nothing written (--exclude '/z' copies it "
                            "unchanged)\n") and p.stderr.count("\n") == 1, p.stderr)
    check("missing filter: nothing written", not os.path.exists(out))
    p = clean([src, "--normalize", "minmax", "--exclude", "/z", "-o", out], quiet=False)
    check("missing filter, excluded: reported as copied",
          "/z: copied: HDF5 filter 32000 (lzf)" in p.stdout, p.stdout)
    with h5py.File(src) as a, h5py.File(out) as b:
        check("missing filter: chunks copied as stored", raw_chunks(a["z"]) == raw_chunks(b["z"]))
        check("missing filter: values", np.array_equal(b["z"][:], np.arange(1000.0)))
        check("missing filter: the other dataset cleaned",
              np.array_equal(b["a"][:], np.arange(10.0) / 9.0))


def test_fill_value_attribute():
    """A CF _FillValue attribute (a netCDF-4 int16 variable): scan counts
    such values as missing; clean leaves them alone (out of the min-max,
    written back as the marker in the output dtype F32, with the
    attribute and the dataset fill value converted to F32: CF requires
    the variable's type), and the verification re-scan counts them the
    same way; --missing none transforms them like any value.
    tests/conformance/test_clean_missing.py checks every option."""
    v = np.array([-1, 4, 8, -1, 12, 16], dtype=np.int16)
    src, out = path("fv.h5"), path("fv.clean.h5")
    with h5py.File(src, "w") as f:
        d = f.create_dataset("ht", data=v, chunks=(3,), fillvalue=np.int16(-1))
        d.attrs["_FillValue"] = np.int16(-1)
    clean([src, "--normalize", "minmax", "-o", out])
    with h5py.File(out) as f:
        m = v == -1
        x = v[~m].astype(np.float64)
        ref = np.full(v.shape, -1, np.float32)
        ref[~m] = ((x - x.min()) / (x.max() - x.min())).astype(np.float32)
        check("_FillValue: markers left alone", np.array_equal(f["ht"][:], ref), str(f["ht"][:]))
        a = f["ht"].attrs["_FillValue"]
        check("_FillValue: attribute converted to F32", a.dtype == np.float32 and a == -1, repr(a))
        check("_FillValue: dataset fill value F32", f["ht"].fillvalue == -1.0 and
              f["ht"].dtype == np.float32, str(f["ht"].fillvalue))
    os.unlink(out)
    clean([src, "--normalize", "minmax", "--missing", "none", "-o", out])
    with h5py.File(out) as f:
        ref = ((v - v.min()) / (v.max() - v.min())).astype(np.float32)
        check("_FillValue: --missing none transforms them like any value",
              np.array_equal(f["ht"][:], ref), str(f["ht"][:]))
        check("_FillValue: --missing none: attribute converted too",
              f["ht"].attrs["_FillValue"] == -1 and f["ht"].fillvalue == -1.0,
              str(f["ht"].fillvalue))


def test_array_types():
    """Array-typed elements (HDF5 array datatypes: extra trailing
    dimensions of the tensor) are written back, also as a compound member
    whose integers become F32 with --normalize."""
    rng = np.random.default_rng(9)
    a = rng.normal(size=(50, 2, 3))
    rec = np.zeros(40, dtype=[("v", "<i2", (4,)), ("w", "<f8")])
    rec["v"] = rng.integers(0, 100, size=(40, 4))
    rec["w"] = rng.normal(size=40)
    src, out = path("arr.h5"), path("arr.clean.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("a", shape=(50,), dtype=np.dtype((np.float64, (2, 3))))
        f["a"][...] = a
        f.create_dataset("rec", data=rec, chunks=(16,))
    clean([src, "--normalize", "minmax", "-o", out])
    with h5py.File(out) as f:
        x = a.reshape(50, -1)
        ref = ((x - x.min(0)) / (x.max(0) - x.min(0))).reshape(50, 2, 3)
        check("array type: dtype kept", f["a"].dtype == np.dtype((np.float64, (2, 3))))
        check("array type: values", np.max(np.abs(f["a"][:] - ref)) <= 1e-15)
        v = rec["v"].astype(np.float64)
        vref = ((v - v.min(0)) / (v.max(0) - v.min(0))).astype(np.float32)
        got = f["rec"][:]
        check("array member: integers became F32 arrays",
              f["rec"].dtype == np.dtype([("v", "<f4", (4,)), ("w", "<f8")]), str(f["rec"].dtype))
        check("array member: values", np.array_equal(got["v"], vref))


def test_root_creation_order():
    """A file whose root tracks creation order (h5py track_order=True, as
    netCDF-4 files do): links and attributes keep that order; a user block
    (bytes before the HDF5 superblock) is copied."""
    src, out = path("rootorder.h5"), path("rootorder.clean.h5")
    with h5py.File(src, "w", track_order=True) as f:
        for name in ("zz", "aa", "mm"):
            f[name] = np.arange(3.0)
            f.attrs[name] = 1
    clean([src, "--normalize", "minmax", "--allow-misaligned", "-o", out])
    ub_src, ub_out = path("ub.h5"), path("ub.clean.h5")
    with h5py.File(ub_src, "w", userblock_size=512) as f:
        f["v"] = np.arange(4.0)
    with open(ub_src, "r+b") as fh:
        fh.write(b"user block text " * 32)
    clean([ub_src, "--normalize", "minmax", "-o", ub_out])
    with open(ub_src, "rb") as a, open(ub_out, "rb") as b:
        check("user block copied", a.read(512) == b.read(512))
    with h5py.File(ub_out) as f:
        check("user block size kept", f.userblock_size == 512 and
              np.array_equal(f["v"][:], np.arange(4.0) / 3.0))
    with h5py.File(out) as f:
        check("root: link creation order", list(f) == ["zz", "aa", "mm"], str(list(f)))
        check("root: attribute creation order, nanaudit last",
              list(f.attrs) == ["zz", "aa", "mm", "nanaudit"], str(list(f.attrs)))


def test_named_datatype():
    """A cleaned dataset whose type is a committed (named) datatype keeps
    its link to the type's copy (thirteenth fresh-user round: it got an
    anonymous type), and so does a copied one. Equal named types stay
    distinct objects with their own attributes (libhdf5's merge had made
    /dtype_named, /t2 and /zz/t one object carrying t2's attribute); a
    type the walk reaches after its dataset (/zz/t used by /a/late) is
    linked too, and an anonymous committed type stays anonymous and
    shared; link creation order stays the input's."""
    src, out = path("named.h5"), path("named.clean.h5")
    x = np.arange(10.0)
    with h5py.File(src, "w") as f:
        f["zz/t"] = np.dtype("<f8")
        f["dtype_named"] = np.dtype("<f8")
        f["t2"] = np.dtype("<f8")
        f["t2"].attrs["u"] = 7
        f["hard_t2"] = f["t2"]
        f.create_dataset("uses_named", data=x, dtype=f["dtype_named"])
        f.create_dataset("also", data=x, dtype=f["dtype_named"])
        f.create_dataset("a/late", data=x, dtype=f["zz/t"])
        f.create_dataset("copied", data=x, dtype=f["dtype_named"])
        f.create_dataset("copied2", data=x, dtype=f["t2"])
        f["tmp"] = np.dtype("<f8")
        f.create_dataset("anon", data=x, dtype=f["tmp"])
        f.create_dataset("anon_copied", data=x, dtype=f["tmp"])
        del f["tmp"]
        g = f.create_group("ordered", track_order=True)
        g.create_dataset("first", data=x, dtype=f["zz/t"])
        g["type_after"] = np.dtype("<f8")
        g.create_dataset("last", data=x, dtype=g["type_after"])
    clean([src, "--normalize", "minmax", "--exclude", "/copied*", "--exclude", "/anon_copied",
           "--allow-misaligned", "-o", out])

    def addr(o):
        return h5py.h5o.get_info(o).addr

    with h5py.File(out) as f:
        for k, t in (("uses_named", "/dtype_named"), ("also", "/dtype_named"),
                     ("copied", "/dtype_named"), ("copied2", "/t2"), ("a/late", "/zz/t"),
                     ("ordered/first", "/zz/t"), ("ordered/last", "/ordered/type_after")):
            ty = f[k].id.get_type()
            check(f"{k}: linked to {t}", ty.committed() and addr(ty) == addr(f[t].id),
                  str(h5py.h5i.get_name(ty) if ty.committed() else None))
        types = [addr(f[t].id) for t in ("dtype_named", "t2", "zz/t", "ordered/type_after")]
        check("named types stay distinct", len(set(types)) == 4, str(types))
        check("second hard link kept", addr(f["hard_t2"].id) == addr(f["t2"].id))
        check("type attributes stay their own", dict(f["t2"].attrs) == {"u": 7} and
              not f["dtype_named"].attrs and not f["zz/t"].attrs,
              f'{dict(f["t2"].attrs)} {dict(f["dtype_named"].attrs)}')
        a, b = f["anon"].id.get_type(), f["anon_copied"].id.get_type()
        check("anonymous type stays anonymous and shared", a.committed() and
              h5py.h5i.get_name(a) is None and addr(a) == addr(b), str(h5py.h5i.get_name(a)))
        check("no temporary link left", sorted(f) == ["a", "also", "anon", "anon_copied",
                                                       "copied", "copied2", "dtype_named",
                                                       "hard_t2", "ordered", "t2",
                                                       "uses_named", "zz"], str(sorted(f)))
        check("creation order kept", list(f["ordered"]) == ["first", "type_after", "last"],
              str(list(f["ordered"])))
        check("cleaned values", np.array_equal(f["uses_named"][:], x / 9.0) and
              np.array_equal(f["a/late"][:], x / 9.0) and np.array_equal(f["anon"][:], x / 9.0))
        check("copied values", np.array_equal(f["copied"][:], x) and
              np.array_equal(f["copied2"][:], x))
    # fifteenth fresh-user round: a file that tracks creation order with a
    # named type created after a nested group (netCDF-4 does both) made
    # libhdf5 1.10.8 crash (SIGSEGV) in H5Ocopy's search of the output for
    # an equal committed type, for every selection and under --dry-run
    src, out = path("named_order.h5"), path("named_order.clean.h5")
    with h5py.File(src, "w", track_order=True) as f:
        sub = f.create_group("g", track_order=True).create_group("sub", track_order=True)
        y = np.arange(40.0).reshape(20, 2)
        y[3, 0] = np.nan
        sub.create_dataset("x", data=y)
        f["ntype"] = np.dtype("f8")
        f.create_dataset("y", data=x, dtype=f["ntype"])
    for sel in ([], ["--exclude", "*"]):
        clean([src, "--allow-misaligned", "--force", "-o", out] + sel)
        with h5py.File(out) as f:
            ty = f["y"].id.get_type()
            check(f"track order {sel}: y linked to /ntype",
                  ty.committed() and h5py.h5o.get_info(ty).addr == h5py.h5o.get_info(f["ntype"].id).addr)
            check(f"track order {sel}: order kept", list(f) == ["g", "ntype", "y"], str(list(f)))
            check(f"track order {sel}: rows", f["g/sub/x"].shape == ((19, 2) if not sel else (20, 2)))


def test_empty_result():
    """Every row has a NaN in one of two features: all rows go, a valid
    0-row dataset remains."""
    a = np.arange(20.0).reshape(10, 2)
    a[::2, 0] = np.nan
    a[1::2, 1] = np.nan
    src, out = path("empty.h5"), path("empty.clean.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("a", data=a, chunks=(4, 2))
    clean([src, "--max-drop-fraction", "1", "-o", out])
    with h5py.File(out) as f:
        check("0 rows: shape", f["a"].shape == (0, 2), str(f["a"].shape))
        check("0 rows: chunked", f["a"].chunks is not None and f["a"].chunks[0] >= 1)
        check("0 rows: reads", f["a"][:].shape == (0, 2))


def test_compound():
    rng = np.random.default_rng(5)
    rec = np.zeros(60, dtype=[("a", "<f8"), ("b", "<i4"), ("tag", "S3")])
    rec["a"] = rng.normal(size=60)
    rec["a"][9] = np.nan
    rec["b"] = np.arange(60)
    rec["tag"] = b"xyz"
    # aligned: q at offset 8 after 4 bytes of padding, which must stay
    pts = np.zeros(40, dtype=np.dtype([("p", ">f4"), ("q", "<f8")], align=True))
    pts["p"] = rng.normal(size=40)
    pts["p"][3] = np.inf
    pts["q"] = np.arange(40.0)
    z = rng.normal(size=30) + 1j * rng.normal(size=30)
    z[4] = np.nan
    src = path("cmp.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("rec", data=rec, chunks=(16,))
        f.create_dataset("pts", data=pts, chunks=(32,), compression="gzip")
        f.create_dataset("z", data=z)
    # no drops: field a rewritten in place, b and the string untouched
    out = path("cmp.zero.h5")
    clean([src, "--include", "/rec.a", "--nonfinite", "zero", "-o", out])
    with h5py.File(out) as f:
        got = f["rec"][:]
        want = rec["a"].copy()
        want[9] = 0.0
        check("compound: field a written", np.array_equal(got["a"], want))
        check("compound: other fields kept", np.array_equal(got["b"], rec["b"]) and
              np.array_equal(got["tag"], rec["tag"]))
        check("compound: dtype kept", f["rec"].dtype == rec.dtype)
    # drops with --together over every field (and the complex parts)
    out = path("cmp.drop.h5")
    clean([src, "--exclude", "/rec.*", "--together", "/pts.*", "--together", "/z.*",
           "--max-drop-fraction", "0.5", "-o", out])
    with h5py.File(out) as f:
        keep = np.ones(40, bool)
        keep[3] = False
        got = f["pts"][:]
        check("compound drop: same rows from every field", np.array_equal(got["q"], pts["q"][keep])
              and np.array_equal(got["p"], pts["p"][keep]))
        check("compound drop: >f4 member and the padded layout kept",
              f["pts"].dtype == pts.dtype and f["pts"].dtype.itemsize == 16, str(f["pts"].dtype))
        check("compound drop: chunks and gzip kept", f["pts"].chunks == (32,) and
              f["pts"].compression == "gzip")
        zk = np.ones(30, bool)
        zk[4] = False
        check("complex drop: rows", np.array_equal(f["z"][:], z[zk]) and f["z"].dtype == z.dtype)
    # a drop that would leave a member behind (even when the user calls
    # the fields unrelated), or a dtype change with an uncleaned member:
    # refused, nothing written
    out = path("cmp.refused.h5")
    p = clean([src, "--include", "/rec.*", "--together", "/rec.a,/rec.b", "--allow-misaligned",
               "-o", out], expect=2)
    check("compound refusal: message names the dataset",
          "/rec: compound dataset whose cleaned fields drop rows, but its member 'tag' is not "
          "cleaned, so its records cannot be rewritten" in p.stderr, p.stderr)
    p = clean([src, "--include", "/rec.*", "--nonfinite", "zero", "--normalize", "minmax",
               "-o", out], expect=2)
    check("compound refusal: dtype change named",
          "/rec: compound dataset whose cleaned fields change dtype, but its member 'tag'"
          in p.stderr, p.stderr)
    check("compound refusal: nothing written", not os.path.exists(out) and
          not [n for n in os.listdir(TMP) if n.startswith(".nanaudit-tmp")])
    # fields cleaned apart (--allow-misaligned, no --together) that drop
    # as many rows, but other ones: record 1 would pair a[2] with b[1], a
    # damaged copy that verified, exit 0 (audit 25a); refused, also in a
    # dry run; different numbers of rows likewise
    two = np.zeros(6, dtype=[("a", "<f4"), ("b", "<f8")])
    two["a"] = np.arange(6)
    two["b"] = np.arange(6) * 2
    two["a"][1] = np.nan
    two["b"][3] = np.nan
    src2 = path("cmp2.h5")
    with h5py.File(src2, "w") as f:
        f["c"] = two
        two["b"][4] = np.nan
        f["d"] = two
    for extra in ([], ["--dry-run"]):
        p = clean([src2, "--include", "/c.*", "--max-drop-fraction", "1", "--allow-misaligned",
                   "-o", out] + extra, expect=2)
        check("compound fields apart: refused" + " ".join(extra),
              "/c: compound fields keep different rows (row 1: dropped by '/c.a', kept by "
              "'/c.b'); clean its fields with --together" in p.stderr, p.stderr)
    p = clean([src2, "--include", "/d.*", "--max-drop-fraction", "1", "--allow-misaligned",
               "-o", out], expect=2)
    check("compound fields apart: row counts", "/d: compound fields keep different numbers of "
          "rows (5 and 4); clean its fields with --together" in p.stderr, p.stderr)
    check("compound fields apart: nothing written", not os.path.exists(out) and
          not [n for n in os.listdir(TMP) if n.startswith(".nanaudit-tmp")])
    clean([src2, "--include", "/c.*", "--max-drop-fraction", "1", "--together", "/c.*",
           "--allow-misaligned", "-o", out])
    with h5py.File(out) as f, h5py.File(src2) as g:
        keep = np.array([1, 0, 1, 0, 1, 1], bool)
        check("compound fields together: whole records dropped",
              np.array_equal(f["c"][:], g["c"][:][keep]), str(f["c"][:]))


def main():
    for t in (test_round_trip, test_seed_example, test_chunk_shrink_and_dtypes,
              test_missing_filter, test_fill_value_attribute, test_array_types,
              test_root_creation_order, test_named_datatype, test_empty_result,
              test_compound):
        try:
            t()
        except AssertionError as e:
            FAILS.append(f"{t.__name__}: {e}")
            print(f"FAIL {t.__name__}: {e}")
    shutil.rmtree(TMP, ignore_errors=True)
    if FAILS:
        print(f"{len(FAILS)} failure(s)")
        return 1
    print("PASS test_clean_hdf5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
