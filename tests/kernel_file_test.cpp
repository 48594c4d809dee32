// Kernel files (engine/src/kernel_file.h) and the kernel cache: round trips, hostile and corrupt files
// refused by name, a cache that survives corrupt entries and concurrent writers, and plans decided once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/src/fused_plan.h"
#include "engine/src/kernel_cache.h"
#include "engine/src/kernel_file.h"
#include "engine/src/specialize.h"
#include "engine/src/specialized_source.h"
#include "mlpcore/error.h"
#include "tests/test_util.h"

namespace mlpcore::detail {
namespace {

KernelFile sample_file() {
  KernelFile k{"sm_90", "00112233445566778899aabbccddeeff", "NVRTC 13.0", "specialized for 3-64x4-1", {{}, {}}};
  for (int i = 0; i < 1000; ++i) k.modules[0].push_back(static_cast<std::byte>(i * 7));
  for (int i = 0; i < 300; ++i) k.modules[1].push_back(static_cast<std::byte>(i * 5));
  return k;
}

void expect_refused(std::vector<std::byte> bytes, const std::string& field) {
  try {
    (void)decode_kernel_file(bytes, "k.mlpck");
    FAIL() << "accepted a kernel file with a bad " << field;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kernel_file);
    const std::string what = e.what();
    EXPECT_NE(what.find("k.mlpck"), std::string::npos) << what;
    EXPECT_NE(what.find(field), std::string::npos) << what;
  }
}

TEST(KernelFile, RoundTrips) {
  const KernelFile k = sample_file();
  const KernelFile back = decode_kernel_file(encode_kernel_file(k), "k.mlpck");
  EXPECT_EQ(back.target, k.target);
  EXPECT_EQ(back.source_key, k.source_key);
  EXPECT_EQ(back.compiler, k.compiler);
  EXPECT_EQ(back.network, k.network);
  EXPECT_EQ(back.modules, k.modules);
}

TEST(KernelFile, MalformedFilesAreRefusedNamingTheField) {
  const std::vector<std::byte> good = encode_kernel_file(sample_file());
  auto bad = good;
  bad[0] = std::byte{'X'};
  expect_refused(bad, "magic");
  bad = good;
  bad[8] = std::byte{9};
  expect_refused(bad, "version");
  bad = good;
  bad[12] = std::byte{0xff}, bad[13] = std::byte{0xff};  // the target's length: 65535 bytes
  expect_refused(bad, "target");
  expect_refused({good.begin(), good.begin() + 30}, "source_key");
  expect_refused({good.begin(), good.end() - 1}, "module 2 of 2: code_size");
  bad = good;
  bad.back() ^= std::byte{1};
  expect_refused(bad, "module 2 of 2: code_checksum");
  bad = good;
  bad.push_back(std::byte{0});
  expect_refused(bad, "modules");
  // The module count: after the magic, the version and the four texts (each a length and its bytes).
  const KernelFile k = sample_file();
  const std::size_t count_at = 8 + 4 + 4 * 4 + k.target.size() + k.source_key.size() + k.compiler.size() + k.network.size();
  for (const std::uint32_t modules : {0u, kMaxKernelModules + 1, 0xffffffffu}) {
    bad = good;
    std::memcpy(bad.data() + count_at, &modules, sizeof modules);
    expect_refused(bad, "modules");
  }
  bad = good;
  const std::uint64_t huge = ~std::uint64_t{0};  // the first module's size: more than the file
  std::memcpy(bad.data() + count_at + 4, &huge, sizeof huge);
  expect_refused(bad, "module 1 of 2: code_size");
  expect_refused({}, "magic");
}

TEST(KernelFile, ForAnotherNetworkOrGpuIsRefused) {
  const KernelFile k = sample_file();
  EXPECT_NO_THROW(check_kernel_file_matches(k, "k.mlpck", k.source_key, "sm_90", "x"));
  try {
    check_kernel_file_matches(k, "k.mlpck", k.source_key, "sm_86", "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compiled for sm_90; this GPU is sm_86"), std::string::npos) << e.what();
  }
  try {
    check_kernel_file_matches(k, "k.mlpck", "another", "sm_90", "specialized for 64-64x5-4");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("this network is specialized for 64-64x5-4"), std::string::npos) << e.what();
  }
}

TEST(KernelCache, StoresLoadsAndRebuildsCorruptEntries) {
  const test::TempDir dir;
  const KernelCache cache((dir / "cache").string());
  const KernelFile k = sample_file();
  EXPECT_FALSE(cache.load(k.source_key, k.target, k.compiler));
  EXPECT_EQ(cache.store(k), "");
  ASSERT_TRUE(cache.load(k.source_key, k.target, k.compiler));
  EXPECT_EQ(cache.load(k.source_key, k.target, k.compiler)->modules, k.modules);
  // Another compiler or target is another entry.
  EXPECT_FALSE(cache.load(k.source_key, k.target, "NVRTC 12.4"));
  EXPECT_FALSE(cache.load(k.source_key, "sm_80", k.compiler));
  // A damaged entry reads as missing, and storing again repairs it.
  std::filesystem::path entry;
  for (const auto& e : std::filesystem::directory_iterator(cache.directory())) entry = e.path();
  {
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x5a');
  }
  EXPECT_FALSE(cache.load(k.source_key, k.target, k.compiler));
  EXPECT_EQ(cache.store(k), "");
  EXPECT_TRUE(cache.load(k.source_key, k.target, k.compiler));
}

TEST(KernelCache, ConcurrentWritersLeaveAnIntactEntry) {
  const test::TempDir dir;
  const KernelCache cache((dir / "cache").string());
  const KernelFile k = sample_file();
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i)
    writers.emplace_back([&] {
      for (int j = 0; j < 20; ++j) EXPECT_EQ(cache.store(k), "");
    });
  for (int j = 0; j < 100; ++j) {
    const auto loaded = cache.load(k.source_key, k.target, k.compiler);
    if (loaded) EXPECT_EQ(loaded->modules, k.modules);  // a reader sees a whole entry or none
  }
  for (auto& t : writers) t.join();
  EXPECT_TRUE(cache.load(k.source_key, k.target, k.compiler));
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(cache.directory())) ++files;
  EXPECT_EQ(files, 1u) << "temporary files left behind";
}

TEST(KernelCache, OffDisablesIt) {
  const KernelCache cache("off");
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(cache.store(sample_file()), "");
  EXPECT_FALSE(cache.load("a", "sm_90", "c"));
}

// A random model whose hidden layers all have activation `hidden`, its last layer `last`.
Model hidden_model(const std::vector<std::size_t>& widths, ActivationKind hidden, ActivationKind last = ActivationKind::none) {
  std::mt19937 rng(3);
  std::vector<Activation> acts(widths.size() - 1, Activation::make(hidden));
  acts.back() = Activation::make(last);
  return test::random_model(rng, widths, acts);
}

Model relu_model(const std::vector<std::size_t>& widths, ActivationKind last = ActivationKind::none) {
  return hidden_model(widths, ActivationKind::relu, last);
}

TEST(FusedPlan, IsDecidedFromTheModelAndWhatTheBackendCanDo) {
  const Model fixed = relu_model({32, 64, 64, 64, 64, 16}), other = relu_model({64, 64, 64, 64, 64, 64, 4});
  const FusedPlan compiled = plan_fused(fixed, "t", {ops::TileFamily::nvidia, false, true});
  EXPECT_EQ(compiled.kind, KernelKind::compiled_in);
  EXPECT_EQ(compiled.kernel_name(), "mlpcore_mlp_fixed_0_f16acc");
  EXPECT_TRUE(compiled.f16_accumulation);
  const FusedPlan runtime = plan_fused(other, "t", {ops::TileFamily::nvidia, false, true});
  EXPECT_EQ(runtime.kind, KernelKind::runtime_shaped);
  EXPECT_TRUE(runtime.f16_accumulation) << "64 wide: a run-time-shaped width with float16-accumulating kernels";
  EXPECT_EQ(runtime.kernel_name(), "mlpcore_mlp_w4_f16acc");
  EXPECT_EQ(runtime.kernel_name(Io::f16, KernelSlot::feature_major), "mlpcore_mlp_w4_f16acc_f16_fm");
  EXPECT_EQ(runtime.describe(), "run-time-shaped, 64 wide (float16 accumulation), for 64-64x5-4, twins loading weights a tile ahead for small batches");
  EXPECT_FALSE(plan_fused(other, "t", {ops::TileFamily::nvidia}).f16_accumulation) << "float32 unless asked for";
  EXPECT_EQ(runtime.policy, ops::fused_policy(ops::TileFamily::nvidia, {4, 4, 4, ops::ShapeKnown::widest}));
  EXPECT_FALSE(runtime.policy.narrow_input || runtime.policy.narrow_output) << "its edges may have any width";
  const FusedPlan wide = plan_fused(relu_model({3, 32, 112, 32, 1}), "t", {ops::TileFamily::rdna3});
  EXPECT_EQ(wide.kernel_name(), "mlpcore_mlp_w7") << "a kernel per width: the widest layer's, 7 tiles";
  EXPECT_EQ(wide.width_tiles, 7);
  EXPECT_EQ(wide.max_tiles(), 8) << "the device-side API's variant";
  EXPECT_EQ(wide.describe(), "run-time-shaped, 112 wide, for 3-32-112-32-1");
  const FusedPlan special = plan_fused(other, "t", {ops::TileFamily::nvidia, true, true});
  EXPECT_EQ(special.kind, KernelKind::specialized);
  EXPECT_TRUE(special.f16_accumulation);
  EXPECT_EQ(special.kernel_name(), "mlpcore_mlp_specialized");
  EXPECT_EQ(special.shape, "64-64x5-4");
  EXPECT_EQ(special.widths, (std::vector<int>{4, 4, 4, 4, 4, 4, 1}));
  EXPECT_EQ(special.policy, ops::fused_policy(ops::TileFamily::nvidia, {4, 4, 1, ops::ShapeKnown::exact}));
  EXPECT_EQ(plan_fused(relu_model({3, 32, 64, 1}), "t", {ops::TileFamily::rdna3, true}).shape, "3-32-64-1");
}

