#pragma once
// NVIDIA (sm_80 and newer) matrix tile: two mma.sync.m16n8k16 (f16 x f16 -> f32) make one 16x16x16 tile.
// Operand roles are swapped against the AMD tiles: the activations are the hardware A operand (rows =
// samples, K = features) and the weights are B (K = features, N = output units), so the accumulator's
// rows are samples and its columns output units. The m16n8 accumulator of PTX then holds, per lane,
// exactly the (sample, K) elements the next layer's A fragment needs in the same lane: the D -> A
// transform is a pure re-packing of floats into halves, as in FlashAttention-2's reuse of S as P.
// In the kernel's (AMD-style) terms below, "A" is the weight fragment, "B" the activation fragment:
// a_row/acc_row are output units, b_row/a_col are features, b_col/acc_col are samples.
#include "ops/nv_intrinsics.h"
#include "ops/tile_ops.h"

namespace mlpcore::ops {

struct TileMmaSm80 {
  static constexpr int kWave = 32;
  static constexpr int kA = 8, kB = 8, kAcc = 8;
  using AFrag = vec<half_t, 8>;  // two B fragments (units 0-7, 8-15) of the hardware instruction
  using BFrag = vec<half_t, 8>;  // the hardware A fragment
  using AccFrag = vec<float, 8>;  // two m16n8 accumulators (units 0-7, 8-15)

  // PTX: groupID = lane / 4, threadID_in_group = lane % 4.
  static constexpr int a_row(int lane, int i) { return lane / 4 + 8 * (i / 4); }
  static constexpr int a_col(int lane, int i) { return 2 * (lane % 4) + i % 2 + 8 * (i % 4 / 2); }
  static constexpr int b_row(int lane, int i) { return 2 * (lane % 4) + i % 2 + 8 * (i / 4); }
  static constexpr int b_col(int lane, int i) { return lane / 4 + 8 * (i / 2 % 2); }
  static constexpr int acc_row(int lane, int i) { return 2 * (lane % 4) + i % 2 + 8 * (i / 4); }
  static constexpr int acc_col(int lane, int i) { return lane / 4 + 8 * (i % 4 / 2); }
  MLPCORE_DEVICE static vec<half_t, 2> pack2(float lo, float hi) { return nv::cvt_rn_f16x2(lo, hi); }
  // Sample tiles per warp in the fused kernel: each weight fragment feeds this many mma chains.
  static constexpr int sample_tiles(int width_tiles) { return width_tiles <= 4 ? 4 : 2; }
  static constexpr int k_feature(int k) { return k; }

  MLPCORE_DEVICE static AccFrag mma(const AFrag& w, const BFrag& x, const AccFrag& c) {
    const auto wr = __builtin_bit_cast(vec<std::uint32_t, 4>, w);
    const auto xr = __builtin_bit_cast(vec<std::uint32_t, 4>, x);
    const std::uint32_t a[4] = {xr[0], xr[1], xr[2], xr[3]};
    const std::uint32_t b0[2] = {wr[0], wr[1]}, b1[2] = {wr[2], wr[3]};
    nv::f32x4 c0, c1;
    for (int i = 0; i < 4; ++i) c0[i] = c[i], c1[i] = c[4 + i];
    const nv::f32x4 d0 = nv::mma_m16n8k16(a, b0, c0), d1 = nv::mma_m16n8k16(a, b1, c1);
    AccFrag d;
    for (int i = 0; i < 4; ++i) d[i] = d0[i], d[4 + i] = d1[i];
    return d;
  }

  // The accumulator's element i sits where the next A fragment's element i must: only the packing.
  MLPCORE_DEVICE static BFrag to_b_layout(const AccFrag& d) { return pack_floats<TileMmaSm80, BFrag>(d); }
};

}  // namespace mlpcore::ops
