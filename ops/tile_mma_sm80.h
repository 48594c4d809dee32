#pragma once
// NVIDIA (sm_80 and newer) matrix tile: two mma.sync.m16n8k16 (f16 x f16 -> f32) make one 16x16x16 tile.
// Operand roles are swapped against the AMD tiles: the activations are the hardware A operand (rows =
// samples, K = features) and the weights are B (K = features, N = output units), so the accumulator's
// rows are samples and its columns output units. The m16n8 accumulator of PTX then holds, per lane,
// exactly the (sample, K) elements the next layer's A fragment needs in the same lane: the D -> A
// transform is a pure re-packing of floats into halves, as in FlashAttention-2's reuse of S as P.
// In the kernel's (AMD-style) terms below, "A" is the weight fragment, "B" the activation fragment:
// a_row/acc_row are output units, b_row/a_col are features, b_col/acc_col are samples.
//
// Accumulation: float32 (TileMmaSm80), or float16 (TileMmaSm80F16Acc, tiny-cuda-nn's choice, backend
// cuda-f16acc): half the accumulator registers, and a layer's output is already the next layer's
// operand with no conversion; results then carry float16 rounding from every sum.
//
// Feature order: within each tile of 16, hardware K (and accumulator unit) positions 2t, 2t+1, 2t+8,
// 2t+9 (t = lane % 4) hold features (units) 4t..4t+3, the same permutation for K and N so that chained
// layers agree; the host packs the weights and biases in that order. Then a lane holds four consecutive
// features of each of its two samples, and the fused kernel's input and output are one 16-byte access
// per lane and sample row (load_rows/store_rows) instead of eight 4-byte ones.
//
// Sample order: a lane holds hardware columns (samples) g and g + 8 (g = lane / 4) of each of a block's
// S sample tiles; block_sample places them at samples 2S g .. 2S g + 2S - 1, so in feature-major arrays
// ([dim, batch]) a lane's values of one feature are one 4S- or 8S-byte access (load_columns,
// store_columns; two 16-byte ones for 4 float32 sample tiles) instead of 2S 2- or 4-byte ones. Layers do
// not mix samples, so the order only has to be the same for input and output.
#include "ops/nv_intrinsics.h"
#include "ops/tile_ops.h"

namespace mlpcore::ops {

// Narrow edges (FusedPolicy::narrow_input, ::narrow_output): a first layer of at most 8 input features
// runs mma.m16n8k8, a last layer of at most 8 output units one m16n8k16 instead of two: Shaped<8, 16>,
// <16, 8> and <8, 8> are this tile with K (features) or N (units) of 8, which hold features and units 0-7
// in natural order (hardware K 2t, 2t+1 hold features 2t, 2t+1). They serve the network's edges only:
// sample-major, their input is loaded and their output stored element by element (feature-major, by
// columns like full tiles), and a narrow-K layer's output (N = 16) is an ordinary layer's operand.
template <class Acc, int K = 16, int N = 16>
struct TileMmaSm80Shape {
  static_assert((K == 8 || K == 16) && (N == 8 || N == 16), "mma.m16n8k8/k16, one or two per tile");
  static constexpr TileFamily kFamily = TileFamily::nvidia;
  static constexpr int kWave = 32;
  static constexpr int kA = K * N / 32, kB = K / 2, kAcc = N / 2;
  static constexpr bool kF16Acc = sizeof(Acc) == sizeof(half_t);
  static constexpr bool kFull = K == 16 && N == 16;
  using AFrag = vec<half_t, kA>;  // N / 8 B fragments (units 0-7, 8-15) of the hardware instruction
  using BFrag = vec<half_t, kB>;  // the hardware A fragment
  using AccFrag = vec<Acc, kAcc>;  // N / 8 m16n8 accumulators (units 0-7, 8-15)
  using NextBFrag = vec<half_t, 8>;  // what to_b_layout makes: the next layer's (K = 16) operand
  template <int K2, int N2>
  using Shaped = TileMmaSm80Shape<Acc, K2, N2>;

