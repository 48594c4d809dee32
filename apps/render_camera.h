#pragma once
// The renderers' camera and marching constants, shared by host code and GPU kernels.
#include <cmath>

#include "ops/host_device.h"

namespace mlpcore::render {

struct Camera {
  float eye[3];
  float tan_half_fov;
  unsigned width, height;
};

inline constexpr int kMaxSteps = 96;
inline constexpr float kHitDistance = 1e-3f, kFarDistance = 4.5f, kNormalStep = 1e-3f;

MLPCORE_HOST_DEVICE inline void ray_direction(const Camera& c, unsigned x, unsigned y, float (&d)[3]) {
  d[0] = (2.0f * (static_cast<float>(x) + 0.5f) / static_cast<float>(c.width) - 1.0f) * c.tan_half_fov;
  d[1] = (1.0f - 2.0f * (static_cast<float>(y) + 0.5f) / static_cast<float>(c.height)) * c.tan_half_fov;
  d[2] = -1.0f;
  const float inv = 1.0f / sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  for (float& v : d) v *= inv;
}

}  // namespace mlpcore::render
