#!/usr/bin/env python3
"""One network's kernel called twice, for a profiler to catch the second call (bench/ncu_kernels.sh):

    python3 bench/profile_call.py --lib build/engine/libmlpcore_c.so 16-64x2-4 cuda-f16acc --layout feature_major --io float16

The network ('a-bxc-d', as bench/gpu_bench.py) gets random weights; the backend may be named with
"+builtin" (the built-in kernels only). Arrays of 2^--batch-log2 samples in device memory, [batch, dim]
or [dim, batch] (--layout feature_major), float32 or float16 (--io); enqueued on PyTorch's stream.
"""
import argparse
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench as gb  # noqa: E402
from bench_networks import parse_network  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("network", type=parse_network)
    ap.add_argument("backend")
    ap.add_argument("--lib", default="build/engine/libmlpcore_c.so")
    ap.add_argument("--layout", choices=list(gb.LAYOUTS), default="sample_major")
    ap.add_argument("--io", choices=["float32", "float16"], default="float32")
    ap.add_argument("--batch-log2", type=int, default=22)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    torch.manual_seed(1)
    _, path = gb.exported(args.network, tmp)
    net = gb.Mlpcore(gb.load_lib(args.lib), path, args.backend, tempfile.mkdtemp(dir=tmp), args.layout)  # a fresh kernel cache
    print(f"{args.network[0]} {args.backend}: {net.kernel}", file=sys.stderr)
    batch, dtype = 1 << args.batch_log2, getattr(torch, args.io)
    (inp, out) = (args.network[1], args.network[4])
    x = gb.arranged(torch.rand(batch, inp, device="cuda").mul(2).sub(1).to(dtype), args.layout)
    y = gb.arranged(torch.empty(batch, out, device="cuda", dtype=dtype), args.layout)
    for _ in range(2):
        net.enqueue(x, y)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
