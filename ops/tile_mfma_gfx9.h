#pragma once
// CDNA (gfx908, gfx90a, gfx94x, gfx950) matrix tile: v_mfma_f32_16x16x16_f16 in wave64.
// A and B: 4 halves per lane; lane l holds K 4*(l/16) .. 4*(l/16)+3 of row (A) or column (B) l%16.
// C/D: lane l, element i is row 4*(l/16) + i of column l%16: exactly the K rows the same lane holds of B,
// so a D tile becomes the next B operand without moving between lanes.
#include "ops/amd_intrinsics.h"
#include "ops/tile_ops.h"

namespace mlpcore::ops {

struct TileMfmaGfx9 {
  static constexpr TileFamily kFamily = TileFamily::cdna;
  static constexpr int kWave = 64;
  static constexpr int kA = 4, kB = 4, kAcc = 4;
  using AFrag = amd::f16x4;
  using BFrag = amd::f16x4;
  using AccFrag = amd::f32x4;

  static constexpr int a_row(int lane, int) { return lane % 16; }
  static constexpr int a_col(int lane, int i) { return 4 * (lane / 16) + i; }
  static constexpr int b_row(int lane, int i) { return 4 * (lane / 16) + i; }
  static constexpr int b_col(int lane, int) { return lane % 16; }
  static constexpr int acc_row(int lane, int i) { return 4 * (lane / 16) + i; }
  static constexpr int acc_col(int lane, int) { return lane % 16; }
  MLPCORE_DEVICE static vec<half_t, 2> pack2(float lo, float hi) { return amd::cvt_pkrtz(lo, hi); }
  MLPCORE_DEVICE static std::uint32_t max2(std::uint32_t a, std::uint32_t b) { return amd::pk_max_f16(a, b); }
  MLPCORE_DEVICE static std::uint32_t abs2(std::uint32_t x) { return amd::abs_f16x2(x); }
  static constexpr int k_feature(int k) { return k; }
  static constexpr int acc_unit(int m) { return m; }  // accumulator row m holds output unit m
  static constexpr int block_sample(int, int s, int n) { return 16 * s + n; }
  // Lanes whose accumulators hold the same units: the host packs one bias fragment per slot.
  static constexpr int kBiasSlots = 4;
  static constexpr int bias_slot(int lane) { return lane / 16; }

  MLPCORE_DEVICE static AccFrag mma(const AFrag& a, const BFrag& b, const AccFrag& c) { return amd::mfma_f32_16x16x16_f16(a, b, c); }

  MLPCORE_DEVICE static BFrag to_b_layout(const AccFrag& d) { return pack_floats<TileMfmaGfx9, BFrag>(d); }
};

static_assert(MatrixTile<TileMfmaGfx9> && FeedsNextLayer<TileMfmaGfx9>);
static_assert(!RowVectorIo<TileMfmaGfx9> && !ColumnVectorIo<TileMfmaGfx9> &&
              !FoldsRelu<TileMfmaGfx9> && !HasNarrowTiles<TileMfmaGfx9> && !CopiesAsync<TileMfmaGfx9>);

}  // namespace mlpcore::ops