  // PTX: groupID = lane / 4, threadID_in_group = lane % 4; m16n8k8's fragments are m16n8k16's first
  // registers (same element positions).
  static constexpr int a_row(int lane, int i) { return lane / 4 + 8 * (i / (K / 4)); }
  static constexpr int a_col(int lane, int i) { return 2 * (lane % 4) + i % 2 + 8 * (i % (K / 4) / 2); }
  static constexpr int b_row(int lane, int i) { return 2 * (lane % 4) + i % 2 + 8 * (i / 4); }
  static constexpr int b_col(int lane, int i) { return lane / 4 + 8 * (i / 2 % 2); }
  static constexpr int acc_row(int lane, int i) { return 2 * (lane % 4) + i % 2 + 8 * (i / 4); }
  static constexpr int acc_col(int lane, int i) { return lane / 4 + 8 * (i % 4 / 2); }
  MLPCORE_DEVICE static vec<half_t, 2> pack2(float lo, float hi) { return nv::cvt_rn_f16x2(lo, hi); }
  MLPCORE_DEVICE static std::uint32_t max2(std::uint32_t a, std::uint32_t b) { return nv::max_f16x2(a, b); }
  MLPCORE_DEVICE static std::uint32_t abs2(std::uint32_t x) { return nv::abs_f16x2(x); }
  static constexpr int k_feature(int k) { return K == 8 ? k : order16(k); }
  static constexpr int acc_unit(int m) { return N == 8 ? m : order16(m); }
  static constexpr int block_sample(int S, int s, int n) { return 2 * S * (n % 8) + 2 * s + n / 8; }
  // Lanes whose accumulators hold the same units: the host packs one bias fragment per slot.
  static constexpr int kBiasSlots = 4;
  static constexpr int bias_slot(int lane) { return lane % 4; }

  // One instruction per n8 half of the tile: units in hardware columns 0-7, then 8-15.
  MLPCORE_DEVICE static AccFrag mma(const AFrag& w, const BFrag& x, const AccFrag& c) {
    AccFrag d;
    mma_half<0>(w, x, c, d);
    if constexpr (N == 16) mma_half<1>(w, x, c, d);
    return d;
  }

  // One K tile of the fused kernel's input (Io = float or half_t): row0 is sample 0 at this tile's first
  // feature, rows `stride` values apart, aligned to 4 values; features >= `features` (a multiple of 4)
  // read as zero. float16 rows are already the packed pairs the fragment holds.
  template <class Io>
    requires kFull
  MLPCORE_DEVICE static BFrag load_rows(const Io* row0, unsigned stride, unsigned features) {
    const unsigned lane = lane_id(), f = 4 * (lane % 4);
    vec<Io, 4> lo{}, hi{};  // samples lane/4 and lane/4 + 8
    if (f < features) {
      lo = *reinterpret_cast<const vec<Io, 4>*>(row0 + (lane / 4) * stride + f);
      hi = *reinterpret_cast<const vec<Io, 4>*>(row0 + (lane / 4 + 8) * stride + f);
    }
    const vec<Io, 8> v{lo[0], lo[1], hi[0], hi[1], lo[2], lo[3], hi[2], hi[3]};
    if constexpr (sizeof(Io) == sizeof(half_t))
      return __builtin_bit_cast(BFrag, v);
    else
      return pack_floats<TileMmaSm80Shape, BFrag>(v);
  }
  // The inverse of load_rows for one output tile: units >= `units` (a multiple of 4) are not written.
  template <class Io>
    requires kFull
  MLPCORE_DEVICE static void store_rows(const AccFrag& d, Io* row0, unsigned stride, unsigned units) {
    const unsigned lane = lane_id(), u = 4 * (lane % 4);
    if (u >= units) return;
    store_vector<false>(row0 + (lane / 4) * stride + u, to_io<Io>(vec<Acc, 4>{d[0], d[1], d[4], d[5]}));
    store_vector<false>(row0 + (lane / 4 + 8) * stride + u, to_io<Io>(vec<Acc, 4>{d[2], d[3], d[6], d[7]}));
  }

