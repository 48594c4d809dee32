// The fused MLP kernels, one source for both vendors: built as HIP code objects (one per AMD architecture,
// cmake/MlpcoreAmdgpu.cmake) and as the CUDA fat binaries, one per assembly (cmake/MlpcoreCuda.cmake; each
// kernel's body in the one of its policy's, ops/fused_kernel_entry.h). mlpcore_mlp_w<W> runs
// any network whose widest layer is W tiles of 16 (W = 1..8), its depth and activations read at run time
// and its layers packed W tiles wide; on NVIDIA it has ReLU compiled into its hidden layers
// (ops::RuntimeKernelActivations), and mlpcore_mlp_w<W>_act, its twin for networks with any other hidden
// activation, tests each layer's once per tile (ops::RuntimeActivationsPerTile,
// ops::runtime_activations_per_tile), and for the widths of MLPCORE_RUNTIME_LARGE_BATCH_WIDTHS
// mlpcore_mlp_w<W>_fm_large, the feature-major kernel's twin for calls of 2^20 samples or more, more sample
// tiles per warp (ops::runtime_large_batch_policy), and for those of MLPCORE_RUNTIME_ONE_TILE_INPUT_WIDTHS
// mlpcore_mlp_w<W>_fm_one_tile_input, its twin for inputs of one tile (ops::runtime_one_tile_input_policy),
// and for those of MLPCORE_RUNTIME_F16ACC_WIDTHS mlpcore_mlp_w<W>_f16acc, its twin accumulating in float16
// (ops::runtime_f16_accumulation), with a large-batch twin of its own where the kernel has one, and for
// those of MLPCORE_RUNTIME_SMALL_BATCH_WIDTHS twins of both layouts' kernels, of both accumulations, for
// small batches, suffixed _small (ops::runtime_small_batch_policy);
// mlpcore_mlp_fixed_<i> has shape i of ops/fused_shapes.h compiled in. Each reads and writes float32; the
// same kernel with the suffix _f16 reads and writes float16. Where the tile family can accumulate in
// float16 (ops/native_tile.h), every fixed-shape kernel also has a twin with _f16acc before that suffix.
// Blocks are kFusedWavesPerBlock waves; the tile's FusedPolicy sets their register bounds
// (ops/fused_kernel_entry.h). A model's own specialized kernels come from ops/fused_mlp_specialized.h,
// compiled per model.
#include "ops/fused_kernel_entry.h"
#include "ops/fused_mlp.h"
#include "ops/fused_shapes.h"
#include "ops/native_tile.h"

// Run-time-shaped kernels (ops/fused_mlp.h, mlp_forward) for networks whose widest layer is W tiles, of
// tile `Tile`: NativeTile (float32 accumulation), and on NVIDIA NativeF16AccTile at the widths
// ops::runtime_f16_accumulation gives, with ReLU hidden layers, names suffixed _f16acc before the I/O's.
#define MLPCORE_RUNTIME_KERNEL(name, io, Tile, W, activations, layout, twin)                                                          \
  MLPCORE_BUILT_IN_KERNEL_IN(layout, name, io,                                                                                       \
                             (mlpcore::ops::runtime_shape_policy<mlpcore::ops::Tile, W, mlpcore::ops::IoLayout::layout,              \
                                                                 mlpcore::ops::RuntimeTwin::twin, mlpcore::ops::activations::kPerTile>()), \
                             mlpcore::ops::mlp_forward<mlpcore::ops::Tile, W, mlpcore::ops::activations, mlpcore::ops::RuntimeTwin::twin>)
