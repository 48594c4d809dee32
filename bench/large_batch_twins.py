#!/usr/bin/env python3
"""A network's two feature-major kernels side by side, in one process: the one calls below
FusedPlan::large_batch samples take against its large-batch twin (more sample tiles per warp, or the input
prefetched; a specialized kernel's, or with a backend named "+builtin" the run-time-shaped kernel's),
timed just below and at the threshold, so that both run nearly the same batch.

    python3 bench/large_batch_twins.py --lib build/engine/libmlpcore_c.so --networks 3-32x4-1,1-32x3-32

Per network, backend (cuda, cuda-f16acc) and I/O type: G samples/s at 2^20 - 64 and at 2^20 samples (the
median of --rounds alternated rounds, each the median of 15 CUDA-event-timed graph replays), and the
change. A network or I/O type without twins runs the same kernel twice (a measure of the noise).
"""
import argparse
import tempfile

import torch

from bench_networks import parse_network
from gpu_bench import Mlpcore, exported, graph_of, load_lib, time_ms

LARGE_BATCH = 1 << 20  # ops::kLargeBatch


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True)
    p.add_argument("--networks", type=lambda v: [parse_network(n) for n in v.split(",")], required=True)
    p.add_argument("--backends", type=lambda v: v.split(","), default=["cuda", "cuda-f16acc"])
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    torch.manual_seed(0)
    lib = load_lib(args.lib)
    dev = torch.device("cuda")
    tmp = tempfile.mkdtemp()
    print(f"{torch.cuda.get_device_name(0)}: G samples/s at {LARGE_BATCH - 64} -> {LARGE_BATCH} feature-major samples")
    for network in args.networks:
        name, inp, _, _, out = network
        path = exported(network, tmp)[1]
        for backend in args.backends:
            net = Mlpcore(lib, path, backend, tempfile.mkdtemp(), "feature_major")
            cells = []
            for io, dtype in (("float32", torch.float32), ("float16", torch.float16)):
                graphs = []
                for n in (LARGE_BATCH - 64, LARGE_BATCH):
                    x = (torch.rand(inp, n, device=dev) * 2 - 1).to(dtype)
                    y = torch.empty(out, n, device=dev, dtype=dtype)
                    graphs.append((n, graph_of(lambda x=x, y=y: net.enqueue(x, y), 1), x, y))  # the graph keeps their addresses
                rates = [[] for _ in graphs]
                for _ in range(args.rounds):
                    for (n, graph, _, _), r in zip(graphs, rates):
                        r.append(n / time_ms(graph.replay, 15) * 1e3)
                below, at = (sorted(r)[len(r) // 2] / 1e9 for r in rates)
                cells.append(f"{io} I/O {below:.2f} -> {at:.2f} ({(at / below - 1) * 100:+.0f}%)")
            print(f"{name} {backend} ({net.kernel}): " + ", ".join(cells), flush=True)
            del net


if __name__ == "__main__":
    main()
