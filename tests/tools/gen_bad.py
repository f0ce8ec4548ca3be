#!/usr/bin/env python3
"""gen_bad.py - write the malformed-safetensors corpus tests/data/bad/.

Each case is one small file NAME.safetensors (< 64 KiB) plus
NAME.safetensors.expect, one line: a fragment of the one-line message
nanaudit must print on stderr (with exit 3). Every rule of the reference
loader (huggingface/safetensors, safetensors/src/tensor.rs,
SafeTensors::read_metadata and Metadata::validate) has at least one case,
plus the hostile shapes a fuzzer finds first (deep nesting, huge arrays and
strings, integer overflow, non-UTF-8).

Big cases (a header above the 100,000,000-byte cap, JSON nested 100,000
levels) are not committed: tests/cli/bad_files.sh generates them at test
time with `gen_bad.py --big DIR`.

Sharded sets (tests/data/shards/NAME/: shards + model.safetensors.index.json,
one broken rule each; expectations in tests/cli/index_errors.sh) are
written by `gen_bad.py --shards [OUTDIR]`.

Usage:  gen_bad.py [OUTDIR]          (default: tests/data/bad beside this tool)
        gen_bad.py --big OUTDIR      (the generated-at-test-time cases)
        gen_bad.py --shards [OUTDIR] (default: tests/data/shards)
        gen_bad.py --check BADDIR    (the reference loader refuses each file)
The output is deterministic; re-run and commit when a case is added.
"""
import json
import os
import struct
import sys


def st(header, data=b"", hlen=None):
    """8-byte LE length + header (str or bytes) + data."""
    h = header.encode() if isinstance(header, str) else header
    return struct.pack("<Q", len(h) if hlen is None else hlen) + h + data