// Each layout's kernel takes its layout's policy, launch bounds included; `suffix` names the kernels' kind
// (_act, _f16acc, or none).
#define MLPCORE_RUNTIME_KERNELS_WITH(W, Tile, activations, suffix)                                                          \
  MLPCORE_RUNTIME_KERNEL(mlpcore_mlp_w##W##suffix, float, Tile, W, activations, sample_major, none)                         \
  MLPCORE_RUNTIME_KERNEL(mlpcore_mlp_w##W##suffix##_fm, float, Tile, W, activations, feature_major, none)                   \
  MLPCORE_RUNTIME_KERNEL(mlpcore_mlp_w##W##suffix##_f16, mlpcore::ops::half_t, Tile, W, activations, sample_major, none)    \
  MLPCORE_RUNTIME_KERNEL(mlpcore_mlp_w##W##suffix##_f16_fm, mlpcore::ops::half_t, Tile, W, activations, feature_major, none)
// The activations of the kernels without the _act suffix (on NVIDIA, ReLU hidden layers).
#define MLPCORE_RUNTIME_ACTIVATIONS RuntimeKernelActivations<mlpcore::ops::NativeTile::kFamily>
// The feature-major twins (ops::runtime_twin), for large batches, for inputs of one tile and for small
// batches, named as FusedPlan::kernel_name and small_batch_twin_name say.
#define MLPCORE_RUNTIME_TWINS(W, Tile, acc, twin, suffix)                                                                             \
  MLPCORE_RUNTIME_KERNEL(mlpcore_mlp_w##W##acc##_fm##suffix, float, Tile, W, MLPCORE_RUNTIME_ACTIVATIONS, feature_major, twin) \
  MLPCORE_RUNTIME_KERNEL(mlpcore_mlp_w##W##acc##_f16_fm##suffix, mlpcore::ops::half_t, Tile, W, MLPCORE_RUNTIME_ACTIVATIONS, feature_major, twin)
#define MLPCORE_RUNTIME_LARGE_BATCH_KERNELS(W) MLPCORE_RUNTIME_TWINS(W, NativeTile, , large_batch, _large)
// The small-batch twins of both layouts' kernels of tile `Tile` (names suffixed `acc` before the I/O's).
#define MLPCORE_RUNTIME_SMALL_BATCH_TWINS(W, Tile, acc)                                                                                  \
  MLPCORE_RUNTIME_KERNEL(mlpcore_mlp_w##W##acc##_small, float, Tile, W, MLPCORE_RUNTIME_ACTIVATIONS, sample_major, small_batch)             \
  MLPCORE_RUNTIME_KERNEL(mlpcore_mlp_w##W##acc##_f16_small, mlpcore::ops::half_t, Tile, W, MLPCORE_RUNTIME_ACTIVATIONS, sample_major, small_batch) \
  MLPCORE_RUNTIME_TWINS(W, Tile, acc, small_batch, _small)
#define MLPCORE_RUNTIME_SMALL_BATCH_KERNELS(W)           \
  MLPCORE_RUNTIME_SMALL_BATCH_TWINS(W, NativeTile, )     \
  MLPCORE_RUNTIME_SMALL_BATCH_TWINS(W, NativeF16AccTile, _f16acc)
#define MLPCORE_RUNTIME_ONE_TILE_INPUT_KERNELS(W) MLPCORE_RUNTIME_TWINS(W, NativeTile, , one_tile_input, _one_tile_input)
#define MLPCORE_WIDTH_BIT(W) | (1u << ((W) - 1))
#if defined(__CUDACC__)
static_assert(mlpcore::ops::runtime_activations_per_tile(mlpcore::ops::NativeTile::kFamily), "the twins the plan picks are built");
#define MLPCORE_RUNTIME_KERNELS(W)                                           \
  MLPCORE_RUNTIME_KERNELS_WITH(W, NativeTile, MLPCORE_RUNTIME_ACTIVATIONS, ) \
  MLPCORE_RUNTIME_KERNELS_WITH(W, NativeTile, RuntimeActivationsPerTile, _act)
MLPCORE_RUNTIME_LARGE_BATCH_WIDTHS(MLPCORE_RUNTIME_LARGE_BATCH_KERNELS)
MLPCORE_RUNTIME_ONE_TILE_INPUT_WIDTHS(MLPCORE_RUNTIME_ONE_TILE_INPUT_KERNELS)
MLPCORE_RUNTIME_SMALL_BATCH_WIDTHS(MLPCORE_RUNTIME_SMALL_BATCH_KERNELS)
#define MLPCORE_SMALL_BATCH_TWIN_BITS (0u MLPCORE_RUNTIME_SMALL_BATCH_WIDTHS(MLPCORE_WIDTH_BIT))
#define MLPCORE_LARGE_BATCH_TWIN_BITS (0u MLPCORE_RUNTIME_LARGE_BATCH_WIDTHS(MLPCORE_WIDTH_BIT))
#define MLPCORE_ONE_TILE_INPUT_TWIN_BITS (0u MLPCORE_RUNTIME_ONE_TILE_INPUT_WIDTHS(MLPCORE_WIDTH_BIT))
#define MLPCORE_RUNTIME_F16ACC_KERNELS(W) MLPCORE_RUNTIME_KERNELS_WITH(W, NativeF16AccTile, MLPCORE_RUNTIME_ACTIVATIONS, _f16acc)
#define MLPCORE_RUNTIME_F16ACC_LARGE_BATCH_KERNELS(W) MLPCORE_RUNTIME_TWINS(W, NativeF16AccTile, _f16acc, large_batch, _large)
MLPCORE_RUNTIME_F16ACC_WIDTHS(MLPCORE_RUNTIME_F16ACC_KERNELS)
MLPCORE_RUNTIME_F16ACC_LARGE_BATCH_WIDTHS(MLPCORE_RUNTIME_F16ACC_LARGE_BATCH_KERNELS)
// The float16-accumulating kernels the plan picks are built, and only those: one per width that
// runtime_f16_accumulation gives, and its large-batch twin where the policy table gives one (no such
// width has a one-tile-input twin, which would need one too).
#define MLPCORE_F16ACC_BIT(W) | (mlpcore::ops::runtime_f16_accumulation(mlpcore::ops::TileFamily::nvidia, W, false) ? 1u << ((W) - 1) : 0u)
#define MLPCORE_ACT_F16ACC_BIT(W) | (mlpcore::ops::runtime_f16_accumulation(mlpcore::ops::TileFamily::nvidia, W, true) ? 1u << ((W) - 1) : 0u)
#define MLPCORE_F16ACC_TWIN_BIT(W)                                                                                                        \
  | (mlpcore::ops::runtime_f16_accumulation(mlpcore::ops::TileFamily::nvidia, W, false) &&                                                 \
             mlpcore::ops::runtime_twin<mlpcore::ops::NativeF16AccTile, W, MLPCORE_TWIN>()                                                 \
         ? 1u << ((W) - 1)                                                                                                                  \
         : 0u)
static_assert((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_F16ACC_BIT)) == (0u MLPCORE_RUNTIME_F16ACC_WIDTHS(MLPCORE_WIDTH_BIT)),
              "a float16-accumulating kernel for each width runtime_f16_accumulation gives, and no other");
static_assert((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_ACT_F16ACC_BIT)) == 0u, "no float16-accumulating _act kernels are built");
static_assert(((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_F16ACC_BIT)) & MLPCORE_SMALL_BATCH_TWIN_BITS) == MLPCORE_SMALL_BATCH_TWIN_BITS,
              "the float16-accumulating small-batch twins are of kernels that are built");
#define MLPCORE_TWIN mlpcore::ops::RuntimeTwin::large_batch
static_assert((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_F16ACC_TWIN_BIT)) == (0u MLPCORE_RUNTIME_F16ACC_LARGE_BATCH_WIDTHS(MLPCORE_WIDTH_BIT)),
              "a float16-accumulating large-batch twin for each such width the policy gives one, and no other");
#undef MLPCORE_TWIN
#define MLPCORE_TWIN mlpcore::ops::RuntimeTwin::one_tile_input
static_assert((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_F16ACC_TWIN_BIT)) == 0u, "no float16-accumulating one-tile-input twins are built");
#undef MLPCORE_TWIN
#undef MLPCORE_F16ACC_TWIN_BIT
#undef MLPCORE_ACT_F16ACC_BIT
#undef MLPCORE_F16ACC_BIT
#undef MLPCORE_RUNTIME_F16ACC_LARGE_BATCH_KERNELS
#undef MLPCORE_RUNTIME_F16ACC_KERNELS
#else
static_assert(!mlpcore::ops::runtime_activations_per_tile(mlpcore::ops::NativeTile::kFamily), "no twins are built");
#define MLPCORE_RUNTIME_KERNELS(W) MLPCORE_RUNTIME_KERNELS_WITH(W, NativeTile, MLPCORE_RUNTIME_ACTIVATIONS, )
#define MLPCORE_LARGE_BATCH_TWIN_BITS 0u
#define MLPCORE_ONE_TILE_INPUT_TWIN_BITS 0u
#define MLPCORE_SMALL_BATCH_TWIN_BITS 0u
#endif

MLPCORE_RUNTIME_WIDTHS(MLPCORE_RUNTIME_KERNELS)
// The hosts pick mlpcore_mlp_w<W> for every W up to the widest layer, and its twins where the policy table
// gives them: each must be built, and only those.
static_assert((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_WIDTH_BIT)) == (1u << mlpcore::ops::kMaxTilesPerLayer) - 1u, "a run-time-shaped kernel for each width");
#define MLPCORE_TWIN_BIT(W) | (mlpcore::ops::runtime_twin<mlpcore::ops::NativeTile, W, MLPCORE_TWIN>() ? 1u << ((W) - 1) : 0u)
#define MLPCORE_TWIN mlpcore::ops::RuntimeTwin::large_batch
static_assert((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_TWIN_BIT)) == MLPCORE_LARGE_BATCH_TWIN_BITS,
              "a large-batch twin for each width the policy gives one, and no other");
#undef MLPCORE_TWIN
#define MLPCORE_TWIN mlpcore::ops::RuntimeTwin::one_tile_input
static_assert((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_TWIN_BIT)) == MLPCORE_ONE_TILE_INPUT_TWIN_BITS,
              "a one-tile-input twin for each width the policy gives one, and no other");
