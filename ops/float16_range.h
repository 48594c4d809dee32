#pragma once
// What float16 operands cannot carry, checked while the kernels run. A value beyond +-65504 rounded to a
// float16 operand saturates on AMD (cvt_pkrtz) and becomes infinite on NVIDIA (cvt.rn, or a float16
// accumulator); either way the outputs are wrong, and a later ReLU can hide it. So each lane checks every
// value it gives the matrix instructions as B (the inputs, every hidden layer's activations), as packed
// halves: with the tile's packed maximum into a running largest value (Tile::max2, of their magnitudes
// where they can be negative: Tile::abs2). On sm_90 that is one instruction per four values either way
// (a three-operand VHMNMX, the magnitudes an operand modifier); comparing float32 accumulators before
// they were packed had taken one per value. So a float32 value counts where its operand does: at or
// beyond 65504 after the tile's rounding (NVIDIA's to nearest makes that above 65488; AMD's toward zero,
// at or above 65504). The kernel marks the call's flag (NetworkView::range_flag) where a lane found such
// a value, and the host reports the call as ErrorCode::float16_range. A NaN (from a NaN input) is not
// counted: it reaches the outputs by itself, as on the cpu backend.
#include <cstdint>

#include "mlpcore/activation_kind.h"
#include "ops/gpu_platform.h"
#include "ops/simd_types.h"

namespace mlpcore::ops {

// Which of an activation's outputs can leave float16's range: none (within [-1, 1]), only positive ones
// (no output below -1: the largest value is the largest magnitude), or any.
enum class ActivationReach { bounded, above, both };

MLPCORE_HOST_DEVICE constexpr ActivationReach reach_of(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::sigmoid:
    case ActivationKind::tanh:
    case ActivationKind::sine: return ActivationReach::bounded;
    case ActivationKind::relu:
    case ActivationKind::softplus:
    case ActivationKind::exponential:
    case ActivationKind::silu: return ActivationReach::above;
    default: return ActivationReach::both;
  }
}

// The same for an activation whose input was checked already (float16 sums): only outputs that can be
// larger than the input count (exponential, softplus, leaky_relu with |alpha| > 1; the others stay
// within max(|x|, 1)).
MLPCORE_HOST_DEVICE constexpr ActivationReach reach_beyond_input(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::exponential:
    case ActivationKind::softplus:
    case ActivationKind::leaky_relu: return reach_of(kind);
    default: return ActivationReach::bounded;
  }
}

class Float16Range {
 public:
  // Every value of a fragment of packed float16 operands (inputs reach both ways).
  template <class Tile, class Frag>
  MLPCORE_DEVICE void see_packed(const Frag& fragment, ActivationReach reach = ActivationReach::both) {
    static_assert(sizeof(Frag) % 4 == 0, "whole registers of packed halves");
    if (reach == ActivationReach::bounded) return;
    const auto pairs = __builtin_bit_cast(vec<std::uint32_t, sizeof(Frag) / 4>, fragment);
    MLPCORE_UNROLL
    for (int i = 0; i < static_cast<int>(sizeof(Frag) / 4); ++i)
      largest_ = Tile::max2(largest_, reach == ActivationReach::both ? Tile::abs2(pairs[i]) : pairs[i]);
  }

  // Whether a value seen was at or beyond 65504, or infinite.
  MLPCORE_DEVICE bool exceeded() const { return at_limit(largest_ & 0xffffu) || at_limit(largest_ >> 16); }

  // Sets *flag where exceeded: every lane that sets it writes the same value, so no atomics.
  MLPCORE_DEVICE void report(std::uint32_t* flag) const {
    if (flag && exceeded()) *flag = 1;
  }

 private:
  // 0x7bff is 65504, 0x7c00 infinity; a NaN (above) is not counted. The sign bit is masked: the largest
  // value of an ActivationReach::above fragment may be -0.
  static MLPCORE_DEVICE bool at_limit(std::uint32_t half) { return (half & 0x7fffu) - 0x7bffu <= 1u; }

  std::uint32_t largest_ = 0;  // two halves, each the largest packed value seen in its position
};

}  // namespace mlpcore::ops
