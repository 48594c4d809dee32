// The wave emulator's execution model: thread coordinates, barriers, cross-lane operations, and the
// errors that make a wrong kernel fail loudly instead of passing by luck.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "ops/emu/amd_instructions.h"
#include "ops/emu/wave_emulator.h"
#include "ops/tile_wmma_gfx11.h"
#include "tests/kernels/tile_test_ops.h"

namespace mlpcore::emu {
namespace {

template <class F>
void expect_emulator_error(const std::string& needle, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no EmulatorError; expected '" << needle << "'";
  } catch (const EmulatorError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(WaveEmulator, EveryThreadRunsWithItsCoordinates) {
  const Dim3 grid{3, 2, 1}, block{16, 4, 2};
  std::vector<int> seen(grid.count() * block.count(), 0);
  launch(grid, block, 64, [&] {
    const Dim3 t = thread_idx(), b = block_idx();
    const unsigned linear = t.x + block.x * (t.y + block.y * t.z);
    EXPECT_EQ(lane_id(), linear % 64);
    EXPECT_EQ(block_dim().x, 16u);
    EXPECT_EQ(grid_dim().y, 2u);
    ++seen[(b.x + grid.x * b.y) * block.count() + linear];
  });
  for (int s : seen) EXPECT_EQ(s, 1);
}

TEST(WaveEmulator, BarrierOrdersMemoryAcrossWaves) {
  constexpr unsigned kThreads = 128;
  std::vector<unsigned> shared(kThreads), result(kThreads);
  launch({1, 1, 1}, {kThreads, 1, 1}, 32, [&] {
    const unsigned t = thread_idx().x;
    shared[t] = t * t;
    barrier();
    result[t] = shared[kThreads - 1 - t];
  });
  for (unsigned t = 0; t < kThreads; ++t) EXPECT_EQ(result[t], (kThreads - 1 - t) * (kThreads - 1 - t));
}

TEST(WaveEmulator, Permlanex16ReadsTheOtherRowThroughTheSelects) {
  for (unsigned wave : {32u, 64u}) {
    std::vector<std::uint32_t> out(wave);
    // Row-reversing selects: lane l gets the lane 15 - l%16 of the other 16-lane row of its 32-lane group.
    launch({1, 1, 1}, {wave, 1, 1}, wave, [&] { out[lane_id()] = amd::permlanex16(7, 1000 + lane_id(), 0x89abcdefu, 0x01234567u); });
    for (unsigned l = 0; l < wave; ++l) {
      const unsigned other_row = (l % 32) < 16 ? 16 : 0;
      EXPECT_EQ(out[l], 1000 + l / 32 * 32 + other_row + (15 - l % 16)) << "wave " << wave << " lane " << l;
    }
  }
}

TEST(WaveEmulator, ExceptionsInAKernelReachTheCaller) {
  EXPECT_THROW(launch({1, 1, 1}, {32, 1, 1}, 32, [] {
                 if (lane_id() == 5) throw std::runtime_error("lane 5");
               }),
               std::runtime_error);
}

TEST(WaveEmulator, ALaneThatReturnsBeforeACrossLaneOperationFails) {
  expect_emulator_error("returned while its wave waits at v_permlanex16_b32", [] {
    launch({1, 1, 1}, {32, 1, 1}, 32, [] {
      if (lane_id() == 3) return;
      amd::permlanex16(0, 1, 0, 0);
    });
  });
}

// ops::warp_uniform's contract, which the GPUs do not check: every lane of the wave holds the value, and
// every lane reads it (redux.sync needs the whole warp).
TEST(WaveEmulator, AWaveUniformValueIsEveryLanesOrATrap) {
  std::vector<unsigned> out(64, 0);
  launch({1, 1, 1}, {64, 1, 1}, 32, [&] { out[thread_idx().x] = wave_uniform(7 + thread_idx().x / 32); });
  for (unsigned t = 0; t < 64; ++t) EXPECT_EQ(out[t], 7 + t / 32) << "thread " << t;
  expect_emulator_error("differs between the wave's lanes", [] { launch({1, 1, 1}, {32, 1, 1}, 32, [] { wave_uniform(lane_id() == 9 ? 1 : 0); }); });
  expect_emulator_error("returned while its wave waits at wave-uniform value", [] {
    launch({1, 1, 1}, {32, 1, 1}, 32, [] {
      if (lane_id() == 3) return;
      wave_uniform(0);
    });
  });
}

TEST(WaveEmulator, ACrossLaneOperationInAPartialWaveFails) {
  expect_emulator_error("partial wave", [] { launch({1, 1, 1}, {48, 1, 1}, 32, [] { amd::permlanex16(0, 1, 0, 0); }); });
}

TEST(WaveEmulator, DivergentWavesAreReportedAsDeadlock) {
  expect_emulator_error("deadlock", [] {
    launch({1, 1, 1}, {32, 1, 1}, 32, [] {
      if (lane_id() < 16) barrier();
      else amd::permlanex16(0, 1, 0, 0);
    });
  });
}

TEST(WaveEmulator, MatrixInstructionNeedsItsWaveSize) {
  expect_emulator_error("needs wave64", [] {
    launch({1, 1, 1}, {32, 1, 1}, 32, [] {
      std::uint32_t a[8] = {}, b[8] = {}, c[8] = {}, d[8];
      amd::matrix_op(amd::MatrixInstruction::mfma_f32_16x16x16_f16, a, b, c, d);
    });
  });
}

// RDNA3 reads A and B from both half-waves; a kernel that hands D to B without the shuffle leaves the
// halves different and must fail, not pass by luck.
TEST(WaveEmulator, Rdna3RefusesOperandsThatAreNotReplicated) {
  using Tile = ops::TileWmmaGfx11;
  expect_emulator_error("B operand is not replicated across half-waves", [] {
    launch({1, 1, 1}, {32, 1, 1}, 32, [] {
      const auto acc = ops::load_acc<Tile>([](int m, int n) { return static_cast<float>(m + n); });
      const auto a = ops::load_a<Tile>([](int m, int k) { return m == k ? 1.0f : 0.0f; });
      Tile::BFrag b = {};  // D used as B without Tile::to_b_layout: each half-wave has only its own rows
      for (int i = 0; i < Tile::kAcc; ++i) b[2 * i + static_cast<int>(emu::lane_id() / 16)] = static_cast<ops::half_t>(acc[i]);
      Tile::mma(a, b, acc);
    });
  });
  expect_emulator_error("A operand is not replicated", [] {
    launch({1, 1, 1}, {32, 1, 1}, 32, [] {
      Tile::AFrag a = {};
      Tile::BFrag b = {};
      if (lane_id() == 20) a[3] = static_cast<ops::half_t>(1.0f);
      Tile::mma(a, b, Tile::AccFrag{});
    });
  });
}

}  // namespace
}  // namespace mlpcore::emu