#undef MLPCORE_TWIN
#define MLPCORE_TWIN mlpcore::ops::RuntimeTwin::small_batch
static_assert((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_TWIN_BIT)) == MLPCORE_SMALL_BATCH_TWIN_BITS,
              "small-batch twins for each width the policy gives them, and no other");
#define MLPCORE_SAMPLE_MAJOR_TWIN_BIT(W) \
  | (mlpcore::ops::runtime_twin<mlpcore::ops::NativeTile, W, MLPCORE_TWIN, mlpcore::ops::MLPCORE_RUNTIME_ACTIVATIONS, mlpcore::ops::IoLayout::sample_major>() ? 1u << ((W) - 1) : 0u)
static_assert((0u MLPCORE_RUNTIME_WIDTHS(MLPCORE_SAMPLE_MAJOR_TWIN_BIT)) == MLPCORE_SMALL_BATCH_TWIN_BITS,
              "the sample-major kernels have the same small-batch twins");
#undef MLPCORE_SAMPLE_MAJOR_TWIN_BIT
#undef MLPCORE_TWIN
#undef MLPCORE_TWIN_BIT
#undef MLPCORE_SMALL_BATCH_TWIN_BITS
#undef MLPCORE_ONE_TILE_INPUT_TWIN_BITS
#undef MLPCORE_LARGE_BATCH_TWIN_BITS
#undef MLPCORE_WIDTH_BIT
#undef MLPCORE_RUNTIME_ACTIVATIONS

