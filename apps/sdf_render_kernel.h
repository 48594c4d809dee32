#pragma once
// The renderer's GPU-style path: one lane per pixel sphere-traces the neural SDF, every step evaluating
// the network for all lanes of the wave at once through the device-side API (ops/device_api.h). Rays
// that have hit or left keep looping with active = false, so the wave stays converged as the API needs.
#include "apps/render_camera.h"
#include "ops/device_api.h"

namespace mlpcore::render {

// Per pixel: t (negative on a miss) and the SDF gradient at the hit, in `out` as 4 floats.
template <class Tile, int MaxTiles>
MLPCORE_DEVICE void trace_pixels(const DeviceNetworkView& net, Camera cam, float* out, float* scratch) {
  const unsigned pixel = ops::block_x() * ops::block_dim_x() + ops::thread_x();
  const unsigned pixels = cam.width * cam.height;
  float* wave_scratch = scratch + (ops::thread_x() / Tile::kWave) * device::scratch_floats<Tile, 3, 1>();
  float dir[3] = {0.0f, 0.0f, -1.0f};
  if (pixel < pixels) ray_direction(cam, pixel % cam.width, pixel / cam.width, dir);
  float t = 0.0f;
  bool marching = pixel < pixels, hit = false;
  for (int step = 0; step < kMaxSteps; ++step) {
    float p[3] = {cam.eye[0] + t * dir[0], cam.eye[1] + t * dir[1], cam.eye[2] + t * dir[2]}, d[1] = {0.0f};
    device::evaluate<Tile, MaxTiles, 3, 1>(net, wave_scratch, p, d, marching);
    if (!marching) continue;
    if (d[0] < kHitDistance) marching = false, hit = true;
    t += d[0];
    if (t > kFarDistance) marching = false;
  }
  // The central differences index the lane's arrays only with constants, and take the sign from the
  // loop counter: an index known only at run time, or a list of signs to iterate over, would live in
  // scratch memory.
  float gradient[3] = {0.0f, 0.0f, 0.0f};
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const float sign = side == 0 ? 1.0f : -1.0f;
      float p[3], d[1] = {0.0f};
      MLPCORE_UNROLL
      for (int i = 0; i < 3; ++i) p[i] = cam.eye[i] + t * dir[i] + (i == axis ? sign * kNormalStep : 0.0f);
      device::evaluate<Tile, MaxTiles, 3, 1>(net, wave_scratch, p, d, hit);
      MLPCORE_UNROLL
      for (int i = 0; i < 3; ++i) gradient[i] += i == axis ? sign * d[0] : 0.0f;
    }
  if (pixel >= pixels) return;
  out[4 * pixel] = hit ? t : -1.0f;
  for (int axis = 0; axis < 3; ++axis) out[4 * pixel + 1 + axis] = gradient[axis];
}

}  // namespace mlpcore::render
