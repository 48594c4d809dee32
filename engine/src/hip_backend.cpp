// The hip backend: the model's specialized kernels (compiled by hiprtc when the network is built, or cached,
// or from `mlpcore compile`), else the built-in code object for the GPU's architecture; weights packed and
// uploaded once, batches copied in, run and copied out. Without libamdhip64, a GPU, or a code object for the GPU,
// it reports why and the engine falls back to the CPU.
#include "engine/src/amd_arch.h"
#include "engine/src/backend.h"
#include "engine/src/gpu_launch.h"
#include "engine/src/hip_backend.h"
#include "engine/src/hip_runtime.h"
#include "engine/src/hiprtc.h"
#include "engine/src/specialize.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"

namespace mlpcore::detail {
namespace {

std::string built_for(std::span<const EmbeddedCodeObject> objects) {
  std::string s;
  for (const auto& o : objects) s += (s.empty() ? "" : ", ") + std::string(o.arch);
  return s;
}

class HipNetwork final : public BackendNetwork {
 public:
  // `packing` for the probed GPU's tile, whose waves are `wave` wide, as `plan` says; `images` are the
  // modules holding the plan's kernels.
  HipNetwork(const FusedPlan& plan, const BackendPacking& packing, unsigned wave,
             const std::vector<const void*>& images, std::string description, const HipRuntime& rt, const HipProbe& probe)
      : gpu_(rt, probe.device), wave_(wave), modules_(load_modules(gpu_, images)),
        kernels_(find_fused_kernels(gpu_, modules_, KernelLookup::any_module, plan, 0, [&](const std::string& name) {
          throw Error(ErrorCode::device, "backend 'hip'", probe.processor, "code object has no kernel " + name);
        })),
        net_(gpu_, packing), description_(std::move(description)), layouts_(plan.layouts) {}

  std::string kernel() const override { return description_; }
  bool takes_device_memory() const override { return true; }
  bool serves(Layout layout) const override { return detail::serves(layouts_, layout); }

  // Host (or device) buffers: staged through device buffers allocated for this call.
  void infer(const IoBuffers& call) const override {
    check_fused_batch(call);
    run_staged(gpu_, "hip", call, net_,
               [&](const IoBuffers& on_device, void* range_flag) { launch_fused(gpu_, kernels_, net_.view_of_slot, on_device, wave_, nullptr, range_flag); });
  }

  std::optional<DeviceNetworkView> device_view() const override {
    if (!net_.device_view) throw no_device_view("hip");
    return net_.device_view;
  }

  // Device buffers on the caller's stream: one kernel launch, no allocation, no synchronisation.
  void enqueue(const IoBuffers& call, void* stream) const override {
    check_fused_batch(call);
    launch_fused(gpu_, kernels_, net_.view_of_slot, call, wave_, stream, net_.enqueued_out_of_range->get());
  }

  bool take_enqueued_out_of_range() const override { return net_.take_enqueued_out_of_range(gpu_); }

 private:
  HipOnDevice gpu_;
  unsigned wave_;
  std::vector<DeviceModule<HipOnDevice>> modules_;
  FusedKernels kernels_;
  UploadedNetwork<HipOnDevice> net_;
  std::string description_;
  NetworkOptions::Layouts layouts_;
};

template <class Tile>
std::unique_ptr<BackendNetwork> make_network(const Model& model, const NetworkOptions& options, const HipRuntime& rt, const HipProbe& probe,
                                             const RuntimeCompiler& compiler) {
  const KernelChoice k = choose_kernels(model, "hip", {Tile::kFamily}, probe.processor, options, compiler);
  const std::vector<const void*> images = module_images(k.code, {probe.object->data});
  // The module is loaded in the constructor: `k` may go after it.
  return std::make_unique<HipNetwork>(k.plan, pack_for_backend<Tile>(model, k.plan, "hip"), Tile::kWave, images, k.code.description, rt, probe);
}

const HipRuntime& runtime() {
  static const HipRuntime rt;
  return rt;
}

}  // namespace

HipProbe probe_hip(const HipRuntime& rt, std::span<const EmbeddedCodeObject> objects) {
  HipProbe p;
  if (objects.empty()) return p.reason = "this build has no AMD code objects (configured with MLPCORE_AMDGPU=OFF)", p;
  if (!rt.loaded()) return p.reason = "no HIP runtime: " + rt.load_error(), p;
  int count = 0;
  if (const int error = rt.try_device_count(count)) return p.reason = "no AMD GPU (" + rt.describe(error, "hipGetDeviceCount") + ")", p;
  if (count == 0) return p.reason = "no AMD GPU (hipGetDeviceCount found 0 devices)", p;
  const std::string arch_name = rt.arch_name(0);
  if (arch_name.empty()) return p.reason = "device 0 reports no architecture name (gcnArchName)", p;
  const auto processor = processor_of(arch_name);
  if (!processor) return p.reason = "device 0 reports an unrecognised architecture '" + arch_name + "'", p;
  p.processor = *processor;
  p.arch = arch_family(*processor);
  p.object = select_code_object(*processor, objects);
  if (p.arch == Arch::unknown || !p.object)
    return p.reason = "device 0 is " + *processor + ", which has no matrix-core code object in this build (built for " + built_for(objects) + ")", p;
  p.available = true;
  p.description = "AMD " + *processor + " " + to_string(p.arch) + ", device 0";
  return p;
}

const HipProbe& hip_probe() {
  static const HipProbe probe = probe_hip(runtime(), amd_code_objects());
  return probe;
}

std::unique_ptr<BackendNetwork> create_hip_network(const Model& model, const NetworkOptions& options, const HipRuntime& rt, const HipProbe& probe,
                                                   const RuntimeCompiler& compiler) {
  if (!probe.available) throw Error(ErrorCode::backend_unavailable, "backend 'hip'", "", probe.reason);
  switch (probe.arch) {
    case Arch::gfx11: return make_network<ops::TileWmmaGfx11>(model, options, rt, probe, compiler);
    case Arch::gfx12: return make_network<ops::TileWmmaGfx12>(model, options, rt, probe, compiler);
    default: return make_network<ops::TileMfmaGfx9>(model, options, rt, probe, compiler);
  }
}

std::unique_ptr<BackendNetwork> create_hip_network(const Model& model, const NetworkOptions& options) {
  return create_hip_network(model, options, runtime(), hip_probe(), hiprtc());
}

}  // namespace mlpcore::detail
