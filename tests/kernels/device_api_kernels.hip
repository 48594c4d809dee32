// The user-style device-API kernel as real code objects, for tests/device/code_object_test.cpp.
#include "ops/native_tile.h"
#include "tests/kernels/sdf_device_kernels.h"

using mlpcore::ops::NativeTile;
constexpr int kWavesPerBlock = 2;

extern "C" MLPCORE_KERNEL MLPCORE_LAUNCH_BOUNDS(kWavesPerBlock* NativeTile::kWave) void mlpcore_test_sdf_at_points(
    mlpcore::DeviceNetworkView net, const float* points, float* sdf, unsigned n) {
  MLPCORE_SHARED float scratch[kWavesPerBlock * mlpcore::device::scratch_floats<NativeTile, 3, 1>()];
  mlpcore::test_kernels::sdf_at_points<NativeTile, 4>(net, points, sdf, n, scratch);
}
