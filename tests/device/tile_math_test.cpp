// Each tile family on the wave emulator against float64 on the CPU: one 16x16x16 tile, the D -> B
// transform, and a two-layer chain that keeps its activations in registers.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"
#include "tests/device/rounding.h"
#include "tests/kernels/tile_kernels.h"

namespace mlpcore::test_kernels {
namespace {

using test::round_toward_zero_f16;

template <class Tile>
constexpr bool kNvidia = requires { typename Tile::NextBFrag; };
template <class Tile>
constexpr bool kF16Acc = !std::is_same_v<ops::acc_elem_t<Tile>, float>;

float nearest_half(float x) { return ops::f16_bits_to_float(ops::float_to_f16_bits(x)); }

// How the tile turns float32 into float16: toward zero on AMD (cvt_pkrtz), to nearest on NVIDIA.
template <class Tile>
float to_half(float x) {
  if constexpr (kNvidia<Tile>) return nearest_half(x);
  else return round_toward_zero_f16(x);
}

// A float32 accumulator (C) as the tile holds it: float16 accumulators round it to nearest.
template <class Tile>
float as_acc(float x) {
  return kF16Acc<Tile> ? nearest_half(x) : x;
}

// What float16 accumulation adds to an error bound: its result's rounding (2^-11 relative, or half of
// float16's smallest subnormal).
template <class Tile>
double acc_rounding(double result) {
  return kF16Acc<Tile> ? std::fabs(result) * 0x1p-11 + 0x1p-25 : 0.0;
}

template <class Tile>
void run(const std::function<void()>& body) {
  emu::launch({1, 1, 1}, {Tile::kWave, 1, 1}, Tile::kWave, body);
}

// Values across float16's range: ordinary, tiny (near and below float16's normal range) and large (so
// that sums of 16 products stay within float16's range where the tile accumulates in float16).
template <class Tile>
std::vector<float> mixed_values(std::mt19937& rng, std::size_t n) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> v(n);
  const float large = kF16Acc<Tile> ? 20.0f : 200.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const float scale = i % 7 == 3 ? 1e-5f : i % 11 == 5 ? large : 1.0f;
    v[i] = scale * unit(rng);
  }
  return v;
}

template <class Tile>
class TileMath : public ::testing::Test {};
using Tiles = ::testing::Types<ops::TileWmmaGfx11, ops::TileWmmaGfx12, ops::TileMfmaGfx9, ops::TileMmaSm80, ops::TileMmaSm80F16Acc>;
TYPED_TEST_SUITE(TileMath, Tiles);

// D = A B + C for one tile of K features (the tile's first K in its feature order) and N units against
// float64; units beyond N are not written.
template <class T>
void expect_single_tile_matches_float64(int k_size, int n_size, unsigned seed) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 5; ++trial) {
    const auto a = mixed_values<T>(rng, 256), b = mixed_values<T>(rng, 256), c = mixed_values<T>(rng, 256);
    std::vector<float> d(256, NAN);
    run<T>([&] { tile_gemm<T>(a.data(), b.data(), c.data(), d.data()); });
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n) {
        if (m >= n_size) {
          ASSERT_TRUE(std::isnan(d[m * 16 + n])) << "unit " << m << " is beyond the tile's " << n_size;
          continue;
        }
        double want = as_acc<T>(c[m * 16 + n]), scale = std::fabs(want);
        for (int k = 0; k < k_size; ++k) {
          const int f = T::k_feature(k);
          const double p = static_cast<double>(to_half<T>(a[m * 16 + f])) * to_half<T>(b[f * 16 + n]);
          want += p;
          scale += std::fabs(p);
        }
        // Inputs rounded exactly as the tile's pack2 does; what remains is float32 accumulation of K + 1
        // terms (and the float16 result's rounding).
        ASSERT_NEAR(d[m * 16 + n], want, 4e-6 * scale + acc_rounding<T>(want) + 1e-30) << "trial " << trial << " element " << m << "," << n;
      }
  }
}

TYPED_TEST(TileMath, SingleTileMatchesFloat64) { expect_single_tile_matches_float64<TypeParam>(16, 16, 10); }

// The orders a tile keeps features (K) and output units (accumulator rows) in are permutations of 0..15.
TYPED_TEST(TileMath, FeatureAndUnitOrdersArePermutations) {
  std::set<int> features, units;
  for (int k = 0; k < 16; ++k) features.insert(TypeParam::k_feature(k)), units.insert(TypeParam::acc_unit(k));
  EXPECT_EQ(features.size(), 16u);
  EXPECT_EQ(units.size(), 16u);
  EXPECT_EQ(*features.rbegin(), 15);
  EXPECT_EQ(*units.rbegin(), 15);
}

// A block's sample order (block_sample) is a permutation of its 16 S samples: feature-major I/O reads and
// writes every sample once.
TYPED_TEST(TileMath, BlockSampleOrderIsAPermutation) {
  for (int S = 1; S <= ops::kMaxSampleTiles; ++S) {
    std::set<int> samples;
    for (int s = 0; s < S; ++s)
      for (int n = 0; n < 16; ++n) samples.insert(TypeParam::block_sample(S, s, n));
    EXPECT_EQ(samples.size(), 16u * S) << S << " sample tiles";
    EXPECT_EQ(*samples.begin(), 0);
    EXPECT_EQ(*samples.rbegin(), 16 * S - 1);
  }
}

