#pragma once
// What the hip and cuda backends do alike with their runtime (HipOnDevice, CudaOnDevice): find a fused
// kernel and its twins (float16 I/O, feature-major I/O, large feature-major batches, feature-major inputs
// of one tile), launch one, and run a call through device buffers of its own.
#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "engine/src/backend.h"
#include "engine/src/device_buffer.h"
#include "engine/src/fused_packing.h"
#include "engine/src/specialized_source.h"

namespace mlpcore::detail {

inline std::size_t fused_kernel_index(Io io, KernelSlot slot) { return 2 * static_cast<std::size_t>(slot) + static_cast<std::size_t>(io); }

// The view of its packing (BackendPacking::kernel) each slot's kernel takes, by KernelSlot.
using SlotViews = std::array<ops::NetworkView, kKernelSlots.size()>;

// A plan's fused kernels, by slot and I/O type (null where the plan has none: such calls are refused
// before they launch), their small-batch twins where the plan has them, and which one a call takes.
struct FusedKernels {
  std::array<void*, 2 * kKernelSlots.size()> by_index{};
  std::array<void*, 2 * kKernelSlots.size()> small_batch_by_index{};
  CallRouting routing;
};

// A packed network uploaded to the device once, and the views of it the kernels take.
template <class Runtime>
struct UploadedNetwork {
  // Each of the packings (BackendPacking): the kernels' and the device API's.
  UploadedNetwork(const Runtime& rt, const BackendPacking& packing)
      : input_dim(packing.packings.front().input_dim), output_dim(packing.packings.front().output_dim),
        enqueued_out_of_range(upload(rt, std::vector<std::uint32_t>{0})) {
    std::vector<ops::NetworkView> views;
    for (const PackedNetwork& p : packing.packings) {
      arrays.push_back({upload(rt, p.weights), upload(rt, p.biases), upload(rt, p.layers)});
      views.push_back(network_view_of(arrays.back()[0]->get(), arrays.back()[1]->get(), arrays.back()[2]->get(), p));
    }
    for (std::size_t slot = 0; slot < kKernelSlots.size(); ++slot) view_of_slot[slot] = views[packing.of_slot[slot]];
    if (const std::optional<std::size_t> i = packing.for_device_api) {
      const auto& a = arrays[*i];
      device_view = device_view_of(a[0]->get(), a[1]->get(), a[2]->get(), packing.packings[*i]);
    }
  }

  // Reads and clears the range flag of the enqueued calls (Network::enqueued_out_of_range).
  bool take_enqueued_out_of_range(const Runtime& rt) const {
    std::uint32_t flag = 0;
    rt.copy(&flag, enqueued_out_of_range->get(), sizeof flag);
    if (!flag) return false;
    const std::uint32_t clear = 0;
    rt.copy(enqueued_out_of_range->get(), &clear, sizeof clear);
    return true;
  }

