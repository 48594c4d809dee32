#!/usr/bin/env python3
"""Two or more builds of libmlpcore_c.so side by side in one process on one GPU (A/B of a kernel change).

    python3 bench/compare_libs.py --networks 3-64x4-1,16-64x2-4 old/libmlpcore_c.so new/libmlpcore_c.so

For each backend, network and batch (--batch-log2, 22 unless told, e.g. 14,16,18, and --batches): every library's
samples/s with float32 and float16 I/O (arrays [batch, dim], or [dim, batch] with --layout
feature_major), each timing a CUDA graph of max(1, 2^20 / batch) calls as bench/gpu_bench.py does (a
Python call through ctypes takes longer to launch than a kernel on 2^16 samples runs), the libraries
alternated over --rounds rounds (so clock and thermal drift hit all alike); prints the median and range,
each library's largest relative error against PyTorch's float32 forward, and whether its float32 and
float16 outputs are identical to the first library's. Compare rows of one run
only: H100s of a pool differ by several percent. Each library compiles its specialized kernels into a
kernel cache of its own: the cache key is the kernel source's, so libraries that build the same source
differently (how engine/src/specialize.cpp compiles it) would otherwise run the first one's kernels.
"""
import os
import statistics
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench as gb  # noqa: E402


def main():
    ap = gb.library_comparison_args(__doc__)
    ap.add_argument("--batch-log2", type=lambda s: [int(b) for b in s.split(",")], default=[22])
    ap.add_argument("--batches", type=lambda s: [int(b) for b in s.split(",")], default=[],
                    help="sample counts besides --batch-log2's, e.g. 1048593 (feature-major rows unaligned)")
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    tmp = tempfile.mkdtemp()
    libs = [(p, gb.load_lib(p), tempfile.mkdtemp(dir=tmp)) for p in args.libs]
    for backend in args.backends.split(","):
        for network in args.networks:
            name, inp, _, _, out = network
            model, path = gb.exported(network, tmp, args.activation, args.output_activation)
            model = model.to(dev)
            nets = [(p, gb.Mlpcore(lib, path, backend, cache, args.layout, args.build_both_layouts)) for p, lib, cache in libs]
            for batch in [2 ** b for b in args.batch_log2] + args.batches:
                compare(model, nets, batch, inp, out, backend, name, args)
            del nets


def compare(model, nets, batch, inp, out, backend, name, args):
    dev = torch.device("cuda")
    x = gb.arranged(torch.rand(batch, inp, device=dev) * 2 - 1, args.layout)
    y = gb.arranged(torch.empty(batch, out, device=dev), args.layout)
    samples = lambda a: gb.by_sample(a, args.layout)
    x16, y16 = x.half(), torch.empty_like(y, dtype=torch.float16)
    checked = min(batch, 100003)
    with torch.inference_mode():
        ref = model(samples(x)[:checked])
    errors, outputs, rates = {}, {}, {p: ([], []) for p, _ in nets}
    calls = max(1, 2 ** 20 // batch)
    graphs = {}
    for p, net in nets:
        net.enqueue(x, y)
        net.enqueue(x16, y16)
        torch.cuda.synchronize()
        errors[p] = ((samples(y)[:checked] - ref).abs() / ref.abs().clamp(min=1)).max().item()
        outputs[p] = (y.clone(), y16.clone())
        graphs[p] = [gb.graph_of(lambda net=net, a=a, b=b: net.enqueue(a, b), calls) for a, b in ((x, y), (x16, y16))]
    for _ in range(args.rounds):
        for p, _ in nets:
            for graph, r in zip(graphs[p], rates[p]):
                r.append(batch * calls / gb.time_ms(graph.replay, 30) / 1e6)
    first = nets[0][0]
    for p, _ in nets:
        f32, f16 = rates[p]
        same = "" if p == first else "  outputs " + ("identical to the first's" if all(
            torch.equal(a, b) for a, b in zip(outputs[p], outputs[first])) else "DIFFER from the first's")
        size = f"2^{batch.bit_length() - 1}" if batch & (batch - 1) == 0 else str(batch)
        print(f"{backend:12s} {name:12s} {size} {p}: float32 I/O {statistics.median(f32):6.2f} G/s [{min(f32):.2f}-{max(f32):.2f}]"
              f"  float16 I/O {statistics.median(f16):6.2f} [{min(f16):.2f}-{max(f16):.2f}]  max rel. error {errors[p]:.1e}{same}", flush=True)


if __name__ == "__main__":
    main()
