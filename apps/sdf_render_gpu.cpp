// The renderer on a GPU the way a user's renderer would do it: its own kernel sphere-traces one pixel per
// lane and evaluates the network inside the kernel through the device-side API, with the weights that
// mlpcore's cuda or hip backend uploaded (Network::device_view). Compares with the host path.
// One source, compiled by nvcc (sdf_render_cuda.exe) or by clang/hipcc as HIP (sdf_render_hip.exe).
//   sdf_render_{cuda,hip}.exe [--model M] [--size N] [--out F.png]
#include <cstdio>
#include <string>

#include "apps/gpu_vendor.h"
#include "apps/render_image.h"
#include "apps/sdf_render_kernel.h"
#include "mlpcore/mlpcore.h"
#include "ops/native_tile.h"

namespace {

using Tile = mlpcore::ops::NativeTile;   // per device pass: each architecture's own tile
constexpr unsigned kBlock = 128;         // 4 waves of 32 or 2 of 64, whatever the GPU's wave size

template <int MaxTiles>
MLPCORE_KERNEL MLPCORE_LAUNCH_BOUNDS(kBlock) void trace(mlpcore::DeviceNetworkView net, mlpcore::render::Camera cam, float* out) {
  MLPCORE_SHARED float scratch[kBlock / Tile::kWave * mlpcore::device::scratch_floats<Tile, 3, 1>()];
  mlpcore::render::trace_pixels<Tile, MaxTiles>(net, cam, out, scratch);
}

void check(gpuError_t e, const char* call) {
  if (e != gpuSuccess) throw mlpcore::Error(mlpcore::ErrorCode::device, "sdf_render_gpu", call, gpuGetErrorString(e));
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = MLPCORE_TORUS_MODEL, out_path = std::string("render_") + kGpuBackend + ".png";
  unsigned size = 512;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--model") model = argv[i + 1];
    else if (a == "--out") out_path = argv[i + 1];
    else if (a == "--size") size = static_cast<unsigned>(std::stoul(argv[i + 1]));
  }
  try {
    const mlpcore::Network net(mlpcore::load_model(model), kGpuBackend);
    const mlpcore::DeviceNetworkView view = net.device_view();
    const mlpcore::render::Camera cam{{0.0f, 0.0f, 2.4f}, std::tan(0.35f), size, size};
    const std::size_t pixels = std::size_t{size} * size;
    float* traced_d = nullptr;
    check(gpuMalloc(&traced_d, 4 * pixels * sizeof(float)), "gpuMalloc");
    const auto blocks = static_cast<unsigned>((pixels + kBlock - 1) / kBlock);
    gpuEvent_t start, stop;
    check(gpuEventCreate(&start), "gpuEventCreate");
    check(gpuEventCreate(&stop), "gpuEventCreate");
    check(gpuEventRecord(start), "gpuEventRecord");
    mlpcore::with_max_tiles(view, [&](auto max_tiles) { trace<decltype(max_tiles)::value><<<blocks, kBlock>>>(view, cam, traced_d); });
    check(gpuGetLastError(), "kernel launch");
    check(gpuEventRecord(stop), "gpuEventRecord");
    check(gpuEventSynchronize(stop), "gpuEventSynchronize");
    float ms = 0;
    check(gpuEventElapsedTime(&ms, start, stop), "gpuEventElapsedTime");
    std::vector<float> traced(4 * pixels);
    check(gpuMemcpy(traced.data(), traced_d, traced.size() * sizeof(float), gpuMemcpyDeviceToHost), "gpuMemcpy");
    check(gpuFree(traced_d), "gpuFree");
    const auto image = mlpcore::render::shade(cam, traced);
    mlpcore::render::write_png(out_path, cam, image);
    const auto host = mlpcore::render::shade(cam, mlpcore::render::trace_batched(cam, [&](const std::vector<float>& p) { return net.infer(p); }));
    const auto diff = mlpcore::render::compare_images(image, host);
    std::printf("%s: %ux%u on %s with the device-side API in %.3f ms (%d steps, 7 evaluations of the network per pixel at least)\n",
                out_path.c_str(), size, size, net.backend().description.c_str(), static_cast<double>(ms), mlpcore::render::kMaxSteps);
    std::printf("against the host path on the same backend: mean difference %.2f of 255, %.2f%% of pixels differ by more than 16\n", diff.mean,
                diff.percent_over_16);
    return 0;
  } catch (const mlpcore::Error& e) {
    std::fprintf(stderr, "sdf_render_gpu: %s\n", e.what());
    return 2;
  }
}