  std::size_t input_dim, output_dim;
  std::vector<std::array<std::unique_ptr<DeviceBuffer<Runtime>>, 3>> arrays;  // per packing: weights, biases, layers
  std::unique_ptr<DeviceBuffer<Runtime>> enqueued_out_of_range;               // the float16 range flag of every enqueued call
  SlotViews view_of_slot;                                                      // what each slot's kernel takes
  std::optional<DeviceNetworkView> device_view;                               // none where the device API runs no packing
};

// Which modules may hold a kernel: any (specialized kernels, a module each; AMD's one code object), or the
// one of its slot's assembly for its I/O type (ops::assembled_light), for NVIDIA's built-in fat binaries
// [-O3, -O1]: both hold every kernel, its body only the one of its assembly (ops/fused_kernel_entry.h).
enum class KernelLookup { any_module, by_assembly };

// The plan's fused kernel and its twins, from whichever of `modules` holds each as `lookup` says, and the
// small-batch twins: a specialized kernel's (its name) from the modules after those of
// specialized_kernels(plan), a kernel file's order; a built-in one's as its kernel is. missing(name)
// throws for one the plan has (has_kernel, has_small_batch_twin) that none holds. `multiprocessors`: the
// device's (call_routing).
template <class Runtime, class Missing>
FusedKernels find_fused_kernels(const Runtime& rt, const std::vector<DeviceModule<Runtime>>& modules, KernelLookup lookup, const FusedPlan& plan,
                                unsigned multiprocessors, Missing missing) {
  FusedKernels kernels{{}, {}, call_routing(plan, multiprocessors)};
  // Kernel `name` of `policy` for `io`: in the module of its assembly, or in the first that holds it.
  const auto find = [&](const std::string& name, const ops::FusedPolicy& policy, Io io) -> void* {
    if (lookup == KernelLookup::by_assembly) {
      const std::size_t assembly = ops::assembled_light(policy, io == Io::f16) ? 1 : 0;
      return assembly < modules.size() ? rt.function(modules[assembly].get(), name.c_str()) : nullptr;
    }
    for (const DeviceModule<Runtime>& m : modules)
      if (void* kernel = rt.function(m.get(), name.c_str())) return kernel;
    return nullptr;
  };
  const std::vector<SpecializedKernel> twins = small_batch_twins(plan);
  const std::size_t first_twin = specialized_kernels(plan).size();
  for (std::size_t t = 0; t < twins.size(); ++t) {
    const SpecializedKernel& k = twins[t];
    void* kernel = nullptr;
    if (plan.kind != KernelKind::specialized)
      kernel = find(k.name, plan.small_batch_policy(k.slot), k.io);
    else if (first_twin + t < modules.size())
      kernel = rt.function(modules[first_twin + t].get(), k.name.c_str());
    if (!kernel) missing(k.name + " (small-batch twin)");
    kernels.small_batch_by_index[fused_kernel_index(k.io, k.slot)] = kernel;
  }
  for (const KernelSlot slot : kKernelSlots)
    for (const Io io : {Io::f32, Io::f16}) {
      const std::string name = plan.kernel_name(io, slot);
      void*& kernel = kernels.by_index[fused_kernel_index(io, slot)];
      kernel = find(name, plan.policy_of(slot), io);
      if (!kernel && has_kernel(plan, slot, io)) missing(name);
    }
  return kernels;
}

// One fused-kernel launch for `call` (buffers in device memory) on `stream`, its kernel taking its slot's
// view; `wave` is the wave size, and `range_flag` (device memory) is set if the call's float16 range check
// fails.
template <class Runtime>
void launch_fused(const Runtime& rt, const FusedKernels& kernels, const SlotViews& views, const IoBuffers& call, unsigned wave, void* stream,
                  void* range_flag) {
  const KernelSlot slot = kernels.routing.slot(call);
  const std::size_t index = fused_kernel_index(call.io, slot);
  void* kernel = kernels.routing.takes_small_batch_twin(call, slot) ? kernels.small_batch_by_index[index] : kernels.by_index[index];
  ops::NetworkView view = views[static_cast<std::size_t>(slot)];
  view.range_flag = static_cast<std::uint32_t*>(range_flag);
  auto n = static_cast<unsigned>(call.batch);
  const void* input = call.input;
  void* output = call.output;
  void* args[] = {&view, &input, &output, &n};
  rt.launch(kernel, fused_grid(call.batch, kernels.routing.sample_tiles_in(slot)),
            kFusedWavesPerBlock * wave, args, stream);
}

// `call` with host (or device) buffers, copied through device buffers allocated for it around
// launch(the call on those, its own range flag); the synchronous copies back wait for the kernel (null
// stream). Throws out_of_float16_range(backend) where the call's range check failed, leaving the
// caller's output as it was.
template <class Runtime, class Launch>
void run_staged(const Runtime& rt, const std::string& backend, const IoBuffers& call, const UploadedNetwork<Runtime>& net, Launch launch) {
  const std::size_t in_bytes = call.batch * net.input_dim * io_bytes(call.io), out_bytes = call.batch * net.output_dim * io_bytes(call.io);
  DeviceBuffer<Runtime> in(rt, in_bytes), out(rt, out_bytes);
  const auto range_flag = upload(rt, std::vector<std::uint32_t>{0});
  rt.copy(in.get(), call.input, in_bytes);
  launch(IoBuffers{in.get(), out.get(), call.batch, call.io, call.layout}, range_flag->get());
  std::uint32_t out_of_range = 0;
  rt.copy(&out_of_range, range_flag->get(), sizeof out_of_range);
  if (out_of_range) throw out_of_float16_range(backend);
  rt.copy(call.output, out.get(), out_bytes);
}

}  // namespace mlpcore::detail