// Fixed-shape kernels (an MLPCORE_FIXED_SHAPES entry) of tile `Tile`, names suffixed with `acc`.
#define MLPCORE_FIXED_KERNELS_WITH(acc, Tile, index, hidden, output, ...)                                                                        \
  MLPCORE_BUILT_IN_KERNEL(mlpcore_mlp_fixed_##index##acc, float, (mlpcore::ops::fixed_shape_policy<Tile, __VA_ARGS__>()),                          \
                          MLPCORE_FIXED_FORWARD(Tile, hidden, output, __VA_ARGS__))                                                              \
  MLPCORE_BUILT_IN_KERNEL(mlpcore_mlp_fixed_##index##acc##_f16, mlpcore::ops::half_t, (mlpcore::ops::fixed_shape_policy<Tile, __VA_ARGS__>()), \
                          MLPCORE_FIXED_FORWARD(Tile, hidden, output, __VA_ARGS__))
#define MLPCORE_FIXED_KERNELS(...) MLPCORE_FIXED_KERNELS_WITH(, mlpcore::ops::NativeTile, __VA_ARGS__)
#define MLPCORE_FIXED_KERNELS_F16ACC(...) MLPCORE_FIXED_KERNELS_WITH(_f16acc, mlpcore::ops::NativeF16AccTile, __VA_ARGS__)

MLPCORE_FIXED_SHAPES(MLPCORE_FIXED_KERNELS)
MLPCORE_IF_F16ACC(MLPCORE_FIXED_SHAPES(MLPCORE_FIXED_KERNELS_F16ACC))
