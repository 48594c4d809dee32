#pragma once
// The tile contract. A tile is one family's 16x16x16 matrix instruction and its register geometry:
// which matrix element each lane's register element i holds, how two floats become packed halves, and
// the instruction itself. Loads, stores, bias, activations and the host packer are written against these
// functions only (ops/tile_ops.h, ops/fused_mlp.h, engine/src/fused_packing.cpp); tuning is not a tile's
// business (ops/fused_policy.h). Each tile header static_asserts the contract and the optional
// capabilities below that it implements; the kernels test the capabilities with `if constexpr`.
#include <cstdint>

#include "ops/fused_policy.h"
#include "ops/simd_types.h"
#include "ops/std_subset.h"

namespace mlpcore::ops {

// std::same_as, which NVRTC's headers lack.
template <class T, class U>
concept SameAs = stdx::is_same_v<T, U> && stdx::is_same_v<U, T>;

// Required of every tile:
// - kFamily (its row in the policy table) and kWave (lanes per wave, 32 or 64);
// - AFrag (weights, M x K), BFrag (activations, K x N), AccFrag (accumulators, M x N) with kA, kB and
//   kAcc elements per lane;
// - a_row/a_col, b_row/b_col, acc_row/acc_col: the row and column of element i of a lane's fragment;
// - k_feature(k) and acc_unit(m): the feature a B operand holds at hardware K, and the output unit in
//   accumulator row m (the identity where the hardware keeps the natural order);
// - block_sample(S, s, n): the sample (from a block's first) that hardware column n of sample tile s holds
//   in a block of S tiles: 16 s + n where nothing is gained by another order (feature-major I/O reads and
//   writes in this order; every layer keeps a sample in its column);
// - kBiasSlots and bias_slot(lane): lanes whose accumulators hold the same units share a packed bias;
// - pack2(lo, hi): two floats as packed halves (cvt_pkrtz on AMD, cvt.rn.f16x2 on NVIDIA);
// - max2(a, b): the larger of each pair of halves in two registers of packed halves, a NaN losing to a
//   number (v_pk_max_f16, max.f16x2), for the float16 range check (ops/float16_range.h);
// - abs2(u): the magnitudes of two packed halves, for the same check;
// - mma(a, b, c): a * b + c.
template <class T>
concept MatrixTile = requires(int lane, int i, float f, std::uint32_t u, const typename T::AFrag& a, const typename T::BFrag& b,
                              const typename T::AccFrag& c) {
  requires SameAs<stdx::remove_cvref_t<decltype(T::kFamily)>, TileFamily>;
  requires T::kWave == 32 || T::kWave == 64;
  requires T::kA > 0 && T::kB > 0 && T::kAcc > 0 && T::kBiasSlots > 0;
  { T::a_row(lane, i) } -> SameAs<int>;
  { T::a_col(lane, i) } -> SameAs<int>;
  { T::b_row(lane, i) } -> SameAs<int>;
  { T::b_col(lane, i) } -> SameAs<int>;
  { T::acc_row(lane, i) } -> SameAs<int>;
  { T::acc_col(lane, i) } -> SameAs<int>;
  { T::k_feature(i) } -> SameAs<int>;
  { T::acc_unit(i) } -> SameAs<int>;
  { T::block_sample(i, i, i) } -> SameAs<int>;
  { T::bias_slot(lane) } -> SameAs<int>;
  { T::pack2(f, f) } -> SameAs<vec<half_t, 2>>;
  { T::max2(u, u) } -> SameAs<std::uint32_t>;
  { T::abs2(u) } -> SameAs<std::uint32_t>;
  { T::mma(a, b, c) } -> SameAs<typename T::AccFrag>;
};

// Optional: a layer's output becomes the next layer's B operand in registers (the C/D -> B shuffle on
// gfx11, the identity plus packing elsewhere). Tiles of a last layer only (N = 8) lack it.
template <class Tile>
concept FeedsNextLayer = MatrixTile<Tile> && requires(const typename Tile::AccFrag& acc) { Tile::to_b_layout(acc); };

// Optional: ReLU folded into that packing (one instruction per two units).
template <class Tile>
concept FoldsRelu = FeedsNextLayer<Tile> && requires(const typename Tile::AccFrag& acc) { Tile::to_b_layout_relu(acc); };

// Optional: row-vector I/O, 4 consecutive values per lane and sample row, float32 and float16.
template <class Tile>
concept RowVectorIo = MatrixTile<Tile> && requires(const float* in, float* out, const half_t* in16, half_t* out16,
                                                   const typename Tile::AccFrag& acc) {
  Tile::load_rows(in, 0u, 0u);
  Tile::load_rows(in16, 0u, 0u);
  Tile::store_rows(acc, out, 0u, 0u);
  Tile::store_rows(acc, out16, 0u, 0u);
};

// Optional: column-vector I/O, a block of S sample tiles of a feature-major array ([dim, batch]) read or
// written with one access per lane and feature (Tile::block_sample makes a lane's samples consecutive).
template <class Tile>
concept ColumnVectorIo = MatrixTile<Tile> && requires(typename Tile::BFrag (&x)[1], const typename Tile::AccFrag (&acc)[1], const float* in,
                                                      float* out, const half_t* in16, half_t* out16) {
  Tile::template load_columns<1>(x, in, 0u, 0u);
  Tile::template load_columns<1>(x, in16, 0u, 0u);
  Tile::template store_columns<1>(acc, out, 0u, 0u);
  Tile::template store_columns<1>(acc, out16, 0u, 0u);
};

// Optional: narrow instructions for a first layer of at most 8 features or a last layer of at most 8
// units (Tile::Shaped<K, N>, K and N of 8 or 16), used with FusedPolicy::narrow_input, ::narrow_output.
template <class Tile>
concept HasNarrowTiles = MatrixTile<Tile> && requires { typename Tile::template Shaped<8, 8>; } &&
                         MatrixTile<typename Tile::template Shaped<8, 16>> &&
                         MatrixTile<typename Tile::template Shaped<16, 8>> && MatrixTile<typename Tile::template Shaped<8, 8>>;

// Optional: 16-byte global-to-shared copies that run behind the matrix instructions, used with
// FusedPolicy::prefetch_input.
template <class Tile>
concept CopiesAsync = MatrixTile<Tile> && requires(void* dst, const void* src) {
  Tile::copy_async16(dst, src);
  Tile::wait_async_copies();
};

}  // namespace mlpcore::ops
