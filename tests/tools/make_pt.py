#!/usr/bin/env python3
"""make_pt.py - write torch.save-format files without torch, for tests.

The pickles name exactly the globals torch.save writes
(torch._utils._rebuild_tensor_v2, torch.FloatStorage, ...,
collections.OrderedDict) through stand-in modules registered in
sys.modules for the duration of a dump, and storages are persistent ids
('storage', torch.<Type>Storage, key, 'cpu', numel[, view]) as in
torch/serialization.py. Both layouts are written:
  zip:    DIR/data.pkl, DIR/byteorder, DIR/data/KEY, DIR/version
  legacy: magic number, protocol 1001, sys_info, the object, the sorted
          storage keys, then per key an int64 element count + the bytes.

Use from Python:
    from make_pt import Storage, Tensor, save
    s = Storage(np.arange(12, dtype=np.float32))
    save({"w": Tensor(s, 0, (3, 4), (4, 1)), "t": Tensor(s, 1, (4, 3), (1, 4))}, "x.pt")
A Tensor is (storage, storage offset, size, stride) in elements, like
torch's own views; two tensors may share one storage.
Command line: make_pt.py OUT.pt  (a small demo checkpoint).
"""
import collections
import io
import pickle
import sys
import types
import zipfile

import numpy as np

try:
    import ml_dtypes
except ImportError:  # only BF16 / F8 need it
    ml_dtypes = None

STORAGE_TYPES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}


class Storage:
    """A storage: a 1-D numpy array (any dtype in STORAGE_TYPES)."""

    def __init__(self, data, key=None, numel=None):
        self.data = np.ascontiguousarray(data).reshape(-1)
        self.key = key
        self.numel = numel  # hostile tests: the element count the persistent id declares


class Tensor:
    """A view (storage, offset, size, stride) in elements."""

    def __init__(self, storage, offset, size, stride, parameter=False, v3_dtype=None,
                 state=None, type_state=None):
        self.storage, self.offset = storage, offset
        self.size, self.stride = tuple(size), tuple(stride)
        self.parameter, self.v3_dtype = parameter, v3_dtype
        # hostile tests: state is BUILD on the tensor (torch's __setstate__);
        # type_state wraps the rebuild in torch._tensor._rebuild_from_type_v2
        # with that state (torch sets each key as an attribute)
        self.state, self.type_state = state, type_state

    def array(self):
        """The logical numpy array this view shows (for references)."""
        d = self.storage.data
        it = d.dtype.itemsize
        return np.lib.stride_tricks.as_strided(
            d[self.offset:], shape=self.size, strides=[s * it for s in self.stride]).copy()


class Evil:
    """An object whose unpickling would run os.system(cmd)."""

    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        import os
        return (os.system, (self.cmd,))


def _fake_torch():
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch._utils")
    classes = {}
    for name in set(STORAGE_TYPES.values()):
        cls = type(name, (), {})
        cls.__module__ = "torch"
        setattr(torch, name, cls)
        classes[name] = cls

    def _rebuild_tensor_v2(*a):
        raise RuntimeError("never called")

    def _rebuild_tensor_v3(*a):
        raise RuntimeError("never called")

    def _rebuild_parameter(*a):
        raise RuntimeError("never called")
    for f in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter):
        f.__module__ = "torch._utils"
        f.__qualname__ = f.__name__
        setattr(utils, f.__name__, f)
    for name in ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
                 "int8", "uint8", "bool", "complex64", "float8_e4m3fn", "float8_e5m2", "Tensor"):
        cls = type(name, (), {})  # pickled by reference: GLOBAL torch NAME
        cls.__module__ = "torch"
        setattr(torch, name, cls)
    tensor_mod = types.ModuleType("torch._tensor")

    def _rebuild_from_type_v2(*a):
        raise RuntimeError("never called")
    _rebuild_from_type_v2.__module__ = "torch._tensor"
    _rebuild_from_type_v2.__qualname__ = "_rebuild_from_type_v2"
    tensor_mod._rebuild_from_type_v2 = _rebuild_from_type_v2
    return torch, utils, classes, tensor_mod


