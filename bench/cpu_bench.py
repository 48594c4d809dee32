#!/usr/bin/env python3
"""mlpcore's cpu backend vs PyTorch on the CPU, in one process: samples per second, same threads for both.

    python3 bench/cpu_bench.py --lib build/engine/libmlpcore_c.so [--threads 1,2] [--batch 65536]

mlpcore: the cpu backend through libmlpcore_c (mlpcore_network_infer), created with the thread count.
PyTorch: the same weights as a float32 nn.Sequential of nn.Linear + ReLU, under torch.inference_mode, with
torch.set_num_threads set to the same count. Each is timed with time.perf_counter, the two calls taking
turns: the median of --repeats calls after --warmup calls each. mlpcore's output is checked against
PyTorch's first. Prints a markdown table, with each side's float32 GFLOP/s (2 per multiply-add of the
dense layers) and the share of the FMA peak of that many threads (one thread's, measured first: 12
independent chains of the widest fused multiply-adds the C compiler emits for this CPU, -march=native,
times the threads) that mlpcore reaches and that 3× PyTorch would need.
"""
import argparse
import ctypes
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

# glibc hands PyTorch's per-call output blocks (16 MB at batch 65536) back to the kernel after each call and
# faults them in again on the next, which in a VM costs more than the math (measured here: 330 ms against
# 29 ms per call for 32-64x4-16); an application keeps its memory, so this process does too. OpenBLAS's
# core-type overrides (set on some machines against old OpenBLAS bugs) would hold PyTorch to older
# kernels: they are dropped for this process alone. Both sides run in the same process, under the same.
TUNABLES = "glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=4294967296"
if os.environ.get("GLIBC_TUNABLES") != TUNABLES:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["GLIBC_TUNABLES"] = TUNABLES
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "export"))
from mlpcore_export import export  # noqa: E402
from bench_networks import make_net, parse_network  # noqa: E402

# input-width x hidden layers-output; hidden layers ReLU, output none.
NETWORKS = [parse_network(n) for n in ("32-64x4-16", "32-128x4-16", "3-64x4-1", "16-64x2-4", "64-128x3-32")]


def load_lib(path):
    lib = ctypes.CDLL(path)
    lib.mlpcore_network_create_with_options.restype = ctypes.c_void_p
    lib.mlpcore_network_create_with_options.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint, ctypes.c_int,
                                                        ctypes.c_char_p, ctypes.c_size_t]
    lib.mlpcore_network_destroy.argtypes = [ctypes.c_void_p]
    lib.mlpcore_network_infer.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                          ctypes.c_size_t]
    return lib


class Mlpcore:
    def __init__(self, lib, path, threads):
        self.lib = lib
        err = ctypes.create_string_buffer(1024)
        self.handle = lib.mlpcore_network_create_with_options(path.encode(), b"cpu", threads, 1, err, 1024)
        if not self.handle:
            raise RuntimeError(err.value.decode())

    def infer(self, x, y):
        err = ctypes.create_string_buffer(1024)
        if self.lib.mlpcore_network_infer(self.handle, ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr()),
                                          ctypes.c_size_t(x.shape[0]), err, 1024):
            raise RuntimeError(err.value.decode())

    def __del__(self):
        self.lib.mlpcore_network_destroy(self.handle)


def set_openblas_threads(threads):
    """Debian's PyTorch runs its GEMMs in OpenBLAS, whose own thread pool ignores torch.set_num_threads."""
    names = []
    for name in ("libopenblas.so.0", "libblas.so.3"):
        try:
            lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)  # only a library PyTorch has loaded
            lib.openblas_set_num_threads(threads)
            names.append(name)
        except (OSError, AttributeError):
            pass
    return names


def medians(fns, repeats, warmup):
    """Median seconds of each function, calls taking turns so that a slow spell of the machine hits all."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, t in zip(fns, times):
            start = time.perf_counter()
            fn()
            t.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


FMA_PEAK_C = r"""
#include <time.h>
typedef float v16 __attribute__((vector_size(64)));
#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
/* float32 GFLOP/s of one thread: 12 independent chains of a*b+c in registers, enough to cover the FMA
   units' latency; an empty asm keeps each chain in a register and the loop from being folded. */
