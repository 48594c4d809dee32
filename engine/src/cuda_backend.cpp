// The cuda backend: the model's specialized kernels (compiled by NVRTC when the network is built, or
// cached, or from `mlpcore compile`), else the fat binary's compiled-in kernels, loaded into the device's
// primary context (the one the CUDA runtime and PyTorch use, so their streams and buffers work with
// enqueue), weights packed and uploaded once. Without the driver, a GPU or an sm_80+ GPU it reports why
// and the engine falls back.
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

#include "engine/src/backend.h"
#include "engine/src/cuda_backend.h"
#include "engine/src/cuda_driver.h"
#include "engine/src/cuda_specialize.h"
#include "engine/src/gpu_launch.h"
#include "engine/src/nvrtc.h"
#include "ops/tile_mma_sm80.h"

namespace mlpcore::detail {
namespace {

// Both accumulating tiles run warps of 32.
static_assert(ops::TileMmaSm80::kWave == ops::TileMmaSm80F16Acc::kWave);
constexpr unsigned kWave = ops::TileMmaSm80::kWave;

class CudaNetwork final : public BackendNetwork {
 public:
  // `packed` for the plan's tile; `image` is the module holding the plan's kernel.
  CudaNetwork(const FusedPlan& plan, const PackedNetwork& packed, std::string name, const void* image, std::string description,
              const CudaDriver& driver, const CudaProbe& probe)
      : name_(std::move(name)), description_(std::move(description)), gpu_(driver, probe.device), module_(load_module(gpu_, image)),
        kernels_(find_fused_kernels(gpu_, module_.get(), plan.kernel_name(), [&](const std::string& kernel) {
          throw Error(ErrorCode::device, "backend '" + name_ + "'", "", "module has no kernel " + kernel);
        })),
        net_(gpu_, packed) {}

  std::string kernel() const override { return description_; }

  void infer(const IoBuffers& call) const override {
    check_fused_batch(call.batch);
    run_staged(gpu_, name_, call, net_.view,
               [&](const IoBuffers& on_device, void* range_flag) { launch_fused(gpu_, kernels_, net_.view, on_device, kWave, nullptr, range_flag); });
  }

  std::optional<DeviceNetworkView> device_view() const override {
    if (!net_.device_view) throw no_device_view(name_);
    return net_.device_view;
  }

  void enqueue(const IoBuffers& call, void* stream) const override {
    check_fused_batch(call.batch);
    launch_fused(gpu_, kernels_, net_.view, call, kWave, stream, net_.enqueued_out_of_range->get());
  }

  bool take_enqueued_out_of_range() const override { return net_.take_enqueued_out_of_range(gpu_); }

 private:
  std::string name_, description_;
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
  p.arch = cc;
  p.fatbin = &objects.front();
  p.description = (name.starts_with("NVIDIA") ? "" : "NVIDIA ") + name + " (sm_" + std::to_string(cc) + "), device 0";
  return p;
}

const CudaProbe& cuda_probe() {
  static const CudaProbe probe = probe_cuda(driver(), cuda_code_objects());
  return probe;
}

namespace {

// Says once per process why no kernel is specialized (the machine's reason), or for every network why
// its own was not (a compile failure).
void specialization_notice(const std::string& backend, const FusedPlan& plan, const std::string& why, bool machine_reason) {
  const auto say = [&] {
    std::fprintf(stderr, "mlpcore: %s runs %s on the kernels built into mlpcore (%s), not on one specialized for it: %s\n", backend.c_str(),
                 plan.shape.c_str(), plan.describe().c_str(), why.c_str());
  };
  if (!machine_reason) return say();
  static std::once_flag once;
  std::call_once(once, say);
}

std::unique_ptr<BackendNetwork> create_network(const Model& model, const std::string& name, bool f16_accumulation, const NetworkOptions& options) {
  const CudaProbe& probe = cuda_probe();
  if (!probe.available) throw Error(ErrorCode::backend_unavailable, "backend '" + name + "'", "", probe.reason);
  const bool from_file = !options.kernels_file.empty();
  const bool can_compile = nvrtc().loaded();
  FusedPlan plan = plan_fused(model, name.c_str(), {ops::TileFamily::nvidia, options.specialize && (from_file || can_compile), f16_accumulation});
  const void* image = probe.fatbin->data;
  std::string description = plan.describe();
  SpecializedCode code;
  if (plan.kind == KernelKind::specialized) {
    try {
      code = specialized_cuda_code(plan, probe.arch, options);
      image = code.cubin.data();
      description = code.description;
    } catch (const Error& e) {
      if (from_file) throw;  // the user's file is wrong: say so rather than run something else
      plan = plan_fused(model, name.c_str(), {ops::TileFamily::nvidia, false, f16_accumulation});
      description = plan.describe();
      if (options.notices) specialization_notice(name, plan, e.what(), false);
    }
  } else if (!plan.not_specialized.empty()) {
    if (from_file) throw Error(ErrorCode::kernel_file, options.kernels_file, "", "this network runs the built-in kernels: " + plan.not_specialized);
    if (options.notices) specialization_notice(name, plan, plan.not_specialized, false);
  } else if (options.specialize && options.notices) {
    specialization_notice(name, plan, "no NVRTC (" + nvrtc().load_error() + "); `mlpcore compile` builds one ahead of time", true);
  }
  const auto make = [&]<class Tile>() {
    return std::make_unique<CudaNetwork>(plan, pack_network<Tile>(model, plan, name.c_str()), name, image, description, driver(), probe);
  };
  // The module is loaded in the constructor: `code` may go after it.
  if (plan.f16_accumulation) return make.template operator()<ops::TileMmaSm80F16Acc>();
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
