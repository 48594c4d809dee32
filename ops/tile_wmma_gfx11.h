#pragma once
// RDNA3 (gfx11) matrix tile: v_wmma_f32_16x16x16_f16 in wave32.
// A and B: each lane holds 16 consecutive K of one row (A) or column (B), and lanes 16-31 must hold the
// same as lanes 0-15 (the hardware reads both half-waves). C/D: lane l, element i is row 2i + l/16 of
// column l%16, so rows alternate between the half-waves and a D tile cannot be a B operand as it is.
#include "ops/amd_intrinsics.h"
#include "ops/tile_ops.h"

namespace mlpcore::ops {

struct TileWmmaGfx11 {
  static constexpr TileFamily kFamily = TileFamily::rdna3;
  static constexpr int kWave = 32;
  static constexpr int kA = 16, kB = 16, kAcc = 8;  // elements per lane
  using AFrag = amd::f16x16;
  using BFrag = amd::f16x16;
  using AccFrag = amd::f32x8;

  static constexpr int a_row(int lane, int) { return lane % 16; }
  static constexpr int a_col(int, int i) { return i; }
  static constexpr int b_row(int, int i) { return i; }
  static constexpr int b_col(int lane, int) { return lane % 16; }
  static constexpr int acc_row(int lane, int i) { return 2 * i + lane / 16; }
  static constexpr int acc_col(int lane, int) { return lane % 16; }
  // The feature a chained B operand holds at hardware K: to_b_layout rebuilds the natural order.
  MLPCORE_DEVICE static vec<half_t, 2> pack2(float lo, float hi) { return amd::cvt_pkrtz(lo, hi); }
  MLPCORE_DEVICE static std::uint32_t max2(std::uint32_t a, std::uint32_t b) { return amd::pk_max_f16(a, b); }
  MLPCORE_DEVICE static std::uint32_t abs2(std::uint32_t x) { return amd::abs_f16x2(x); }
  static constexpr int k_feature(int k) { return k; }
  static constexpr int acc_unit(int m) { return m; }  // accumulator row m holds output unit m
  static constexpr int block_sample(int, int s, int n) { return 16 * s + n; }
  // Lanes whose accumulators hold the same units: the host packs one bias fragment per slot.
  static constexpr int kBiasSlots = 2;
  static constexpr int bias_slot(int lane) { return lane / 16; }

  MLPCORE_DEVICE static AccFrag mma(const AFrag& a, const BFrag& b, const AccFrag& c) {
    return amd::wmma_f32_16x16x16_f16_gfx11(a, b, c);
  }

  // D -> next layer's B. Each lane has 8 of its column's rows (even rows in lanes 0-15, odd rows in lanes
  // 16-31) and needs all 16, replicated. Packing first halves the traffic: 4 cvt_pkrtz, then 4
  // v_permlanex16_b32 fetch the twin lane's packed pairs (lane l reads lane l^16). permlanex16 is the one
  // VALU instruction that crosses the 16-lane rows on gfx11: DPP stays inside a row, v_permlane64 is
  // wave64-only, and ds_swizzle/ds_bpermute go through the LDS crossbar with its latency and waits.
  MLPCORE_DEVICE static BFrag to_b_layout(const AccFrag& d) {
    const bool upper = lane_id() >= 16;
    vec<std::uint32_t, 8> regs;
    for (int j = 0; j < 4; ++j) {
      const auto own = __builtin_bit_cast(std::uint32_t, amd::cvt_pkrtz(d[2 * j], d[2 * j + 1]));  // rows 4j+g, 4j+2+g
      const std::uint32_t twin = amd::permlanex16(own, 0x76543210u, 0xfedcba98u);
      const std::uint32_t even = upper ? twin : own;  // rows 4j, 4j+2
      const std::uint32_t odd = upper ? own : twin;   // rows 4j+1, 4j+3
      regs[2 * j] = (even & 0xffffu) | (odd << 16);
      regs[2 * j + 1] = (even >> 16) | (odd & 0xffff0000u);
    }
    return __builtin_bit_cast(BFrag, regs);
  }
};

static_assert(MatrixTile<TileWmmaGfx11> && FeedsNextLayer<TileWmmaGfx11>);
static_assert(!RowVectorIo<TileWmmaGfx11> && !ColumnVectorIo<TileWmmaGfx11> &&
              !FoldsRelu<TileWmmaGfx11> && !HasNarrowTiles<TileWmmaGfx11> && !CopiesAsync<TileWmmaGfx11>);

}  // namespace mlpcore::ops
