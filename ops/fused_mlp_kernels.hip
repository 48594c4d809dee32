// The fused MLP kernels as code objects, one per architecture: mlpcore_mlp_t<N> keeps up to N tiles of
// 16 per layer (widths up to 16 N) in registers; mlpcore_mlp_fixed_<i> has shape i of ops/fused_shapes.h
// compiled in. Blocks are kFusedWavesPerBlock waves.
#include "ops/fused_mlp.h"
#include "ops/fused_shapes.h"
#include "ops/native_tile.h"

#define MLPCORE_FUSED_MLP_KERNEL(N)                                                                                   \
  extern "C" MLPCORE_KERNEL MLPCORE_LAUNCH_BOUNDS(mlpcore::ops::kFusedWavesPerBlock * mlpcore::ops::NativeTile::kWave) \
  void mlpcore_mlp_t##N(mlpcore::ops::NetworkView net, const float* input, float* output, unsigned batch) {           \
    mlpcore::ops::mlp_forward<mlpcore::ops::NativeTile, N>(net, input, output, batch);                                  \
  }

MLPCORE_FUSED_MLP_KERNEL(1)
MLPCORE_FUSED_MLP_KERNEL(2)
MLPCORE_FUSED_MLP_KERNEL(4)
MLPCORE_FUSED_MLP_KERNEL(8)

#define MLPCORE_FIXED_MLP_KERNEL(index, hidden, output, ...)                                                                        \
  extern "C" MLPCORE_KERNEL MLPCORE_LAUNCH_BOUNDS(mlpcore::ops::kFusedWavesPerBlock * mlpcore::ops::NativeTile::kWave) \
  void mlpcore_mlp_fixed_##index(mlpcore::ops::NetworkView net, const float* input, float* out, unsigned batch) {      \
    mlpcore::ops::mlp_forward_fixed<mlpcore::ops::NativeTile, mlpcore::ActivationKind::hidden,                         \
                                    mlpcore::ActivationKind::output, __VA_ARGS__>(net, input, out, batch);              \
  }

MLPCORE_FIXED_SHAPES(MLPCORE_FIXED_MLP_KERNEL)
