#pragma once
// A user's renderer-style kernel on the device-side API: every thread evaluates the SDF at its own 3-D
// point; some threads have no point (a ray that missed, the batch's tail) and keep their output.
#include "ops/device_api.h"

namespace mlpcore::test_kernels {

inline constexpr float kNoSample = -12345.0f;

// scratch: the block's shared memory, one device::scratch_floats<Tile, 3, 1>() region per wave.
template <class Tile, int MaxTiles>
MLPCORE_DEVICE void sdf_at_points(const DeviceNetworkView& net, const float* points, float* sdf, unsigned n, float* scratch) {
  const unsigned tid = ops::block_x() * ops::block_dim_x() + ops::thread_x();
  const unsigned wave = ops::thread_x() / Tile::kWave;
  const bool active = tid < n && tid % 7 != 3;
  float in[3] = {0.0f, 0.0f, 0.0f}, out[1] = {kNoSample};
  if (active)
    for (int i = 0; i < 3; ++i) in[i] = points[3 * tid + i];
  device::evaluate<Tile, MaxTiles, 3, 1>(net, scratch + wave * device::scratch_floats<Tile, 3, 1>(), in, out, active);
  if (tid < n) sdf[tid] = out[0];
}

}  // namespace mlpcore::test_kernels
