#pragma once
// Network shapes that get a kernel with the shape compiled in, besides the run-time-shaped
// mlpcore_mlp_t<N>: X(index, widths in tiles of 16: input, hidden..., output) builds kernel
// mlpcore_mlp_fixed_<index>. The HIP backend uses it when a model's padded shape matches;
// docs/amd-kernels.md reports them. In order: 32-64x4-16, 32-128x4-16, 16-64x2-4, 3-64x4-1
// (input, width x hidden layers, output).
#define MLPCORE_FIXED_SHAPES(X) \
  X(0, 2, 4, 4, 4, 4, 1)        \
  X(1, 2, 8, 8, 8, 8, 1)        \
  X(2, 1, 4, 4, 1)              \
  X(3, 1, 4, 4, 4, 4, 1)
