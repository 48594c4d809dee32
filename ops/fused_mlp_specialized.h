#pragma once
// One model's specialized kernels. engine/src/specialized_source.cpp writes, per network, a source that
// includes this header, names a SpecializedNetwork (the plan: family, accumulation, policies, activations,
// edges, I/O layouts and shape in tiles) and ends with MLPCORE_SPECIALIZED_KERNELS(that type): kernels
// mlpcore_mlp_specialized and mlpcore_mlp_specialized_f16, their _fm (feature-major) twins, and those
// twins' _large ones (for large batches). NVRTC, hiprtc (or a compiler, for `mlpcore compile`) build each
// kernel the plan has as a program of its own, MLPCORE_SPECIALIZED_ONLY naming it; the tests compile the
// very same text for the wave emulator, defining MLPCORE_SPECIALIZED_KERNELS first.
#include "ops/fused_mlp.h"
#include "ops/fused_policy.h"

namespace mlpcore::ops {

// Layouts: the I/O layouts it builds kernels for (layout_bit), its plan's only, since each costs compile time.
// Policy, FeatureMajorPolicy: those of its sample-major and feature-major kernels (FusedPlan::policy,
// ::feature_major_policy). LargeBatchPolicy: that of the feature-major twins for large batches
// (FusedPlan::large_batch_policy), built where it differs from FeatureMajorPolicy.
template <TileFamily Family, bool F16Accumulation, FusedPolicy Policy, FusedPolicy FeatureMajorPolicy, FusedPolicy LargeBatchPolicy,
          class ActivationsOf, class Edges, unsigned Layouts, int... Widths>
struct SpecializedNetwork {
  static constexpr TileFamily kFamily = Family;
  static constexpr bool kF16Accumulation = F16Accumulation;
  static constexpr bool kLargeBatchTwins = LargeBatchPolicy != FeatureMajorPolicy && (Layouts & layout_bit(IoLayout::feature_major)) != 0;
  template <IoLayout L, bool LargeBatch>
  static constexpr FusedPolicy kPolicy = LargeBatch ? LargeBatchPolicy : L == IoLayout::feature_major ? FeatureMajorPolicy : Policy;

  template <class Tile, bool LargeBatch, class Io, IoLayout L>
  MLPCORE_DEVICE static void run(const NetworkView& net, const Io* input, Io* output, unsigned batch, LayoutTag<L> layout) {
    static_assert(Tile::kFamily == Family, "a specialized source runs on the tile family it was planned for");
    static_assert((sizeof(acc_elem_t<Tile>) == 2) == F16Accumulation, "the tile accumulates as planned");
    if constexpr ((Layouts & layout_bit(L)) != 0 && (!LargeBatch || (kLargeBatchTwins && L == IoLayout::feature_major)))
      mlp_forward_fixed<Tile, kPolicy<L, LargeBatch>, ActivationsOf, Edges, Widths...>(net, input, output, batch, layout);
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

#define MLPCORE_SPECIALIZED_RUN(Network, large_batch) \
  Network::template run<typename mlpcore::ops::native_tile_of<Network::kF16Accumulation>::type, large_batch>
#define MLPCORE_SPECIALIZED_KERNEL(Network, layout, name, io, large_batch)                                                          \
  MLPCORE_FUSED_KERNEL_IN(layout, name, io, (Network::template kPolicy<mlpcore::ops::IoLayout::layout, large_batch>), \
                          MLPCORE_SPECIALIZED_RUN(Network, large_batch))
#define MLPCORE_SPECIALIZED_KERNEL_OF(Network, ...) MLPCORE_SPECIALIZED_KERNEL(Network, __VA_ARGS__)  // (expands the list first)
// "layout, name, I/O type, large-batch twin": the one kernel of this program (engine/src/specialized_source.h)
#ifndef MLPCORE_SPECIALIZED_ONLY
#error "a specialized source is compiled one kernel at a time: MLPCORE_SPECIALIZED_ONLY names it (engine/src/specialized_source.h, kernel_source)"
#endif
#define MLPCORE_SPECIALIZED_KERNELS(Network) MLPCORE_SPECIALIZED_KERNEL_OF(Network, MLPCORE_SPECIALIZED_ONLY)
#endif
