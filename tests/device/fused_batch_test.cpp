// The bound on a GPU call's batch and its launch's grid (engine/src/fused_packing.h, check_fused_batch,
// fused_grid).
#include <gtest/gtest.h>

#include <string>

#include "engine/src/fused_packing.h"
#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

// The GPU kernels count a call's samples in 32 bits, in blocks of up to 16 kMaxSampleTiles samples
// (ops/fused_mlp.h, for_each_sample_block: batch + block - 1 must not wrap): the largest batch accepted
// is the one where it does not, and one more is refused, naming the batch.
TEST(FusedBatch, IsBoundedSoThatSampleBlocksCountIn32Bits) {
  const auto check = [](std::size_t batch, Layout layout) { check_fused_batch({nullptr, nullptr, batch, Io::f32, layout}); };
  constexpr std::size_t kBlock = 16 * ops::kMaxSampleTiles, kLargest = 0xffffffffu - (kBlock - 1);
  EXPECT_EQ(kLargest + kBlock - 1, std::size_t{0xffffffffu});
  EXPECT_NO_THROW(check(kLargest, Layout::sample_major));
  try {
    check(kLargest + 1, Layout::sample_major);
    ADD_FAILURE() << "a batch past the bound was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("batch: " + std::to_string(kLargest + 1) + " samples"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check(std::size_t{1} << 28, Layout::feature_major));
  EXPECT_THROW(check((std::size_t{1} << 28) + 1, Layout::feature_major), Error);
}

// A launch gives each wave one block of its kernel's sample tiles, up to the grid's bound (the kernels
// stride over the rest): a grid counted in waves of one tile left half the blocks of two-tile kernels
// without work up to 2^18 samples.
TEST(FusedBatch, GridHasAWavePerBlockOfTheKernelsSampleTiles) {
  constexpr unsigned kBlockWaves = kFusedWavesPerBlock;
  EXPECT_EQ(fused_grid(1 << 16, 2), (1u << 16) / (32 * kBlockWaves));
  EXPECT_EQ(fused_grid((1 << 16) + 1, 2), (1u << 16) / (32 * kBlockWaves) + 1);
  EXPECT_EQ(fused_grid(1 << 16, 1), (1u << 16) / (16 * kBlockWaves));
  EXPECT_EQ(fused_grid(1 << 18, 4), (1u << 18) / (64 * kBlockWaves));
  EXPECT_EQ(fused_grid(1, 4), 1u);
  EXPECT_EQ(fused_grid(0, 2), 1u);
  EXPECT_EQ(fused_grid(1 << 22, 2), kMaxFusedBlocks);
  EXPECT_EQ(fused_grid(1 << 22, 2, 8), 8u);
}

}  // namespace
}  // namespace mlpcore::detail
