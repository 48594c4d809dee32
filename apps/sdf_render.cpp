// Sphere-traces a neural SDF (by default models/torus_sdf.safetensors) and writes a PNG.
//   sdf_render [--model M] [--backend B] [--size N] [--out F.png] [--device-api] [--reference R.png]
// The host path runs on any backend: all rays march together, each step one batched Network::infer.
// --device-api (emu-* backends) runs the renderer as a GPU kernel does, one lane per pixel, evaluating
// the network inside the kernel through the device-side API. --reference also renders the true torus
// analytically, writes it to R.png and prints how much the two images differ.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "apps/sdf_render_kernel.h"
#include "engine/src/fused_packing.h"
#include "mlpcore/mlpcore.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"

namespace {

using namespace mlpcore;
using Sdf = std::function<std::vector<float>(const std::vector<float>& points)>;

// The torus of models/make_samples.py: R 0.6, r 0.25, tilted 30 degrees about x.
float true_torus(const float* p) {
  const float c = std::sqrt(3.0f) / 2.0f, s = 0.5f;
  const float y = c * p[1] - s * p[2], z = s * p[1] + c * p[2];
  const float q = std::sqrt(p[0] * p[0] + z * z) - 0.6f;
  return std::sqrt(q * q + y * y) - 0.25f;
}

// t and gradient per pixel (4 floats), every ray marching in one batch per step.
std::vector<float> trace_batched(const render::Camera& cam, const Sdf& sdf) {
  const std::size_t n = std::size_t{cam.width} * cam.height;
  std::vector<float> out(4 * n, 0.0f), dirs(3 * n), t(n, 0.0f);
  std::vector<std::size_t> marching, hits;
  for (std::size_t i = 0; i < n; ++i) {
    float d[3];
    render::ray_direction(cam, static_cast<unsigned>(i % cam.width), static_cast<unsigned>(i / cam.width), d);
    std::memcpy(&dirs[3 * i], d, sizeof d);
    marching.push_back(i);
  }
  auto point = [&](std::size_t i, std::vector<float>& p) {
    for (int a = 0; a < 3; ++a) p.push_back(cam.eye[a] + t[i] * dirs[3 * i + a]);
  };
  for (int step = 0; step < render::kMaxSteps && !marching.empty(); ++step) {
    std::vector<float> points;
    for (auto i : marching) point(i, points);
    const auto d = sdf(points);
    std::vector<std::size_t> still;
    for (std::size_t k = 0; k < marching.size(); ++k) {
      const auto i = marching[k];
      if (d[k] < render::kHitDistance) hits.push_back(i);
      t[i] += d[k];
      if (d[k] >= render::kHitDistance && t[i] <= render::kFarDistance) still.push_back(i);
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
        points[first + static_cast<std::size_t>(axis)] += sign * render::kNormalStep;
      }
  const auto d = hits.empty() ? std::vector<float>{} : sdf(points);
  for (std::size_t k = 0; k < hits.size(); ++k) {
    const auto i = hits[k];
    out[4 * i] = t[i];
    for (int axis = 0; axis < 3; ++axis) out[4 * i + 1 + axis] = d[6 * k + 2 * axis] - d[6 * k + 2 * axis + 1];
  }
  return out;
}

template <class Tile>
std::vector<float> trace_device_api(const render::Camera& cam, const Network& net) {
  const std::size_t n = std::size_t{cam.width} * cam.height;
  constexpr unsigned kWaves = 2;
  std::vector<float> out(4 * n), scratch(kWaves * device::scratch_floats<Tile, 3, 1>());
  const DeviceNetworkView view = net.device_view();
  const auto blocks = static_cast<unsigned>((n + kWaves * Tile::kWave - 1) / (kWaves * Tile::kWave));
  detail::with_tile_variant(static_cast<int>(view.max_tiles), [&](auto max_tiles) {
    emu::launch({blocks, 1, 1}, {kWaves * Tile::kWave, 1, 1}, Tile::kWave,
                [&] { render::trace_pixels<Tile, decltype(max_tiles)::value>(view, cam, out.data(), scratch.data()); });
  });
  return out;
}

std::vector<unsigned char> shade(const render::Camera& cam, const std::vector<float>& traced) {
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
    for (int c = 0; c < 3; ++c) rgb[3 * i + static_cast<std::size_t>(c)] = static_cast<unsigned char>(std::clamp(color[c], 0.0f, 1.0f) * 255.0f + 0.5f);
  }
  return rgb;
}

void write_png(const std::string& path, const render::Camera& cam, const std::vector<unsigned char>& rgb) {
  if (!stbi_write_png(path.c_str(), static_cast<int>(cam.width), static_cast<int>(cam.height), 3, rgb.data(), static_cast<int>(3 * cam.width)))
    throw Error(ErrorCode::io, path, "", "cannot write the PNG");
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = MLPCORE_TORUS_MODEL, backend = "auto", out = "render.png", reference;
  unsigned size = 256;
  bool device_api = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(ErrorCode::invalid_argument, "sdf_render", a, "needs a value");
      return argv[++i];
    };
    try {
      if (a == "--model") model = value();
      else if (a == "--backend") backend = value();
      else if (a == "--out") out = value();
      else if (a == "--reference") reference = value();
      else if (a == "--size") size = static_cast<unsigned>(std::stoul(value()));
      else if (a == "--device-api") device_api = true;
      else throw Error(ErrorCode::invalid_argument, "sdf_render", a, "unknown option");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sdf_render: %s\n", e.what());
      return 2;
    }
  }
  try {
    if (size < 8 || size > 4096) throw Error(ErrorCode::invalid_argument, "sdf_render", "--size", "must be 8..4096");
    const Model m = load_model(model);
    if (m.input_dim() != 3 || m.output_dim() != 1)
      throw Error(ErrorCode::invalid_argument, model, "", "a 3-D SDF maps 3 -> 1 values, this model " + std::to_string(m.input_dim()) + " -> " +
                                                           std::to_string(m.output_dim()));
    const Network net(m, backend);
    const render::Camera cam{{0.0f, 0.0f, 2.4f}, std::tan(0.35f), size, size};
    std::vector<float> traced;
    const std::string& b = net.backend().name;
    if (!device_api) traced = trace_batched(cam, [&](const std::vector<float>& p) { return net.infer(p); });
    else if (b == "emu-rdna3") traced = trace_device_api<ops::TileWmmaGfx11>(cam, net);
    else if (b == "emu-rdna4") traced = trace_device_api<ops::TileWmmaGfx12>(cam, net);
    else if (b == "emu-cdna") traced = trace_device_api<ops::TileMfmaGfx9>(cam, net);
    else if (b == "emu-nvidia") traced = trace_device_api<ops::TileMmaSm80>(cam, net);
    else throw Error(ErrorCode::invalid_argument, "sdf_render", "--device-api", "runs on the emu-* backends in this build, not on '" + b + "'");
    const auto image = shade(cam, traced);
    write_png(out, cam, image);
    std::size_t hit = 0;
    for (std::size_t i = 0; i < std::size_t{size} * size; ++i) hit += traced[4 * i] >= 0.0f;
    std::printf("%s: %ux%u on backend %s%s, %zu pixels on the surface\n", out.c_str(), size, size, b.c_str(),
                device_api ? " (device-side API)" : "", hit);
    if (!reference.empty()) {
      const auto truth = shade(cam, trace_batched(cam, [](const std::vector<float>& p) {
        std::vector<float> d(p.size() / 3);
        for (std::size_t i = 0; i < d.size(); ++i) d[i] = true_torus(&p[3 * i]);
        return d;
      }));
      write_png(reference, cam, truth);
      double sum = 0;
      std::size_t differing = 0;
      for (std::size_t i = 0; i < image.size(); i += 3) {
        int worst = 0;
        for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(int(image[i + c]) - int(truth[i + c])));
        sum += worst;
        differing += worst > 16;
      }
      std::printf("%s: true torus; mean difference %.2f of 255, %.2f%% of pixels differ by more than 16\n", reference.c_str(),
                  sum / static_cast<double>(image.size() / 3), 100.0 * static_cast<double>(differing) / static_cast<double>(image.size() / 3));
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "sdf_render: %s\n", e.what());
    return 2;
  }
}