  // The K tile of S sample tiles from a feature-major array: column0 is this tile's first feature at the
  // block's first sample, features `stride` values apart, aligned to 2S values; features >= `features`
  // read as zero.
  template <int S, class Io>
  MLPCORE_DEVICE static void load_columns(BFrag (&x)[S], const Io* column0, unsigned stride, unsigned features) {
    constexpr int kLaneFeatures = kB / 2;  // consecutive, from kLaneFeatures * (lane % 4)
    const unsigned lane = lane_id(), f0 = kLaneFeatures * (lane % 4);
    vec<Io, 2 * S> v[kLaneFeatures];
    MLPCORE_UNROLL
    for (int j = 0; j < kLaneFeatures; ++j)
      v[j] = f0 + j < features ? *reinterpret_cast<const vec<Io, 2 * S>*>(column0 + (f0 + j) * stride + 2 * S * (lane / 4)) : vec<Io, 2 * S>{};
    const auto value = [&](int s, int i) { return v[k_feature(b_row(0, i))][block_sample(S, s, b_col(0, i))]; };
    MLPCORE_UNROLL
    for (int s = 0; s < S; ++s) {
      if constexpr (sizeof(Io) == sizeof(half_t)) {
        MLPCORE_UNROLL
        for (int i = 0; i < kB; ++i) x[s][i] = value(s, i);
      } else {
        x[s] = pack_pairs<TileMmaSm80Shape, BFrag>([&](int i) { return value(s, i); });
      }
    }
  }
  // The inverse for one output tile of S sample tiles: units >= `units` are not written.
  template <int S, class Io>
  MLPCORE_DEVICE static void store_columns(const AccFrag (&d)[S], Io* column0, unsigned stride, unsigned units) {
    constexpr int kLaneUnits = kAcc / 2;  // consecutive, from kLaneUnits * (lane % 4)
    const unsigned lane = lane_id(), u0 = kLaneUnits * (lane % 4);
    vec<Acc, 2 * S> v[kLaneUnits];
    MLPCORE_UNROLL
    for (int s = 0; s < S; ++s)
      MLPCORE_UNROLL
      for (int i = 0; i < kAcc; ++i) v[acc_unit(acc_row(0, i))][block_sample(S, s, acc_col(0, i))] = d[s][i];
    MLPCORE_UNROLL
    for (int j = 0; j < kLaneUnits; ++j)
      if (u0 + j < units) store_vector<true>(column0 + (u0 + j) * stride + 2 * S * (lane / 4), to_io<Io>(v[j]));
  }
  // v in 16-byte pieces, or one piece of 8 or 4 bytes, each one store (nv::store_words); `p` aligned as v,
  // global memory where Global.
  template <bool Global, class Io, int M>
  MLPCORE_DEVICE static void store_vector(Io* p, const vec<Io, M>& v) {
    constexpr int kWords = sizeof v / 4, kPiece = kWords < 4 ? kWords : 4;
    static_assert(sizeof v % 16 == 0 || sizeof v == 8 || sizeof v == 4, "whole 16-byte pieces, or 8 or 4 bytes");
    const auto words = __builtin_bit_cast(vec<std::uint32_t, kWords>, v);
    MLPCORE_UNROLL
    for (int i = 0; i < kWords / kPiece; ++i) {
      std::uint32_t piece[kPiece];
      MLPCORE_UNROLL
      for (int j = 0; j < kPiece; ++j) piece[j] = words[kPiece * i + j];
      nv::store_words<Global>(reinterpret_cast<char*>(p) + 16 * i, piece);
    }
  }

  // Output values as stored (an even count): converted only where Io and the accumulator differ,
  // float32 to float16 packed like every other conversion.
  template <class Io, int M>
  MLPCORE_DEVICE static vec<Io, M> to_io(const vec<Acc, M>& v) {
    if constexpr (sizeof(Io) == sizeof(Acc)) {
      return v;
    } else if constexpr (sizeof(Io) == sizeof(half_t)) {
      return pack_floats<TileMmaSm80Shape, vec<Io, M>>(v);
    } else {
      vec<Io, M> f;
      for (int i = 0; i < M; ++i) f[i] = static_cast<float>(v[i]);
      return f;
    }
  }

  // Copies that run while the warp computes (FusedPolicy::prefetch_input): 16 bytes global -> shared.
  MLPCORE_DEVICE static void copy_async16(void* shared_dst, const void* src) { nv::cp_async_16(shared_dst, src); }
  MLPCORE_DEVICE static void wait_async_copies() { nv::cp_async_wait_all(); }

