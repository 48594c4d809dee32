#pragma once
// The entry point every fused kernel has: NetworkView, input, output, batch, blocks of
// kFusedWavesPerBlock waves whose register bound follows the kernel's FusedPolicy.
#include "ops/mlp_network.h"
#include "ops/native_tile.h"

#define MLPCORE_FUSED_KERNEL(name, io, policy, ...)                                                                            \
  extern "C" MLPCORE_KERNEL MLPCORE_LAUNCH_BOUNDS_MIN(mlpcore::ops::kFusedWavesPerBlock * mlpcore::ops::NativeTile::kWave, \
                                                      (policy).min_blocks)                                                   \
  void name(mlpcore::ops::NetworkView net, const io* input, io* output, unsigned batch) {                                     \
    __VA_ARGS__(net, input, output, batch);                                                                                    \
  }
