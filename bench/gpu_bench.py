#!/usr/bin/env python3
"""mlpcore vs PyTorch on one GPU, in one process: samples per second for the benchmark networks.

    python3 bench/gpu_bench.py --lib build/engine/libmlpcore_c.so --out docs   # writes benchmarks.md/.png

mlpcore: each of --backends (default cuda, and cuda-f16acc: float16 accumulation; hip on AMD) through
libmlpcore_c's enqueue (mlpcore_network_enqueue_layout) on PyTorch's current stream, float32 in and out,
and float16 in and out, with [batch, dim] arrays, or [dim, batch] ones with --layout feature_major. A backend named with "+builtin" (cuda+builtin) runs only the kernels built into mlpcore,
not one specialized for the network: the fallback on machines without NVRTC. The time to build each
network is printed: its kernel compiled by NVRTC into a fresh cache, then loaded from that cache.
PyTorch: the same network as an fp16 nn.Sequential in inference mode, replayed as a CUDA graph (its
best case), fp16 in and out. Both are timed with CUDA events: the median of --repeats calls
after warm-up, each call a CUDA graph of max(1, 2^20 / batch) launches, so that Python's launch overhead
does not count. The same run measures two ceilings: device-to-device copy bandwidth and a large fp16
GEMM. Every mlpcore result is checked against PyTorch's float32 forward pass first.
"""
import argparse
import ctypes
import os
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "export"))
from mlpcore_export import export  # noqa: E402
from bench_networks import ACTIVATIONS, make_net, parse_network  # noqa: E402

NETWORKS = [parse_network(n) for n in ("32-64x4-16", "32-128x4-16", "16-64x2-4", "3-64x4-1")]


LAYOUTS = {"sample_major": 0, "feature_major": 1}  # MLPCORE_SAMPLE_MAJOR, MLPCORE_FEATURE_MAJOR


def arranged(a, layout):
    """A [batch, dim] array as calls in `layout` take it: itself, or its feature-major [dim, batch] copy."""
    return a.t().contiguous() if layout == "feature_major" else a


def by_sample(a, layout):
    """A call's array in `layout`, seen as [batch, dim]."""
    return a.t() if layout == "feature_major" else a


class Mlpcore:
    def __init__(self, lib, path, backend, kernel_cache=None, layout="sample_major", build_both_layouts=False):
        """backend: a backend's name, with "+builtin" for its built-in kernels only; its calls in `layout`, the
        network built for that layout only, or for both (NetworkOptions::layouts)."""
        self.lib = lib
        self.layout = LAYOUTS[layout]
        built = 3 if build_both_layouts else 1 << self.layout
        err = ctypes.create_string_buffer(4096)
        name, builtin = backend.removesuffix("+builtin"), backend.endswith("+builtin")
        start = time.perf_counter()
        self.handle = lib.mlpcore_network_create_with_layouts(path.encode(), name.encode(), 1, 0 if builtin else 1,
                                                              kernel_cache.encode() if kernel_cache else None, None, built,
                                                              err, 4096)
        self.seconds = time.perf_counter() - start
        if not self.handle:
            raise RuntimeError(err.value.decode())
        self.backend = lib.mlpcore_network_backend(self.handle).decode()
        self.kernel = lib.mlpcore_network_kernel(self.handle).decode()

    def enqueue(self, x, y):
        """float32 or float16 tensors (both the same type), [batch, dim], or [dim, batch] feature-major."""
        err = ctypes.create_string_buffer(1024)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        if self.lib.mlpcore_network_enqueue_layout(self.handle, ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr()),
                                                   ctypes.c_size_t(x.shape[self.layout]), int(x.dtype == torch.float16), self.layout,
                                                   stream, err, 1024):
            raise RuntimeError(err.value.decode())

    def __del__(self):
        self.lib.mlpcore_network_destroy(self.handle)


