#!/usr/bin/python3
"""Exports PyTorch models with models/export/mlpcore_export.py and records PyTorch's own forward pass.

    export_roundtrip.py OUTDIR    writes OUTDIR/<name>.safetensors, <name>_in.npy, <name>_out.npy and
                                  OUTDIR/names.txt; exits non-zero if any exporter check fails.
Called by tests/exporter_test.cpp, which runs `mlpcore run` on each model and compares.
"""
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "export"))
from mlpcore_export import Exponential, Sine, export, load  # noqa: E402


def models():
    torch.manual_seed(0)
    yield "every_activation", "F32", nn.Sequential(
        nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 24), nn.LeakyReLU(0.3),
        nn.Sequential(nn.Linear(24, 20), nn.Sigmoid(), nn.Linear(20, 20), nn.Tanh()),
        nn.Linear(20, 16), nn.Softplus(beta=2.0), nn.Dropout(0.1), nn.Linear(16, 16), Exponential(),
        nn.Linear(16, 17), Sine(), nn.Linear(17, 9), nn.SiLU(), nn.Linear(9, 3), nn.Identity())
    yield "half_no_bias", "F16", nn.Sequential(nn.Linear(3, 64, bias=False), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                                nn.Linear(64, 1))
    yield "bfloat16", "BF16", nn.Sequential(nn.Linear(2, 48), nn.Softplus(), nn.Linear(48, 4))


def check_rejections():
    for bad, needle in [(nn.Sequential(nn.Linear(2, 2), nn.GELU()), "GELU is not supported"),
                        (nn.Sequential(nn.ReLU(), nn.Linear(2, 2)), "must directly follow an nn.Linear"),
                        (nn.Sequential(nn.Linear(2, 3), nn.Linear(4, 1)), "takes 4 inputs"),
                        (nn.Sequential(nn.Linear(2, 2)), "dtype 'F8'"),
                        (nn.Sequential(nn.Linear(2, 2), nn.Softplus(beta=1e5)), "beta 100000.0 is outside"),
                        (nn.Sequential(nn.Linear(2, 2), nn.LeakyReLU(2000.0)), "alpha 2000.0 is outside")]:
        try:
            export(bad, os.devnull, dtype="F8" if needle.startswith("dtype") else "F32")
        except ValueError as e:
            assert needle in str(e), f"expected {needle!r} in {e}"
        else:
            raise AssertionError(f"export accepted {bad}")


def check_metadata_rejections():
    for metadata, error, needle in [({1: "x"}, TypeError, "keys must be strings"), ({"a": object()}, TypeError, "cannot be stored"), ({"a": [object()]}, TypeError, "'a'"),
                                    ({"a": float("nan")}, ValueError, "'a'"), ({"mlpcore": "{}"}, ValueError, "reserved")]:
        try:
            export(nn.Sequential(nn.Linear(2, 2)), os.devnull, metadata=metadata)
        except error as e:
            assert needle in str(e), f"expected {needle!r} in {e}"
        else:
            raise AssertionError(f"export accepted metadata {metadata}")


def main(outdir):
    check_rejections()
    check_metadata_rejections()
    names = []
    for name, dtype, model in models():
        model.eval()
        path = os.path.join(outdir, name + ".safetensors")
        # Metadata of any JSON type is stored as text (safetensors metadata is string -> string).
        export(model, path, dtype=dtype, metadata={"epochs": 10, "lr": 1e-3, "tags": ["sdf", 2], "note": name})
        with torch.no_grad():
            for p in model.parameters():  # what the file holds: weights rounded to its dtype
                p.copy_(p.to({"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}[dtype]).float())
            x = torch.rand(257, model[0].in_features) * 2 - 1
            y = model(x)
            reloaded = load(path)(x)
        assert torch.allclose(reloaded, y, rtol=1e-5, atol=1e-6), f"{name}: load() differs from the exported model"
        np.save(os.path.join(outdir, name + "_in.npy"), x.numpy().astype(np.float32))
        np.save(os.path.join(outdir, name + "_out.npy"), y.numpy().astype(np.float32))
        names.append(name)
    with open(os.path.join(outdir, "names.txt"), "w") as f:
        f.write("\n".join(names) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
