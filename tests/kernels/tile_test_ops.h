#pragma once
// Tile loads that only the tests' kernels use (the fused kernels take A from packed weights and C from
// packed biases), beside ops/tile_ops.h's load_b and store_acc.
#include "ops/tile_ops.h"

namespace mlpcore::ops {

// A operand of one 16x16 block: get(row, feature) -> float.
template <class Tile, class Get>
MLPCORE_DEVICE typename Tile::AFrag load_a(Get get) {
  const int lane = static_cast<int>(lane_id());
  return pack_pairs<Tile, typename Tile::AFrag>([&](int i) { return get(Tile::a_row(lane, i), Tile::k_feature(Tile::a_col(lane, i))); });
}

// Accumulator from get(row, column) -> float (a bias, or C).
template <class Tile, class Get>
MLPCORE_DEVICE typename Tile::AccFrag load_acc(Get get) {
  const int lane = static_cast<int>(lane_id());
  typename Tile::AccFrag c;
  for (int i = 0; i < Tile::kAcc; ++i) c[i] = get(Tile::acc_row(lane, i), Tile::acc_col(lane, i));
  return c;
}

}  // namespace mlpcore::ops
