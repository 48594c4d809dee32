// The fused MLP kernels, one source for both vendors: built as HIP code objects (one per AMD architecture,
// cmake/MlpcoreAmdgpu.cmake) and as the CUDA fat binary (cmake/MlpcoreCuda.cmake). mlpcore_mlp_t<N> keeps up to N tiles of
// 16 per layer (widths up to 16 N) in registers; mlpcore_mlp_fixed_<i> has shape i of ops/fused_shapes.h
// compiled in. Each reads and writes float32; the same kernel with the suffix _f16 reads and writes
// float16. Where the tile family can accumulate in float16 (ops/native_tile.h), every fixed-shape kernel
// also has a twin with _f16acc before that suffix. Blocks are kFusedWavesPerBlock waves; the tile's FusedPolicy
// sets their register bounds (ops/fused_kernel_entry.h). A model's own specialized kernels come from
// ops/fused_mlp_specialized.h, compiled per model.
#include "ops/fused_kernel_entry.h"
#include "ops/fused_mlp.h"
#include "ops/fused_shapes.h"
#include "ops/native_tile.h"

// Run-time-shaped kernels, float32 accumulation only (on an H100 float16 accumulation made them slower:
// 32-128x3-16 by 30%).
#define MLPCORE_RUNTIME_POLICY(N) mlpcore::ops::runtime_shape_policy<mlpcore::ops::NativeTile, N>()
#define MLPCORE_FUSED_MLP_KERNELS(N)                                                                                              \
  MLPCORE_FUSED_KERNEL(mlpcore_mlp_t##N, float, MLPCORE_RUNTIME_POLICY(N), mlpcore::ops::mlp_forward<mlpcore::ops::NativeTile, N>) \
  MLPCORE_FUSED_KERNEL(mlpcore_mlp_t##N##_f16, mlpcore::ops::half_t, MLPCORE_RUNTIME_POLICY(N), mlpcore::ops::mlp_forward<mlpcore::ops::NativeTile, N>)

MLPCORE_FUSED_MLP_KERNELS(1)
MLPCORE_FUSED_MLP_KERNELS(2)
MLPCORE_FUSED_MLP_KERNELS(4)
MLPCORE_FUSED_MLP_KERNELS(8)

// Fixed-shape kernels (an MLPCORE_FIXED_SHAPES entry) of tile `Tile`, names suffixed with `acc`.
#define MLPCORE_FIXED_KERNELS_WITH(acc, Tile, index, hidden, output, ...)                                                     \
  MLPCORE_FUSED_KERNEL(mlpcore_mlp_fixed_##index##acc, float, (mlpcore::ops::fixed_shape_policy<Tile, __VA_ARGS__>()),         \
                       MLPCORE_FIXED_FORWARD(Tile, hidden, output, __VA_ARGS__))                                              \
  MLPCORE_FUSED_KERNEL(mlpcore_mlp_fixed_##index##acc##_f16, mlpcore::ops::half_t, (mlpcore::ops::fixed_shape_policy<Tile, __VA_ARGS__>()), \
                       MLPCORE_FIXED_FORWARD(Tile, hidden, output, __VA_ARGS__))
#define MLPCORE_FIXED_KERNELS(...) MLPCORE_FIXED_KERNELS_WITH(, mlpcore::ops::NativeTile, __VA_ARGS__)
#define MLPCORE_FIXED_KERNELS_F16ACC(...) MLPCORE_FIXED_KERNELS_WITH(_f16acc, mlpcore::ops::NativeF16AccTile, __VA_ARGS__)

MLPCORE_FIXED_SHAPES(MLPCORE_FIXED_KERNELS)
MLPCORE_IF_F16ACC(MLPCORE_FIXED_SHAPES(MLPCORE_FIXED_KERNELS_F16ACC))
