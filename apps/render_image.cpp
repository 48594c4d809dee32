#include "apps/render_image.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "mlpcore/error.h"

namespace mlpcore::render {

std::vector<float> true_torus_batch(const std::vector<float>& points) {
  std::vector<float> d(points.size() / 3);
  const float c = std::sqrt(3.0f) / 2.0f, s = 0.5f;  // tilted 30 degrees about x; R 0.6, r 0.25
  for (std::size_t i = 0; i < d.size(); ++i) {
    const float* p = &points[3 * i];
    const float y = c * p[1] - s * p[2], z = s * p[1] + c * p[2];
    const float q = std::sqrt(p[0] * p[0] + z * z) - 0.6f;
    d[i] = std::sqrt(q * q + y * y) - 0.25f;
  }
  return d;
}

std::vector<float> trace_batched(const Camera& cam, const Sdf& sdf) {
  const std::size_t n = std::size_t{cam.width} * cam.height;
  std::vector<float> out(4 * n, 0.0f), dirs(3 * n), t(n, 0.0f);
  std::vector<std::size_t> marching, hits;
  for (std::size_t i = 0; i < n; ++i) {
    float d[3];
    ray_direction(cam, static_cast<unsigned>(i % cam.width), static_cast<unsigned>(i / cam.width), d);
    std::memcpy(&dirs[3 * i], d, sizeof d);
    marching.push_back(i);
  }
  auto point = [&](std::size_t i, std::vector<float>& p) {
    for (int a = 0; a < 3; ++a) p.push_back(cam.eye[a] + t[i] * dirs[3 * i + static_cast<std::size_t>(a)]);
  };
  for (int step = 0; step < kMaxSteps && !marching.empty(); ++step) {
    std::vector<float> points;
    for (auto i : marching) point(i, points);
    const auto d = sdf(points);
    std::vector<std::size_t> still;
    for (std::size_t k = 0; k < marching.size(); ++k) {
      const auto i = marching[k];
      if (d[k] < kHitDistance) hits.push_back(i);
      t[i] += d[k];
      if (d[k] >= kHitDistance && t[i] <= kFarDistance) still.push_back(i);
    }
    marching.swap(still);
  }
  for (std::size_t i = 0; i < n; ++i) out[4 * i] = -1.0f;
  std::vector<float> points;
  for (auto i : hits)
    for (int axis = 0; axis < 3; ++axis)
      for (float sign : {1.0f, -1.0f}) {
        const std::size_t first = points.size();
        point(i, points);
        points[first + static_cast<std::size_t>(axis)] += sign * kNormalStep;
      }
  const auto d = hits.empty() ? std::vector<float>{} : sdf(points);
  for (std::size_t k = 0; k < hits.size(); ++k) {
    const auto i = hits[k];
    out[4 * i] = t[i];
    for (std::size_t axis = 0; axis < 3; ++axis) out[4 * i + 1 + axis] = d[6 * k + 2 * axis] - d[6 * k + 2 * axis + 1];
  }
  return out;
}

std::vector<unsigned char> shade(const Camera& cam, const std::vector<float>& traced) {
  std::vector<unsigned char> rgb(3 * std::size_t{cam.width} * cam.height);
  const float light[3] = {-0.4f, 0.75f, 0.53f};
  for (std::size_t i = 0; i < std::size_t{cam.width} * cam.height; ++i) {
    const float sky = 0.25f + 0.2f * static_cast<float>(i / cam.width) / static_cast<float>(cam.height);
    float color[3] = {sky, sky, sky + 0.1f};
    if (traced[4 * i] >= 0.0f) {
      const float* g = &traced[4 * i + 1];
      const float len = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) + 1e-12f;
      const float lambert = std::max(0.0f, (g[0] * light[0] + g[1] * light[1] + g[2] * light[2]) / len);
      const float base[3] = {0.9f, 0.55f, 0.3f};
      for (int c = 0; c < 3; ++c) color[c] = base[c] * (0.15f + 0.85f * lambert);
    }
    for (std::size_t c = 0; c < 3; ++c) rgb[3 * i + c] = static_cast<unsigned char>(std::clamp(color[c], 0.0f, 1.0f) * 255.0f + 0.5f);
  }
  return rgb;
}

void write_png(const std::string& path, const Camera& cam, const std::vector<unsigned char>& rgb) {
  if (!stbi_write_png(path.c_str(), static_cast<int>(cam.width), static_cast<int>(cam.height), 3, rgb.data(), static_cast<int>(3 * cam.width)))
    throw Error(ErrorCode::io, path, "", "cannot write the PNG");
}

ImageDifference compare_images(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  double sum = 0;
  std::size_t over = 0;
  const std::size_t pixels = std::min(a.size(), b.size()) / 3;
  for (std::size_t i = 0; i < 3 * pixels; i += 3) {
    int worst = 0;
    for (std::size_t c = 0; c < 3; ++c) worst = std::max(worst, std::abs(int(a[i + c]) - int(b[i + c])));
    sum += worst;
    over += worst > 16;
  }
  return {sum / static_cast<double>(pixels), 100.0 * static_cast<double>(over) / static_cast<double>(pixels)};
}

}  // namespace mlpcore::render
