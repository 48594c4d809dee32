// The emulated backends: the fused kernels of ops/fused_mlp.h, unchanged, on the wave emulator, with the
// AMD tiles or the NVIDIA ones (float32 or float16 accumulation). Nothing compiles at run time here, so
// they run a model's compiled-in kernel where its shape has one and the run-time-shaped kernels
// otherwise, as the GPU backends do without a compiler; the tests run the specialized sources.
// Slow (every lane is a fiber) and exact to the kernels' arithmetic: for checking models without the GPU.
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "engine/src/emu_network.h"
#include "engine/src/fused_plan.h"
#include "ops/fused_mlp.h"
#include "ops/fused_shapes.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"

namespace mlpcore::detail {
namespace {

// f(std::integral_constant<int, W>{}) for every width of the run-time-shaped kernels, W = 1 .. 8 tiles.
template <class F>
void static_for_widths(F f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I + 1>{}), ...); }(std::make_integer_sequence<int, ops::kMaxTilesPerLayer>{});
}

template <ops::RuntimeTwin Twin>
using TwinTag = std::integral_constant<ops::RuntimeTwin, Twin>;

// The compiled-in or run-time-shaped kernel of `plan`, as the hip and cuda backends pick it.
template <class Tile>
EmulatedKernel planned_kernel(const FusedPlan& plan) {
  switch (plan.kind) {
    case KernelKind::compiled_in:
      switch (plan.fixed_index) {
#define MLPCORE_FIXED_CASE(index, hidden, out, ...)                                                                                    \
  case index:                                                                                                                          \
    return emulated_kernel([](const auto& view, const auto* in, auto* o, unsigned n, auto layout) {                                   \
      MLPCORE_FIXED_FORWARD(Tile, hidden, out, __VA_ARGS__)(view, in, o, n, layout);                                                   \
    });
        MLPCORE_FIXED_SHAPES(MLPCORE_FIXED_CASE)
#undef MLPCORE_FIXED_CASE
      }
      break;
    case KernelKind::runtime_shaped: {
      // A float16-accumulating tile has kernels at the widths ops::runtime_f16_accumulation gives, with ReLU
      // hidden layers compiled in (the plan accumulates in float16 there only).
      constexpr bool kF16Acc = !std::is_same_v<ops::acc_elem_t<Tile>, float>;
      std::optional<EmulatedKernel> k;
      const auto kernel = [&](auto width, auto activations) {
        constexpr int W = decltype(width)::value;
        using Activations = decltype(activations);
        using ops::RuntimeTwin;
        const auto forward = []<RuntimeTwin Twin>(TwinTag<Twin>) {
          return [](const auto& view, const auto* in, auto* o, unsigned n, auto layout) {
            ops::mlp_forward<Tile, W, Activations, Twin>(view, in, o, n, layout);
          };
        };
        EmulatedKernel e = emulated_kernel(forward(TwinTag<RuntimeTwin::none>{}));
        if constexpr (ops::runtime_twin<Tile, W, RuntimeTwin::large_batch, Activations>())
          set_emulated_slot<KernelSlot::feature_major_large_batch>(e, forward(TwinTag<RuntimeTwin::large_batch>{}));
        if constexpr (ops::runtime_twin<Tile, W, RuntimeTwin::small_batch, Activations>()) {
          static_assert(ops::runtime_twin<Tile, W, RuntimeTwin::small_batch, Activations, ops::IoLayout::sample_major>(), "twins of both layouts");
          set_emulated_slot<KernelSlot::sample_major, true>(e, forward(TwinTag<RuntimeTwin::small_batch>{}));
          set_emulated_slot<KernelSlot::feature_major, true>(e, forward(TwinTag<RuntimeTwin::small_batch>{}));
        }
        if constexpr (ops::runtime_twin<Tile, W, RuntimeTwin::one_tile_input, Activations>()) {
          static_assert(!kF16Acc, "no float16-accumulating one-tile-input twins (ops/fused_mlp_kernels.gpu.cpp)");
          if (plan.one_tile_input_twin) set_emulated_slot<KernelSlot::feature_major>(e, forward(TwinTag<RuntimeTwin::one_tile_input>{}));
        } else if (plan.one_tile_input_twin) {
          throw std::logic_error("the plan names a one-tile-input twin this kernel does not have");  // (a GPU would not find it)
        }
        return e;
      };
      static_for_widths([&](auto width) {
        constexpr int W = decltype(width)::value;
        if (W != plan.width_tiles) return;
        if constexpr (!kF16Acc)
          k = plan.activations_per_tile ? kernel(width, ops::RuntimeActivationsPerTile{}) : kernel(width, ops::RuntimeKernelActivations<Tile::kFamily>{});
        else if constexpr (ops::runtime_f16_accumulation(Tile::kFamily, W, false))
          if (!plan.activations_per_tile) k = kernel(width, ops::RuntimeKernelActivations<Tile::kFamily>{});
      });
      if (k) return *k;
      break;
    }
    case KernelKind::specialized: break;
  }
  throw std::logic_error("emulated backends have no kernel for this plan");
}

