#!/usr/bin/python3
"""Regenerates the bundled sample models (deterministic: fixed seeds, one thread).

    /usr/bin/python3 models/make_samples.py          # writes models/*.safetensors

heart_sdf.safetensors       2 -> 64x3 -> 1, softplus: a 2-D signed distance field of a heart, fitted to
                            the exact SDF on [-1, 1]^2 (apps/sdf_demo draws it).
torus_sdf.safetensors       3 -> 64x4 -> 1, softplus: the 3-D signed distance to a torus (R 0.6, r 0.25,
                            tilted 30 degrees about x) on [-1, 1]^3; apps/sdf_render sphere-traces it.
all_activations.safetensors 3 -> ... -> 4, nine layers using every activation once, widths that are not
                            multiples of 16, mixed F32/F16/BF16 tensors and one layer without bias.
"""
import json
import os
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "export"))
from mlpcore_export import Exponential, Sine, layers_of, write_safetensors, _tensor_bytes, export  # noqa: E402


def heart_sdf(p):
    """Exact SDF of a heart (after Inigo Quilez's sdHeart), scaled to fit [-1, 1]^2; negative inside."""
    q = torch.stack([p[:, 0].abs(), p[:, 1] + 0.55], dim=1) / 1.1
    upper = ((q - torch.tensor([0.25, 0.75])) ** 2).sum(1).sqrt() - 2 ** 0.5 / 4
    d_top = ((q - torch.tensor([0.0, 1.0])) ** 2).sum(1)
    m = 0.5 * (q[:, 0] + q[:, 1]).clamp(min=0)
    d_side = ((q - m[:, None]) ** 2).sum(1)
    lower = torch.minimum(d_top, d_side).sqrt() * torch.sign(q[:, 0] - q[:, 1])
    return torch.where(q[:, 0] + q[:, 1] > 1, upper, lower) * 1.1


def fit(name, net, target, sample, dims, steps=3000):
    """Fits `net` to the exact SDF `target` on batches from sample(); reports the error on [-1, 1]^dims."""
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    for _ in range(steps):
        p = sample()
        loss = (net(p)[:, 0] - target(p)).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    p = torch.rand(20000, dims) * 2 - 1
    with torch.no_grad():
        err = (net(p)[:, 0] - target(p)).abs()
    print(f"{name}: mean |error| {err.mean():.4f}, max {err.max():.4f} (domain [-1, 1]^{dims})")
    return net


def train_heart():
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(2, 64), nn.Softplus(beta=10), nn.Linear(64, 64), nn.Softplus(beta=10),
                        nn.Linear(64, 64), nn.Softplus(beta=10), nn.Linear(64, 1))
    return fit("heart_sdf", net, heart_sdf, lambda: torch.rand(2048, 2) * 2 - 1, dims=2)


def torus_sdf(p):
    """Exact SDF of the torus apps/sdf_render.cpp also draws analytically: tilted 30 degrees about x."""
    c, s = 3 ** 0.5 / 2, 0.5
    y = c * p[:, 1] - s * p[:, 2]
    z = s * p[:, 1] + c * p[:, 2]
    q = torch.stack([torch.sqrt(p[:, 0] ** 2 + z ** 2) - 0.6, y], dim=1)
    return q.norm(dim=1) - 0.25


def train_torus():
    torch.manual_seed(3)
    layers, prev = [], 3
    for _ in range(4):
        layers += [nn.Linear(prev, 64), nn.Softplus(beta=10)]
        prev = 64
    net = nn.Sequential(*layers, nn.Linear(64, 1))

    def sample():  # half uniform, half near the surface
        p = torch.rand(4096, 3) * 2 - 1
        return torch.cat([p[:2048], p[:2048] * 0.1 + p[2048:] * torch.tensor([1.0, 0.4, 1.0])])

    return fit("torus_sdf", net, torus_sdf, sample, dims=3)


def all_activations():
    torch.manual_seed(2)
    widths = [3, 24, 32, 16, 20, 32, 17, 24, 8, 4]
    acts = [nn.ReLU(), nn.LeakyReLU(0.2), nn.Sigmoid(), nn.Tanh(), nn.Softplus(beta=2.0), Exponential(), Sine(),
            nn.SiLU(), nn.Identity()]
    modules = []
    for i, act in enumerate(acts):
        linear = nn.Linear(widths[i], widths[i + 1], bias=(i != 3))
        with torch.no_grad():  # keep every layer's output O(1) so exponential stays tame
            linear.weight.mul_(1.5 if i != 5 else 0.5)
        modules += [linear, act]
    net = nn.Sequential(*modules)
    dtypes = ["F32", "F16", "BF16"]
    tensors, activations = [], []
    for i, (linear, activation) in enumerate(layers_of(net)):
        dtype = dtypes[i % 3]
        tensors.append((f"layers.{i}.weight", dtype, tuple(linear.weight.shape), _tensor_bytes(linear.weight, dtype)))
        if linear.bias is not None:
            bias_dtype = dtypes[(i + 1) % 3]
            tensors.append((f"layers.{i}.bias", bias_dtype, tuple(linear.bias.shape), _tensor_bytes(linear.bias, bias_dtype)))
        activations.append(activation)
    meta = {"mlpcore": json.dumps({"version": 1, "activations": activations}),
            "description": "random weights exercising every activation and dtype"}
    write_safetensors(os.path.join(HERE, "all_activations.safetensors"), tensors, meta)


def main():
    torch.set_num_threads(1)
    export(train_heart(), os.path.join(HERE, "heart_sdf.safetensors"), dtype="F32",
           metadata={"description": "2-D signed distance field of a heart on [-1, 1]^2 (x right, y up)"})
    export(train_torus(), os.path.join(HERE, "torus_sdf.safetensors"), dtype="F32",
           metadata={"description": "3-D signed distance field of a torus (R 0.6, r 0.25, tilted 30 degrees about x) on [-1, 1]^3"})
    all_activations()


if __name__ == "__main__":
    main()