// Lanes of one bias slot share one packed bias accumulator, so they must hold the same units.
TYPED_TEST(TileMath, BiasSlotsGroupLanesHoldingTheSameUnits) {
  using T = TypeParam;
  for (int lane = 0; lane < T::kWave; ++lane) {
    ASSERT_LT(T::bias_slot(lane), T::kBiasSlots);
    int first = 0;
    while (T::bias_slot(first) != T::bias_slot(lane)) ++first;
    for (int i = 0; i < T::kAcc; ++i) EXPECT_EQ(T::acc_row(lane, i), T::acc_row(first, i)) << "lane " << lane << " element " << i;
  }
}

TYPED_TEST(TileMath, ToBLayoutHandsEachLaneTheRowsItsBOperandNeeds) {
  using T = TypeParam;
  std::vector<float> b(T::kWave * T::kB, NAN);
  run<T>([&] { tile_to_b<T>(b.data()); });
  for (int lane = 0; lane < T::kWave; ++lane)
    for (int i = 0; i < T::kB; ++i)
      EXPECT_EQ(b[lane * T::kB + i], 16 * T::k_feature(T::b_row(lane, i)) + T::b_col(lane, i)) << "lane " << lane << " element " << i;
}

// The NVIDIA narrow-edge tiles (mma.m16n8k8, one m16n8k16): K features and N units of 8 or 16 against
// float64; elements of units beyond N are not written.
template <class Tile>
class ShapedTileMath : public ::testing::Test {};
using ShapedTiles = ::testing::Types<ops::TileMmaSm80::Shaped<8, 16>, ops::TileMmaSm80::Shaped<16, 8>, ops::TileMmaSm80::Shaped<8, 8>,
                                     ops::TileMmaSm80F16Acc::Shaped<8, 16>, ops::TileMmaSm80F16Acc::Shaped<16, 8>, ops::TileMmaSm80F16Acc::Shaped<8, 8>>;
TYPED_TEST_SUITE(ShapedTileMath, ShapedTiles);

template <class Tile>
std::set<int> held(int (*position)(int, int), int elements) {
  std::set<int> s;
  for (int lane = 0; lane < Tile::kWave; ++lane)
    for (int i = 0; i < elements; ++i) s.insert(position(lane, i));
  return s;
}

TYPED_TEST(ShapedTileMath, SingleTileMatchesFloat64) {
  using T = TypeParam;
  const int k_size = static_cast<int>(held<T>(T::a_col, T::kA).size()), n_size = static_cast<int>(held<T>(T::acc_row, T::kAcc).size());
  ASSERT_EQ(k_size, 2 * T::kB);
  ASSERT_EQ(n_size, 2 * T::kAcc);
  // A narrow edge holds the first K features and N units, whatever their order.
  std::set<int> features, units;
  for (int k = 0; k < k_size; ++k) features.insert(T::k_feature(k));
  for (int m = 0; m < n_size; ++m) units.insert(T::acc_unit(m));
  EXPECT_EQ(features.size(), static_cast<std::size_t>(k_size));
  EXPECT_EQ(*features.rbegin(), k_size - 1);
  EXPECT_EQ(units.size(), static_cast<std::size_t>(n_size));
  EXPECT_EQ(*units.rbegin(), n_size - 1);
  expect_single_tile_matches_float64<T>(k_size, n_size, 30);
}

// Column-vector I/O (a feature-major block of S sample tiles) against the tile's geometry: fragment element
// i of tile s holds feature k_feature(b_row) at sample block_sample(S, s, b_col), features past the count
// as zero; a stored accumulator element lands at its unit and sample, and nothing else of the NaN-poisoned
// array is written (neither units past the count nor the rows' padding).
template <class Tile>
class ColumnIo : public ::testing::Test {};
using ColumnIoTiles = ::testing::Types<ops::TileMmaSm80, ops::TileMmaSm80F16Acc, ops::TileMmaSm80::Shaped<8, 16>,
                                       ops::TileMmaSm80F16Acc::Shaped<16, 8>, ops::TileMmaSm80::Shaped<16, 8>>;
TYPED_TEST_SUITE(ColumnIo, ColumnIoTiles);

// Values exact in float16, one per (feature or unit, sample).
float column_code(int row, int sample) { return static_cast<float>(row * 128 + sample); }