// Tile accumulates in float32; F16AccTile is the family's float16-accumulating tile, where it has one.
template <class Tile, class F16AccTile = Tile>
std::unique_ptr<BackendNetwork> create_planned(const Model& m, const char* name, const FusedPlan& plan, emu::ChipNumerics numerics = {},
                                               unsigned multiprocessors = 0) {
  if (plan.f16_accumulation)
    return std::make_unique<EmuNetwork<F16AccTile>>(m, plan, name, planned_kernel<F16AccTile>(plan), numerics, multiprocessors);
  return std::make_unique<EmuNetwork<Tile>>(m, plan, name, planned_kernel<Tile>(plan), numerics, multiprocessors);
}
template <class Tile, class F16AccTile = Tile>
std::unique_ptr<BackendNetwork> create(const Model& m, const char* name, PlanRequest request, emu::ChipNumerics numerics = {}) {
  return create_planned<Tile, F16AccTile>(m, name, plan_fused(m, name, request), numerics);
}

}  // namespace

std::unique_ptr<BackendNetwork> create_emu_rdna3_network(const Model& m) { return create<ops::TileWmmaGfx11>(m, "emu-rdna3", {ops::TileFamily::rdna3}); }
std::unique_ptr<BackendNetwork> create_emu_rdna4_network(const Model& m) { return create<ops::TileWmmaGfx12>(m, "emu-rdna4", {ops::TileFamily::rdna4}); }
std::unique_ptr<BackendNetwork> create_emu_cdna_network(const Model& m) { return create<ops::TileMfmaGfx9>(m, "emu-cdna", {ops::TileFamily::cdna}); }
std::unique_ptr<BackendNetwork> create_emu_cdna2_network(const Model& m) {
  return create<ops::TileMfmaGfx9>(m, "emu-cdna2", {ops::TileFamily::cdna}, emu::kCdna2Numerics);
}
std::unique_ptr<BackendNetwork> create_emu_nvidia_network(const Model& m) { return create<ops::TileMmaSm80>(m, "emu-nvidia", {ops::TileFamily::nvidia}); }
std::unique_ptr<BackendNetwork> create_emu_nvidia_network(const Model& m, const FusedPlan& plan, unsigned multiprocessors) {
  if (plan.family != ops::TileFamily::nvidia) throw std::logic_error("emu-nvidia runs NVIDIA plans");
  return create_planned<ops::TileMmaSm80, ops::TileMmaSm80F16Acc>(m, plan.f16_accumulation ? "emu-nvidia-f16acc" : "emu-nvidia", plan, {},
                                                                   multiprocessors);
}
std::unique_ptr<BackendNetwork> create_emu_nvidia_f16acc_network(const Model& m) {
  return create<ops::TileMmaSm80, ops::TileMmaSm80F16Acc>(m, "emu-nvidia-f16acc", {ops::TileFamily::nvidia, false, true});
}

}  // namespace mlpcore::detail