def t(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def hdr(d):
    return json.dumps(d, separators=(",", ":"))


F32_1 = struct.pack("<f", 1.0)
F32_NAN = struct.pack("<I", 0x7FC00000)

# name -> (bytes, expected stderr fragment)
CASES = {
    # --- sizes and header length (checked before anything is allocated)
    "empty": (b"", "empty file (0 bytes)"),
    "seven_bytes": (b"\x02\x00\x00\x00\x00\x00\x00", "7 bytes: too short for safetensors (it starts with an 8-byte header length)"),
    "header_past_eof": (st('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', F32_1, hlen=1000),
                        "header length 1000 bytes runs past the end of the file"),
    "header_len_2p63": (st("{}", hlen=1 << 63),
                        "header length 9223372036854775808 bytes exceeds the limit of 100000000 bytes"),
    "header_len_max": (st("{}", hlen=(1 << 64) - 1),
                       "header length 18446744073709551615 bytes exceeds the limit"),
    # --- UTF-8 and JSON
    "non_utf8": (st(b'{"w\xff":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', F32_1),
                 "header is not valid UTF-8 (byte 0xFF at header offset 3)"),
    "utf8_surrogate": (st(b'{"w\xed\xa0\x80":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', F32_1),
                       "header is not valid UTF-8 (byte 0xED"),
    "invalid_json": (st('{"a":{"dtype":"F32",}}'), "header is not valid JSON"),
    "json_trailing_garbage": (st('{} x'), "header is not valid JSON: end of file expected"),
    "nul_in_header": (st(b'{"a":{"dtype":"F32\x00","shape":[1],"data_offsets":[0,4]}}', F32_1),
                      "header is not valid JSON"),
    "nested_3000": (st('{"a":' + "[" * 3000 + "]" * 3000 + "}"), "maximum parsing depth reached"),
    "huge_offsets_array": (st(hdr({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0] * 6000}}), b"x"),
                           "tensor 'w': data_offsets is an array of 6000, not [begin, end]"),
    "huge_dtype_string": (st(hdr({"w": t("F" * 50000, [1], 0, 4)}), F32_1),
                          "tensor 'w': unknown dtype 'FFFFFFFFFFFFFFFF"),
    "huge_shape_array": (st(hdr({"w": t("U8", [2] * 8000, 0, 1)}), b"x"),
                         "tensor 'w': element count of shape [2, 2, 2, 2, 2, 2, 2, 2, ... (8000 dims)] overflows 64 bits"),
    "huge_name": (st(hdr({"n" * 30000: t("F32", [1], 4, 8)}), F32_1 * 2),
                  "nnnnnnnn...' starts at data byte 4; the first tensor must start at 0"),
    "entry_not_object": (st('{"a":1}'), "tensor 'a': entry is an integer, not an object"),
    # --- __metadata__
    "metadata_array": (st('{"__metadata__":["a"]}'), "__metadata__ is an array; it must be an object of strings"),
    "metadata_number_value": (st('{"__metadata__":{"v":2}}'), "__metadata__ value of 'v' is an integer, not a string"),
    "metadata_nested": (st('{"__metadata__":{"v":{"x":"y"}}}'), "__metadata__ value of 'v' is an object, not a string"),
    # --- duplicates (stricter than the reference on purpose)
    "dup_name_nan": (st('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                        '"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', F32_1 + F32_NAN),
                     "duplicate tensor name 'w' in header"),
    "dup_key_in_entry": (st('{"w":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}}', F32_1),
                         "tensor 'w': duplicate key 'dtype' in its entry"),
    # --- per-tensor fields
    "missing_dtype": (st('{"w":{"shape":[1],"data_offsets":[0,4]}}', F32_1), "tensor 'w': missing \"dtype\""),
    "missing_shape": (st('{"w":{"dtype":"F32","data_offsets":[0,4]}}', F32_1), "tensor 'w': missing \"shape\""),
    "missing_offsets": (st('{"w":{"dtype":"F32","shape":[1]}}', F32_1), "tensor 'w': missing \"data_offsets\""),
    "unknown_dtype": (st(hdr({"w": t("F33", [1], 0, 4)}), F32_1), "tensor 'w': unknown dtype 'F33'"),
    "dtype_lowercase": (st(hdr({"w": t("f32", [1], 0, 4)}), F32_1), "tensor 'w': unknown dtype 'f32'"),
    "dtype_not_string": (st('{"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}}', F32_1),
                         "tensor 'w': dtype is an integer, not a string"),
    "negative_dim": (st(hdr({"w": t("F32", [2, -3], 0, 4)}), F32_1), "tensor 'w': shape[1] is -3, negative"),
    "fractional_dim": (st('{"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}', F32_1),
                       "tensor 'w': shape[0] is a floating-point number, not an integer"),
    "string_dim": (st(hdr({"w": t("F32", ["1"], 0, 4)}), F32_1), "tensor 'w': shape[0] is a string, not an integer"),
    "shape_not_array": (st(hdr({"w": t("F32", 1, 0, 4)}), F32_1), "tensor 'w': shape is an integer, not an array"),
    "negative_offset": (st(hdr({"w": t("F32", [1], -4, 0)}), F32_1), "tensor 'w': data_offsets[0] is -4, negative"),
    # (twelfth fresh-user round) serde_json reads -0 as the float -0.0: refused
    "neg_zero_dim": (st('{"w":{"dtype":"F32","shape":[-0],"data_offsets":[0,0]}}'),
                     "header: -0 at byte 29, which the reference loader reads as the floating-point number -0.0"),
    "neg_zero_offset": (st('{"w":{"dtype":"F32","shape":[1],"data_offsets":[-0,4]}}', F32_1),
                        "header: -0 at byte 48, which the reference loader reads as the floating-point number -0.0"),
    "offsets_reversed": (st(hdr({"w": t("F32", [1], 4, 0)}), F32_1), "tensor 'w': data_offsets [4, 0]: begin after end"),
    "shape_1000x1000_in_4_bytes": (st(hdr({"w": t("F32", [1000, 1000], 0, 4)}), F32_1),
                                   "tensor 'w': shape [1000, 1000] of F32 needs 4000000 bytes but data_offsets [0, 4] hold 4"),
    "elements_overflow": (st(hdr({"w": t("F32", [1 << 32, 1 << 32], 0, 4)}), F32_1),
                          "tensor 'w': element count of shape [4294967296, 4294967296] overflows 64 bits"),
    "bytes_overflow": (st(hdr({"w": t("F64", [1 << 62], 0, 8)}), F32_1 * 2),
                       "tensor 'w': size in bits of shape [4611686018427387904] x F64 overflows 64 bits"),
    "offsets_above_i64": (st('{"w":{"dtype":"U8","shape":[2],"data_offsets":[18446744073709551614,18446744073709551616]}}', b"xx"),
                          "header is not valid JSON: too big integer"),
    "offsets_i64_max": (st(hdr({"a": t("U8", [1], 0, 1), "b": t("U8", [1], (1 << 63) - 2, (1 << 63) - 1)}), b"xx"),
                        "tensor 'b' starts at data byte 9223372036854775806, leaving a gap"),
    "f4_odd_elements": (st(hdr({"w": t("F4", [3], 0, 2)}), b"\0\0"),
                        "tensor 'w': 3 elements of F4 are not a whole number of bytes"),
    # --- layout: contiguous from 0, ends at the end of the file
    "first_not_at_zero": (st(hdr({"w": t("F32", [1], 4, 8)}), F32_1 * 2),
                          "tensor 'w' starts at data byte 4; the first tensor must start at 0"),
    "gap": (st(hdr({"a": t("F32", [1], 0, 4), "b": t("F32", [1], 8, 12)}), F32_1 * 3),
            "tensor 'b' starts at data byte 8, leaving a gap of 4 bytes after 'a' (ends at 4)"),
    "overlap": (st(hdr({"a": t("F32", [2], 0, 8), "b": t("F32", [1], 4, 8)}), F32_1 * 2),
                "tensor 'b' starts at data byte 4, overlapping 'a' (ends at 8)"),
    "offsets_past_end": (st(hdr({"w": t("F32", [4], 0, 16)}), F32_1 * 2),
                         "truncated: tensor 'w' runs past the end of the file (the tensors need 16 data bytes after the header, file has 8"),
    "truncated_last_tensor": (st(hdr({"a": t("F32", [1], 0, 4), "b": t("F64", [2], 4, 20)}), F32_1 * 3),
                              "truncated: tensor 'b' runs past the end of the file (the tensors need 20 data bytes after the header, file has 12: 8 bytes short)"),
    "trailing_bytes": (st(hdr({"w": t("F32", [1], 0, 4)}), F32_1 + b"junk"),
                       "4 trailing bytes after the last tensor"),
    "no_tensors_trailing": (st("{}", b"\0"), "1 trailing bytes after the last tensor"),
    # --- valid header, tensor that cannot be audited (fail closed)
    "f4_unsupported": (st(hdr({"q": t("F4", [4], 0, 2)}), b"\0\0"), "q: unsupported dtype F4"),
    "ndim_70": (st(hdr({"r": t("U8", [1] * 70, 0, 1)}), b"\1"),
                "r: 70 dimensions, at most 64 are supported (its shape is not listed)"),
}


