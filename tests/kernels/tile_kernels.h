#pragma once
// Test kernels written against the tile interface: built for the wave emulator (tests/device) and as real
// code objects for each GPU architecture (tests/kernels/tile_kernels.hip).
#include "tests/kernels/tile_test_ops.h"

namespace mlpcore::test_kernels {

// D = A B + C for one 16x16x16 tile; all matrices row-major float32 16x16.
template <class Tile>
MLPCORE_DEVICE void tile_gemm(const float* a, const float* b, const float* c, float* d) {
  const auto fa = ops::load_a<Tile>([&](int m, int k) { return a[m * 16 + k]; });
  const auto fb = ops::load_b<Tile>([&](int k, int n) { return b[k * 16 + n]; });
  const auto fc = ops::load_acc<Tile>([&](int m, int n) { return c[m * 16 + n]; });
  ops::store_acc<Tile>(Tile::mma(fa, fb, fc), [&](int m, int n, float v) { d[m * 16 + n] = v; });
}

// Two layers on 16 samples, activations kept in registers: y = W2 relu(W1 x + b1) + b2.
// x: [16 samples][32], w1: [32][32], b1: [32], w2: [16][32], b2: [16], y: [16 samples][16].
template <class Tile>
MLPCORE_DEVICE void tile_chain(const float* x, const float* w1, const float* b1, const float* w2, const float* b2, float* y) {
  typename Tile::BFrag input[2], hidden[2];
  for (int kt = 0; kt < 2; ++kt) input[kt] = ops::load_b<Tile>([&](int f, int n) { return x[n * 32 + kt * 16 + f]; });
  for (int mt = 0; mt < 2; ++mt) {
    auto acc = ops::load_acc<Tile>([&](int m, int) { return b1[mt * 16 + Tile::acc_unit(m)]; });
    for (int kt = 0; kt < 2; ++kt)
      acc = Tile::mma(ops::load_a<Tile>([&](int m, int f) { return w1[(mt * 16 + Tile::acc_unit(m)) * 32 + kt * 16 + f]; }), input[kt], acc);
    for (int i = 0; i < Tile::kAcc; ++i) acc[i] = acc[i] < 0.0f ? 0.0f : acc[i];
    hidden[mt] = Tile::to_b_layout(acc);
  }
  auto out = ops::load_acc<Tile>([&](int m, int) { return b2[Tile::acc_unit(m)]; });
  for (int kt = 0; kt < 2; ++kt)
    out = Tile::mma(ops::load_a<Tile>([&](int m, int f) { return w2[Tile::acc_unit(m) * 32 + kt * 16 + f]; }), hidden[kt], out);
  ops::store_acc<Tile>(out, [&](int m, int n, float v) { y[n * 16 + Tile::acc_unit(m)] = v; });
}

// Writes, for every lane and B element, what to_b_layout produced from an accumulator holding
// acc(row, col) = 16 * unit + col (unit = Tile::acc_unit(row)): checks the D -> B contract, the
// unit an accumulator row holds is the feature its B position holds, without a matrix instruction.
template <class Tile>
MLPCORE_DEVICE void tile_to_b(float* b_out /* [wave][kB] */) {
  const auto acc = ops::load_acc<Tile>([](int m, int n) { return static_cast<float>(16 * Tile::acc_unit(m) + n); });
  const auto b = Tile::to_b_layout(acc);
  for (int i = 0; i < Tile::kB; ++i) b_out[ops::lane_id() * Tile::kB + i] = static_cast<float>(b[i]);
}

}  // namespace mlpcore::test_kernels