double fma_gflops(long iterations) {
  v16 b, c;
  for (int k = 0; k < 16; ++k) { b[k] = 0.999999f; c[k] = 1e-7f; }
#define DECLARE(j) v16 a##j = b * (float)(j + 1);
  CHAINS(DECLARE)
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < iterations; ++i) {
#define STEP(j) a##j = a##j * b + c; __asm__("" : "+v"(a##j));
    CHAINS(STEP)
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  v16 sum = c;
#define ADD(j) sum += a##j;
  CHAINS(ADD)
  const double seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  return sum[0] == 12345.0f ? 0 : 2.0 * 16 * 12 * iterations / seconds / 1e9;
}
"""


def fma_peak_gflops(tmp):
    """One thread's float32 FMA peak: the best of 5 runs of FMA_PEAK_C, built with cc -O3 -march=native."""
    src, so = os.path.join(tmp, "fma_peak.c"), os.path.join(tmp, "fma_peak.so")
    with open(src, "w") as f:
        f.write(FMA_PEAK_C)
    subprocess.run(["cc", "-O3", "-march=native", "-ffp-contract=fast", "-shared", "-fPIC", "-o", so, src], check=True)
    fn = ctypes.CDLL(so).fma_gflops
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_long]
    return max(fn(50_000_000) for _ in range(5))


def macs_per_sample(model):
    return sum(layer.in_features * layer.out_features for layer in model if isinstance(layer, torch.nn.Linear))


def cpu_model():
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True, help="path to libmlpcore_c.so")
    p.add_argument("--threads", type=lambda v: [int(t) for t in v.split(",")], default=[len(os.sched_getaffinity(0))],
                   help="comma-separated thread counts, each used by both (default: the CPUs this process may use)")
    p.add_argument("--batch", type=int, default=65536)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--networks", type=lambda v: [parse_network(n) for n in v.split(",")], default=NETWORKS,
                   help="comma-separated shapes such as 32-64x4-16 (default: " + ",".join(n[0] for n in NETWORKS) + ")")
    args = p.parse_args()
    torch.manual_seed(0)
    lib = load_lib(args.lib)
    tmp = tempfile.mkdtemp()
    blas = set_openblas_threads(args.threads[0])
    peak = fma_peak_gflops(tmp)
    print(f"float32 FMA peak of one thread: {peak:.1f} GFLOP/s", flush=True)
    print(f"{cpu_model()}, nproc {os.cpu_count()}, affinity {len(os.sched_getaffinity(0))} CPUs; PyTorch {torch.__version__}"
          f"{' (OpenBLAS threads set too: ' + ', '.join(blas) + ')' if blas else ''}; "
          f"batch {args.batch}, median of {args.repeats} after {args.warmup} warm-up", flush=True)
    lines = ["| network | threads | mlpcore cpu samples/s | PyTorch samples/s | mlpcore / PyTorch | mlpcore GFLOP/s (share of the threads' FMA peak) "
             "| PyTorch GFLOP/s | 3× PyTorch would need | max rel. error vs PyTorch |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, inp, width, hidden, out in args.networks:
        model = make_net(inp, width, hidden, out)
        path = os.path.join(tmp, name + ".safetensors")
        export(model, path)
        x = torch.rand(args.batch, model[0].in_features) * 2 - 1
        y = torch.empty(args.batch, model[-1].out_features)
        for threads in args.threads:
            torch.set_num_threads(threads)
            set_openblas_threads(threads)
            net = Mlpcore(lib, path, threads)
            net.infer(x, y)
            with torch.inference_mode():
                ref = model(x)
                error = ((y - ref).abs() / ref.abs().clamp(min=1)).max().item()

                def pytorch():
                    model(x)
                mlpcore_s, torch_s = medians([lambda: net.infer(x, y), pytorch], args.repeats, args.warmup)
            del net
            flops = 2 * macs_per_sample(model) * args.batch / 1e9
            lines.append(f"| {name} | {threads} | {args.batch / mlpcore_s / 1e6:.2f} M | {args.batch / torch_s / 1e6:.2f} M | "
                         f"{torch_s / mlpcore_s:.2f}× | {flops / mlpcore_s:.0f} ({flops / mlpcore_s / (peak * threads):.0%}) | "
                         f"{flops / torch_s:.0f} | {3 * flops / torch_s / (peak * threads):.0%} of the peak | {error:.1e} |")
            print(lines[-1], flush=True)
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
