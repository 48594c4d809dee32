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

#include "apps/render_image.h"
#include "apps/sdf_render_kernel.h"
#include "mlpcore/mlpcore.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"

namespace {

using namespace mlpcore;
using namespace mlpcore::render;

template <class Tile>
std::vector<float> trace_device_api(const render::Camera& cam, const Network& net, emu::ChipNumerics numerics = {}) {
  const std::size_t n = std::size_t{cam.width} * cam.height;
  constexpr unsigned kWaves = 2;
  std::vector<float> out(4 * n), scratch(kWaves * device::scratch_floats<Tile, 3, 1>());
  const DeviceNetworkView view = net.device_view();
  const auto blocks = static_cast<unsigned>((n + kWaves * Tile::kWave - 1) / (kWaves * Tile::kWave));
  mlpcore::with_max_tiles(view, [&](auto max_tiles) {
    emu::launch({blocks, 1, 1}, {kWaves * Tile::kWave, 1, 1}, Tile::kWave,
                [&] { render::trace_pixels<Tile, decltype(max_tiles)::value>(view, cam, out.data(), scratch.data()); }, numerics);
  });
  return out;
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
    else if (b == "emu-cdna2") traced = trace_device_api<ops::TileMfmaGfx9>(cam, net, emu::kCdna2Numerics);
    else if (b == "emu-nvidia") traced = trace_device_api<ops::TileMmaSm80>(cam, net);
    else throw Error(ErrorCode::invalid_argument, "sdf_render", "--device-api", "runs on the emu-* backends in this build, not on '" + b + "'");
    const auto image = shade(cam, traced);
    write_png(out, cam, image);
    std::size_t hit = 0;
    for (std::size_t i = 0; i < std::size_t{size} * size; ++i) hit += traced[4 * i] >= 0.0f;
    std::printf("%s: %ux%u on backend %s%s, %zu pixels on the surface\n", out.c_str(), size, size, b.c_str(),
                device_api ? " (device-side API)" : "", hit);
    if (!reference.empty()) {
      const auto truth = shade(cam, trace_batched(cam, true_torus_batch));
      write_png(reference, cam, truth);
      const ImageDifference diff = compare_images(image, truth);
      std::printf("%s: true torus; mean difference %.2f of 255, %.2f%% of pixels differ by more than 16\n", reference.c_str(), diff.mean,
                  diff.percent_over_16);
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "sdf_render: %s\n", e.what());
    return 2;
  }
}
