#pragma once
// One model's specialized kernels. engine/src/specialized_source.cpp writes, per network, a source that
// includes this header, names a SpecializedNetwork (the plan: family, accumulation, policy, activations,
// narrow edges, I/O layouts and shape in tiles) and ends with MLPCORE_SPECIALIZED_KERNELS(that type): kernels
// mlpcore_mlp_specialized and mlpcore_mlp_specialized_f16, and their _fm (feature-major) twins, of which
// those of a layout the plan leaves out are a trap. NVRTC, hiprtc (or a compiler, for `mlpcore compile`)
// build each kernel the plan serves as a program of its own, MLPCORE_SPECIALIZED_ONLY naming it; the tests
// compile the very same text for the wave emulator, defining MLPCORE_SPECIALIZED_KERNELS first.
#include "ops/fused_mlp.h"
#include "ops/fused_policy.h"

namespace mlpcore::ops {

// Layouts: the I/O layouts it builds kernels for (layout_bit), its plan's only, since each costs compile time.
template <TileFamily Family, bool F16Accumulation, FusedPolicy Policy, class ActivationsOf, class Edges, unsigned Layouts, int... Widths>
struct SpecializedNetwork {
  static constexpr TileFamily kFamily = Family;
  static constexpr bool kF16Accumulation = F16Accumulation;
  static constexpr FusedPolicy kPolicy = Policy;

  template <class Tile, class Io, IoLayout L>
  MLPCORE_DEVICE static void run(const NetworkView& net, const Io* input, Io* output, unsigned batch, LayoutTag<L> layout) {
    static_assert(Tile::kFamily == Family, "a specialized source runs on the tile family it was planned for");
    static_assert((sizeof(acc_elem_t<Tile>) == 2) == F16Accumulation, "the tile accumulates as planned");
    if constexpr ((Layouts & layout_bit(L)) != 0)
      mlp_forward_fixed<Tile, Policy, ActivationsOf, Edges, Widths...>(net, input, output, batch, layout);
    else
      abort_kernel("mlpcore: this network's specialized kernels were built without this I/O layout");  // the host never launches it
  }
};

}  // namespace mlpcore::ops

#ifndef MLPCORE_SPECIALIZED_KERNELS
#include "ops/fused_kernel_entry.h"

namespace mlpcore::ops {
template <bool F16Accumulation>
struct native_tile_of {
  using type = NativeTile;
};
MLPCORE_IF_F16ACC(template <> struct native_tile_of<true> { using type = NativeF16AccTile; };)
}  // namespace mlpcore::ops

#define MLPCORE_SPECIALIZED_RUN(Network) \
  Network::template run<typename mlpcore::ops::native_tile_of<Network::kF16Accumulation>::type>
#define MLPCORE_SPECIALIZED_KERNEL(Network, layout, name, io) \
  MLPCORE_FUSED_KERNEL_IN(layout, name, io, (Network::kPolicy), MLPCORE_SPECIALIZED_RUN(Network))
#define MLPCORE_SPECIALIZED_KERNEL_OF(Network, ...) MLPCORE_SPECIALIZED_KERNEL(Network, __VA_ARGS__)  // (expands the list first)
#ifdef MLPCORE_SPECIALIZED_ONLY  // "layout, name, I/O type": the one kernel of this program (engine/src/specialized_source.h)
#define MLPCORE_SPECIALIZED_KERNELS(Network) MLPCORE_SPECIALIZED_KERNEL_OF(Network, MLPCORE_SPECIALIZED_ONLY)
#else
#define MLPCORE_SPECIALIZED_KERNELS(Network)                                                                  \
  MLPCORE_FUSED_KERNEL(mlpcore_mlp_specialized, float, Network::kPolicy, MLPCORE_SPECIALIZED_RUN(Network)) \
  MLPCORE_FUSED_KERNEL(mlpcore_mlp_specialized_f16, mlpcore::ops::half_t, Network::kPolicy, MLPCORE_SPECIALIZED_RUN(Network))
#endif
#endif
