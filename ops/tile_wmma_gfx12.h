#pragma once
// RDNA4 (gfx12) matrix tile: v_wmma_f32_16x16x16_f16 (the _gfx12 builtin) in wave32.
// A and B: 8 halves per lane, K interleaved: lanes 0-15 hold K 0-3 and 8-11, lanes 16-31 K 4-7 and 12-15.
// C/D: lane l, element i is row i + 8*(l/16) of column l%16.
// A D tile is used as the next B operand unchanged, so B element i of lane l then holds feature
// i + 8*(l/16) while the hardware reads it as K = (i%4) + 8*(i/4) + 4*(l/16). That is a fixed permutation
// of K, and it is correct because A is loaded with the same permutation (k_feature).
#include "ops/amd_intrinsics.h"
#include "ops/tile_ops.h"

namespace mlpcore::ops {

struct TileWmmaGfx12 {
  static constexpr TileFamily kFamily = TileFamily::rdna4;
  static constexpr int kWave = 32;
  static constexpr int kA = 8, kB = 8, kAcc = 8;
  using AFrag = amd::f16x8;
  using BFrag = amd::f16x8;
  using AccFrag = amd::f32x8;

  static constexpr int hw_k(int lane, int i) { return i % 4 + 8 * (i / 4) + 4 * (lane / 16); }
  static constexpr int a_row(int lane, int) { return lane % 16; }
  static constexpr int a_col(int lane, int i) { return hw_k(lane, i); }
  static constexpr int b_row(int lane, int i) { return hw_k(lane, i); }
  static constexpr int b_col(int lane, int) { return lane % 16; }
  static constexpr int acc_row(int lane, int i) { return i + 8 * (lane / 16); }
  static constexpr int acc_col(int lane, int) { return lane % 16; }
  MLPCORE_DEVICE static vec<half_t, 2> pack2(float lo, float hi) { return amd::cvt_pkrtz(lo, hi); }
  MLPCORE_DEVICE static std::uint32_t max2(std::uint32_t a, std::uint32_t b) { return amd::pk_max_f16(a, b); }
  MLPCORE_DEVICE static std::uint32_t abs2(std::uint32_t x) { return amd::abs_f16x2(x); }
  static constexpr int k_feature(int k) { return k % 4 + 4 * (k / 8) + 8 * (k / 4 % 2); }
  static constexpr int acc_unit(int m) { return m; }  // accumulator row m holds output unit m
  static constexpr int block_sample(int, int s, int n) { return 16 * s + n; }
  // Lanes whose accumulators hold the same units: the host packs one bias fragment per slot.
  static constexpr int kBiasSlots = 2;
  static constexpr int bias_slot(int lane) { return lane / 16; }

  MLPCORE_DEVICE static AccFrag mma(const AFrag& a, const BFrag& b, const AccFrag& c) {
    return amd::wmma_f32_16x16x16_f16_gfx12(a, b, c);
  }

  // Identity: only the float32 -> float16 packing.
  MLPCORE_DEVICE static BFrag to_b_layout(const AccFrag& d) { return pack_floats<TileWmmaGfx12, BFrag>(d); }
};

static_assert(MatrixTile<TileWmmaGfx12> && FeedsNextLayer<TileWmmaGfx12>);
static_assert(!RowVectorIo<TileWmmaGfx12> && !ColumnVectorIo<TileWmmaGfx12> &&
              !FoldsRelu<TileWmmaGfx12> && !HasNarrowTiles<TileWmmaGfx12> && !CopiesAsync<TileWmmaGfx12>);

}  // namespace mlpcore::ops