// The run-time-shaped plans accumulate in float16 where it was asked for and their kernel has a twin that
// does (ops::runtime_f16_accumulation): NVIDIA's 32-112 wide with ReLU hidden layers; not 16 or 128 wide,
// not with other hidden activations (the _act kernels), not on AMD (no such tile). Its large-batch twins
// accumulate as it does.
TEST(FusedPlan, RunTimeShapedPlansAccumulateInFloat16WhereTheirWidthHasSuchKernels) {
  const ops::TileFamily nvidia = ops::TileFamily::nvidia;
  for (const std::size_t width : {16, 32, 40, 64, 80, 100, 112, 128}) {
    // (an input of two tiles but at 16 wide: no shape compiled in, and the widest layer is the hidden one)
    const FusedPlan plan = plan_fused(relu_model({width == 16 ? 8u : 20u, width, width, 3}), "t", {nvidia, false, true});
    ASSERT_EQ(plan.kind, KernelKind::runtime_shaped);
    const bool expected = width > 16 && width < 128;
    EXPECT_EQ(plan.f16_accumulation, expected) << width << " wide";
    EXPECT_EQ(plan.kernel_name(Io::f32, KernelSlot::sample_major).ends_with("_f16acc"), expected) << width << " wide";
    EXPECT_EQ(plan.large_batch_kernels, (width >= 80 && width <= 112) || width == 16) << width << " wide";
    if (plan.large_batch_kernels)
      EXPECT_EQ(plan.kernel_name(Io::f16, KernelSlot::feature_major_large_batch),
                "mlpcore_mlp_w" + std::to_string(plan.width_tiles) + (expected ? "_f16acc" : "") + "_f16_fm_large");
  }
  const FusedPlan silu = plan_fused(hidden_model({20, 64, 64, 3}, ActivationKind::silu), "t", {nvidia, false, true});
  EXPECT_TRUE(silu.activations_per_tile);
  EXPECT_FALSE(silu.f16_accumulation) << "the _act kernels accumulate in float32";
  EXPECT_EQ(silu.kernel_name(), "mlpcore_mlp_w4_act");
  for (const auto family : {ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna}) {
    EXPECT_FALSE(plan_fused(relu_model({20, 64, 64, 3}), "t", {family, false, true}).f16_accumulation);
    for (int w = 1; w <= 8; ++w) EXPECT_FALSE(ops::runtime_f16_accumulation(family, w, false));
  }
}

// Reading a descriptor as a warp-uniform value (ops::warp_uniform) is for kernels that read their layers
// from descriptors, the run-time-shaped ones: a fixed shape's activations are constants, which the
// instruction would keep from folding. NVIDIA's kernels up to 4 tiles wide take it.
TEST(FusedPolicy, OnlyRunTimeShapedKernelsReadDescriptorsAsUniformValues) {
  for (const auto family : {ops::TileFamily::nvidia, ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna})
    for (int w = 1; w <= 8; ++w)
      for (const bool sample_major : {true, false}) {
        for (const auto known : {ops::ShapeKnown::bounds, ops::ShapeKnown::tiles, ops::ShapeKnown::exact})
          for (const int in : {1, w})
            for (const int out : {1, w})
              EXPECT_FALSE(ops::fused_policy(family, {in, w, out, known, sample_major}).uniform_descriptors) << w << " tiles wide";
        EXPECT_EQ(ops::fused_policy(family, {w, w, w, ops::ShapeKnown::widest, sample_major}).uniform_descriptors,
                  family == ops::TileFamily::nvidia && w <= 4)
            << w << " tiles wide";
      }
}

// Light assembly (ptxas -O1) is for NVIDIA's kernels where it ran faster: specialized and compiled-in ones
// 128 wide, and 64 wide with more than one input tile, in either layout; run-time-shaped ones 64 and 112
// wide (128 wide only the one-tile-input twin, below, for float32 I/O). Not for other widths, the device-side
// API's networks or AMD's kernels; and for both I/O types alike.
TEST(FusedPolicy, LightAssemblyIsForNvidiaKernelsOfTheWidthsAndLayoutsWhereItRanFaster) {
  for (const auto family : {ops::TileFamily::nvidia, ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna})
    for (int w = 1; w <= 8; ++w)
      for (const int in : {1, 2, w})
        for (const int out : {1, w})
          for (const bool sample_major : {true, false})
            for (const auto known : {ops::ShapeKnown::bounds, ops::ShapeKnown::widest, ops::ShapeKnown::tiles, ops::ShapeKnown::exact}) {
              const bool fixed = known == ops::ShapeKnown::tiles || known == ops::ShapeKnown::exact;
              const bool light = family == ops::TileFamily::nvidia && ((fixed && (w == 8 || (w == 4 && in > 1))) ||
                                                                       (known == ops::ShapeKnown::widest && (w == 4 || w == 7)));
              const ops::FusedPolicy policy = ops::fused_policy(family, {in, w, out, known, sample_major});
              EXPECT_EQ(policy.light_assembly, light) << w << " tiles wide, " << in << " input tiles, " << (sample_major ? "sample-major" : "feature-major");
              EXPECT_FALSE(policy.full_assembly_float16_io) << w << " tiles wide: both I/O types assembled alike";
            }
}

// The run-time-shaped kernels that test each layer's activation once per tile (the _act kernels, for hidden
// activations other than ReLU) keep -O3 where the ReLU ones of their width and layout are assembled light,
// and one sample tile per wave above 64 wide (where the 128-wide ReLU ones run two), and so do the plans of
// such networks; a ReLU network of the same shape (112 wide: light in every slot, the large-batch twin's
// too) runs light.
TEST(FusedPolicy, RunTimeShapedKernelsOfOtherHiddenActivationsKeepTheirSampleTilesAndAreNotAssembledLight) {
  for (int w = 1; w <= 8; ++w)
    for (const bool sample_major : {true, false}) {
      const ops::FusedPolicy relu = ops::fused_policy(ops::TileFamily::nvidia, {w, w, w, ops::ShapeKnown::widest, sample_major});
      ops::FusedPolicy expected = relu;
      expected.light_assembly = false;
      expected.sample_tiles = w <= 4 ? 2 : 1;
      EXPECT_EQ(ops::runtime_activations_policy(ops::TileFamily::nvidia, w, relu, true), expected) << w << " tiles wide";
      EXPECT_EQ(ops::runtime_activations_policy(ops::TileFamily::nvidia, w, relu, false), relu) << w << " tiles wide";
    }
  std::mt19937 rng(5);
  const auto plan = [&](ActivationKind hidden) {
    return plan_fused(test::random_model(rng, {3, 112, 112, 1}, {Activation::make(hidden), Activation::make(hidden), Activation::make(ActivationKind::none)}),
                      "t", {ops::TileFamily::nvidia});
  };
  const FusedPlan relu = plan(ActivationKind::relu), silu = plan(ActivationKind::silu);
  ASSERT_EQ(relu.kind, KernelKind::runtime_shaped);
  ASSERT_TRUE(relu.large_batch_kernels);
  ASSERT_TRUE(silu.activations_per_tile);
  for (const KernelSlot slot : kKernelSlots) {
    EXPECT_TRUE(relu.policy_of(slot).light_assembly);
    EXPECT_FALSE(silu.policy_of(slot).light_assembly);
  }
}

// Whole tiles of sample-major rows that row vectors cannot read (ops::RowLoads) load without a branch per
// value in NVIDIA's sample-major kernels that may meet them: the run-time-shaped ones (the 16-wide kernel
// only each row's features, under their tests; the others from clamped features) and those specialized
// for an input that is not a multiple of 4 features, as the plan builds them. Kernels specialized for a
// multiple of 4 (rows read as vectors, but for unaligned buffers), the compiled-in ones, the device-side
// API's, feature-major kernels and AMD's keep the branches. Whole output tiles that row vectors cannot
// write store each value under its unit's test alone in the run-time-shaped sample-major kernels 16-64 and
// 112 wide (FusedPolicy::tested_row_stores); elsewhere under its sample's test too.
TEST(FusedPolicy, RowsThatRowVectorsCannotReadOrWriteSkipTestsPerSampleWhereTheKernelMeetsThem) {
  using ops::RowLoads;
  for (const auto family : {ops::TileFamily::nvidia, ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna})
    for (int w = 1; w <= 8; ++w)
      for (const bool sample_major : {true, false}) {
        const bool nvidia_sm = family == ops::TileFamily::nvidia && sample_major;
        const ops::FusedPolicy runtime_shaped = ops::fused_policy(family, {w, w, w, ops::ShapeKnown::widest, sample_major});
        EXPECT_EQ(runtime_shaped.row_loads, !nvidia_sm ? RowLoads::branched : w == 1 ? RowLoads::tested : RowLoads::clamped) << w << " tiles wide";
        // Output rows that row vectors cannot write: tested by unit alone in the run-time-shaped kernels
        // where that was measured faster (16-64 and 112 wide).
        EXPECT_EQ(runtime_shaped.tested_row_stores, nvidia_sm && (w <= 4 || w == 7)) << w << " tiles wide";
        for (const int features : {3, 12, 16 * w - 1, 16 * w}) {
          const int in = (features + 15) / 16;
          EXPECT_EQ(ops::fused_policy(family, {in, w, 1, ops::ShapeKnown::exact, sample_major, features}).row_loads,
                    nvidia_sm && features % 4 != 0 && !(w <= 4 && features <= 8) ? RowLoads::clamped : RowLoads::branched)
              << w << " tiles wide, " << features << " features";
          for (const auto known : {ops::ShapeKnown::exact, ops::ShapeKnown::tiles, ops::ShapeKnown::bounds})
            EXPECT_FALSE(ops::fused_policy(family, {in, w, 1, known, sample_major, features}).tested_row_stores) << w << " tiles wide";
          EXPECT_EQ(ops::fused_policy(family, {in, w, 1, ops::ShapeKnown::tiles, sample_major}).row_loads, RowLoads::branched);
          EXPECT_EQ(ops::fused_policy(family, {in, w, 1, ops::ShapeKnown::bounds, sample_major}).row_loads, RowLoads::branched);
        }
      }
  std::mt19937 rng(7);
  const auto plan_for = [&](std::size_t in) {
    const Model m = test::random_model(rng, {in, 96, 96, 2}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::relu),
                                                             Activation::make(ActivationKind::none)});
    return plan_fused(m, "t", {ops::TileFamily::nvidia, true});
  };
  EXPECT_EQ(plan_for(27).policy.row_loads, RowLoads::clamped);
  EXPECT_EQ(plan_for(28).policy.row_loads, RowLoads::branched);
}