template <class Tile, int S, class Io>
void expect_column_io() {
  constexpr int kStride = 16 * S + 8;  // samples per row: 8 of padding past the block
  const int k_size = 2 * Tile::kB, n_size = 2 * Tile::kAcc;
  std::vector<Io> in(16 * kStride);
  for (int f = 0; f < 16; ++f)
    for (int q = 0; q < kStride; ++q) in[f * kStride + q] = static_cast<Io>(column_code(f, q));
  for (const unsigned features : {16u, 5u}) {
    std::vector<float> got(Tile::kWave * S * Tile::kB, NAN);
    run<Tile>([&] {
      typename Tile::BFrag x[S];
      Tile::template load_columns<S>(x, in.data(), kStride, features);
      const int lane = static_cast<int>(ops::lane_id());
      for (int s = 0; s < S; ++s)
        for (int i = 0; i < Tile::kB; ++i) got[(lane * S + s) * Tile::kB + i] = static_cast<float>(x[s][i]);
    });
    for (int lane = 0; lane < Tile::kWave; ++lane)
      for (int s = 0; s < S; ++s)
        for (int i = 0; i < Tile::kB; ++i) {
          const int f = Tile::k_feature(Tile::b_row(lane, i)), q = Tile::block_sample(S, s, Tile::b_col(lane, i));
          ASSERT_LT(f, k_size);
          EXPECT_EQ(got[(lane * S + s) * Tile::kB + i], f < static_cast<int>(features) ? column_code(f, q) : 0.0f)
              << S << " sample tiles, " << features << " features, lane " << lane << " tile " << s << " element " << i;
        }
  }
  for (const unsigned units : {16u, 3u}) {
    std::vector<Io> out(16 * kStride, static_cast<Io>(NAN));
    run<Tile>([&] {
      typename Tile::AccFrag d[S];
      const int lane = static_cast<int>(ops::lane_id());
      for (int s = 0; s < S; ++s)
        for (int i = 0; i < Tile::kAcc; ++i)
          d[s][i] = column_code(Tile::acc_unit(Tile::acc_row(lane, i)), Tile::block_sample(S, s, Tile::acc_col(lane, i)));
      Tile::template store_columns<S>(d, out.data(), kStride, units);
    });
    for (int u = 0; u < 16; ++u)
      for (int q = 0; q < kStride; ++q) {
        const float v = static_cast<float>(out[u * kStride + q]);
        if (u < static_cast<int>(units) && u < n_size && q < 16 * S)
          EXPECT_EQ(v, column_code(u, q)) << S << " sample tiles, " << units << " units, unit " << u << " sample " << q;
        else
          EXPECT_TRUE(std::isnan(v)) << S << " sample tiles, " << units << " units: written at unit " << u << " sample " << q;
      }
  }
}

TYPED_TEST(ColumnIo, Float32OneSampleTile) { expect_column_io<TypeParam, 1, float>(); }
TYPED_TEST(ColumnIo, Float32TwoSampleTiles) { expect_column_io<TypeParam, 2, float>(); }
TYPED_TEST(ColumnIo, Float16OneSampleTile) { expect_column_io<TypeParam, 1, ops::half_t>(); }
TYPED_TEST(ColumnIo, Float16TwoSampleTiles) { expect_column_io<TypeParam, 2, ops::half_t>(); }
TYPED_TEST(ColumnIo, Float32FourSampleTiles) { expect_column_io<TypeParam, 4, float>(); }
TYPED_TEST(ColumnIo, Float16FourSampleTiles) { expect_column_io<TypeParam, 4, ops::half_t>(); }

TYPED_TEST(TileMath, TwoLayerChainMatchesFloat64) {
  std::mt19937 rng(20);
  for (int trial = 0; trial < 3; ++trial) {
    const auto x = mixed_values<TypeParam>(rng, 16 * 32), w1 = mixed_values<TypeParam>(rng, 32 * 32), b1 = mixed_values<TypeParam>(rng, 32);
    const auto w2 = mixed_values<TypeParam>(rng, 16 * 32), b2 = mixed_values<TypeParam>(rng, 16);
    std::vector<float> y(16 * 16, NAN);
    run<TypeParam>([&] { tile_chain<TypeParam>(x.data(), w1.data(), b1.data(), w2.data(), b2.data(), y.data()); });
    for (int n = 0; n < 16; ++n) {
      std::vector<double> h(32);
      for (int j = 0; j < 32; ++j) {
        double acc = as_acc<TypeParam>(b1[j]);
        for (int k = 0; k < 32; ++k) acc += static_cast<double>(to_half<TypeParam>(w1[j * 32 + k])) * to_half<TypeParam>(x[n * 32 + k]);
        h[j] = std::max(acc, 0.0);
      }
      for (int m = 0; m < 16; ++m) {
        double want = as_acc<TypeParam>(b2[m]), scale = std::fabs(want);
        for (int j = 0; j < 32; ++j) {
          const double p = static_cast<double>(to_half<TypeParam>(w2[m * 32 + j])) * to_half<TypeParam>(static_cast<float>(h[j]));
          want += p;
          scale += std::fabs(p);
        }
        // The hidden values may round to float16 one ulp (2^-10 relative) apart from the reference; float16
        // accumulation rounds each of the two K tiles' sums (2^-11 of at most `scale` each).
        const double f16_sums = kF16Acc<TypeParam> ? 2 * 0x1p-11 * scale : 0.0;
        ASSERT_NEAR(y[n * 16 + m], want, 2e-3 * scale + f16_sums + 1e-6) << "trial " << trial << " sample " << n << " output " << m;
      }
    }
  }
}

}  // namespace
}  // namespace mlpcore::test_kernels