def library_comparison_args(description):
    """The arguments shared by the scripts that run builds of libmlpcore_c.so side by side in one process
    (compare_libs.py, build_times.py); a script adds its own before parsing."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("libs", nargs="+", help="paths of libmlpcore_c.so builds")
    ap.add_argument("--networks", type=lambda s: [parse_network(n) for n in s.split(",")], default=NETWORKS)
    ap.add_argument("--backends", default="cuda,cuda-f16acc")
    ap.add_argument("--layout", choices=list(LAYOUTS), default="sample_major")
    ap.add_argument("--build-both-layouts", action="store_true",
                    help="build each network for both layouts (`mlpcore --layouts both`), not only --layout's")
    ap.add_argument("--rounds", type=int, default=3)
    add_activation_args(ap)
    return ap


def add_activation_args(parser):
    parser.add_argument("--activation", choices=list(ACTIVATIONS), default="relu", help="the hidden layers' activation (default: relu)")
    parser.add_argument("--output-activation", choices=["none"] + list(ACTIVATIONS), default="none",
                        help="the output layer's activation (default: none)")


def exported(network, folder, activation="relu", output_activation="none"):
    """A PyTorch network of `network`'s shape (parse_network), hidden `activation` and `output_activation`
    with random weights, and the safetensors file in `folder` it is exported to."""
    name, inp, width, hidden, out = network
    model = make_net(inp, width, hidden, out, activation, output_activation).eval()
    path = os.path.join(folder, f"{name}-{activation}-{output_activation}.safetensors")
    export(model, path)
    return model, path


def load_lib(path):
    lib = ctypes.CDLL(path)
    lib.mlpcore_network_create.restype = ctypes.c_void_p
    lib.mlpcore_network_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.mlpcore_network_destroy.argtypes = [ctypes.c_void_p]
    lib.mlpcore_network_create_with_layouts.restype = ctypes.c_void_p
    lib.mlpcore_network_create_with_layouts.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                                        ctypes.c_char_p, ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t]
    for f in (lib.mlpcore_network_backend, lib.mlpcore_network_kernel):
        f.restype = ctypes.c_char_p
        f.argtypes = [ctypes.c_void_p]
    lib.mlpcore_network_enqueue_layout.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                   ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    return lib


def time_ms(fn, repeats, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def graph_of(fn, calls):
    """`calls` calls of fn captured in one CUDA graph. Replaying it times the GPU's work: a Python call
    through ctypes takes longer to launch (10-20 us) than a kernel on 2^16 samples runs, which a
    renderer launching from C++ does not pay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    return graph