// A run-time-shaped NVIDIA plan takes the twin that tests activations once per tile (mlpcore_mlp_w<W>_act)
// where any hidden layer's activation is other than ReLU (leaky ReLU and none too): the kernel without the
// suffix has ReLU hidden layers compiled in (ops::RuntimeKernelActivations), and reads only the output
// layer's, whatever it is.
TEST(FusedPlan, HiddenActivationsOtherThanReluTakeThePerTileTwin) {
  std::mt19937 rng(5);
  for (const ActivationKind hidden : test::all_activation_kinds())
    for (const bool first : {false, true})
      for (const ActivationKind last : {ActivationKind::none, ActivationKind::sigmoid, ActivationKind::leaky_relu}) {
        const Activation relu = Activation::make(ActivationKind::relu), other = Activation::make(hidden);
        const Model m = test::random_model(rng, {3, 64, 40, 2}, {first ? other : relu, first ? relu : other, Activation::make(last)});
        const FusedPlan p = plan_fused(m, "t", {ops::TileFamily::nvidia});
        const bool per_tile = hidden != ActivationKind::relu;
        SCOPED_TRACE(std::to_string(static_cast<int>(hidden)) + (first ? " in the first layer" : " in the second"));
        EXPECT_EQ(p.activations_per_tile, per_tile);
        EXPECT_EQ(p.kernel_name(), per_tile ? "mlpcore_mlp_w4_act" : "mlpcore_mlp_w4");
        EXPECT_EQ(p.describe(), per_tile ? "run-time-shaped, 64 wide, activations tested per tile, for 3-64-40-2"
                                         : "run-time-shaped, 64 wide, for 3-64-40-2, twins loading weights a tile ahead for small batches");
        EXPECT_FALSE(plan_fused(m, "t", {ops::TileFamily::nvidia, true}).activations_per_tile) << "only run-time-shaped plans";
        for (const auto amd : {ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna})
          EXPECT_EQ(plan_fused(m, "t", {amd}).kernel_name(), "mlpcore_mlp_w4") << "AMD's kernels have no twins";
      }
}

// NVIDIA kernels specialized up to 32 wide with at most 2 input tiles and 16 matrix tiles per 16 samples
// have feature-major twins for large batches with four sample tiles (ops/fused_policy.h,
// large_batch_policy), for float32 I/O too up to 8 outputs; the kernels themselves keep two, and no
// compiled-in or AMD plan has twins (the run-time-shaped kernels' are tested below).
TEST(FusedPlan, SpecializedKernelsUpTo32WideHaveLargeBatchTwinsWithFourSampleTiles) {
  constexpr NetworkOptions::Layouts sample_major{true, false}, feature_major{false, true}, both{true, true};
  const auto plan = [](const std::vector<std::size_t>& widths, NetworkOptions::Layouts layouts, ops::TileFamily family = ops::TileFamily::nvidia) {
    return plan_fused(relu_model(widths), "t", {family, true, false, layouts});
  };
  for (const auto& widths : std::vector<std::vector<std::size_t>>{{2, 16, 16, 16, 1}, {3, 32, 32, 32, 32, 1}, {32, 32, 32, 3}, {24, 32, 32, 32, 8}})
    for (const auto layouts : {feature_major, both}) {
      const FusedPlan p = plan(widths, layouts);
      EXPECT_TRUE(p.large_batch_kernels) << p.shape;
      EXPECT_EQ(p.policy.sample_tiles, 2) << p.shape;
      EXPECT_EQ(p.large_batch_policy.sample_tiles, 4) << p.shape;
      EXPECT_EQ(p.large_batch, std::size_t{ops::kLargeBatch});
      EXPECT_TRUE(p.large_batch_float32_io) << p.shape;
      EXPECT_TRUE(p.describe().ends_with(", 4 sample tiles per wave from 2^20 feature-major samples")) << p.describe();
    }
  for (const std::size_t outputs : {9, 16, 32}) {
    const FusedPlan wide_output = plan({1, 32, 32, 32, outputs}, feature_major);
    EXPECT_TRUE(wide_output.large_batch_kernels);
    EXPECT_FALSE(wide_output.large_batch_float32_io) << outputs << " outputs: float16 I/O only";
    EXPECT_TRUE(wide_output.describe().ends_with(" feature-major samples with float16 I/O")) << wide_output.describe();
  }
  EXPECT_FALSE(plan({2, 16, 16, 16, 1}, sample_major).large_batch_kernels) << "sample-major only";
  EXPECT_FALSE(plan({5, 48, 48, 48, 3}, feature_major).large_batch_kernels) << "48 wide";
  EXPECT_EQ(plan({48, 32, 32, 3}, feature_major).large_batch_policy.sample_tiles, 2) << "3 input tiles";
  EXPECT_EQ(plan({64, 64, 64, 64, 64, 64, 4}, feature_major).large_batch_policy.sample_tiles, 2) << "64 wide";
  const FusedPlan deep = plan({2, 32, 32, 32, 32, 32, 32, 32, 32, 3}, feature_major);
  EXPECT_EQ(unrolled_tiles(deep), 32);
  EXPECT_FALSE(deep.large_batch_kernels) << "32 matrix tiles per 16 samples: too long to compile with four";
  EXPECT_EQ(unrolled_tiles(plan({3, 32, 32, 32, 32, 1}, feature_major)), ops::kMaxLargeBatchTiles) << "the test's bound case";
  const FusedPlan compiled_in = plan_fused(relu_model({16, 64, 64, 4}), "t", {ops::TileFamily::nvidia, false});
  ASSERT_EQ(compiled_in.kind, KernelKind::compiled_in);
  EXPECT_FALSE(compiled_in.large_batch_kernels) << "compiled in";
  for (const auto family : {ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna})
    EXPECT_FALSE(plan({2, 16, 16, 16, 1}, feature_major, family).large_batch_kernels);
}

// NVIDIA's run-time-shaped kernels (ReLU hidden layers, RuntimeKernelActivations) have feature-major twins for large
// batches where they measured faster (ops::large_batch_policy): 16 wide with four sample tiles, for float32
// I/O up to 8 outputs; 80-112 wide with two, for float32 I/O at any width; of any depth. 32-64 and 128 wide
// have none, nor the per-tile twins (FusedPlan::activations_per_tile), nor AMD's kernels.
TEST(FusedPlan, RunTimeShapedKernelsHaveLargeBatchTwinsWhereMeasuredFaster) {
  const auto plan = [](const std::vector<std::size_t>& widths, ops::TileFamily family = ops::TileFamily::nvidia) {
    const FusedPlan p = plan_fused(relu_model(widths), "t", {family, false});
    EXPECT_EQ(p.kind, KernelKind::runtime_shaped) << p.shape;
    return p;
  };
  const std::vector<std::pair<std::vector<std::size_t>, int>> twins = {
      {{2, 16, 16, 16, 1}, 4}, {{16, 16, 5, 16, 16, 16, 16, 16, 8}, 4}, {{3, 80, 80, 80, 1}, 2}, {{32, 96, 40, 96, 32}, 2}, {{64, 112, 112, 4}, 2}};
  for (const auto& [widths, sample_tiles] : twins) {
    const FusedPlan p = plan(widths);
    EXPECT_TRUE(p.large_batch_kernels) << p.shape;
    EXPECT_EQ(p.large_batch_policy.sample_tiles, sample_tiles) << p.shape;
    EXPECT_LE(p.large_batch_policy.min_blocks, p.feature_major_policy.min_blocks) << p.shape << ": a launch bound no tighter";
    ops::FusedPolicy twin = p.large_batch_policy;
    twin.sample_tiles = p.feature_major_policy.sample_tiles;
    twin.min_blocks = p.feature_major_policy.min_blocks;
    EXPECT_EQ(twin, p.feature_major_policy) << p.shape << ": the kernel's policy with more sample tiles";
    EXPECT_TRUE(p.large_batch_float32_io) << p.shape;
    EXPECT_EQ(p.packed_shape(KernelSlot::feature_major_large_batch), p.packed_shape(KernelSlot::feature_major)) << p.shape;
    EXPECT_TRUE(p.describe().ends_with(", " + std::to_string(sample_tiles) + " sample tiles per wave from 2^20 feature-major samples")) << p.describe();
    EXPECT_EQ(p.kernel_name(Io::f16, KernelSlot::feature_major_large_batch),
              "mlpcore_mlp_w" + std::to_string(p.width_tiles) + "_f16_fm_large");
  }
  const FusedPlan wide_output = plan({1, 16, 16, 16});
  EXPECT_TRUE(wide_output.large_batch_kernels);
  EXPECT_FALSE(wide_output.large_batch_float32_io) << "16 outputs, four sample tiles: float16 I/O only";
  for (const auto& widths : std::vector<std::vector<std::size_t>>{{2, 32, 32, 1}, {5, 48, 48, 48, 3}, {64, 64, 64, 4}, {3, 128, 128, 1}})
    EXPECT_FALSE(plan(widths).large_batch_kernels) << plan(widths).shape;
  std::mt19937 rng(4);
  const Activation silu = Activation::make(ActivationKind::silu);
  for (const std::size_t width : {16, 96}) {
    const FusedPlan per_tile = plan_fused(test::random_model(rng, {2, width, width, 1}, {silu, silu, Activation::make(ActivationKind::none)}), "t",
                                          {ops::TileFamily::nvidia, false});
    ASSERT_TRUE(per_tile.activations_per_tile);
    EXPECT_FALSE(per_tile.large_batch_kernels) << per_tile.shape << ": the per-tile twins have none";
  }
  for (const auto family : {ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna}) {
    EXPECT_FALSE(plan({2, 16, 16, 16, 1}, family).large_batch_kernels);
    EXPECT_FALSE(plan({3, 80, 80, 80, 1}, family).large_batch_kernels);
  }
}