  // The accumulator's element i sits where the next A fragment's element i must: only the packing of
  // float32 accumulators into halves, nothing for float16 ones.
  MLPCORE_DEVICE static NextBFrag to_b_layout(const AccFrag& d)
    requires(N == 16)
  {
    if constexpr (kF16Acc)
      return __builtin_bit_cast(NextBFrag, d);
    else
      return pack_floats<TileMmaSm80Shape, NextBFrag>(d);
  }
  // With ReLU folded into the packing instruction (cvt.rn.relu.f16x2: one per two units instead of a
  // compare and a select per unit before the cvt), or one max.NaN.f16x2 per two float16 units.
  MLPCORE_DEVICE static NextBFrag to_b_layout_relu(const AccFrag& d)
    requires(N == 16)
  {
    if constexpr (kF16Acc) {
      auto pairs = __builtin_bit_cast(vec<std::uint32_t, 4>, d);
      for (int i = 0; i < 4; ++i) pairs[i] = nv::relu_f16x2(pairs[i]);
      return __builtin_bit_cast(NextBFrag, pairs);
    } else {
      return pack_pairs_with<NextBFrag>([](float lo, float hi) { return nv::cvt_rn_relu_f16x2(lo, hi); }, [&](int i) { return d[i]; });
    }
  }

 private:
  // The feature order of a 16-wide K or N (see the top of this file).
  static constexpr int order16(int i) { return 4 * (i % 8 / 2) + i % 2 + 2 * (i / 8); }

  // Instruction H: weight registers from K / 8 * H and accumulator elements 4H .. 4H+3.
  template <int H>
  MLPCORE_DEVICE static void mma_half(const AFrag& w, const BFrag& x, const AccFrag& c, AccFrag& d) {
    constexpr int kRegs = K / 8;  // B registers per instruction; the A fragment has 2 * kRegs
    const auto wr = __builtin_bit_cast(vec<std::uint32_t, kA / 2>, w);
    const auto xr = __builtin_bit_cast(vec<std::uint32_t, kB / 2>, x);
    const vec<Acc, 4> ch{c[4 * H], c[4 * H + 1], c[4 * H + 2], c[4 * H + 3]};
    vec<Acc, 4> dh;
    if constexpr (K == 16) {
      const std::uint32_t a[4] = {xr[0], xr[1], xr[2], xr[3]};
      const std::uint32_t b[2] = {wr[kRegs * H], wr[kRegs * H + 1]};
      if constexpr (kF16Acc) dh = nv::mma_m16n8k16_f16(a, b, ch);
      else dh = nv::mma_m16n8k16(a, b, ch);
    } else {
      const std::uint32_t a[2] = {xr[0], xr[1]};
      if constexpr (kF16Acc) dh = nv::mma_m16n8k8_f16(a, wr[H], ch);
      else dh = nv::mma_m16n8k8(a, wr[H], ch);
    }
    for (int i = 0; i < 4; ++i) d[4 * H + i] = dh[i];
  }
};

using TileMmaSm80 = TileMmaSm80Shape<float>;
using TileMmaSm80F16Acc = TileMmaSm80Shape<half_t>;

static_assert(MatrixTile<TileMmaSm80> && FeedsNextLayer<TileMmaSm80> && FoldsRelu<TileMmaSm80> && RowVectorIo<TileMmaSm80> &&
              ColumnVectorIo<TileMmaSm80> && HasNarrowTiles<TileMmaSm80> && CopiesAsync<TileMmaSm80>);
static_assert(MatrixTile<TileMmaSm80F16Acc> && FeedsNextLayer<TileMmaSm80F16Acc> && FoldsRelu<TileMmaSm80F16Acc> &&
              RowVectorIo<TileMmaSm80F16Acc> && ColumnVectorIo<TileMmaSm80F16Acc> && HasNarrowTiles<TileMmaSm80F16Acc> &&
              CopiesAsync<TileMmaSm80F16Acc>);
// The narrow shapes: a last layer's (N = 8) output feeds nothing; only whole tiles have row-vector I/O, every
// shape column-vector I/O.
static_assert(FeedsNextLayer<TileMmaSm80::Shaped<8, 16>> && !FeedsNextLayer<TileMmaSm80::Shaped<16, 8>> &&
              !RowVectorIo<TileMmaSm80::Shaped<8, 16>> && ColumnVectorIo<TileMmaSm80::Shaped<8, 16>> &&
              ColumnVectorIo<TileMmaSm80::Shaped<16, 8>>);

}  // namespace mlpcore::ops
