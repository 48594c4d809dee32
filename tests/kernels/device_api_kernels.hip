// The user-style device-API kernel as real code objects, for tests/device/code_object_test.cpp: every
// MaxTiles variant, as a user who launches through mlpcore::with_max_tiles builds them.
#include "ops/native_tile.h"
#include "tests/kernels/sdf_device_kernels.h"

using mlpcore::ops::NativeTile;
constexpr int kWavesPerBlock = 2;

#define MLPCORE_TEST_SDF_KERNEL(max_tiles)                                                                                 \
  extern "C" MLPCORE_KERNEL MLPCORE_LAUNCH_BOUNDS(kWavesPerBlock* NativeTile::kWave) void mlpcore_test_sdf_at_points_t##max_tiles( \
      mlpcore::DeviceNetworkView net, const float* points, float* sdf, unsigned n) {                                       \
    MLPCORE_SHARED float scratch[kWavesPerBlock * mlpcore::device::scratch_floats<NativeTile, 3, 1>()];                    \
    mlpcore::test_kernels::sdf_at_points<NativeTile, max_tiles>(net, points, sdf, n, scratch);                             \
  }
MLPCORE_TEST_SDF_KERNEL(1)
MLPCORE_TEST_SDF_KERNEL(2)
MLPCORE_TEST_SDF_KERNEL(4)
MLPCORE_TEST_SDF_KERNEL(8)
