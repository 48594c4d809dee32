#pragma once
// The widths of the run-time-shaped kernels mlpcore_mlp_w<W>, in tiles of 16: X(W) for W = 1 ..
// kMaxTilesPerLayer (ops/mlp_network.h), one kernel each.
#define MLPCORE_RUNTIME_WIDTHS(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
// Those whose kernel (RuntimeKernelActivations: ReLU hidden layers) has a twin for large feature-major
// batches on NVIDIA (ops::runtime_twin, RuntimeTwin::large_batch).
#define MLPCORE_RUNTIME_LARGE_BATCH_WIDTHS(X) X(1) X(5) X(6) X(7)
// Those whose feature-major kernel (RuntimeKernelActivations) has a twin for inputs of one tile on NVIDIA
// (ops::runtime_twin, RuntimeTwin::one_tile_input).
#define MLPCORE_RUNTIME_ONE_TILE_INPUT_WIDTHS(X) X(8)
// Those whose kernel (RuntimeKernelActivations) has a twin accumulating in float16 on NVIDIA, and of those,
// the ones with a large-batch twin (ops::runtime_f16_accumulation).
#define MLPCORE_RUNTIME_F16ACC_WIDTHS(X) X(2) X(3) X(4) X(5) X(6) X(7)
#define MLPCORE_RUNTIME_F16ACC_LARGE_BATCH_WIDTHS(X) X(5) X(6) X(7)
// Those whose kernels (RuntimeKernelActivations), of both layouts and both accumulations (each such width
// has float16-accumulating kernels), have twins for small batches on NVIDIA (ops::runtime_twin,
// RuntimeTwin::small_batch).
#define MLPCORE_RUNTIME_SMALL_BATCH_WIDTHS(X) X(2) X(3) X(4) X(6) X(7)

// Networks that get a kernel with their shape and activations compiled in, besides the run-time-shaped
// mlpcore_mlp_w<W>: X(index, hidden activation, output activation, widths in tiles of 16: input,
// hidden..., output) builds kernel mlpcore_mlp_fixed_<index>. The hip backend (and the emulated ones)
// use it when a model's padded shape and activations match; docs/amd-kernels.md reports these kernels.
// In order: 32-64x4-16, 32-128x4-16, 16-64x2-4, 3-64x4-1 (input, width x hidden layers, output).
#define MLPCORE_FIXED_SHAPES(X)         \
  X(0, relu, none, 2, 4, 4, 4, 4, 1)    \
  X(1, relu, none, 2, 8, 8, 8, 8, 1)    \
  X(2, relu, none, 1, 4, 4, 1)          \
  X(3, relu, none, 1, 4, 4, 4, 4, 1)
