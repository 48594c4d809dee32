#pragma once
// Loads, stores and conversions written once against a tile's row/col functions and its pack2 (two
// floats to packed halves: cvt_pkrtz on AMD, cvt.rn.f16x2 on NVIDIA); they hold for every tile family.

#include "ops/fused_policy.h"
#include "ops/gpu_platform.h"
#include "ops/matrix_tile.h"
#include "ops/simd_types.h"
#include "ops/std_subset.h"

namespace mlpcore::ops {

// The tile for a layer whose instructions have K features and N units (8 or 16): Tile itself for 16 x 16,
// else its Shaped<K, N> (tile families without narrow instructions never get narrow edges).
template <class Tile, int K, int N>
struct shaped_tile {
  using type = typename Tile::template Shaped<K, N>;
};
template <class Tile>
struct shaped_tile<Tile, 16, 16> {
  using type = Tile;
};
template <class Tile, int K, int N>
using shaped_tile_t = typename shaped_tile<Tile, K, N>::type;

// Calls f.template operator()<LayerTile>() with the tile of a layer packed for K features and N units
// (LayerDesc::k, ::n: 8 or 16), where the caller allows a narrow K (NarrowK) or N (NarrowN); Tile
// otherwise. The host packs and the fixed-shape kernels run a layer through this one choice.
template <class Tile, bool NarrowK, bool NarrowN, class F>
MLPCORE_HOST_DEVICE void with_layer_tile(int k, int n, F&& f) {
  if constexpr (NarrowK) {
    if (k == 8) {
      if constexpr (NarrowN) {
        if (n == 8) return f.template operator()<shaped_tile_t<Tile, 8, 8>>();
      }
      return f.template operator()<shaped_tile_t<Tile, 8, 16>>();
    }
  }
  if constexpr (NarrowN) {
    if (n == 8) return f.template operator()<shaped_tile_t<Tile, 16, 8>>();
  }
  f.template operator()<Tile>();
}

// The accumulator's element type: float, or half_t for tiles that accumulate in float16.
template <class Tile>
using acc_elem_t = stdx::remove_cvref_t<decltype(typename Tile::AccFrag{}[0])>;

// The policy table's entry (ops/fused_policy.h) for Tile's family.
template <class Tile>
constexpr FusedPolicy tile_policy(FusedShape shape) {
  return fused_policy(Tile::kFamily, shape);
}

// A fragment of 16-bit values built from value(i) -> float, two at a time with pack(lo, hi).
template <class Half, class Pack, class Value>
MLPCORE_DEVICE Half pack_pairs_with(Pack pack, Value value) {
  Half h;
  for (int i = 0; i < static_cast<int>(sizeof(Half) / sizeof(half_t)); i += 2) {
    const vec<half_t, 2> p = pack(value(i), value(i + 1));
    h[i] = p[0];
    h[i + 1] = p[1];
  }
  return h;
}

// The same with the tile's pack2.
template <class Tile, class Half, class Value>
MLPCORE_DEVICE Half pack_pairs(Value value) {
  return pack_pairs_with<Half>([](float lo, float hi) { return Tile::pack2(lo, hi); }, value);
}

// float32 elements to float16, element order kept.
template <class Tile, class Half, class Float>
MLPCORE_DEVICE Half pack_floats(const Float& f) {
  static_assert(sizeof(Half) / sizeof(half_t) == sizeof(Float) / sizeof(float), "pack_floats keeps the element count");
  return pack_pairs<Tile, Half>([&](int i) { return f[i]; });
}

// B operand of one 16x16 K-block: get(feature, column) -> float, features in the order chains use.
template <class Tile, class Get>
MLPCORE_DEVICE typename Tile::BFrag load_b(Get get) {
  const int lane = static_cast<int>(lane_id());
  return pack_pairs<Tile, typename Tile::BFrag>([&](int i) { return get(Tile::k_feature(Tile::b_row(lane, i)), Tile::b_col(lane, i)); });
}

// put(row, column, value) for every accumulator element of this lane.
template <class Tile, class Put>
MLPCORE_DEVICE void store_acc(const typename Tile::AccFrag& d, Put put) {
  const int lane = static_cast<int>(lane_id());
  for (int i = 0; i < Tile::kAcc; ++i) put(Tile::acc_row(lane, i), Tile::acc_col(lane, i), d[i]);
}

}  // namespace mlpcore::ops