class _Pickler(pickle.Pickler):
    def __init__(self, f, protocol, classes, legacy):
        super().__init__(f, protocol=protocol)
        self.classes, self.legacy = classes, legacy
        self.storages = collections.OrderedDict()

    def persistent_id(self, obj):
        if not isinstance(obj, Storage):
            return None
        if obj.key is None:
            obj.key = str(len(self.storages))
        self.storages[obj.key] = obj
        cls = self.classes[STORAGE_TYPES[obj.data.dtype.name]]
        n = obj.numel if obj.numel is not None else int(obj.data.size)
        pid = ("storage", cls, obj.key, "cpu", n)
        return pid + (None,) if self.legacy else pid

    def reducer_override(self, obj):
        utils = sys.modules["torch._utils"]
        if isinstance(obj, Tensor):
            hooks = collections.OrderedDict()
            if obj.v3_dtype is not None:
                dt = getattr(sys.modules["torch"], obj.v3_dtype)
                t = (utils._rebuild_tensor_v3, (obj.storage, obj.offset, obj.size, obj.stride,
                                                False, hooks, dt))
            else:
                t = (utils._rebuild_tensor_v2, (obj.storage, obj.offset, obj.size, obj.stride,
                                                False, hooks))
            if obj.parameter:
                inner = Tensor(obj.storage, obj.offset, obj.size, obj.stride)
                return (utils._rebuild_parameter, (inner, True, collections.OrderedDict()))
            if obj.type_state is not None:
                tm = sys.modules["torch._tensor"]
                return (tm._rebuild_from_type_v2,
                        (t[0], sys.modules["torch"].Tensor, t[1], obj.type_state))
            if obj.state is not None:
                return t + (obj.state,)
            return t
        return NotImplemented


def _dump(obj, legacy, protocol):
    torch, utils, classes, tensor_mod = _fake_torch()
    saved = {k: sys.modules.get(k) for k in ("torch", "torch._utils", "torch._tensor")}
    sys.modules["torch"], sys.modules["torch._utils"] = torch, utils
    sys.modules["torch._tensor"] = tensor_mod
    try:
        buf = io.BytesIO()
        p = _Pickler(buf, protocol, classes, legacy)
        p.dump(obj)
        return buf.getvalue(), p.storages
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def save(obj, path, legacy=False, protocol=2, folder="archive", byteorder="little"):
    """Write obj (dicts, lists, scalars, Tensor) as torch.save would."""
    pkl, storages = _dump(obj, legacy, protocol)
    bo = "<" if byteorder == "little" else ">"
    if not legacy:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            z.writestr(f"{folder}/data.pkl", pkl)
            z.writestr(f"{folder}/byteorder", byteorder)
            for key, s in storages.items():
                z.writestr(f"{folder}/data/{key}", s.data.astype(s.data.dtype.newbyteorder(bo)).tobytes())
            z.writestr(f"{folder}/version", "3\n")
        return
    hp = min(protocol, 2)  # torch.save(pickle_protocol=1) writes every pickle so
    with open(path, "wb") as f:
        pickle.dump(0x1950a86a20f9469cfc6c, f, protocol=hp)  # protocol 1: a text LONG
        pickle.dump(1001, f, protocol=hp)
        pickle.dump({"protocol_version": 1001, "little_endian": byteorder == "little",
                     "type_sizes": {"short": 2, "int": 4, "long": 4}}, f, protocol=hp)
        f.write(pkl)
        keys = sorted(storages)
        pickle.dump(keys, f, protocol=hp)
        for key in keys:
            d = storages[key].data
            f.write(np.array([d.size], dtype=bo + "i8").tobytes())
            f.write(d.astype(d.dtype.newbyteorder(bo)).tobytes())


def save_pickle(obj, path, protocol=2):
    """A bare pickle (no torch structure): for hostile-input tests."""
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


def save_zip_pickle(obj, path, folder="archive", protocol=2):
    """A torch-zip layout whose data.pkl is pickle.dumps(obj) (hostile tests)."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{folder}/data.pkl", pickle.dumps(obj, protocol=protocol))
        z.writestr(f"{folder}/version", "3\n")


if __name__ == "__main__":
    s = Storage(np.arange(12, dtype=np.float32))
    save(collections.OrderedDict(w=Tensor(s, 0, (3, 4), (4, 1))), sys.argv[1])