// NVIDIA's 128-wide feature-major kernel (ReLU hidden layers) pads an input of one tile to its width; its
// twin for such inputs (ops::runtime_one_tile_input_policy) runs that first layer on the one tile. The plan
// names the twin for feature-major calls of a network of at most 16 inputs with a hidden layer after them
// (ops::one_tile_first_layer) and packs its first layer one K tile wide, as for the sample-major kernel,
// up to ops::kMaxOneTileInputTiles matrix tiles (7 hidden layers of 128, not 8); not for wider inputs, a
// single layer, the per-tile kernels, the sample-major kernel (which runs such inputs on one tile itself),
// other widths (whose kernels do too) or AMD's kernels.
TEST(FusedPlan, TheWidestFeatureMajorKernelHasATwinForInputsOfOneTile) {
  const auto plan = [](const std::vector<std::size_t>& widths, ops::TileFamily family = ops::TileFamily::nvidia) {
    const FusedPlan p = plan_fused(relu_model(widths), "t", {family, false});
    EXPECT_EQ(p.kind, KernelKind::runtime_shaped) << p.shape;
    return p;
  };
  std::vector<std::size_t> deepest(9, 128);  // 3-128x7-1
  deepest.front() = 3;
  deepest.back() = 1;
  std::vector<std::size_t> too_deep = deepest;  // 3-128x8-1
  too_deep.insert(too_deep.begin() + 1, 128);
  EXPECT_EQ(ops::one_tile_input_tiles(8, 8, 1), ops::kMaxOneTileInputTiles);
  for (const auto& widths : std::vector<std::vector<std::size_t>>{{3, 128, 128, 1}, {16, 128, 40, 128, 2}, {1, 100, 128, 64, 3}, deepest}) {
    const FusedPlan p = plan(widths);
    EXPECT_TRUE(p.one_tile_input_twin) << p.shape;
    EXPECT_TRUE(p.feature_major_policy.one_tile_first_layer) << p.shape;
    EXPECT_EQ(p.packed_shape(KernelSlot::feature_major), p.packed_shape(KernelSlot::sample_major)) << p.shape << ": one K tile, as the sample-major kernel";
    EXPECT_EQ(p.kernel_name(Io::f32, KernelSlot::feature_major), "mlpcore_mlp_w8_fm_one_tile_input");
    EXPECT_EQ(p.kernel_name(Io::f16, KernelSlot::feature_major), "mlpcore_mlp_w8_f16_fm_one_tile_input");
    EXPECT_EQ(p.kernel_name(Io::f16, KernelSlot::sample_major), "mlpcore_mlp_w8_f16") << "sample-major: the kernel";
    EXPECT_FALSE(p.large_batch_kernels) << p.shape;
    EXPECT_NE(p.describe().find(", feature-major first layer on one input tile"), std::string::npos) << p.describe();
    EXPECT_TRUE(ops::assembled_light(p.feature_major_policy, false)) << p.shape << ": the twin alone is assembled light";
    EXPECT_FALSE(ops::assembled_light(p.feature_major_policy, true)) << p.shape << ": but not for float16 I/O";
    ops::FusedPolicy kernel = p.feature_major_policy;
    kernel.one_tile_first_layer = false;
    kernel.light_assembly = false;
    kernel.full_assembly_float16_io = false;
    EXPECT_EQ(kernel, ops::fused_policy(ops::TileFamily::nvidia, {8, 8, 8, ops::ShapeKnown::widest, false}))
        << p.shape << ": the kernel's policy but the first layer and the assembly";
  }
  std::mt19937 rng(5);
  const Activation silu = Activation::make(ActivationKind::silu), none = Activation::make(ActivationKind::none);
  const FusedPlan per_tile = plan_fused(test::random_model(rng, {3, 128, 128, 1}, {silu, silu, none}), "t", {ops::TileFamily::nvidia, false});
  ASSERT_TRUE(per_tile.activations_per_tile);
  EXPECT_FALSE(per_tile.one_tile_input_twin) << "the per-tile twins have none";
  EXPECT_EQ(per_tile.kernel_name(Io::f32, KernelSlot::feature_major), "mlpcore_mlp_w8_act_fm");
  const std::vector<std::vector<std::size_t>> without_twin = {{17, 128, 128, 1}, {128, 128, 128, 4}, {3, 128}, {3, 112, 112, 1}, {3, 64, 64, 64, 1}, too_deep};
  for (const auto& widths : without_twin) {
    const FusedPlan p = plan(widths);
    EXPECT_FALSE(p.one_tile_input_twin) << p.shape;
    EXPECT_EQ(p.kernel_name(Io::f32, KernelSlot::feature_major), p.kernel_name() + "_fm") << p.shape;
  }
  for (const auto family : {ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna})
    EXPECT_FALSE(plan({3, 128, 128, 1}, family).one_tile_input_twin);
}

// Up to 64 wide with more than 2 input tiles (read from global memory without a stage), the twins keep
// the kernel's sample tiles and prefetch the next block's input, for float16 I/O only (ops/fused_policy.h,
// large_batch_policy); wider, or with fewer input tiles, there are no such twins.
TEST(FusedPlan, SpecializedKernelsWithMoreThanTwoInputTilesHaveInputPrefetchingTwinsForFloat16Io) {
  const auto plan = [](const std::vector<std::size_t>& widths) { return plan_fused(relu_model(widths), "t", {ops::TileFamily::nvidia, true, false, {false, true}}); };
  for (const auto& widths : std::vector<std::vector<std::size_t>>{{48, 32, 32, 3}, {64, 64, 64, 64, 64, 64, 4}, {40, 64, 64, 64, 2}, {64, 48, 48, 48, 48, 4}}) {
    const FusedPlan p = plan(widths);
    EXPECT_TRUE(p.large_batch_kernels) << p.shape;
    EXPECT_FALSE(p.policy.prefetch_input) << p.shape;
    EXPECT_TRUE(p.large_batch_policy.prefetch_input) << p.shape;
    EXPECT_EQ(p.large_batch_policy.sample_tiles, p.policy.sample_tiles) << p.shape;
    EXPECT_FALSE(p.large_batch_float32_io) << p.shape;
    EXPECT_TRUE(p.describe().ends_with(", input prefetched from 2^20 feature-major samples with float16 I/O")) << p.describe();
  }
  EXPECT_FALSE(plan({48, 80, 80, 80, 3}).large_batch_kernels) << "80 wide";
  EXPECT_FALSE(plan({32, 64, 64, 64, 16}).large_batch_kernels) << "2 input tiles: already staged";
}

// A call takes the kernel of its layout, and a feature-major one of at least the plan's large_batch
// samples the large-batch twin, where the plan has one for its I/O type.
TEST(FusedPlan, CallsFromTheLargeBatchTakeTheTwins) {
  const auto call = [](Layout layout, std::size_t batch, Io io) { return IoBuffers{nullptr, nullptr, batch, io, layout}; };
  FusedPlan twins = plan_fused(relu_model({2, 16, 16, 16, 1}), "t", {ops::TileFamily::nvidia, true, false, {true, true}});
  const CallRouting routing = call_routing(twins);
  const std::size_t from = twins.large_batch;
  for (const Io io : {Io::f32, Io::f16}) {
    EXPECT_EQ(routing.large_batch_from[static_cast<std::size_t>(io)], from);
    for (const KernelSlot slot : kKernelSlots) EXPECT_TRUE(has_kernel(twins, slot, io));
    EXPECT_EQ(routing.slot(call(Layout::feature_major, from - 1, io)), KernelSlot::feature_major);
    EXPECT_EQ(routing.slot(call(Layout::feature_major, from, io)), KernelSlot::feature_major_large_batch);
    EXPECT_EQ(routing.slot(call(Layout::sample_major, from, io)), KernelSlot::sample_major);
  }
  const FusedPlan none = plan_fused(relu_model({5, 48, 48, 48, 3}), "t", {ops::TileFamily::nvidia, true, false, {true, true}});
  for (const Io io : {Io::f32, Io::f16}) {
    EXPECT_FALSE(has_kernel(none, KernelSlot::feature_major_large_batch, io));
    EXPECT_EQ(call_routing(none).slot(call(Layout::feature_major, std::size_t{1} << 28, io)), KernelSlot::feature_major);
  }
  const FusedPlan f16_only = plan_fused(relu_model({1, 32, 32, 32, 32}), "t", {ops::TileFamily::nvidia, true, false, {false, true}});
  EXPECT_TRUE(has_kernel(f16_only, KernelSlot::feature_major_large_batch, Io::f16));
  EXPECT_FALSE(has_kernel(f16_only, KernelSlot::feature_major_large_batch, Io::f32));
  EXPECT_EQ(call_routing(f16_only).slot(call(Layout::feature_major, f16_only.large_batch, Io::f32)), KernelSlot::feature_major);
  EXPECT_EQ(call_routing(f16_only).slot(call(Layout::feature_major, f16_only.large_batch, Io::f16)), KernelSlot::feature_major_large_batch);
  const std::vector<SpecializedKernel> kernels = specialized_kernels(f16_only);
  ASSERT_EQ(kernels.size(), 3u) << "feature-major float32 and float16 I/O, and float16 I/O's twin";
  EXPECT_EQ(kernels.back().name, "mlpcore_mlp_specialized_f16_fm_large");
}