def big_cases(out):
    """Cases too big to commit, written at test time."""
    # 100,000,001-byte header: a valid file whose only fault is the cap;
    # with --max-header-bytes 100000001 it is audited (one F32 [1] = 1.0).
    h = hdr({"w": t("F32", [1], 0, 4)}).encode()
    h += b" " * (100_000_001 - len(h))
    with open(os.path.join(out, "header_above_cap.safetensors"), "wb") as f:
        f.write(st(h, F32_1))
    deep = "{" + '"a":{' * 100_000 + "}" * 100_001
    with open(os.path.join(out, "nested_100000.safetensors"), "wb") as f:
        f.write(st(deep))


SHARD1 = "model-00001-of-00002.safetensors"
SHARD2 = "model-00002-of-00002.safetensors"


def shard(tensors):
    """A safetensors file of F32 tensors: [(name, [values])], in order."""
    hdr_d, data, off = {"__metadata__": {"format": "pt"}}, b"", 0
    for name, vals in tensors:
        n = 4 * len(vals)
        hdr_d[name] = t("F32", [len(vals)], off, off + n)
        data += struct.pack("<%df" % len(vals), *vals)
        off += n
    return st(hdr(hdr_d), data)


def index(weight_map, total):
    md = {} if total is None else {"total_size": total}
    return json.dumps({"metadata": md, "weight_map": weight_map}, indent=2).encode()


