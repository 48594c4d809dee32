#pragma once
// Compiles specialized sources for the wave emulator: included first by each generated translation unit,
// it defines MLPCORE_SPECIALIZED_KERNELS so that a source registers its SpecializedNetwork, for case
// MLPCORE_SPECIALIZED_CASE, with the emulated tile of the family it was planned for.
// (Defined before ops/fused_mlp_specialized.h is included, which then leaves out the GPU kernels.)
#define MLPCORE_SPECIALIZED_CONCAT2(a, b) a##b
#define MLPCORE_SPECIALIZED_CONCAT(a, b) MLPCORE_SPECIALIZED_CONCAT2(a, b)
#define MLPCORE_SPECIALIZED_KERNELS(Network)                                                      \
  static const bool MLPCORE_SPECIALIZED_CONCAT(mlpcore_specialized_registered_, __COUNTER__) = \
      mlpcore::test::register_emulated<Network>(MLPCORE_SPECIALIZED_CASE);

#include <cstddef>

#include "engine/src/emu_network.h"
#include "ops/fused_mlp_specialized.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"
#include "tests/specialized/specialized_registry.h"

namespace mlpcore::test {

template <ops::TileFamily Family, bool F16Accumulation>
struct emulated_tile;
template <>
struct emulated_tile<ops::TileFamily::rdna3, false> {
  using type = ops::TileWmmaGfx11;
};
template <>
struct emulated_tile<ops::TileFamily::rdna4, false> {
  using type = ops::TileWmmaGfx12;
};
template <>
struct emulated_tile<ops::TileFamily::cdna, false> {
  using type = ops::TileMfmaGfx9;
};
template <>
struct emulated_tile<ops::TileFamily::nvidia, false> {
  using type = ops::TileMmaSm80;
};
template <>
struct emulated_tile<ops::TileFamily::nvidia, true> {
  using type = ops::TileMmaSm80F16Acc;
};

template <class Network>
bool register_emulated(std::size_t index) {
  using Tile = typename emulated_tile<Network::kFamily, Network::kF16Accumulation>::type;
  SpecializedRegistration r;
  r.family = Network::kFamily;
  r.f16_accumulation = Network::kF16Accumulation;
  r.kernel = detail::emulated_kernel(
      [](const auto& view, const auto* in, auto* out, unsigned n, auto layout) { Network::template run<Tile, false>(view, in, out, n, layout); });
  detail::set_emulated_slot<detail::KernelSlot::feature_major_large_batch>(r.kernel, [](const auto& view, const auto* in, auto* out, unsigned n, auto layout) {
    Network::template run<Tile, true>(view, in, out, n, layout);
  });
  r.make = [](const Model& model, const detail::FusedPlan& plan, detail::EmulatedKernel kernel) -> std::unique_ptr<detail::BackendNetwork> {
    return std::make_unique<detail::EmuNetwork<Tile>>(model, plan, "emulated specialized", std::move(kernel));
  };
  specialized_registry().add(index, std::move(r));
  return true;
}

}  // namespace mlpcore::test