// NVIDIA's specialized kernels with a register bound (up to 64 wide, one input tile) and at most
// kMaxSmallBatchTiles matrix tiles (kMaxSmallBatchTilesF16Acc with float16 accumulators) have small-batch
// twins, which calls of at most kSmallBatchBlocksPerMultiprocessor blocks per multiprocessor take: on a
// GPU of 132, a call of 264 blocks of its kernel's sample tiles. Not the large-batch twins, unbounded
// kernels, AMD's or the built-in ones of widths without (80 wide here; those of others:
// RunTimeShapedSmallBatchTwins); and no call takes one where no multiprocessors are counted (the
// emulator).
TEST(FusedPlan, CallsOfAtMostTwoBlocksPerMultiprocessorTakeTheSmallBatchTwins) {
  const auto call = [](Layout layout, std::size_t batch, Io io) { return IoBuffers{nullptr, nullptr, batch, io, layout}; };
  const FusedPlan plan = plan_fused(relu_model({3, 64, 64, 64, 1}), "t", {ops::TileFamily::nvidia, true, false, {true, true}});
  const CallRouting routing = call_routing(plan, 132), uncounted = call_routing(plan);
  for (const KernelSlot slot : {KernelSlot::sample_major, KernelSlot::feature_major})
    for (const Io io : {Io::f32, Io::f16}) {
      ASSERT_EQ(plan.policy_of(slot).min_blocks, 5);
      EXPECT_TRUE(has_small_batch_twin(plan, slot, io));
      ASSERT_EQ(routing.sample_tiles_in(slot), 2);
      const std::size_t up_to = 2 * 132 * 4 * 32;  // 2 blocks per multiprocessor, of 4 warps of 2 sample tiles
      const Layout layout = slot_layout(slot);
      for (const std::size_t batch : {std::size_t{1}, std::size_t{1000}, up_to}) {
        EXPECT_EQ(routing.slot(call(layout, batch, io)), slot);
        EXPECT_TRUE(routing.takes_small_batch_twin(call(layout, batch, io), slot)) << batch;
        EXPECT_FALSE(uncounted.takes_small_batch_twin(call(layout, batch, io), slot)) << batch;
      }
      EXPECT_FALSE(routing.takes_small_batch_twin(call(layout, up_to + 1, io), slot));
      EXPECT_TRUE(routing.takes_small_batch_twin(call(layout, 0, io), slot)) << "no samples: one block";
      EXPECT_FALSE(uncounted.takes_small_batch_twin(call(layout, 0, io), slot)) << "no twin, even for no samples";
    }
  EXPECT_NE(plan.describe().find(" (both I/O layouts), twins without the register bound for small batches"), std::string::npos) << plan.describe();
  const std::vector<SpecializedKernel> twins = small_batch_twins(plan), kernels = specialized_kernels(plan);
  ASSERT_EQ(twins.size(), 4u) << "float32 and float16 I/O, both layouts";
  for (std::size_t t = 0; t < twins.size(); ++t) EXPECT_EQ(twins[t].name, kernels[t].name) << "the kernel's code, under its name";
  EXPECT_NE(specialized_source(plan).find(" " + kernels[0].name + "(small batch)"), std::string::npos) << "named in the source: in its key";

  // Deeper kernels: with float32 accumulators up to 64 matrix tiles, with float16 ones up to 96.
  for (const bool f16acc : {false, true}) {
    const FusedPlan five = plan_fused(relu_model({3, 64, 64, 64, 64, 64, 1}), "t", {ops::TileFamily::nvidia, true, f16acc});
    ASSERT_EQ(unrolled_tiles(five), 72);
    EXPECT_EQ(has_small_batch_twin(five, KernelSlot::sample_major, Io::f32), f16acc);
    const FusedPlan eight = plan_fused(relu_model({2, 64, 64, 64, 64, 64, 64, 64, 64, 3}), "t", {ops::TileFamily::nvidia, true, f16acc});
    ASSERT_EQ(unrolled_tiles(eight), 120);
    EXPECT_FALSE(has_small_batch_twin(eight, KernelSlot::sample_major, Io::f32));
  }

  const FusedPlan large = plan_fused(relu_model({3, 32, 32, 32, 1}), "t", {ops::TileFamily::nvidia, true, false, {false, true}});
  ASSERT_EQ(large.large_batch_policy.min_blocks, 5);
  EXPECT_FALSE(has_small_batch_twin(large, KernelSlot::feature_major_large_batch, Io::f16)) << "a large-batch twin";
  EXPECT_FALSE(call_routing(large, 132).takes_small_batch_twin(call(Layout::feature_major, 1, Io::f16), KernelSlot::feature_major_large_batch));
  for (const FusedPlan& none : {plan_fused(relu_model({32, 64, 64, 64, 16}), "t", {ops::TileFamily::nvidia, true}),
                                plan_fused(relu_model({3, 64, 64, 64, 1}), "t", {ops::TileFamily::rdna3, true}),
                                plan_fused(relu_model({3, 80, 80, 80, 1}), "t", {ops::TileFamily::nvidia, false})}) {
    EXPECT_TRUE(small_batch_twins(none).empty()) << none.describe();
    for (const Io io : {Io::f32, Io::f16}) {
      EXPECT_FALSE(has_small_batch_twin(none, KernelSlot::sample_major, io)) << none.describe();
      EXPECT_FALSE(call_routing(none, 132).takes_small_batch_twin(call(Layout::sample_major, 1, io), KernelSlot::sample_major)) << none.describe();
    }
    EXPECT_EQ(none.describe().find("small batches"), std::string::npos) << none.describe();
  }
}

// An input-prefetching twin (of a kernel that reads its input from global memory) takes only calls whose
// input its stage copies with cp.async; a twin of four sample tiles, whose kernel stages the input too,
// takes every large call.
TEST(FusedPlan, InputPrefetchingTwinsTakeAlignedInputOnly) {
  const auto call = [](std::uintptr_t input, std::size_t batch) {
    return IoBuffers{reinterpret_cast<const void*>(input), nullptr, batch, Io::f16, Layout::feature_major};
  };
  const FusedPlan prefetching = plan_fused(relu_model({48, 64, 64, 64, 4}), "t", {ops::TileFamily::nvidia, true, false, {false, true}});
  const CallRouting routing = call_routing(prefetching);
  const std::size_t from = prefetching.large_batch;
  EXPECT_TRUE(routing.large_batch_takes_aligned_input_only);
  EXPECT_EQ(routing.slot(call(0x1000, from)), KernelSlot::feature_major_large_batch);
  EXPECT_EQ(routing.slot(call(0x1000, from + 8)), KernelSlot::feature_major_large_batch);
  EXPECT_EQ(routing.slot(call(0x1000, from + 17)), KernelSlot::feature_major) << "rows not 16-byte multiples";
  EXPECT_EQ(routing.slot(call(0x1008, from)), KernelSlot::feature_major) << "input not 16-byte aligned";
  const CallRouting four_tiles = call_routing(plan_fused(relu_model({2, 16, 16, 16, 1}), "t", {ops::TileFamily::nvidia, true, false, {false, true}}));
  EXPECT_FALSE(four_tiles.large_batch_takes_aligned_input_only);
  EXPECT_EQ(four_tiles.slot(call(0x1008, from + 17)), KernelSlot::feature_major_large_batch);
}

// NVIDIA's run-time-shaped kernels with ReLU hidden layers run two sample tiles per wave up to 64 wide and
// 128 wide, one at 80-112 wide (their large-batch twins two); the _act kernels one above 64 wide. The plan
// launches each slot of a 128-wide network with them: the kernel, and the one-tile-input twin (assembled
// light for float32 I/O), in both layouts; a SiLU network's with one.
TEST(FusedPlan, RunTimeShapedKernelsRunTheSampleTilesOfTheirWidthAndActivations) {
  for (int w = 1; w <= 8; ++w)
    for (const bool sample_major : {true, false}) {
      const ops::FusedPolicy relu = ops::fused_policy(ops::TileFamily::nvidia, {w, w, w, ops::ShapeKnown::widest, sample_major});
      EXPECT_EQ(relu.sample_tiles, w <= 4 || w == 8 ? 2 : 1) << w << " tiles wide";
      EXPECT_EQ(ops::runtime_activations_policy(ops::TileFamily::nvidia, w, relu, true).sample_tiles, w <= 4 ? 2 : 1) << w << " tiles wide";
    }
  const auto routing = [](const std::vector<std::size_t>& widths, ActivationKind hidden) {
    const FusedPlan p = plan_fused(hidden_model(widths, hidden), "t", {ops::TileFamily::nvidia, false, false, {true, true}});
    EXPECT_EQ(p.kind, KernelKind::runtime_shaped) << p.shape;
    EXPECT_FALSE(p.large_batch_kernels) << p.shape;
    return std::pair{p, call_routing(p)};
  };
  for (const auto& widths : std::vector<std::vector<std::size_t>>{{3, 128, 128, 1}, {32, 128, 128, 128, 4}}) {
    const auto [relu, relu_routing] = routing(widths, ActivationKind::relu);
    EXPECT_EQ(relu.one_tile_input_twin, widths.front() <= 16) << relu.shape;
    EXPECT_EQ(relu.policy_of(KernelSlot::feature_major).light_assembly, relu.one_tile_input_twin) << relu.shape;
    EXPECT_FALSE(ops::assembled_light(relu.policy_of(KernelSlot::feature_major), true)) << relu.shape << ": float16 I/O at -O3";
    EXPECT_FALSE(relu.policy_of(KernelSlot::sample_major).light_assembly) << relu.shape;
    const auto [silu, silu_routing] = routing(widths, ActivationKind::silu);
    for (const KernelSlot slot : {KernelSlot::sample_major, KernelSlot::feature_major}) {
      EXPECT_EQ(relu_routing.sample_tiles_in(slot), 2) << relu.shape;
      EXPECT_EQ(silu_routing.sample_tiles_in(slot), 1) << silu.shape;
    }
  }
}

// A launch's grid counts waves of the sample tiles of the kernel the call takes (engine/src/fused_packing.h,
// fused_grid; tested in tests/device/fused_batch_test.cpp).
TEST(FusedPlan, RoutesEachSlotWithItsKernelsSampleTiles) {
  const FusedPlan twins = plan_fused(relu_model({2, 16, 16, 16, 1}), "t", {ops::TileFamily::nvidia, true, false, {true, true}});
  const CallRouting routing = call_routing(twins);
  EXPECT_EQ(twins.policy.sample_tiles, 2);
  EXPECT_EQ(twins.large_batch_policy.sample_tiles, 4);
  EXPECT_EQ(routing.sample_tiles_in(KernelSlot::sample_major), 2);
  EXPECT_EQ(routing.sample_tiles_in(KernelSlot::feature_major), 2);
  EXPECT_EQ(routing.sample_tiles_in(KernelSlot::feature_major_large_batch), 4);
  for (const auto family : {ops::TileFamily::rdna3, ops::TileFamily::rdna4, ops::TileFamily::cdna})
    for (const KernelSlot slot : kKernelSlots)
      EXPECT_EQ(call_routing(plan_fused(relu_model({2, 16, 16, 16, 1}), "t", {family, true})).sample_tiles_in(slot), 1);
}

