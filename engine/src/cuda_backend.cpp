// The cuda backend: the fused kernels' fat binary loaded into the device's primary context (the one the
// CUDA runtime and PyTorch use, so their streams and buffers work with enqueue), weights packed and
// uploaded once. Without the driver, a GPU or an sm_80+ GPU it reports why and the engine falls back.
#include <string>
#include <utility>

#include "engine/src/backend.h"
#include "engine/src/cuda_backend.h"
#include "engine/src/cuda_driver.h"
#include "engine/src/gpu_launch.h"
#include "ops/tile_mma_sm80.h"

namespace mlpcore::detail {
namespace {

// Both accumulating tiles run warps of 32.
static_assert(ops::TileMmaSm80::kWave == ops::TileMmaSm80F16Acc::kWave);
constexpr unsigned kWave = ops::TileMmaSm80::kWave;

class CudaNetwork final : public BackendNetwork {
 public:
  // `packed` for TileMmaSm80, or TileMmaSm80F16Acc (backend cuda-f16acc, compiled-in shapes).
  CudaNetwork(const Model& model, const PackedNetwork& packed, std::string name, const CudaDriver& driver, const CudaProbe& probe)
      : name_(std::move(name)), gpu_(driver, probe.device), module_(load_module(gpu_, probe.fatbin->data)),
        kernels_(find_fused_kernels(gpu_, module_.get(), fused_kernel_name(model, packed), [&](const std::string& kernel) {
          throw Error(ErrorCode::device, "backend '" + name_ + "'", "", "fat binary has no kernel " + kernel);
        })),
        net_(gpu_, packed) {}

  void infer(const IoBuffers& call) const override {
    check_fused_batch(call.batch);
    run_staged(gpu_, call, net_.view, [&](const IoBuffers& on_device) { launch_fused(gpu_, kernels_, net_.view, on_device, kWave, nullptr); });
  }

  std::optional<DeviceNetworkView> device_view() const override {
    if (!net_.device_view) throw no_device_view_with_f16_accumulation(name_);
    return net_.device_view;
  }

  void enqueue(const IoBuffers& call, void* stream) const override {
    check_fused_batch(call.batch);
    launch_fused(gpu_, kernels_, net_.view, call, kWave, stream);
  }

 private:
  std::string name_;
  CudaOnDevice gpu_;
  DeviceModule<CudaOnDevice> module_;
  FusedKernels kernels_;
  UploadedNetwork<CudaOnDevice> net_;
};

const CudaDriver& driver() {
  static const CudaDriver d;
  return d;
}

}  // namespace

CudaProbe probe_cuda(const CudaDriver& d, std::span<const EmbeddedCodeObject> objects) {
  CudaProbe p;
  if (objects.empty()) return p.reason = "this build has no CUDA fat binary (configured with MLPCORE_CUDA=OFF or without nvcc)", p;
  if (!d.loaded()) return p.reason = "no CUDA driver: " + d.load_error(), p;
  if (const int error = d.try_init()) return p.reason = "no NVIDIA GPU (" + d.describe(error, "cuInit") + ")", p;
  int count = 0;
  if (const int error = d.try_device_count(count)) return p.reason = "no NVIDIA GPU (" + d.describe(error, "cuDeviceGetCount") + ")", p;
  if (count == 0) return p.reason = "no NVIDIA GPU (cuDeviceGetCount found 0 devices)", p;
  const std::string name = d.device_name(0);
  const int cc = d.compute_capability(0);
  if (cc < 80) return p.reason = "device 0 (" + name + ") is sm_" + std::to_string(cc) + "; the tensor-core kernels need sm_80 or newer", p;
  p.available = true;
  p.fatbin = &objects.front();
  p.description = (name.starts_with("NVIDIA") ? "" : "NVIDIA ") + name + " (sm_" + std::to_string(cc) + "), device 0";
  return p;
}

const CudaProbe& cuda_probe() {
  static const CudaProbe probe = probe_cuda(driver(), cuda_code_objects());
  return probe;
}

namespace {

template <class Tile>
std::unique_ptr<BackendNetwork> create_network(const Model& model, const std::string& name) {
  const CudaProbe& probe = cuda_probe();
  if (!probe.available) throw Error(ErrorCode::backend_unavailable, "backend '" + name + "'", "", probe.reason);
  return std::make_unique<CudaNetwork>(model, pack_network<Tile>(model, name.c_str()), name, driver(), probe);
}

}  // namespace

std::unique_ptr<BackendNetwork> create_cuda_network(const Model& model) { return create_network<ops::TileMmaSm80>(model, "cuda"); }
std::unique_ptr<BackendNetwork> create_cuda_f16acc_network(const Model& model) {
  if (!has_f16_accumulation_kernel(model)) return create_network<ops::TileMmaSm80>(model, "cuda-f16acc");
  return create_network<ops::TileMmaSm80F16Acc>(model, "cuda-f16acc");
}

}  // namespace mlpcore::detail
