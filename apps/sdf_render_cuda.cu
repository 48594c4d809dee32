// The renderer on an NVIDIA GPU the way a user's renderer would do it: its own CUDA kernel sphere-traces
// one pixel per lane and evaluates the network inside the kernel through the device-side API, with the
// weights mlpcore's cuda backend uploaded (Network::device_view). Compares with the host path.
//   sdf_render_cuda.exe [--model M] [--size N] [--out F.png]
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "apps/render_image.h"
#include "apps/sdf_render_kernel.h"
#include "mlpcore/mlpcore.h"
#include "ops/tile_mma_sm80.h"

namespace {

using Tile = mlpcore::ops::TileMmaSm80;
constexpr int kWavesPerBlock = 2;

template <int MaxTiles>
MLPCORE_KERNEL MLPCORE_LAUNCH_BOUNDS(kWavesPerBlock* Tile::kWave) void trace(mlpcore::DeviceNetworkView net, mlpcore::render::Camera cam,
                                                                          float* out) {
  MLPCORE_SHARED float scratch[kWavesPerBlock * mlpcore::device::scratch_floats<Tile, 3, 1>()];
  mlpcore::render::trace_pixels<Tile, MaxTiles>(net, cam, out, scratch);
}

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw mlpcore::Error(mlpcore::ErrorCode::device, "sdf_render_cuda", call, cudaGetErrorString(e));
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = MLPCORE_TORUS_MODEL, out_path = "render_cuda.png";
  unsigned size = 512;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--model") model = argv[i + 1];
    else if (a == "--out") out_path = argv[i + 1];
    else if (a == "--size") size = static_cast<unsigned>(std::stoul(argv[i + 1]));
  }
  try {
    const mlpcore::Network net(mlpcore::load_model(model), "cuda");
    const mlpcore::DeviceNetworkView view = net.device_view();
    const mlpcore::render::Camera cam{{0.0f, 0.0f, 2.4f}, std::tan(0.35f), size, size};
    const std::size_t pixels = std::size_t{size} * size;
    float* traced_d = nullptr;
    check(cudaMalloc(&traced_d, 4 * pixels * sizeof(float)), "cudaMalloc");
    const unsigned blocks = static_cast<unsigned>((pixels + kWavesPerBlock * Tile::kWave - 1) / (kWavesPerBlock * Tile::kWave));
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    check(cudaEventRecord(start), "cudaEventRecord");
    switch (view.max_tiles) {
      case 1: trace<1><<<blocks, kWavesPerBlock * Tile::kWave>>>(view, cam, traced_d); break;
      case 2: trace<2><<<blocks, kWavesPerBlock * Tile::kWave>>>(view, cam, traced_d); break;
      case 4: trace<4><<<blocks, kWavesPerBlock * Tile::kWave>>>(view, cam, traced_d); break;
      default: trace<8><<<blocks, kWavesPerBlock * Tile::kWave>>>(view, cam, traced_d); break;
    }
    check(cudaGetLastError(), "kernel launch");
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    std::vector<float> traced(4 * pixels);
    check(cudaMemcpy(traced.data(), traced_d, traced.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaFree(traced_d), "cudaFree");
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
    std::fprintf(stderr, "sdf_render_cuda: %s\n", e.what());
    return 2;
  }
}