TEST(SpecializedSource, NamesThePlanAndKeysFollowTheText) {
  const FusedPlan a = plan_fused(relu_model({3, 64, 64, 1}), "t", {ops::TileFamily::nvidia, true});
  const FusedPlan b = plan_fused(relu_model({3, 64, 64, 1}, ActivationKind::sigmoid), "t", {ops::TileFamily::nvidia, true});
  const std::string sa = specialized_source(a), sb = specialized_source(b);
  EXPECT_NE(sa.find("MLPCORE_SPECIALIZED_KERNELS("), std::string::npos);
  EXPECT_NE(sa.find("1, 4, 4, 1>"), std::string::npos) << sa;
  EXPECT_NE(sb.find("ActivationKind::sigmoid"), std::string::npos) << sb;
  EXPECT_EQ(specialized_source_key(sa), specialized_source_key(specialized_source(a)));
  EXPECT_NE(specialized_source_key(sa), specialized_source_key(sb));
  EXPECT_EQ(specialized_source_key(sa).size(), 32u);
  EXPECT_THROW((void)specialized_source(plan_fused(relu_model({3, 64, 64, 1}), "t", {ops::TileFamily::nvidia})), std::logic_error);
}

// Which kernels a plan builds is decided on the host: the source names them, so a kernel file (or cache
// entry) of another set does not match, where the kernel headers may be the same.
TEST(SpecializedSource, KeysTellPlansOfOtherKernelsApart) {
  const FusedPlan both = plan_fused(relu_model({2, 16, 16, 16, 1}), "t", {ops::TileFamily::nvidia, true, false, {false, true}});
  ASSERT_TRUE(both.large_batch_float32_io);
  FusedPlan f16_only = both;
  f16_only.large_batch_float32_io = false;
  const std::string source = specialized_source(both);
  for (const SpecializedKernel& k : specialized_kernels(both)) EXPECT_NE(source.find(" " + k.name), std::string::npos) << k.name;
  EXPECT_NE(specialized_source_key(source), specialized_source_key(specialized_source(f16_only)));
}

// A run-time compiler builds each kernel a plan serves as a program of its own: the same source, naming it.
TEST(SpecializedSource, EachKernelOfThePlanIsAProgramOfItsOwn) {
  const auto names = [](const FusedPlan& p) {
    std::vector<std::string> out;
    for (const SpecializedKernel& k : specialized_kernels(p)) out.push_back(k.name);
    return out;
  };
  const FusedPlan sample_major = plan_fused(relu_model({3, 64, 64, 1}), "t", {ops::TileFamily::nvidia, true});
  EXPECT_EQ(names(sample_major), (std::vector<std::string>{"mlpcore_mlp_specialized", "mlpcore_mlp_specialized_f16"}));
  const FusedPlan feature_major = plan_fused(relu_model({3, 64, 64, 1}), "t", {ops::TileFamily::nvidia, true, false, {false, true}});
  EXPECT_EQ(names(feature_major), (std::vector<std::string>{"mlpcore_mlp_specialized_fm", "mlpcore_mlp_specialized_f16_fm"}));
  const FusedPlan both = plan_fused(relu_model({3, 64, 64, 1}), "t", {ops::TileFamily::nvidia, true, false, {true, true}});
  const std::vector<SpecializedKernel> kernels = specialized_kernels(both);
  ASSERT_EQ(kernels.size(), 4u);
  EXPECT_EQ(kernels[3].io, Io::f16);
  EXPECT_EQ(kernels[3].slot, KernelSlot::feature_major);
  const std::string source = specialized_source(both), one = kernel_source(source, kernels[3]);
  EXPECT_TRUE(one.starts_with("#define MLPCORE_SPECIALIZED_ONLY feature_major, mlpcore_mlp_specialized_f16_fm, mlpcore::ops::half_t, false\n")) << one;
  EXPECT_TRUE(one.ends_with(source));
  EXPECT_NE(kernel_source(source, kernels[0]).find("sample_major, mlpcore_mlp_specialized, float, false\n"), std::string::npos);
  const FusedPlan twins = plan_fused(relu_model({3, 32, 32, 1}), "t", {ops::TileFamily::nvidia, true, false, {false, true}});
  EXPECT_EQ(names(twins), (std::vector<std::string>{"mlpcore_mlp_specialized_fm", "mlpcore_mlp_specialized_f16_fm", "mlpcore_mlp_specialized_fm_large",
                                                    "mlpcore_mlp_specialized_f16_fm_large"}));
  const std::string large = kernel_source(specialized_source(twins), specialized_kernels(twins).back());
  EXPECT_TRUE(large.starts_with("#define MLPCORE_SPECIALIZED_ONLY feature_major, mlpcore_mlp_specialized_f16_fm_large, mlpcore::ops::half_t, true\n"))
      << large;
}

// A compiler that records the sources it is given and how it is to assemble them, and returns each source as
// its code, with what `says` reports of it so assembled (CompiledCode's local_arrays, spill_bytes and
// reports_spills). It assembles again by compiling again (KernelCompiler's assemble_again). Its
// code_version is its version unless told what it lacks (lacks()).
class RecordingCompiler final : public KernelCompiler {
 public:
  using Says = std::function<void(const std::string& source, Assembly assembly, CompiledCode& reported)>;
  // What it says of code assembled again without its bound (assemble_unbounded), given the code: none by default.
  using SaysUnbounded = std::function<std::optional<CompiledCode>(const CompiledCode& code)>;
  explicit RecordingCompiler(Says says, SaysUnbounded unbounded = {}) : says_(std::move(says)), unbounded_(std::move(unbounded)) {}
  std::string version() const override { return "recording"; }
  std::string code_version() const override { return lacks_.empty() ? version() : version() + " without " + lacks_; }
  void lacks(std::string what) { lacks_ = std::move(what); }
  CompiledCode compile_code(const std::string& source, const std::string&, Assembly assembly) const override {
    const std::lock_guard lock(mutex_);
    sources_.push_back(source);
    if (assembly == Assembly::light) ++light_;
    const auto* bytes = reinterpret_cast<const std::byte*>(source.data());
    CompiledCode c;
    c.code.assign(bytes, bytes + source.size());
    says_(source, assembly, c);
    return c;
  }
  std::optional<CompiledCode> assemble_unbounded(const CompiledCode& code, const std::string&) const override {
    const std::lock_guard lock(mutex_);
    ++unbounded_assemblies_;
    return unbounded_ ? unbounded_(code) : std::nullopt;
  }
  std::size_t compiles() const {
    const std::lock_guard lock(mutex_);
    return sources_.size();
  }
  std::size_t unbounded_assemblies() const {
    const std::lock_guard lock(mutex_);
    return unbounded_assemblies_;
  }
  std::size_t light_compiles() const {
    const std::lock_guard lock(mutex_);
    return light_;
  }

 private:
  Says says_;
  SaysUnbounded unbounded_;
  mutable std::mutex mutex_;
  mutable std::vector<std::string> sources_;
  mutable std::size_t light_ = 0, unbounded_assemblies_ = 0;
  std::string lacks_;
};

std::string text(const std::vector<std::byte>& code) { return {reinterpret_cast<const char*>(code.data()), code.size()}; }

// The source a kernel of `plan` is compiled from again, the policy of its slot changed by `change`; without
// twins the large-batch policy stays the feature-major one (the source builds twins where they differ).
template <class Change>
std::string again(FusedPlan plan, const SpecializedKernel& k, Change change) {
  change(plan.policy_of(k.slot));
  if (!plan.large_batch_kernels) plan.large_batch_policy = plan.feature_major_policy;
  return kernel_source(specialized_source(plan), k);
}
const auto unrolled_by_construction = [](ops::FusedPolicy& p) { p.compiler_unrolls_tiles = false; };
const auto unbounded = [](ops::FusedPolicy& p) { p.min_blocks = 0; };

// The policy the kernel of `source` (kernel_source) is built with, as written: the network type's first
// for a sample-major kernel, its second for a feature-major one, its third for a large-batch twin
// (MLPCORE_SPECIALIZED_ONLY's first and last fields).
std::string own_policy(const std::string& source) {
  const std::string only = source.substr(0, source.find('\n'));
  const int index = only.ends_with(", true") ? 2 : only.starts_with("#define MLPCORE_SPECIALIZED_ONLY feature_major,") ? 1 : 0;
  const std::string head = "mlpcore::ops::FusedPolicy{";
  std::size_t at = source.find(head);
  for (int i = 0; i < index; ++i) at = source.find(head, at + 1);
  return source.substr(at, source.find('}', at) + 1 - at);
}

// Field `index` (from 0, in FusedPolicy's order) of a policy as written.
std::string policy_field(const std::string& policy, int index) {
  std::size_t at = policy.find('{') + 1;
  for (int i = 0; i < index; ++i) at = policy.find(", ", at) + 2;
  return policy.substr(at, policy.find_first_of(",}", at) - at);
}

// Says it left arrays in local memory whenever it was to unroll output tiles itself (a source whose
// policy has compiler_unrolls_tiles: its eighth field).
RecordingCompiler declines_to_unroll() {
  return RecordingCompiler([](const std::string& source, Assembly, CompiledCode& c) {
    c.local_arrays = policy_field(own_policy(source), 7) == "true";
    c.reports_spills = true;  // none
  });
}

// Spills `bytes` where the kernel bounds its registers (a policy with input prefetch and no early weight
// loads whose min_blocks, its fourth field, is 5), `light_bytes` there when assembled light, and none elsewhere.
RecordingCompiler spills_at_the_bound(int bytes, int light_bytes) {
  return RecordingCompiler([bytes, light_bytes](const std::string& source, Assembly assembly, CompiledCode& c) {
    const std::string policy = own_policy(source);
    const bool bound = policy_field(policy, 1) == "false" && policy_field(policy, 2) == "true" && policy_field(policy, 3) == "5";
    c.spill_bytes = bound ? (assembly == Assembly::light ? light_bytes : bytes) : 0;
    c.reports_spills = true;
  });
}

