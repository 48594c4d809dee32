// The cuda backend: the model's specialized kernels (compiled by NVRTC when the network is built, or
// cached, or from `mlpcore compile`), else the built-in kernels of the library's two fat binaries, loaded
// into the device's primary context (the one the CUDA runtime and PyTorch use, so their streams and
// buffers work with enqueue), weights packed and uploaded once. Without the driver, a GPU or an sm_80+ GPU
// it reports why and the engine falls back.
#include <string>
#include <string_view>
#include <utility>

#include "engine/src/backend.h"
#include "engine/src/cuda_backend.h"
#include "engine/src/cuda_driver.h"
#include "engine/src/gpu_launch.h"
#include "engine/src/nvrtc.h"
#include "engine/src/specialize.h"
#include "ops/tile_mma_sm80.h"

namespace mlpcore::detail {
namespace {

// Both accumulating tiles run warps of 32.
static_assert(ops::TileMmaSm80::kWave == ops::TileMmaSm80F16Acc::kWave);
constexpr unsigned kWave = ops::TileMmaSm80::kWave;

class CudaNetwork final : public BackendNetwork {
 public:
  // `packing` for the plan's tile; `images` are the modules holding the plan's kernels, found by `lookup`.
  CudaNetwork(const FusedPlan& plan, const BackendPacking& packing, std::string name, const std::vector<const void*>& images, KernelLookup lookup,
              std::string description, const CudaDriver& driver, const CudaProbe& probe)
      : name_(std::move(name)), description_(std::move(description)), gpu_(driver, probe.device), modules_(load_modules(gpu_, images)),
        kernels_(find_fused_kernels(gpu_, modules_, lookup, plan, static_cast<unsigned>(driver.multiprocessors(probe.device)), [&](const std::string& kernel) {
          throw Error(ErrorCode::device, "backend '" + name_ + "'", "", "module has no kernel " + kernel);
        })),
        net_(gpu_, packing), layouts_(plan.layouts) {}

  std::string kernel() const override { return description_; }
  bool takes_device_memory() const override { return true; }
  bool serves(Layout layout) const override { return detail::serves(layouts_, layout); }

  void infer(const IoBuffers& call) const override {
    check_fused_batch(call);
    run_staged(gpu_, name_, call, net_,
               [&](const IoBuffers& on_device, void* range_flag) { launch_fused(gpu_, kernels_, net_.view_of_slot, on_device, kWave, nullptr, range_flag); });
  }

  std::optional<DeviceNetworkView> device_view() const override {
    if (!net_.device_view) throw no_device_view(name_);
    return net_.device_view;
  }

  void enqueue(const IoBuffers& call, void* stream) const override {
    check_fused_batch(call);
    launch_fused(gpu_, kernels_, net_.view_of_slot, call, kWave, stream, net_.enqueued_out_of_range->get());
  }

  bool take_enqueued_out_of_range() const override { return net_.take_enqueued_out_of_range(gpu_); }

 private:
  std::string name_, description_;
  CudaOnDevice gpu_;
  std::vector<DeviceModule<CudaOnDevice>> modules_;
  FusedKernels kernels_;
  UploadedNetwork<CudaOnDevice> net_;
  NetworkOptions::Layouts layouts_;
};

const CudaDriver& driver() {
  static const CudaDriver d;
  return d;
}

}  // namespace

CudaProbe probe_cuda(const CudaDriver& d, std::span<const EmbeddedCodeObject> objects) {
  CudaProbe p;
  if (objects.empty()) return p.reason = "this build has no CUDA fat binary (configured with MLPCORE_CUDA=OFF or without nvcc)", p;
  for (const EmbeddedCodeObject& o : objects) {
    if (std::string_view(o.arch) == "fatbin") p.fatbin = &o;
    if (std::string_view(o.arch) == "fatbin-light") p.light_fatbin = &o;
  }
  if (objects.size() != 2 || !p.fatbin || !p.light_fatbin) return p.reason = "this build's CUDA code objects are not its two fat binaries", p;
  if (!d.loaded()) return p.reason = "no CUDA driver: " + d.load_error(), p;
  if (const int error = d.try_init()) return p.reason = "no NVIDIA GPU (" + d.describe(error, "cuInit") + ")", p;
  int count = 0;
  if (const int error = d.try_device_count(count)) return p.reason = "no NVIDIA GPU (" + d.describe(error, "cuDeviceGetCount") + ")", p;
  if (count == 0) return p.reason = "no NVIDIA GPU (cuDeviceGetCount found 0 devices)", p;
  const std::string name = d.device_name(0);
  const int cc = d.compute_capability(0);
  if (cc < 80) return p.reason = "device 0 (" + name + ") is sm_" + std::to_string(cc) + "; the tensor-core kernels need sm_80 or newer", p;
  p.available = true;
  p.arch = cc;
  p.description = (name.starts_with("NVIDIA") ? "" : "NVIDIA ") + name + " (sm_" + std::to_string(cc) + "), device 0";
  return p;
}

const CudaProbe& cuda_probe() {
  static const CudaProbe probe = probe_cuda(driver(), cuda_code_objects());
  return probe;
}

namespace {

std::unique_ptr<BackendNetwork> create_network(const Model& model, const std::string& name, bool f16_accumulation, const NetworkOptions& options) {
  const CudaProbe& probe = cuda_probe();
  if (!probe.available) throw Error(ErrorCode::backend_unavailable, "backend '" + name + "'", "", probe.reason);
  const KernelChoice k = choose_kernels(model, name, {ops::TileFamily::nvidia, true, f16_accumulation}, "sm_" + std::to_string(probe.arch), options, nvrtc());
  // The specialized kernels, else the built-in fat binaries in KernelLookup::by_assembly's order.
  const std::vector<const void*> images = module_images(k.code, {probe.fatbin->data, probe.light_fatbin->data});
  const KernelLookup lookup = k.code.modules.empty() ? KernelLookup::by_assembly : KernelLookup::any_module;
  const auto make = [&]<class Tile>() {
    return std::make_unique<CudaNetwork>(k.plan, pack_for_backend<Tile>(model, k.plan, name.c_str()), name, images, lookup, k.code.description, driver(),
                                         probe);
  };
  // The module is loaded in the constructor: `k` may go after it.
  if (k.plan.f16_accumulation) return make.template operator()<ops::TileMmaSm80F16Acc>();
  return make.template operator()<ops::TileMmaSm80>();
}

}  // namespace

std::unique_ptr<BackendNetwork> create_cuda_network(const Model& model, const NetworkOptions& options) {
  return create_network(model, "cuda", false, options);
}
std::unique_ptr<BackendNetwork> create_cuda_f16acc_network(const Model& model, const NetworkOptions& options) {
  return create_network(model, "cuda-f16acc", true, options);
}

}  // namespace mlpcore::detail
