#!/usr/bin/env python3
"""How long building a network takes (compiling its specialized kernels), for one or more builds of
libmlpcore_c.so side by side in one process on one GPU:

    python3 bench/build_times.py old/libmlpcore_c.so new/libmlpcore_c.so --networks 2-64x8-3,16-64x3-16 --layout feature_major

Each network is built --rounds times by each library in turn (the order alternating), every time with a
fresh kernel cache, so every build compiles; prints the least and the median seconds per library, backend
and network. NVRTC's threads contend with other compiles on the machine: run nothing beside it.
"""
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench as gb  # noqa: E402


def main():
    args = gb.library_comparison_args(__doc__).parse_args()
    libs = [(p, gb.load_lib(p)) for p in args.libs]
    tmp = tempfile.mkdtemp()
    for network in args.networks:
        name, path = network[0], gb.exported(network, tmp, args.activation, args.output_activation)[1]
        for backend in args.backends.split(","):
            seconds, kernel = {p: [] for p, _ in libs}, {}
            for r in range(args.rounds):
                for p, lib in libs if r % 2 == 0 else libs[::-1]:
                    net = gb.Mlpcore(lib, path, backend, tempfile.mkdtemp(dir=tmp), args.layout, args.build_both_layouts)
                    seconds[p].append(net.seconds)
                    kernel[p] = net.kernel
                    del net
            for p, s in seconds.items():
                print(f"{backend:12s} {name:12s} {args.layout}: {p}: least {min(s):.2f} s, median {statistics.median(s):.2f} s ({kernel[p]})",
                      flush=True)


if __name__ == "__main__":
    main()