# set -> {file: bytes}; "ok" is valid, each other set breaks one rule
A = [("a.weight", [1.0, 2.0, 3.0]), ("a.bias", [0.5])]
B = [("b.weight", [4.0, 5.0])]
WM = {"a.weight": SHARD1, "a.bias": SHARD1, "b.weight": SHARD2}
SHARD_SETS = {
    "ok": {SHARD1: shard(A), SHARD2: shard(B), "model.safetensors.index.json": index(WM, 24)},
    "missing_shard": {SHARD1: shard(A), "model.safetensors.index.json": index(WM, 24)},
    "not_in_shard": {SHARD1: shard(A), SHARD2: shard(B),
                     "model.safetensors.index.json": index(dict(WM, **{"c.weight": SHARD2}), 24)},
    "not_in_index": {SHARD1: shard(A + [("extra", [9.0])]), SHARD2: shard(B),
                     "model.safetensors.index.json": index(WM, 28)},
    "two_shards": {SHARD1: shard(A), SHARD2: shard(B + [("a.bias", [0.5])]),
                   "model.safetensors.index.json": index(WM, 28)},
    # the sum of the file sizes instead of the tensor bytes
    "total_size_wrong": {SHARD1: shard(A), SHARD2: shard(B),
                         "model.safetensors.index.json": index(WM, len(shard(A)) + len(shard(B)))},
    "escape": {SHARD1: shard(A), "model.safetensors.index.json":
               index(dict(WM, **{"b.weight": "../ok/" + SHARD2}), 24)},
    "bad_shard": {SHARD1: shard(A), SHARD2: shard(B)[:-4],
                  "model.safetensors.index.json": index(WM, 24)},
}


def shard_sets(out):
    for name, files in sorted(SHARD_SETS.items()):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        for f, data in files.items():
            with open(os.path.join(d, f), "wb") as fh:
                fh.write(data)
    print(f"{len(SHARD_SETS)} shard sets written to {out}")


# Files of the corpus the reference loader accepts: valid files whose
# tensors nanaudit cannot audit (F4; more than NA_MAX_NDIM = 64 dims),
# refused by us on purpose (fail closed).
REFERENCE_ACCEPTS = {"f4_unsupported", "ndim_70"}


def check_reference(bad_dir):
    """The reference loader (the safetensors package's safe_open) must
    refuse every corpus file except REFERENCE_ACCEPTS: the corpus tests
    the reference's rules, not rules of our own. Returns the failures."""
    from safetensors import safe_open
    failures = []
    for name in sorted(os.listdir(bad_dir)):
        if not name.endswith(".safetensors"):
            continue
        stem = name[: -len(".safetensors")]
        try:
            with safe_open(os.path.join(bad_dir, name), "np") as f:
                list(f.keys())
            accepted = True
        except Exception:  # any refusal will do; the messages differ
            accepted = False
        if accepted != (stem in REFERENCE_ACCEPTS):
            failures.append(f"{name}: reference {'accepts' if accepted else 'refuses'} it")
    return failures


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    if len(argv) >= 3 and argv[1] == "--check":
        failures = check_reference(argv[2])
        for f in failures:
            print("MISMATCH", f)
        return 1 if failures else 0
    if len(argv) >= 3 and argv[1] == "--big":
        big_cases(argv[2])
        return 0
    if len(argv) >= 2 and argv[1] == "--shards":
        shard_sets(argv[2] if len(argv) > 2 else os.path.normpath(os.path.join(here, "..", "data", "shards")))
        return 0
    out = argv[1] if len(argv) > 1 else os.path.normpath(os.path.join(here, "..", "data", "bad"))
    os.makedirs(out, exist_ok=True)
    for name, (data, expect) in sorted(CASES.items()):
        assert len(data) < 64 * 1024, name
        path = os.path.join(out, name + ".safetensors")
        with open(path, "wb") as f:
            f.write(data)
        with open(path + ".expect", "w") as f:
            f.write(expect + "\n")
    print(f"{len(CASES)} cases written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
