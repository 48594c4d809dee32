#pragma once
// The entry point every fused kernel has: NetworkView, input, output, batch, blocks of
// kFusedWavesPerBlock waves whose register bound follows the kernel's FusedPolicy; one per I/O layout.
#include "ops/mlp_network.h"
#include "ops/native_tile.h"

// `name` reads and writes sample-major arrays, `name`_fm feature-major ones (ops/mlp_network.h, IoLayout):
// the body is called with the layout's tag after the usual arguments.
#define MLPCORE_FUSED_KERNEL_IN(layout, name, io, policy, ...)                                                                 \
  extern "C" MLPCORE_KERNEL MLPCORE_LAUNCH_BOUNDS_MIN(mlpcore::ops::kFusedWavesPerBlock * mlpcore::ops::NativeTile::kWave, \
                                                      (policy).min_blocks)                                                   \
  void name(mlpcore::ops::NetworkView net, const io* input, io* output, unsigned batch) {                                     \
    __VA_ARGS__(net, input, output, batch, mlpcore::ops::LayoutTag<mlpcore::ops::IoLayout::layout>{});                        \
  }
// (policy in parentheses: expanded, it may hold commas)
#define MLPCORE_FUSED_KERNEL(name, io, policy, ...)                          \
  MLPCORE_FUSED_KERNEL_IN(sample_major, name, io, (policy), __VA_ARGS__) \
  MLPCORE_FUSED_KERNEL_IN(feature_major, name##_fm, io, (policy), __VA_ARGS__)