def torch_graph(model16, x16, calls):
    static_in = x16.clone()
    with torch.inference_mode():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model16(static_in)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                static_out = model16(static_in)
    return graph, static_out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True)
    p.add_argument("--backends", type=lambda v: v.split(","), default=["cuda", "cuda-f16acc"],
                   help="comma-separated mlpcore backends, side by side (default: cuda,cuda-f16acc)")
    p.add_argument("--out", default=None, help="folder for benchmarks.md and benchmarks.png")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="only batch 2^22 and 2^16, no plot or report")
    p.add_argument("--layout", choices=list(LAYOUTS), default="sample_major",
                   help="mlpcore's input and output arrays: [batch, dim] (sample_major) or [dim, batch] (feature_major)")
    p.add_argument("--networks", type=lambda v: [parse_network(n) for n in v.split(",")], default=NETWORKS,
                   help="comma-separated shapes such as 32-64x4-16,24-100x3-8 (default: the four benchmark networks)")
    add_activation_args(p)
    args = p.parse_args()
    torch.manual_seed(0)
    lib = load_lib(args.lib)
    dev = torch.device("cuda")
    gpu = torch.cuda.get_device_name(0)
    batches = [2 ** k for k in range(10, 23, 2)]
    if 2 ** 16 not in batches:
        batches.append(2 ** 16)
    batches = [2 ** 16, 2 ** 22] if args.quick else sorted(set(batches + [2 ** 22]))
    series = [(b, io) for b in args.backends for io in ("float32", "float16")]  # mlpcore's, in table order
    results = {}  # name -> {batch: [samples/s per series..., torch]}
    errors = {}  # name -> [max rel. error per series]
    tmp = tempfile.mkdtemp()
    for network in args.networks:
        name, inp, width, hidden, out = network
        model, path = exported(network, tmp, args.activation, args.output_activation)
        model = model.to(dev)
        cache = tempfile.mkdtemp()
        for b in args.backends:  # how long building a network takes: compiling, then from the cache
            cold = Mlpcore(lib, path, b, cache, args.layout)  # compiles, and fills the fresh cache
            warm = Mlpcore(lib, path, b, cache, args.layout)
            print(f"{name} {b}: {cold.kernel}; built in {cold.seconds:.3f} s, {warm.seconds * 1e3:.1f} ms from the cache", flush=True)
        nets = {b: Mlpcore(lib, path, b, cache, args.layout) for b in args.backends}
        laid_out = lambda t: arranged(t, args.layout)  # [batch, dim] as the calls take it
        model16 = make_net(inp, width, hidden, out, args.activation, args.output_activation).to(dev).half().eval()
        model16.load_state_dict({k: v.half() for k, v in model.state_dict().items()})
        # correctness first, on fresh random inputs, below and from 2^20 samples (from there feature-major
        # calls may take kernels of their own, FusedPlan::large_batch), batches whose rows keep 16-byte
        # alignment (the kernels' vector I/O) and others
        errors[name] = [0.0] * len(series)
        for n in (100003, 2 ** 20, 2 ** 20 + 3):
            x = torch.rand(n, inp, device=dev) * 2 - 1
            with torch.inference_mode():
                refs = {"float32": model(x), "float16": model(x.half().float())}
            for i, (b, io) in enumerate(series):
                dtype = torch.float32 if io == "float32" else torch.float16
                y = laid_out(torch.empty(n, out, device=dev, dtype=dtype))
                nets[b].enqueue(laid_out(x.to(dtype)), y)
                torch.cuda.synchronize()
                y = by_sample(y, args.layout)
                errors[name][i] = max(errors[name][i], ((y.float() - refs[io]).abs() / refs[io].abs().clamp(min=1)).max().item())
        results[name] = {}
        for batch in batches:
            xs = {"float32": torch.rand(batch, inp, device=dev) * 2 - 1}
            xs["float16"] = xs["float32"].half()
            ys = {io: laid_out(torch.empty(batch, out, device=dev, dtype=xs[io].dtype)) for io in xs}
            xs16 = xs["float16"]  # PyTorch's input
            xs = {io: laid_out(v) for io, v in xs.items()}
            calls = max(1, 2 ** 20 // batch)  # per timed replay
            rates = []
            for b, io in series:
                graph = graph_of(lambda: nets[b].enqueue(xs[io], ys[io]), calls)
                rates.append(batch * calls / time_ms(graph.replay, args.repeats) * 1e3)
            graph, _ = torch_graph(model16, xs16, calls)
            rates.append(batch * calls / time_ms(graph.replay, args.repeats) * 1e3)
            results[name][batch] = rates
            print(f"{name} batch {batch}: " + ", ".join(f"{b} {io} I/O {r / 1e9:.3f}" for (b, io), r in zip(series, rates)) +
                  f", pytorch {rates[-1] / 1e9:.3f} G/s", flush=True)
        del nets
    # ceilings
    a = torch.empty(2 ** 28, dtype=torch.float32, device=dev)
    b = torch.empty_like(a)
    copy_ms = time_ms(lambda: b.copy_(a), args.repeats)
    bandwidth = 2 * a.numel() * 4 / copy_ms * 1e3
    m = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    gemm_ms = time_ms(lambda: m @ m, args.repeats)
    tflops = 2 * 8192 ** 3 / gemm_ms * 1e3 / 1e12
    del a, b, m

    lines = [f"# GPU benchmarks: mlpcore vs PyTorch on {gpu}", "",
             f"Measured by `bench/gpu_bench.py` in one process on one {gpu}: samples per second (median of "
             f"{args.repeats} CUDA-event-timed replays after warm-up, each a CUDA graph of max(1, 2^20 / batch) calls). mlpcore: backends " +
             ", ".join(f"`{b}`" for b in args.backends) + ", `enqueue` on PyTorch's stream, float32 in and out, and float16 in "
             f"and out, {args.layout} arrays. PyTorch " + torch.__version__ + ": fp16 `nn.Sequential` (ReLU), "
             "inference mode, replayed as a CUDA graph, fp16 in and out.", "",
             f"Ceilings measured in the same run: device-to-device copy {bandwidth / 1e12:.2f} TB/s (bytes read + written), "
             f"fp16 GEMM 8192³ {tflops:.0f} TFLOP/s.", "",
             "| network | batch | " + " | ".join(f"{b} G/s, {io} I/O" for b, io in series) + " | PyTorch G/s | best ratio to PyTorch "
             "| max rel. error vs PyTorch fp32 (" + " / ".join(f"{b} {io}" for b, io in series) + ") |",
             "|---|---|" + "---|" * len(series) + "---|---|---|"]
    for name, *_ in args.networks:
        for batch in (2 ** 22, 2 ** 16):
            rates = results[name][batch]
            lines.append(f"| {name} | 2^{batch.bit_length() - 1} | " + " | ".join(f"{r / 1e9:.2f}" for r in rates) +
                         f" | {max(rates[:-1]) / rates[-1]:.1f}× | " + " / ".join(f"{e:.1e}" for e in errors[name]) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out and not args.quick:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "benchmarks.md"), "w") as f:
            f.write(text)
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            fig, ax = plt.subplots(figsize=(8, 5))
            markers = {"float32": "o", "float16": "^"}
            for name, *_ in args.networks:
                xs = sorted(results[name])
                color = None
                for i, (b, io) in enumerate(series):
                    line, = ax.plot(xs, [results[name][x][i] for x in xs], marker=markers[io], color=color,
                                    linestyle="-" if i < 2 else ":", label=f"mlpcore {b} {io} I/O {name}")
                    color = line.get_color()
                ax.plot(xs, [results[name][x][-1] for x in xs], linestyle="--", color=color, label=f"PyTorch {name}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("batch size")
            ax.set_ylabel("samples / s")
            ax.set_title(f"mlpcore vs PyTorch fp16 CUDA graph, {gpu}")
            ax.legend(fontsize=7)
            ax.grid(True, which="both", alpha=0.3)
            fig.savefig(os.path.join(args.out, "benchmarks.png"), dpi=110, bbox_inches="tight")
        except ImportError as e:
            print("no plot:", e)


if __name__ == "__main__":
    main()
