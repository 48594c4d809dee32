#pragma once
// The entry point every fused kernel has: NetworkView, input, output, batch, blocks of
// kFusedWavesPerBlock waves whose register bound follows the kernel's FusedPolicy; one per I/O layout.
#include "ops/arch_config.h"
#include "ops/fused_policy.h"
#include "ops/gpu_platform.h"
#include "ops/mlp_network.h"
#include "ops/native_tile.h"
#include "ops/std_subset.h"

namespace mlpcore::ops {
// NVIDIA's built-in kernels are built twice (cmake/MlpcoreCuda.cmake): into a fat binary that ptxas
// assembles at -O3, and, with MLPCORE_LIGHT_ASSEMBLY 1, into one it assembles at -O1
// (FusedPolicy::light_assembly). Each kernel's body is in the binary of its policy's assembly for its I/O
// type (assembled_light); in the other it only traps, and the host never takes it from there
// (engine/src/gpu_launch.h, KernelLookup::by_assembly). Every other build has one binary, every body in it
// (AMD's policies are never light; a specialized kernel is compiled alone, assembled as its policy says).
template <class Io>
MLPCORE_HOST_DEVICE constexpr bool built_in_here(FusedPolicy policy) {
  return assembled_light(policy, stdx::is_same_v<Io, half_t>) == (MLPCORE_LIGHT_ASSEMBLY == 1);
}
}  // namespace mlpcore::ops

// `name` reads and writes sample-major arrays, `name`_fm feature-major ones (ops/mlp_network.h, IoLayout):
// the body is called with the layout's tag after the usual arguments where `built` (a constant), else
// the kernel traps.
#define MLPCORE_FUSED_KERNEL_WHERE(built, layout, name, io, policy, ...)                                                      \
  extern "C" MLPCORE_KERNEL MLPCORE_LAUNCH_BOUNDS_MIN(mlpcore::ops::kFusedWavesPerBlock * mlpcore::ops::NativeTile::kWave, \
                                                      (policy).min_blocks)                                                   \
  void name(mlpcore::ops::NetworkView net, const io* input, io* output, unsigned batch) {                                     \
    if constexpr (built)                                                                                                      \
      __VA_ARGS__(net, input, output, batch, mlpcore::ops::LayoutTag<mlpcore::ops::IoLayout::layout>{});                      \
    else                                                                                                                      \
      mlpcore::ops::trap(#name ": built in the fat binary of the other assembly");                                            \
  }
#define MLPCORE_FUSED_KERNEL_IN(layout, name, io, policy, ...) MLPCORE_FUSED_KERNEL_WHERE(true, layout, name, io, policy, __VA_ARGS__)
// A built-in kernel: its body where this build assembles its policy's way (mlpcore::ops::built_in_here).
#define MLPCORE_BUILT_IN_KERNEL_IN(layout, name, io, policy, ...) \
  MLPCORE_FUSED_KERNEL_WHERE(mlpcore::ops::built_in_here<io>(policy), layout, name, io, policy, __VA_ARGS__)
// (policy in parentheses: expanded, it may hold commas)
#define MLPCORE_BUILT_IN_KERNEL(name, io, policy, ...)                          \
  MLPCORE_BUILT_IN_KERNEL_IN(sample_major, name, io, (policy), __VA_ARGS__) \
  MLPCORE_BUILT_IN_KERNEL_IN(feature_major, name##_fm, io, (policy), __VA_ARGS__)
