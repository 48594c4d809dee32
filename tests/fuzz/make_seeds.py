#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora: tests/fuzz/seeds/model/ and tests/fuzz/seeds/arrays/ (standard library only).

Valid small models and arrays, near-valid hostile ones, and large inputs (up to ~230 KB, under the fuzzers'
-max_len of 256 KiB) that a fuzzer cannot grow to by itself: headers nested 100 000 deep in a shape, in
data_offsets and in the graph's version, a header of 20 000 small objects, a model of 2000 layers.
The two sample models are copied from models/. Run from anywhere: python3 tests/fuzz/make_seeds.py
"""
import json
import math
import os
import shutil
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = os.path.join(ROOT, "tests", "fuzz", "seeds")
MAX_LEN = 262144


def f16(x):
    return struct.pack("<e", x)


def bf16(x):
    return struct.pack("<f", x)[2:]


ENCODE = {"F32": lambda x: struct.pack("<f", x), "F16": f16, "BF16": bf16}


def container(header, data=b""):
    text = header if isinstance(header, bytes) else header.encode()
    return struct.pack("<Q", len(text)) + text + data


def model(layers, metadata_extra=None, graph=None, pad=True):
    """layers: [(out, in, activation, weight_dtype, bias_dtype or None)]"""
    header, data = {}, b""
    acts = []
    for i, (out, inp, act, wd, bd) in enumerate(layers):
        acts.append(act)
        w = b"".join(ENCODE[wd](math.sin(0.7 * k + i) * 0.5) for k in range(out * inp))
        header[f"layers.{i}.weight"] = {"dtype": wd, "shape": [out, inp], "data_offsets": [len(data), len(data) + len(w)]}
        data += w
        if bd:
            b = b"".join(ENCODE[bd](0.125 * k - 0.25) for k in range(out))
            header[f"layers.{i}.bias"] = {"dtype": bd, "shape": [out], "data_offsets": [len(data), len(data) + len(b)]}
            data += b
    meta = dict(metadata_extra or {})
    meta["mlpcore"] = graph if graph is not None else json.dumps({"version": 1, "activations": acts})
    text = json.dumps({"__metadata__": meta, **header}, separators=(",", ":"))
    if pad:
        text += " " * ((8 - len(text) % 8) % 8)
    return container(text, data)


def write(kind, name, content):
    assert len(content) <= MAX_LEN, (name, len(content))
    with open(os.path.join(SEEDS, kind, name), "wb") as f:
        f.write(content)


def model_seeds():
    for name in ("heart_sdf.safetensors", "all_activations.safetensors"):
        shutil.copyfile(os.path.join(ROOT, "models", name), os.path.join(SEEDS, "model", name))
    write("model", "tiny_1x1", model([(1, 1, "none", "F32", None)]))
    write("model", "tiny_mixed", model([(3, 2, {"name": "leaky_relu", "alpha": 0.2}, "F16", "BF16"),
                                        (1, 3, {"name": "softplus", "beta": 10}, "BF16", "F32")],
                                       metadata_extra={"description": "tiny \u00e9 \\ \" model", "k": ""}))
    write("model", "every_activation", model(
        [(2, 2, a, "F32", "F16") for a in ("relu", "sigmoid", "tanh", "exponential", "sine", "silu", "none",
                                            {"name": "leaky_relu"}, {"name": "softplus", "beta": 0.5})]))
    write("model", "escaped_graph", model([(2, 1, "relu", "F32", "F32"), (1, 2, "none", "F32", None)],
                                          graph='{"version":1,"activations":["\\u0072elu",{"name":"none"}]}'))
    # Near-valid: each breaks one rule of models/FORMAT.md.
    write("model", "duplicate_key", container(b'{"a":{},"a":{}}'))
    write("model", "nul_in_header", container(b'{"__metadata__":{"mlpcore":"{}"}\x00}'))
    write("model", "bad_utf8", container(b'{"\xc3\x28":1}'))
    write("model", "nan_weight", model([(1, 1, "none", "F32", None)])[:-4] + struct.pack("<f", math.nan))
    write("model", "layer_chain", model([(2, 1, "relu", "F32", None), (1, 3, "none", "F32", None)]))
    write("model", "graph_depth_64", model([(1, 1, "none", "F32", None)],
                                           graph='{"version":1,"x":' + "[" * 63 + "]" * 63 + ',"activations":["none"]}'))
    write("model", "graph_depth_65", model([(1, 1, "none", "F32", None)],
                                           graph='{"version":1,"x":' + "[" * 64 + "]" * 64 + ',"activations":["none"]}'))
    # Large: what once overflowed the stack (deep nesting) or took minutes (many small objects).
    # Complete entries, so that a loader gets as far as describing the value in its error message (where
    # the old one overflowed an 8 MiB stack: at 60 000 levels, not at 50 000).
    deep = "[" * 100000 + "4" + "]" * 100000
    write("model", "nested_100000_shape",
          container('{"layers.0.bias":{"dtype":"F32","shape":' + deep + ',"data_offsets":[0,4]}}', b"\0" * 4))
    write("model", "nested_100000_data_offsets",
          container('{"layers.0.bias":{"dtype":"F32","shape":[1],"data_offsets":' + deep + '}}', b"\0" * 4))
    write("model", "nested_100000_version",
          model([(1, 1, "none", "F32", None)], graph='{"version":' + deep + ',"activations":["none"]}'))
    write("model", "objects_20000", container("{" + ",".join(f'"t{i}":{{}}' for i in range(20000)) + "}"))
    write("model", "metadata_10000_keys", model([(1, 1, "none", "F32", None)],
                                                metadata_extra={f"k{i}": "v" for i in range(10000)}))
    write("model", "layers_2000", model([(1, 1, "relu" if i % 2 else "none", "F16", None) for i in range(2000)]))


def npy(header, data, version=1):
    h = header.encode()
    return b"\x93NUMPY" + bytes([version, 0]) + (struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))) + h + data


def npy_header(descr, shape):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    return h + " " * (63 - (10 + len(h)) % 64) + "\n"


def array_seeds():
    f32 = [0.0, -0.0, 1.0, -2.5, 3.4028235e38, 1.4e-45, 1.17549435e-38, 0.1]
    write("arrays", "f4_2x4.npy", npy(npy_header("<f4", "(2, 4)"), struct.pack("<8f", *f32)))
    write("arrays", "f2_3.npy", npy(npy_header("<f2", "(3,)"), struct.pack("<3e", 1.0, -65504.0, 6e-8), 2))
    write("arrays", "f8_2x2.npy", npy(npy_header("<f8", "(2, 2)"), struct.pack("<4d", 1e300, -1e-300, math.nan, 0.5), 3))
    write("arrays", "nan_inf.npy", npy(npy_header("<f4", "(1, 3)"), struct.pack("<3f", math.nan, math.inf, -math.inf)))
    write("arrays", "fortran.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1), }\n", b"\0" * 4))
    write("arrays", "big_endian.npy", npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", b"\0" * 4))
    write("arrays", "long_header.npy", npy(npy_header("<f4", "(1, 1)") + " " * 60000 + "\n", b"\0" * 4, 2))
    write("arrays", "text_basic.txt", b"# x y z\n1 2 3\n\n4,5,6  # comment\n 7\t8 , 9\r\n")
    write("arrays", "text_bom.txt", b"\xef\xbb\xbf+1 -1e-50 3.4028235e38 -0 1.40129846e-45\n")
    write("arrays", "text_special.txt", b"nan -inf inf 1e39 1e400\n")
    write("arrays", "text_large.txt", "\n".join(" ".join(f"{math.sin(r * 16 + c):.9g}" for c in range(16))
                                              for r in range(1000)).encode())


if __name__ == "__main__":
    for kind in ("model", "arrays"):
        d = os.path.join(SEEDS, kind)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    model_seeds()
    array_seeds()
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(SEEDS) for f in fs)
    print(f"seeds: {total} bytes")
