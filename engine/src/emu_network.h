#pragma once
// A packed network run by fused kernels on the wave emulator (ops/emu): the emulated backends, and the
// tests' runs of specialized sources, build one from a plan and the kernels that run it.
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "engine/src/backend.h"
#include "engine/src/fused_packing.h"
#include "ops/emu/wave_emulator.h"
#include "ops/mlp_network.h"

namespace mlpcore::detail {

// A fused kernel's body for float32 and for float16 I/O, per KernelSlot, and its small-batch twin's where it
// has one (has_small_batch_twin; by slot: sample_major, feature_major): what runs on each emulated thread.
struct EmulatedKernel {
  std::function<void(const ops::NetworkView&, const float*, float*, unsigned)> f32[kKernelSlots.size()], small_batch_f32[2];
  std::function<void(const ops::NetworkView&, const ops::half_t*, ops::half_t*, unsigned)> f16[kKernelSlots.size()], small_batch_f16[2];
};

template <class Tile>
class EmuNetwork final : public BackendNetwork {
 public:
  // `numerics`: the emulated chip's, where it differs from its family's (emu::ChipNumerics);
  // `multiprocessors`: a GPU's count, for calls to take the small-batch twins as on it (0: none take them).
  EmuNetwork(const Model& model, const FusedPlan& plan, std::string name, EmulatedKernel kernel, emu::ChipNumerics numerics = {},
             unsigned multiprocessors = 0)
      : name_(std::move(name)), packing_(pack_for_backend<Tile>(model, plan, name_.c_str())),
        kernel_(std::move(kernel)), description_(plan.describe(multiprocessors > 0)),
        numerics_(numerics), layouts_(plan.layouts),
        routing_(call_routing(plan, multiprocessors)) {}

  std::string kernel() const override { return description_; }
  bool serves(Layout layout) const override { return detail::serves(layouts_, layout); }

  void infer(const IoBuffers& call) const override {
    check_fused_batch(call);
    const KernelSlot slot = routing_.slot(call);
    const auto i = static_cast<std::size_t>(slot);
    const unsigned blocks = fused_grid(call.batch, routing_.sample_tiles_in(slot), kMaxBlocks);
    const PackedNetwork& packed = packing_.kernel(slot);
    const bool twin = routing_.takes_small_batch_twin(call, slot);
    const auto& f16 = twin ? kernel_.small_batch_f16[i] : kernel_.f16[i];
    const auto& f32 = twin ? kernel_.small_batch_f32[i] : kernel_.f32[i];
    if (!(call.io == Io::f16 ? bool{f16} : bool{f32})) throw std::logic_error("the emulated kernel has no body for this call's routing");
    if (call.io == Io::f16)
      run(f16, packed, static_cast<const ops::half_t*>(call.input), static_cast<ops::half_t*>(call.output), call.batch, blocks);
    else
      run(f32, packed, static_cast<const float*>(call.input), static_cast<float*>(call.output), call.batch, blocks);
  }

  std::optional<DeviceNetworkView> device_view() const override {
    const PackedNetwork* p = packing_.device_api();
    if (!p) throw no_device_view(name_);
    return device_view_of(p->weights.data(), p->biases.data(), p->layers.data(), *p);
  }

 private:
  static constexpr unsigned kMaxBlocks = 8;  // a small grid, so the kernels' tile-striding loop is exercised too

  template <class Body, class Io>
  void run(const Body& body, const PackedNetwork& p, const Io* input, Io* output, std::size_t batch, unsigned blocks) const {
    ops::NetworkView view = network_view_of(p.weights.data(), p.biases.data(), p.layers.data(), p);
    std::uint32_t out_of_range = 0;
    view.range_flag = &out_of_range;
    const auto n = static_cast<unsigned>(batch);
    emu::launch({blocks, 1, 1}, {kFusedWavesPerBlock * Tile::kWave, 1, 1}, Tile::kWave, [&] { body(view, input, output, n); }, numerics_);
    if (out_of_range) throw out_of_float16_range(name_);
  }

  std::string name_;
  BackendPacking packing_;
  EmulatedKernel kernel_;
  std::string description_;
  emu::ChipNumerics numerics_;
  NetworkOptions::Layouts layouts_;
  CallRouting routing_;
};

// Sets Slot of `k` (or with SmallBatch, its small-batch twin) to the kernel body `body` (a generic callable
// taking view, input, output, batch and an ops::LayoutTag) for both I/O types, in the slot's layout.
template <KernelSlot Slot, bool SmallBatch = false, class Body>
void set_emulated_slot(EmulatedKernel& k, Body body) {
  static_assert(!SmallBatch || Slot != KernelSlot::feature_major_large_batch, "large-batch twins have no small-batch twins");
  constexpr ops::LayoutTag<Slot == KernelSlot::sample_major ? ops::IoLayout::sample_major : ops::IoLayout::feature_major> tag;
  constexpr int i = static_cast<int>(Slot);
  (SmallBatch ? k.small_batch_f32[i] : k.f32[i]) = [body, tag](const ops::NetworkView& v, const float* in, float* out, unsigned n) { body(v, in, out, n, tag); };
  (SmallBatch ? k.small_batch_f16[i] : k.f16[i]) = [body, tag](const ops::NetworkView& v, const ops::half_t* in, ops::half_t* out, unsigned n) {
    body(v, in, out, n, tag);
  };
}

// The kernel body Forward in both layouts' slots.
template <class Forward>
EmulatedKernel emulated_kernel(Forward forward) {
  EmulatedKernel k;
  set_emulated_slot<KernelSlot::sample_major>(k, forward);
  set_emulated_slot<KernelSlot::feature_major>(k, forward);
  return k;
}

// The emu-nvidia backend running `plan` (plan_fused's for `model` on the NVIDIA family, built-in kernels;
// emu-nvidia-f16acc where it accumulates in float16) as it is: the tests lower its large_batch to run the
// large-batch twins on batches the emulator takes in seconds, and give `multiprocessors` for calls to take
// the small-batch twins as on a GPU of that many (0: none take them).
std::unique_ptr<BackendNetwork> create_emu_nvidia_network(const Model& model, const FusedPlan& plan, unsigned multiprocessors = 0);

}  // namespace mlpcore::detail