// Where the compiler left the output tiles it was to unroll in a loop, their arrays in local memory, each
// kernel is compiled again with them unrolled by construction; a plan that unrolls them by construction
// (AMD's) is compiled once, as is code without local arrays. The key stays the plan's source's.
TEST(SpecializedSource, KernelsTheCompilerLeftInLocalMemoryAreUnrolledByConstruction) {
  const FusedPlan nvidia = plan_fused(relu_model({3, 64, 64, 1}), "t", {ops::TileFamily::nvidia, true});
  ASSERT_TRUE(nvidia.policy.compiler_unrolls_tiles);
  const RecordingCompiler compiler = declines_to_unroll();
  const KernelFile k = compile_kernel_file(nvidia, "sm_90", compiler);
  const std::vector<SpecializedKernel> kernels = specialized_kernels(nvidia);
  ASSERT_EQ(k.modules.size(), kernels.size() + small_batch_twins(nvidia).size());
  EXPECT_EQ(compiler.compiles(), 2 * kernels.size()) << "each kernel compiled twice";
  for (std::size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(text(k.modules[i]), again(nvidia, kernels[i], unrolled_by_construction)) << kernels[i].name;
  EXPECT_EQ(k.source_key, specialized_source_key(specialized_source(nvidia)));

  const FusedPlan rdna3 = plan_fused(relu_model({3, 64, 64, 1}), "t", {ops::TileFamily::rdna3, true});
  EXPECT_FALSE(rdna3.policy.compiler_unrolls_tiles);
  const RecordingCompiler amd = declines_to_unroll();
  (void)compile_kernel_file(rdna3, "gfx1100", amd);
  EXPECT_EQ(amd.compiles(), specialized_kernels(rdna3).size()) << "each kernel compiled once";
}

// A plan whose policies say light_assembly (NVIDIA's specialized kernels 128 wide, and 64 wide with more
// than one input tile) has every kernel assembled light, compiled again too; every other plan full.
TEST(SpecializedSource, KernelsOfLightAssemblyPoliciesAreAssembledLight) {
  struct Case {
    std::vector<std::size_t> widths;
    ops::TileFamily family;
    bool light;
  };
  for (const Case& c : {Case{{3, 128, 128, 1}, ops::TileFamily::nvidia, true}, Case{{48, 64, 64, 64, 4}, ops::TileFamily::nvidia, true},
                        Case{{16, 64, 64, 64, 16}, ops::TileFamily::nvidia, false}, Case{{27, 96, 96, 96, 3}, ops::TileFamily::nvidia, false},
                        Case{{3, 112, 112, 1}, ops::TileFamily::nvidia, false}, Case{{40, 32, 32, 3}, ops::TileFamily::nvidia, false},
                        Case{{3, 128, 128, 1}, ops::TileFamily::rdna3, false}}) {
    for (const NetworkOptions::Layouts layouts : {NetworkOptions::Layouts{true, false}, NetworkOptions::Layouts{false, true}}) {
      const FusedPlan plan = plan_fused(relu_model(c.widths), "t", {c.family, true, false, layouts});
      ASSERT_EQ(plan.kind, KernelKind::specialized) << plan.shape;
      const RecordingCompiler compiler = declines_to_unroll();
      (void)compile_kernel_file(plan, c.family == ops::TileFamily::nvidia ? "sm_90" : "gfx1100", compiler);
      EXPECT_EQ(compiler.light_compiles(), c.light ? compiler.compiles() : 0u) << plan.shape << (layouts.feature_major ? " feature-major" : "");
      EXPECT_EQ(compiler.compiles(), (c.family == ops::TileFamily::nvidia ? 2 : 1) * specialized_kernels(plan).size()) << "compiled again on NVIDIA";
    }
  }
}

// A kernel assembled full that spilled more than kMaxSpillBytes to fit its policy's register bound is
// assembled again light at the same bound, and kept so where that spills at most kMaxSpillBytes.
TEST(SpecializedSource, KernelsThatSpillAtTheirRegisterBoundAreAssembledLightAtIt) {
  const FusedPlan plan = plan_fused(relu_model({16, 64, 64, 64, 16}), "t", {ops::TileFamily::nvidia, true});
  ASSERT_EQ(plan.policy.min_blocks, 5);
  ASSERT_FALSE(plan.policy.light_assembly);
  const std::string source = specialized_source(plan);
  const std::vector<SpecializedKernel> kernels = specialized_kernels(plan);
  const RecordingCompiler fits = spills_at_the_bound(kMaxSpillBytes + 4, kMaxSpillBytes);
  const KernelFile k = compile_kernel_file(plan, "sm_90", fits);
  ASSERT_EQ(k.modules.size(), kernels.size() + small_batch_twins(plan).size());
  EXPECT_EQ(fits.compiles(), 2 * kernels.size()) << "each kernel assembled twice";
  EXPECT_EQ(fits.light_compiles(), kernels.size()) << "the second time light";
  for (std::size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(text(k.modules[i]), kernel_source(source, kernels[i])) << kernels[i].name << ": bounded";
  EXPECT_EQ(k.source_key, specialized_source_key(source));

  // Assembled light, a kernel that does not say what it spilled is not kept: compiled without the bound.
  const RecordingCompiler silent_light([](const std::string& source, Assembly assembly, CompiledCode& c) {
    const std::string policy = own_policy(source);
    c.spill_bytes = policy_field(policy, 3) == "5" ? kMaxSpillBytes + 4 : 0;
    c.reports_spills = assembly == Assembly::full;
  });
  const KernelFile unproven = compile_kernel_file(plan, "sm_90", silent_light);
  EXPECT_EQ(silent_light.compiles(), 3 * kernels.size()) << "bounded, bounded light, unbounded";
  for (std::size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(text(unproven.modules[i]), again(plan, kernels[i], unbounded)) << kernels[i].name;

  // Code with arrays in local memory is compiled again unrolled (and unbounded), not assembled again.
  const RecordingCompiler local([](const std::string& source, Assembly, CompiledCode& c) {
    c.local_arrays = policy_field(own_policy(source), 7) == "true";
    c.spill_bytes = kMaxSpillBytes + 4;
    c.reports_spills = true;
  });
  (void)compile_kernel_file(plan, "sm_90", local);
  EXPECT_EQ(local.light_compiles(), 0u);

  // A kernel without a bound that spills is kept as it is: there is nothing to fit.
  const FusedPlan unbound = plan_fused(relu_model({32, 32, 32, 3}), "t", {ops::TileFamily::nvidia, true});
  ASSERT_EQ(unbound.policy.min_blocks, 0);
  const RecordingCompiler spills_anyway([](const std::string&, Assembly, CompiledCode& c) {
    c.spill_bytes = kMaxSpillBytes + 4;
    c.reports_spills = true;
  });
  (void)compile_kernel_file(unbound, "sm_90", spills_anyway);
  EXPECT_EQ(spills_anyway.compiles(), specialized_kernels(unbound).size()) << "each kernel compiled once";

  // A kernel its policy assembles light (128 wide) is not assembled again: it drops the bound at once.
  const FusedPlan wide = plan_fused(relu_model({3, 128, 128, 1}), "t", {ops::TileFamily::nvidia, true});
  ASSERT_TRUE(wide.policy.light_assembly);
  FusedPlan wide_bound = wide;
  wide_bound.policy.prefetch_weights = false;  // the recording compiler's bound, whatever the table says
  wide_bound.policy.prefetch_input = true;
  wide_bound.policy.min_blocks = 5;
  const RecordingCompiler light = spills_at_the_bound(kMaxSpillBytes + 4, kMaxSpillBytes + 4);
  const KernelFile l = compile_kernel_file(wide_bound, "sm_90", light);
  EXPECT_EQ(light.compiles(), 2 * specialized_kernels(wide_bound).size()) << "bounded light, then unbounded";
  EXPECT_EQ(light.light_compiles(), light.compiles());
  for (std::size_t i = 0; i < specialized_kernels(wide_bound).size(); ++i)
    EXPECT_EQ(text(l.modules[i]), again(wide_bound, specialized_kernels(wide_bound)[i], unbounded)) << specialized_kernels(wide_bound)[i].name;
}

// A kernel that still spills more than kMaxSpillBytes to fit its policy's register bound, assembled light
// too, is compiled again without the bound; one that spilled less at first is kept. The key stays the
// plan's source's.
TEST(SpecializedSource, KernelsThatSpillAtTheirRegisterBoundAreCompiledWithoutIt) {
  const FusedPlan plan = plan_fused(relu_model({16, 64, 64, 64, 16}), "t", {ops::TileFamily::nvidia, true});
  ASSERT_EQ(plan.policy.min_blocks, 5);
  const std::vector<SpecializedKernel> kernels = specialized_kernels(plan);
  const RecordingCompiler spills = spills_at_the_bound(kMaxSpillBytes + 4, kMaxSpillBytes + 4);
  const KernelFile k = compile_kernel_file(plan, "sm_90", spills);
  ASSERT_EQ(k.modules.size(), kernels.size() + small_batch_twins(plan).size());
  EXPECT_EQ(spills.compiles(), 3 * kernels.size()) << "each kernel bounded, bounded light, unbounded";
  for (std::size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(text(k.modules[i]), again(plan, kernels[i], unbounded)) << kernels[i].name;
  EXPECT_EQ(k.source_key, specialized_source_key(specialized_source(plan)));

  const RecordingCompiler few = spills_at_the_bound(kMaxSpillBytes, kMaxSpillBytes + 4);
  const KernelFile kept = compile_kernel_file(plan, "sm_90", few);
  EXPECT_EQ(few.compiles(), kernels.size()) << "each kernel compiled once";
  for (std::size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(text(kept.modules[i]), kernel_source(specialized_source(plan), kernels[i])) << kernels[i].name;

  // A compiler that does not say what it spilled (NVRTC with a cubin from the driver's compute cache:
  // no ptxas report) leaves the bound unproven: compiled again without it.
  const RecordingCompiler silent([](const std::string&, Assembly, CompiledCode&) {});
  const KernelFile unproven = compile_kernel_file(plan, "sm_90", silent);
  EXPECT_EQ(silent.compiles(), 2 * kernels.size()) << "each kernel compiled twice";
  for (std::size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(text(unproven.modules[i]), again(plan, kernels[i], unbounded)) << kernels[i].name;

  // With both layouts and no twins, each kernel drops its own layout's bound, and the source compiled again
  // keeps its feature-major and large-batch policies equal (it builds twins where they differ,
  // ops::SpecializedNetwork).
  const FusedPlan fm = plan_fused(relu_model({16, 64, 64, 64, 16}), "t", {ops::TileFamily::nvidia, true, false, {true, true}});
  ASSERT_FALSE(fm.large_batch_kernels);
  const std::vector<SpecializedKernel> fm_kernels = specialized_kernels(fm);
  const KernelFile fm_file = compile_kernel_file(fm, "sm_90", spills_at_the_bound(kMaxSpillBytes + 4, kMaxSpillBytes + 4));
  ASSERT_EQ(fm_file.modules.size(), fm_kernels.size() + small_batch_twins(fm).size());
  for (std::size_t i = 0; i < fm_kernels.size(); ++i) {
    const std::string source = text(fm_file.modules[i]);
    EXPECT_EQ(source, again(fm, fm_kernels[i], unbounded)) << fm_kernels[i].name;
    std::size_t unbounded_policies = 0;
    for (std::size_t at = source.find("FusedPolicy{2, false, true, 0,"); at != std::string::npos; at = source.find("FusedPolicy{2, false, true, 0,", at + 1))
      ++unbounded_policies;
    EXPECT_EQ(unbounded_policies, slot_layout(fm_kernels[i].slot) == Layout::feature_major ? 2u : 1u)
        << fm_kernels[i].name << ": its own policy only (and the large-batch one, a copy of the feature-major one without twins)";
  }

  // A large-batch twin drops its own bound, and a kernel of the plan's policy that one.
  const FusedPlan twins = plan_fused(relu_model({3, 32, 32, 32, 1}), "t", {ops::TileFamily::nvidia, true, false, {false, true}});
  ASSERT_TRUE(twins.large_batch_kernels);
  ASSERT_EQ(twins.large_batch_policy.min_blocks, 5);
  const std::vector<SpecializedKernel> four = specialized_kernels(twins);
  const RecordingCompiler spill = spills_at_the_bound(kMaxSpillBytes + 4, kMaxSpillBytes + 4);
  const KernelFile both_unbounded = compile_kernel_file(twins, "sm_90", spill);
  EXPECT_EQ(spill.compiles(), 3 * four.size()) << "each kernel compiled three times";
  for (std::size_t i = 0; i < four.size(); ++i) EXPECT_EQ(text(both_unbounded.modules[i]), again(twins, four[i], unbounded)) << four[i].name;
}

// A kernel's small-batch twin is its code assembled again without its bound where the compiler can, kept
// where it reports at most kMaxSpillBytes; else, as where the compiler cannot (hiprtc, clang; NVRTC
// without nvJitLink), the kernel's own code. A kernel file holds the twins after the kernels.
TEST(SpecializedSource, SmallBatchTwinsAreTheirKernelsAssembledWithoutTheBound) {
  const FusedPlan plan = plan_fused(relu_model({16, 64, 64, 64, 16}), "t", {ops::TileFamily::nvidia, true, false, {true, true}});
  const std::vector<SpecializedKernel> kernels = specialized_kernels(plan), twins = small_batch_twins(plan);
  ASSERT_EQ(twins.size(), 4u);
  // Marks the code it assembles unbounded, and says it spilled `bytes` so.
  const auto unbounded_spilling = [](int bytes) {
    return RecordingCompiler([](const std::string&, Assembly, CompiledCode& c) { c.reports_spills = true; },
                             [bytes](const CompiledCode& code) {
                               CompiledCode c;
                               const std::string marked = "unbounded: " + text(code.code);
                               const auto* b = reinterpret_cast<const std::byte*>(marked.data());
                               c.code.assign(b, b + marked.size());
                               c.spill_bytes = bytes;
                               c.reports_spills = true;
                               return std::optional<CompiledCode>(c);
                             });
  };
  // The twin of kernel `t` in `k`, and its kernel's code.
  const auto twin_and_kernel = [&](const KernelFile& k, std::size_t t) {
    const auto i = static_cast<std::size_t>(std::find_if(kernels.begin(), kernels.end(), [&](const SpecializedKernel& s) {
                                              return s.slot == twins[t].slot && s.io == twins[t].io;
                                            }) - kernels.begin());
    return std::pair{text(k.modules[kernels.size() + t]), text(k.modules[i])};
  };
  const RecordingCompiler fits = unbounded_spilling(kMaxSpillBytes);
  const KernelFile k = compile_kernel_file(plan, "sm_90", fits);
  ASSERT_EQ(k.modules.size(), kernels.size() + twins.size());
  EXPECT_EQ(fits.compiles(), kernels.size()) << "the twins compile nothing";
  EXPECT_EQ(fits.unbounded_assemblies(), twins.size());
  for (std::size_t t = 0; t < twins.size(); ++t) {
    const auto [twin, kernel] = twin_and_kernel(k, t);
    EXPECT_EQ(twin, "unbounded: " + kernel) << twins[t].name;
  }
  EXPECT_EQ(small_batch_twin_note(plan, k.modules), "");
  const RecordingCompiler spills = unbounded_spilling(kMaxSpillBytes + 4);
  const KernelFile spilled = compile_kernel_file(plan, "sm_90", spills);
  for (std::size_t t = 0; t < twins.size(); ++t) {
    const auto [twin, kernel] = twin_and_kernel(spilled, t);
    EXPECT_EQ(twin, kernel) << twins[t].name << ": the kernel's own code";
  }
  EXPECT_EQ(small_batch_twin_note(plan, spilled.modules), ", 4 of 4 small-batch twins fell back to their kernel's code");
  KernelFile one_own = spilled;  // one twin of code of its own
  one_own.modules[kernels.size()] = k.modules[kernels.size()];
  EXPECT_EQ(small_batch_twin_note(plan, one_own.modules), ", 3 of 4 small-batch twins fell back to their kernel's code");
  one_own.modules.pop_back();
  EXPECT_EQ(small_batch_twin_note(plan, one_own.modules), "") << "not this plan's modules";
  const RecordingCompiler cannot = declines_to_unroll();  // assembles nothing alone
  const KernelFile same = compile_kernel_file(plan, "sm_90", cannot);
  ASSERT_EQ(same.modules.size(), kernels.size() + twins.size());
  for (std::size_t t = 0; t < twins.size(); ++t) {
    const auto [twin, kernel] = twin_and_kernel(same, t);
    EXPECT_EQ(twin, kernel) << twins[t].name << ": the kernel's own code";
  }
  const FusedPlan amd = plan_fused(relu_model({16, 64, 64, 64, 16}), "t", {ops::TileFamily::rdna3, true, false, {true, true}});
  const RecordingCompiler hiprtc = unbounded_spilling(0);
  EXPECT_EQ(compile_kernel_file(amd, "gfx1100", hiprtc).modules.size(), specialized_kernels(amd).size());
  EXPECT_EQ(hiprtc.unbounded_assemblies(), 0u);
}

// The kernel cache keeps code a compiler made with less than it can use (NVRTC without nvJitLink: twins
// of their kernel's code) apart: a compiler that has more compiles again, and its entry serves both.
TEST(KernelCache, CodeCompiledWithLessIsCompiledAgainByACompilerWithMore) {
  const FusedPlan plan = plan_fused(relu_model({16, 64, 64, 64, 16}), "t", {ops::TileFamily::nvidia, true, false, {true, true}});
  const test::TempDir dir;
  NetworkOptions options;
  options.kernel_cache = (dir / "cache").string();
  const auto quiet = [](const std::string&, Assembly, CompiledCode& c) { c.reports_spills = true; };
  const auto own_code = [](const CompiledCode& code) {
    CompiledCode c = code;
    c.code.push_back(std::byte{1});  // differs from its kernel's
    return std::optional<CompiledCode>(c);
  };
  RecordingCompiler lesser(quiet), full(quiet, own_code);
  lesser.lacks("nvJitLink");
  const std::size_t kernels = specialized_kernels(plan).size();

  const SpecializedCode first = specialized_code(plan, "sm_90", options, lesser);
  EXPECT_EQ(lesser.compiles(), kernels);
  EXPECT_NE(first.description.find("compiled by recording without nvJitLink"), std::string::npos) << first.description;
  EXPECT_NE(first.description.find("4 of 4 small-batch twins fell back to their kernel's code"), std::string::npos) << first.description;
  const SpecializedCode hit = specialized_code(plan, "sm_90", options, lesser);
  EXPECT_EQ(lesser.compiles(), kernels) << "its own entry serves it";
  EXPECT_NE(hit.description.find("from the kernel cache"), std::string::npos) << hit.description;
  EXPECT_NE(hit.description.find("4 of 4 small-batch twins fell back"), std::string::npos) << hit.description;
  EXPECT_EQ(hit.modules, first.modules);

  const SpecializedCode better = specialized_code(plan, "sm_90", options, full);
  EXPECT_EQ(full.compiles(), kernels) << "an entry made with less is not this compiler's";
  EXPECT_EQ(better.description.find("small-batch twins"), std::string::npos) << better.description;
  EXPECT_NE(better.modules, first.modules);
  const SpecializedCode shared = specialized_code(plan, "sm_90", options, lesser);
  EXPECT_EQ(lesser.compiles(), kernels) << "an entry made with more serves a compiler with less";
  EXPECT_EQ(shared.modules, better.modules);

  // A kernel file says the same of its twins.
  const std::filesystem::path file = dir / "lesser.mlpck";
  {
    const std::vector<std::byte> bytes = encode_kernel_file(compile_kernel_file(plan, "sm_90", lesser));
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  options.kernels_file = file.string();
  const SpecializedCode loaded = specialized_code(plan, "sm_90", options, full);
  EXPECT_NE(loaded.description.find("loaded from " + file.string()), std::string::npos) << loaded.description;
  EXPECT_NE(loaded.description.find("4 of 4 small-batch twins fell back"), std::string::npos) << loaded.description;
  EXPECT_EQ(loaded.modules, first.modules);
}

// A kernel file holds every kernel of a plan: both layouts, both large-batch twins and four small-batch
// twins, ten in all.
TEST(KernelFile, HoldsEveryKernelOfAPlan) {
  const FusedPlan plan = plan_fused(relu_model({3, 32, 32, 32, 1}), "t", {ops::TileFamily::nvidia, true, false, {true, true}});
  const RecordingCompiler quiet([](const std::string&, Assembly, CompiledCode& c) { c.reports_spills = true; });
  const KernelFile k = compile_kernel_file(plan, "sm_90", quiet);
  ASSERT_EQ(k.modules.size(), 2 * kKernelSlots.size() + 4);
  EXPECT_EQ(k.modules.size(), std::size_t{kMaxKernelModules});
  EXPECT_EQ(decode_kernel_file(encode_kernel_file(k), "k.mlpck").modules, k.modules);
  KernelFile too_many = k;
  too_many.modules.push_back({});
  EXPECT_THROW((void)encode_kernel_file(too_many), std::logic_error);
}

}  // namespace
}  // namespace mlpcore::detail
