// The device-side API in a user-style kernel on the wave emulator, for every tile family, against the
// float64 reference: whole and partially active waves, and the loud failure of a lane that returned.
#include <gtest/gtest.h>

#include "mlpcore/error.h"
#include "mlpcore/network.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"
#include "tests/kernels/sdf_device_kernels.h"
#include "tests/test_util.h"

namespace mlpcore::test_kernels {
namespace {

template <class Tile>
struct Backend;
template <>
struct Backend<ops::TileWmmaGfx11> {
  static constexpr const char* name = "emu-rdna3";
};
template <>
struct Backend<ops::TileWmmaGfx12> {
  static constexpr const char* name = "emu-rdna4";
};
template <>
struct Backend<ops::TileMfmaGfx9> {
  static constexpr const char* name = "emu-cdna";
};
template <>
struct Backend<ops::TileMmaSm80> {
  static constexpr const char* name = "emu-nvidia";
};

template <class Tile>
class DeviceApi : public ::testing::Test {};
using Tiles = ::testing::Types<ops::TileWmmaGfx11, ops::TileWmmaGfx12, ops::TileMfmaGfx9, ops::TileMmaSm80>;
TYPED_TEST_SUITE(DeviceApi, Tiles);

TYPED_TEST(DeviceApi, LanesGetTheirOwnSdfValues) {
  using Tile = TypeParam;
  std::mt19937 rng(3);
  for (const auto& widths : {std::vector<std::size_t>{3, 64, 64, 64, 64, 1}, std::vector<std::size_t>{3, 40, 100, 1}}) {
    std::vector<Activation> acts(widths.size() - 1, Activation::make(ActivationKind::softplus, 4.0f));
    acts.back() = Activation::make(ActivationKind::none);
    const Model m = test::random_model(rng, widths, acts);
    const Network net(m, Backend<Tile>::name);
    const DeviceNetworkView view = net.device_view();
    const unsigned n = 3 * Tile::kWave + 11;  // the last wave is partly beyond n
    const auto points = test::random_inputs(rng, 3 * n);
    constexpr unsigned kBlock = 2 * Tile::kWave;
    const unsigned blocks = (n + kBlock - 1) / kBlock;
    std::vector<float> sdf(n, NAN), scratch(2 * device::scratch_floats<Tile, 3, 1>(), NAN);  // one block's; blocks run in turn
    with_max_tiles(view, [&](auto max_tiles) {
      emu::launch({blocks, 1, 1}, {kBlock, 1, 1}, Tile::kWave, [&] {
        sdf_at_points<Tile, decltype(max_tiles)::value>(view, points.data(), sdf.data(), n, scratch.data());
      });
    });
    const auto ref = test::naive_forward(m, points, n);
    for (unsigned i = 0; i < n; ++i) {
      if (i % 7 == 3) {
        EXPECT_EQ(sdf[i], kNoSample) << "inactive lane " << i << " was written";
        continue;
      }
      EXPECT_NEAR(sdf[i], ref[i], 1e-2 * std::max(1.0, std::fabs(ref[i]))) << "lane " << i;
    }
  }
}

TYPED_TEST(DeviceApi, ALaneThatReturnedFailsLoudly) {
  using Tile = TypeParam;
  std::mt19937 rng(4);
  const Model m = test::random_model(rng, {3, 16, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  const Network net(m, Backend<Tile>::name);
  const DeviceNetworkView view = net.device_view();
  std::vector<float> scratch(device::scratch_floats<Tile, 3, 1>()), sdf(Tile::kWave);
  std::vector<float> points(3 * Tile::kWave, 0.5f);
  EXPECT_THROW(emu::launch({1, 1, 1}, {Tile::kWave, 1, 1}, Tile::kWave,
                           [&] {
                             if (ops::lane_id() == 5) return;  // against the contract: must pass active = false instead
                             sdf_at_points<Tile, 1>(view, points.data(), sdf.data(), Tile::kWave, scratch.data());
                           }),
               emu::EmulatorError);
}

// with_max_tiles instantiates exactly the variant the view asks for, and a narrower one, which would
// skip the wider layers' tiles, traps instead of answering.
TYPED_TEST(DeviceApi, AVariantNarrowerThanTheNetworkTraps) {
  using Tile = TypeParam;
  std::mt19937 rng(6);
  const Model m = test::random_model(rng, {3, 40, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  const Network net(m, Backend<Tile>::name);
  const DeviceNetworkView view = net.device_view();
  ASSERT_EQ(view.max_tiles, 4u) << "40 wide: 3 tiles of 16, the variant for up to 4";
  EXPECT_EQ(with_max_tiles(view, [](auto max_tiles) { return decltype(max_tiles)::value; }), 4);
  std::vector<float> scratch(device::scratch_floats<Tile, 3, 1>()), sdf(Tile::kWave);
  std::vector<float> points(3 * Tile::kWave, 0.5f);
  try {
    emu::launch({1, 1, 1}, {Tile::kWave, 1, 1}, Tile::kWave, [&] { sdf_at_points<Tile, 2>(view, points.data(), sdf.data(), Tile::kWave, scratch.data()); });
    FAIL() << "MaxTiles 2 evaluated a network 3 tiles wide";
  } catch (const emu::EmulatorError& e) {
    EXPECT_NE(std::string(e.what()).find("MaxTiles is smaller than view.max_tiles"), std::string::npos) << e.what();
  }
}

// A value beyond float16's range in one lane's sample (a hidden activation of 9e4) would make the wave's
// outputs wrong: every active lane of that wave gets NaN, and the other waves their values.
TYPED_TEST(DeviceApi, ValuesLeavingFloat16MakeTheWaveNaN) {
  using Tile = TypeParam;
  std::mt19937 rng(7);
  Model m = test::random_model(rng, {3, 16, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  m.layers[0].weight[0] = m.layers[0].weight[1] = m.layers[0].weight[2] = 1.0f;  // hidden unit 0 sums the point's coordinates
  m.layers[0].bias[0] = 0.0f;
  const Network net(m, Backend<Tile>::name);
  const DeviceNetworkView view = net.device_view();
  const unsigned n = 2 * Tile::kWave;  // one block of two waves
  auto points = test::random_inputs(rng, 3 * n);
  const unsigned hot = Tile::kWave + 5;  // in the second wave
  points[3 * hot] = points[3 * hot + 1] = points[3 * hot + 2] = 3e4f;
  std::vector<float> sdf(n, 0.0f), scratch(2 * device::scratch_floats<Tile, 3, 1>(), 0.0f);
  const auto run = [&] {
    with_max_tiles(view, [&](auto max_tiles) {
      emu::launch({1, 1, 1}, {n, 1, 1}, Tile::kWave, [&] { sdf_at_points<Tile, decltype(max_tiles)::value>(view, points.data(), sdf.data(), n, scratch.data()); });
    });
  };
  run();
  auto ref = test::naive_forward(m, points, n);
  for (unsigned i = 0; i < n; ++i) {
    if (i % 7 == 3) continue;  // inactive (sdf_at_points)
    if (i >= Tile::kWave)
      EXPECT_TRUE(std::isnan(sdf[i])) << "lane " << i << " of the wave with 9e4: " << sdf[i];
    else
      EXPECT_NEAR(sdf[i], ref[i], 1e-2 * std::max(1.0, std::fabs(ref[i]))) << "lane " << i;
  }
  // Again on the same scratch, in range: the wave's flag starts clear.
  points[3 * hot] = points[3 * hot + 1] = points[3 * hot + 2] = 0.5f;
  run();
  ref = test::naive_forward(m, points, n);
  for (unsigned i = 0; i < n; ++i)
    if (i % 7 != 3) EXPECT_NEAR(sdf[i], ref[i], 1e-2 * std::max(1.0, std::fabs(ref[i]))) << "second call, lane " << i;
}

TEST(DeviceApiHost, TheCpuBackendHasNoDeviceView) {
  std::mt19937 rng(5);
  const Model m = test::random_model(rng, {3, 16, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  EXPECT_THROW(Network(m, "cpu").device_view(), Error);
}

}  // namespace
}  // namespace mlpcore::test_kernels
