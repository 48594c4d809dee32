// The fused kernels through the engine API against the float64 reference: random models of every shape
// the kernels accept and the bundled samples. Built twice: for the emulated backends (every machine),
// and with MLPCORE_GPU_TESTS for the real GPU backends (mlpcore_gpu_tests, ctest label "gpu"), where it
// also fails if no GPU backend can run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "mlpcore/error.h"
#include "mlpcore/network.h"
#include "ops/activation_math.h"
#include "ops/half_bits.h"
#include "ops/mlp_network.h"
#include "tests/test_util.h"

#ifdef MLPCORE_GPU_TESTS
#include "engine/src/cuda_driver.h"
#endif

namespace mlpcore {
namespace {

using test::from_io;
using test::position;
using test::to_io;

// Each backend is held to its own claim, BackendInfo::verify_tolerance. float16 operands: weights round to
// nearest (2^-11 relative), inputs and every hidden activation round toward zero (up to 2^-10, always
// shrinking); with float32 accumulation that stays below 1e-2 relative to max(1, |r|) through up to 8
// layers with O(1) activations (observed: below 2e-3). float16 accumulation (-f16acc, on the compiled-in
// and specialized kernels and the run-time-shaped ones that have it) claims 3e-2.
// A parameter is a backend's name, and "+builtin" where the GPU backend runs only the kernels built into
// mlpcore (NetworkOptions::specialize = false) instead of ones specialized for each model.
constexpr std::string_view kBuiltin = "+builtin";
std::string backend_of(const std::string& param) { return param.ends_with(kBuiltin) ? param.substr(0, param.size() - kBuiltin.size()) : param; }
NetworkOptions options_for(const std::string& param) {
  NetworkOptions o;
  o.backend = backend_of(param);
  o.specialize = !param.ends_with(kBuiltin);
  return o;
}

double tolerance(const std::string& param) {
  for (const auto& b : list_backends())
    if (b.name == backend_of(param)) return b.verify_tolerance;
  throw std::invalid_argument("no backend " + param);
}

// Whether the network's kernel accumulates in float16 (then it offers no device view).
bool accumulates_in_f16(const Network& net) { return net.kernel().find("float16 accumulation") != std::string::npos; }

std::vector<std::string> backends_under_test() {
#ifdef MLPCORE_GPU_TESTS
  std::vector<std::string> gpus;
  for (const auto& b : list_backends())
    if ((b.name == "cuda" || b.name == "cuda-f16acc" || b.name == "hip") && b.available) {
      gpus.push_back(b.name);
      gpus.push_back(b.name + std::string(kBuiltin));
    }
  return gpus;
#else
  return {"emu-rdna3", "emu-rdna4", "emu-cdna", "emu-cdna2", "emu-nvidia", "emu-nvidia-f16acc"};
#endif
}

// Fresh inputs on every GPU run; the emulated runs stay reproducible.
unsigned seed(unsigned fixed) {
#ifdef MLPCORE_GPU_TESTS
  return std::random_device{}() ^ fixed;
#else
  return fixed;
#endif
}

struct Stats {
  double worst = 0;
};

// Runs `batch` random samples through `backend` from buffers `offset` values into their allocations (an
// offset that breaks 16-byte alignment takes the kernels' element-wise path), arranged in `layout`, and
// checks every output against the float64 reference of the inputs as stored in T.
// The network is built for that layout only, or with `both_layouts` for both.
template <class T = float>
void check(const Model& model, const std::string& backend, std::size_t batch, std::mt19937& rng, const std::string& what, Stats& stats,
           std::size_t offset = 0, Layout layout = Layout::sample_major, bool both_layouts = false) {
  NetworkOptions options = options_for(backend);
  options.layouts = {both_layouts || layout == Layout::sample_major, both_layouts || layout == Layout::feature_major};
  const Network net(model, options);
  auto values = test::random_inputs(rng, batch * model.input_dim());
  std::vector<T> input(offset + values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = from_io(input[offset + position(i, model.input_dim(), batch, layout)] = to_io<T>(values[i]));
  // Poison the output and guard the bytes after it: every output written, nothing past the end.
  const std::size_t n = batch * model.output_dim();
  const T guard = to_io<T>(12345.0f);
  std::vector<T> output(offset + n + 64, to_io<T>(NAN));
  std::fill(output.begin() + static_cast<std::ptrdiff_t>(offset + n), output.end(), guard);
  net.infer(input.data() + offset, output.data() + offset, batch, layout);
  const auto ref = test::naive_forward(model, values, batch);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_TRUE(std::isfinite(ref[i])) << what;
    const float y = from_io(output[offset + position(i, model.output_dim(), batch, layout)]);
    ASSERT_FALSE(std::isnan(y)) << what << ": output " << i << " never written";
    const double err = std::fabs(y - ref[i]) / std::max(1.0, std::fabs(ref[i]));
    stats.worst = std::max(stats.worst, err);
    ASSERT_LE(err, tolerance(backend)) << what << ": element " << i << " got " << y << " want " << ref[i];
  }
  for (std::size_t i = offset + n; i < output.size(); ++i) ASSERT_EQ(output[i], guard) << what << ": wrote past the output";
}

// An activation of kind k, with a parameter other than the default where it has one.
Activation activation_of(ActivationKind k) {
  if (k == ActivationKind::leaky_relu) return Activation::make(k, 0.1f);
  if (k == ActivationKind::softplus) return Activation::make(k, 2.0f);
  return Activation::make(k);
}

Activation random_activation(std::mt19937& rng, bool allow_exp) {
  const auto& kinds = test::all_activation_kinds();
  ActivationKind k;
  do k = kinds[rng() % kinds.size()];
  while (k == ActivationKind::exponential && !allow_exp);
  return activation_of(k);
}

// The widths of a network of `layers` layers whose hidden layers are W tiles wide (16 W - 15 to 16 W
// units) and whose input and output have any width up to that.
std::vector<std::size_t> widths_of_width(std::mt19937& rng, std::size_t w, std::size_t layers) {
  std::uniform_int_distribution<std::size_t> edge(1, 16 * w), widest(16 * w - 15, 16 * w);
  std::vector<std::size_t> widths = {edge(rng)};
  for (std::size_t l = 1; l < layers; ++l) widths.push_back(widest(rng));
  widths.push_back(edge(rng));
  return widths;
}

// "5-100-20-7": a network's widths.
std::string shape_name(const std::vector<std::size_t>& widths) {
  std::string name;
  for (std::size_t x : widths) name += (name.empty() ? "" : "-") + std::to_string(x);
  return name;
}

class FusedBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedBackend, RandomModelsMatchFloat64) {
  const std::string backend = GetParam();
  std::mt19937 rng(seed(99));
  std::uniform_int_distribution<std::size_t> layers_dist(1, 8), in_dist(1, 64), hidden_dist(16, 128), out_dist(1, 32);
  const std::size_t batches[] = {1, 15, 16, 17, 100, 1000};
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16};
  std::set<ActivationKind> seen;
  Stats stats;
  for (int trial = 0; trial < 18; ++trial) {
    const std::size_t layers = layers_dist(rng);
    std::vector<std::size_t> widths = {in_dist(rng)};
    for (std::size_t i = 0; i + 1 < layers; ++i) widths.push_back(trial % 3 == 0 ? 16 * (1 + rng() % 8) : hidden_dist(rng));
    widths.push_back(out_dist(rng));
    std::vector<Activation> acts;
    for (std::size_t i = 0; i < layers; ++i) {
      acts.push_back(random_activation(rng, acts.empty() || acts.back().kind != ActivationKind::exponential));
      seen.insert(acts.back().kind);
    }
    Model model = test::random_model(rng, widths, acts);
    for (auto& l : model.layers) l.weight_dtype = l.bias_dtype.emplace(dtypes[trial % 3]);
    model = parse_model(serialize_model(model), "random");  // weights as an F16/BF16 file holds them
    const std::size_t batch = batches[static_cast<std::size_t>(trial) % 6];
    check(model, backend, batch, rng, backend + " trial " + std::to_string(trial) + " batch " + std::to_string(batch), stats);
  }
  EXPECT_EQ(seen.size(), test::all_activation_kinds().size());
  std::cout << backend << ": worst relative error " << stats.worst << " (tolerance " << tolerance(backend) << ")\n";
}

TEST_P(FusedBackend, WidestAndDeepestModelsMatchFloat64) {
  std::mt19937 rng(seed(5));
  Stats stats;
  const Model wide = test::random_model(rng, {64, 128, 128, 128, 128, 128, 128, 128, 32}, std::vector<Activation>(8, Activation::make(ActivationKind::tanh)));
  check(wide, GetParam(), 100, rng, "8 x 128 tanh", stats);
  const Model relu = test::random_model(rng, {3, 64, 64, 64, 64, 1}, std::vector<Activation>(5, Activation::make(ActivationKind::relu)));
  check(relu, GetParam(), 1000, rng, "3-64x4-1 relu", stats);
}

// The run-time-shaped kernels, one per width (mlpcore_mlp_w<W>, W = 1..8 tiles of 16): for each, a
// network whose widest layers are W tiles and whose edges have any width up to that, of its own depth,
// with a different activation in every layer (the kernel reads each layer's at run time), float32
// and float16 I/O in both layouts, partial sample tiles. Where the backend runs the built-in kernels
// (emulated, "+builtin"), the network is on that width's kernel.
TEST_P(FusedBackend, RunTimeShapedKernelOfEveryWidthMatchesFloat64) {
  std::mt19937 rng(seed(21));
  Stats stats;
  const auto& kinds = test::all_activation_kinds();
  std::set<ActivationKind> hidden_kinds;
  std::size_t next_kind = 0;
  for (std::size_t w = 1; w <= 8; ++w) {
    const std::size_t layers = 2 + w % 4;
    const std::vector<std::size_t> widths = widths_of_width(rng, w, layers);
    std::vector<Activation> acts;
    for (std::size_t l = 0; l + 1 < layers; ++l) {
      acts.push_back(activation_of(kinds[next_kind++ % kinds.size()]));  // never the same kind twice in a row
      hidden_kinds.insert(acts.back().kind);
    }
    acts.push_back(activation_of(kinds[(next_kind + 3) % kinds.size()]));  // the output's: another one again
    const Model m = test::random_model(rng, widths, acts);
    const std::string name = shape_name(widths);
    const std::string kernel = Network(m, options_for(GetParam())).kernel();
    if (kernel.find("specialized") == std::string::npos)
      EXPECT_TRUE(kernel.starts_with("run-time-shaped, " + std::to_string(16 * w) + " wide")) << name << ": " << kernel;
    const Layout first = w % 2 ? Layout::sample_major : Layout::feature_major, second = w % 2 ? Layout::feature_major : Layout::sample_major;
    check<float>(m, GetParam(), 33, rng, "float32 " + name, stats, 0, first);
    check<std::uint16_t>(m, GetParam(), 17, rng, "float16 " + name, stats, 0, second);
  }
  EXPECT_EQ(hidden_kinds.size(), kinds.size()) << "every activation in a layer that feeds another";
  std::cout << GetParam() << ": worst relative error " << stats.worst << "\n";
}

// The run-time-shaped kernels run every layer as wide as the widest, padded with zero weights and biases
// (FusedPlan::packed_shape): hidden layers of fewer tiles, whose padding units hold their activation of 0
// (0.5 for sigmoid, 1 for the exponential, ln 2 / beta for softplus) and must meet zero weights in the next
// layer, inputs and outputs of one tile and of several, and networks of one layer. An input of one tile
// (up to 16 features) followed by a hidden layer runs its first layer on that tile alone
// (ops::one_tile_first_layer): 16 features, and a single layer of 16 -> 40, which is padded. On NVIDIA
// the networks with a hidden activation other than ReLU run the twin that tests it once per tile, the
// others (ReLU hidden layers, and the single layers) the kernel with ReLU compiled in, and 128 wide with an
// input of one tile, feature-major, that kernel's twin for such inputs (3-128-40-128-2; 20-128-128-3, two
// input tiles, the kernel itself).
TEST_P(FusedBackend, RunTimeShapedKernelsPadNarrowerLayers) {
  std::mt19937 rng(seed(22));
  Stats stats;
  using K = ActivationKind;
  const std::vector<std::pair<std::vector<std::size_t>, std::vector<K>>> cases = {
      {{5, 100, 20, 128, 7}, {K::relu, K::sigmoid, K::exponential, K::none}},
      {{40, 33, 70, 50}, {K::softplus, K::sine, K::tanh}},
      {{3, 16, 2, 17, 1}, {K::exponential, K::sigmoid, K::silu, K::none}},
      {{16, 48, 48, 24, 5}, {K::tanh, K::leaky_relu, K::softplus, K::sigmoid}},
      {{40, 3}, {K::sigmoid}},
      {{16, 40}, {K::silu}},
      {{3, 48, 48, 48, 2}, {K::relu, K::relu, K::relu, K::sigmoid}},
      {{8, 32, 20, 32, 4}, {K::relu, K::relu, K::relu, K::none}},
      {{4, 32, 32, 1}, {K::leaky_relu, K::leaky_relu, K::none}},
      {{6, 80, 80, 3}, {K::none, K::relu, K::tanh}},
      {{3, 128, 40, 128, 2}, {K::relu, K::relu, K::relu, K::sigmoid}},
      {{20, 128, 128, 3}, {K::relu, K::relu, K::none}}};
  for (const auto& [widths, kinds] : cases) {
    std::vector<Activation> acts;
    for (const K k : kinds) acts.push_back(activation_of(k));
    const Model m = test::random_model(rng, widths, acts);
    const std::string name = shape_name(widths);
    const std::string kernel = Network(m, options_for(GetParam())).kernel();
    if (kernel.find("specialized") == std::string::npos) {
      EXPECT_TRUE(kernel.starts_with("run-time-shaped")) << name << ": " << kernel;
      // NVIDIA's kernels have ReLU hidden layers compiled in; their twins test any other hidden activation
      // once per tile (FusedPlan::activations_per_tile)
      const bool nvidia = GetParam().starts_with("cuda") || GetParam().starts_with("emu-nvidia");
      const bool beyond_relu = std::any_of(kinds.begin(), kinds.end() - 1, [](K k) { return k != K::relu; });
      EXPECT_EQ(kernel.find("activations tested per tile") != std::string::npos, nvidia && beyond_relu) << name << ": " << kernel;
      EXPECT_EQ(kernel.find("feature-major first layer on one input tile") != std::string::npos, nvidia && name == "3-128-40-128-2") << name << ": " << kernel;
    }
    check<float>(m, GetParam(), 33, rng, "float32 " + name, stats, 0, Layout::sample_major);
    check<std::uint16_t>(m, GetParam(), 47, rng, "float16 " + name, stats, 0, Layout::feature_major);
  }
  std::cout << GetParam() << ": worst relative error " << stats.worst << "\n";
}

// The run-time-shaped kernels with ReLU hidden layers accumulate as the backend does where their width has
// float16-accumulating twins (ops::runtime_f16_accumulation: 32-112 wide on NVIDIA, mlpcore_mlp_w<W>_f16acc):
// with float16 accumulation asked for (-f16acc) those, else float32 accumulators, and 16 and 128 wide always
// float32. For each width a network of ReLU hidden layers whose widest are W tiles and whose edges have
// any width up to that, float32 and float16 I/O in both layouts, partial sample tiles, against float64
// within the backend's tolerance.
TEST_P(FusedBackend, RunTimeShapedReluKernelsAccumulateAsTheBackendAsks) {
  std::mt19937 rng(seed(23));
  Stats stats;
  const bool f16acc = GetParam().find("f16acc") != std::string::npos;
  for (std::size_t w = 1; w <= 8; ++w) {
    const std::size_t layers = 2 + (w + 1) % 3;
    const std::vector<std::size_t> widths = widths_of_width(rng, w, layers);
    std::vector<Activation> acts(layers - 1, Activation::make(ActivationKind::relu));
    acts.push_back(Activation::make(w % 2 ? ActivationKind::none : ActivationKind::sigmoid));
    const Model m = test::random_model(rng, widths, acts);
    const std::string name = shape_name(widths);
    const Network net(m, options_for(GetParam()));
    if (net.kernel().find("specialized") == std::string::npos) {
      EXPECT_TRUE(net.kernel().starts_with("run-time-shaped, " + std::to_string(16 * w) + " wide")) << name << ": " << net.kernel();
      EXPECT_EQ(accumulates_in_f16(net), f16acc && w >= 2 && w <= 7) << name << ": " << net.kernel();
    }
    const Layout first = w % 2 ? Layout::feature_major : Layout::sample_major, second = w % 2 ? Layout::sample_major : Layout::feature_major;
    check<float>(m, GetParam(), 33, rng, "float32 " + name, stats, 0, first);
    check<std::uint16_t>(m, GetParam(), 17, rng, "float16 " + name, stats, 0, second);
  }
  std::cout << GetParam() << ": worst relative error " << stats.worst << "\n";
}

// Sample-major rows that row vectors cannot read (1-3, 5-7, 13, 17-19, 23 and 33 features), in batches of
// whole sample blocks from aligned buffers (the 16-wide kernel stages them in shared memory) and of a
// partial one from unaligned buffers: whole tiles load without a branch per value (ops::RowLoads: the
// 16-wide run-time-shaped kernel only each row's features, under their tests, the wider ones and kernels
// specialized for such inputs from features clamped into the row, padding features then selected to 0),
// in first layers of one input tile and of several, and in the 48-wide run-time-shaped kernel with 17-23
// features a tile past the input. (Specialized first layers of at most 8 features run narrow, with a branch
// per value.) The input ends at the last sample's last feature: AddressSanitizer (.ci/run) sees a load
// past it on the emulated backends.
TEST_P(FusedBackend, SampleMajorRowsNotReadAsVectorsMatchFloat64) {
  std::mt19937 rng(seed(31));
  Stats stats;
  using K = ActivationKind;
  for (const std::size_t in : {1, 2, 3, 5, 6, 7, 13, 17, 18, 19, 23, 33}) {
    for (const std::size_t width : {16, 24, 48}) {
      const Model m = test::random_model(rng, {in, width, width, 3}, {activation_of(K::relu), activation_of(K::relu), activation_of(K::none)});
      const std::string name = std::to_string(in) + "-" + std::to_string(width) + "x2-3";
      for (const auto& [batch, offset] : {std::pair<std::size_t, std::size_t>{64, 0}, {35, 1}}) {
        const std::string what = name + ", batch " + std::to_string(batch) + ", offset " + std::to_string(offset);
        check<float>(m, GetParam(), batch, rng, "float32 " + what, stats, offset);
        check<std::uint16_t>(m, GetParam(), batch, rng, "float16 " + what, stats, offset);
      }
    }
  }
  std::cout << GetParam() << ": worst relative error " << stats.worst << "\n";
}

// Sample-major outputs whose rows row vectors cannot write (1-3, 5, 7, 13, 19, 33 units: within one output
// tile and past it; 4 and 20 units from buffers offset by one value), from run-time-shaped kernels 16-128
// wide and specialized ones, in whole sample blocks from aligned buffers and a partial one from unaligned
// buffers: whole tiles store each value under its unit's test alone where the policy says so
// (FusedPolicy::tested_row_stores). The output is poisoned and guarded after its end (check): a unit
// stored where it does not belong is a wrong value or a guard overwritten.
TEST_P(FusedBackend, SampleMajorOutputRowsNotWrittenAsVectorsMatchFloat64) {
  std::mt19937 rng(seed(32));
  Stats stats;
  using K = ActivationKind;
  for (const std::size_t out : {1, 2, 3, 4, 5, 7, 13, 19, 20, 33}) {
    for (const std::size_t width : {16, 40, 64, 100, 128}) {
      // (three hidden layers: 4-64x2-N would take the compiled-in 16-64x2-4 kernel)
      const Model m = test::random_model(rng, {4, width, width, width, out},
                                         {activation_of(K::relu), activation_of(K::relu), activation_of(K::relu), activation_of(K::none)});
      const std::string name = "4-" + std::to_string(width) + "x3-" + std::to_string(out);
      const std::string kernel = Network(m, options_for(GetParam())).kernel();
      EXPECT_TRUE(kernel.starts_with("specialized") || kernel.starts_with("run-time-shaped")) << name << ": " << kernel;
      for (const auto& [batch, offset] : {std::pair<std::size_t, std::size_t>{64, 0}, {35, 1}}) {
        const std::string what = name + ", batch " + std::to_string(batch) + ", offset " + std::to_string(offset);
        check<float>(m, GetParam(), batch, rng, "float32 " + what, stats, offset);
        check<std::uint16_t>(m, GetParam(), batch, rng, "float16 " + what, stats, offset);
      }
    }
  }
  std::cout << GetParam() << ": worst relative error " << stats.worst << "\n";
}

// The networks with compiled-in kernels (ops/fused_shapes.h), exactly and padded (edges of at most 8 and
// of more: narrow and full first and last layers on the NVIDIA float16-accumulating kernels), and the same
// shapes with other activations, which take the run-time-shaped kernel.
TEST_P(FusedBackend, FixedShapeKernelsMatchFloat64) {
  std::mt19937 rng(seed(8));
  Stats stats;
  const std::vector<std::vector<std::size_t>> shapes = {
      {32, 64, 64, 64, 64, 16}, {32, 128, 128, 128, 128, 16}, {16, 64, 64, 4}, {3, 64, 64, 64, 64, 1}, {20, 50, 60, 64, 49, 10},
      {8, 64, 64, 64, 64, 12}, {12, 64, 64, 64, 64, 8},    {1, 64, 64, 64, 64, 16}, {16, 64, 64, 13}, {32, 64, 64, 64, 64, 3}};
  for (const auto& widths : shapes)
    for (const auto hidden : {ActivationKind::relu, ActivationKind::silu}) {
      std::vector<Activation> acts(widths.size() - 1, Activation::make(hidden));
      acts.back() = Activation::make(ActivationKind::none);
      const Model m = test::random_model(rng, widths, acts);
      check(m, GetParam(), 333, rng, "fixed shape " + std::to_string(widths[0]) + "-" + std::to_string(widths[1]) + " " + to_string(hidden), stats);
    }
}

TEST_P(FusedBackend, BundledSampleModelsMatchFloat64) {
  std::mt19937 rng(seed(6));
  Stats stats;
  for (const char* name : {"heart_sdf", "all_activations"})
    check(load_model(std::string(MLPCORE_SOURCE_DIR) + "/models/" + name + ".safetensors"), GetParam(), 257, rng, name, stats);
}

// float16 input and output (the _f16 kernels) on the fixed shapes, shapes with every output width up to
// 16 (whole and partial row vectors) and partial sample tiles.
TEST_P(FusedBackend, Float16InputAndOutputMatchFloat64) {
  std::mt19937 rng(seed(9));
  Stats stats;
  std::vector<std::vector<std::size_t>> shapes = {{32, 64, 64, 64, 64, 16}, {32, 128, 128, 128, 128, 16}, {16, 64, 64, 4}, {3, 64, 64, 64, 64, 1}};
  for (std::size_t out = 1; out <= 16; out += 3) shapes.push_back({4 * out, 48, out});
  for (const auto& widths : shapes) {
    std::vector<Activation> acts(widths.size() - 1, Activation::make(ActivationKind::relu));
    acts.back() = Activation::make(ActivationKind::none);
    const Model m = test::random_model(rng, widths, acts);
    for (const std::size_t batch : {std::size_t{16}, std::size_t{77}})
      check<std::uint16_t>(m, GetParam(), batch, rng, "float16 " + std::to_string(widths[0]) + "-" + std::to_string(widths[1]) + "-" + std::to_string(widths.back()), stats);
  }
  std::cout << GetParam() << ": float16 I/O worst relative error " << stats.worst << "\n";
}

// Feature-major arrays ([dim, batch]: the kernels' _fm twins, or a specialized kernel built for that
// layout only): the compiled-in shapes, random ones (widths 1-128, every activation), float32 and float16,
// batches with partial tiles and several sample blocks.
TEST_P(FusedBackend, FeatureMajorArraysMatchFloat64) {
  std::mt19937 rng(seed(21));
  Stats stats;
  std::vector<std::vector<std::size_t>> shapes = {{32, 64, 64, 64, 64, 16}, {16, 64, 64, 4}, {3, 64, 64, 64, 64, 1}, {1, 1}, {128, 128, 128}};
  std::uniform_int_distribution<std::size_t> width(1, 128), depth(1, 4);
  for (int i = 0; i < 4; ++i) {
    std::vector<std::size_t> widths = {width(rng)};
    for (std::size_t l = depth(rng); l > 0; --l) widths.push_back(width(rng));
    shapes.push_back(widths);
  }
  for (const auto& widths : shapes) {
    std::vector<Activation> acts;
    for (std::size_t l = 0; l + 1 < widths.size(); ++l) acts.push_back(l + 2 == widths.size() ? Activation::make(ActivationKind::none) : random_activation(rng, false));
    const Model m = test::random_model(rng, widths, acts);
    std::string name;
    for (std::size_t w : widths) name += (name.empty() ? "" : "-") + std::to_string(w);
    for (const std::size_t batch : {std::size_t{1}, std::size_t{17}, std::size_t{300}})
      check<float>(m, GetParam(), batch, rng, "feature-major float32 " + name + " batch " + std::to_string(batch), stats, 0, Layout::feature_major);
    check<std::uint16_t>(m, GetParam(), 77, rng, "feature-major float16 " + name, stats, 0, Layout::feature_major);
    // Rows 16-byte aligned (NVIDIA's staged kernels copy whole blocks asynchronously, then the partial
    // last one by lane), and an input one value off alignment (every block by lane).
    check<std::uint16_t>(m, GetParam(), 328, rng, "feature-major float16 " + name + " batch 328", stats, 0, Layout::feature_major);
    check<float>(m, GetParam(), 36, rng, "feature-major float32 " + name + " at offset 1", stats, 1, Layout::feature_major);
  }
  std::cout << GetParam() << ": feature-major worst relative error " << stats.worst << "\n";
}

// A network built for both layouts, in each: above 64 wide with at most 8 inputs, NVIDIA's specialized
// kernels then run a narrow first layer feature-major only, each layout's kernel on a packing of its own.
TEST_P(FusedBackend, NetworksBuiltForBothLayoutsMatchFloat64InEach) {
  std::mt19937 rng(seed(23));
  Stats stats;
  for (const auto& widths : std::vector<std::vector<std::size_t>>{{8, 128, 128, 128, 1}, {3, 96, 96, 96, 96, 3}, {5, 112, 112, 9}, {3, 64, 64, 1}}) {
    std::vector<Activation> acts(widths.size() - 2, Activation::make(ActivationKind::relu));
    acts.push_back(Activation::make(ActivationKind::none));
    const Model m = test::random_model(rng, widths, acts);
    std::string name;
    for (std::size_t w : widths) name += (name.empty() ? "" : "-") + std::to_string(w);
    for (const Layout layout : {Layout::sample_major, Layout::feature_major}) {
      const std::string in = std::string(" ") + to_string(layout) + " ";
      check<float>(m, GetParam(), 300, rng, name + in + "float32", stats, 0, layout, true);
      check<std::uint16_t>(m, GetParam(), 77, rng, name + in + "float16", stats, 0, layout, true);
    }
  }
  std::cout << GetParam() << ": both layouts worst relative error " << stats.worst << "\n";
}

// A network serves the layouts it was built for; NetworkOptions::layouts must name one.
TEST_P(FusedBackend, LayoutsAreServedAsBuilt) {
  std::mt19937 rng(seed(22));
  const Model m = test::random_model(rng, {5, 40, 3}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  NetworkOptions none = options_for(GetParam());
  none.layouts = {false, false};
  EXPECT_THROW(Network(m, none), Error);
  NetworkOptions both = options_for(GetParam());
  both.layouts = {true, true};
  const Network net(m, both);
  std::vector<float> in(5 * 20), out_sm(3 * 20), out_fm(3 * 20);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 7) * 0.1f;
  std::vector<float> in_fm(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) in_fm[position(i, 5, 20, Layout::feature_major)] = in[i];
  net.infer(in.data(), out_sm.data(), 20);
  net.infer(in_fm.data(), out_fm.data(), 20, Layout::feature_major);
  for (std::size_t i = 0; i < out_sm.size(); ++i) EXPECT_EQ(out_fm[position(i, 3, 20, Layout::feature_major)], out_sm[i]) << i;
  const Network sample_major_only(m, options_for(GetParam()));
  if (sample_major_only.kernel().starts_with("specialized")) {
    try {
      sample_major_only.infer(in_fm.data(), out_fm.data(), 20, Layout::feature_major);
      FAIL() << "a specialized kernel built for sample-major arrays ran feature-major ones";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("feature_major"), std::string::npos) << e.what();
    }
  } else {
    EXPECT_NO_THROW(sample_major_only.infer(in_fm.data(), out_fm.data(), 20, Layout::feature_major)) << "built-in kernels serve both";
  }
}

// Batches over several sample blocks per wave (the emulated grid is at most 8 blocks of 4 waves, 32 samples
// each), ending in a partial block: the kernels that prefetch the next block's input (NVIDIA) use it.
TEST_P(FusedBackend, FixedShapesOverManySampleBlocksMatchFloat64) {
  std::mt19937 rng(seed(11));
  Stats stats;
  for (const std::vector<std::size_t>& widths : {std::vector<std::size_t>{16, 64, 64, 4}, std::vector<std::size_t>{3, 64, 64, 64, 64, 1}}) {
    std::vector<Activation> acts(widths.size() - 1, Activation::make(ActivationKind::relu));
    acts.back() = Activation::make(ActivationKind::none);
    const Model m = test::random_model(rng, widths, acts);
    const std::string name = std::to_string(widths[0]) + "-" + std::to_string(widths[1]) + "-" + std::to_string(widths.back());
    check<float>(m, GetParam(), 2 * 1024 + 53, rng, "float32 " + name, stats);
    check<std::uint16_t>(m, GetParam(), 2 * 1024 + 53, rng, "float16 " + name, stats);
  }
}

// Buffers that are not 16-byte aligned (one value into an aligned allocation) work in both precisions.
TEST_P(FusedBackend, UnalignedBuffersMatchFloat64) {
  std::mt19937 rng(seed(10));
  Stats stats;
  const Model m = test::random_model(rng, {16, 64, 64, 4}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  check<float>(m, GetParam(), 100, rng, "float32 at offset 1", stats, 1);
  check<std::uint16_t>(m, GetParam(), 100, rng, "float16 at offset 1", stats, 1);
}

TEST_P(FusedBackend, LayersWiderThanTheFusedKernelAreRefused) {
  std::mt19937 rng(seed(7));
  const Model m = test::random_model(rng, {3, 200, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  try {
    Network net(m, options_for(GetParam()));
    FAIL() << "accepted a 200-wide layer";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported_model) << e.what();
    EXPECT_NE(std::string(e.what()).find("layers.0: 3 -> 200 is wider than the 128"), std::string::npos) << e.what();
  }
}

// The device API (ops/device_api.h) runs full 16x16 tiles accumulating in float32: a network packed for
// float16 accumulators (the -f16acc backends, but on the run-time-shaped kernels without such twins)
// offers no view for it and says why; every other one does, in full tiles where its kernels run narrow edges (16-64x2-4's last
// layer on NVIDIA; the emulated backends' views are in host memory, where the test reads them).
TEST_P(FusedBackend, DeviceViewIsOfferedWhereTheNetworkAccumulatesInFloat32) {
  std::mt19937 rng(seed(12));
  const auto relu = Activation::make(ActivationKind::relu), none = Activation::make(ActivationKind::none);
  for (const Model& m : {test::random_model(rng, {3, 16, 1}, {relu, none}), test::random_model(rng, {16, 64, 64, 4}, {relu, relu, none})}) {
    const Network net(m, options_for(GetParam()));
    if (!accumulates_in_f16(net)) {
      const DeviceNetworkView view = net.device_view();
      EXPECT_NE(view.weights, nullptr) << net.kernel();
      if (GetParam().starts_with("emu-"))
        for (unsigned l = 0; l < view.num_layers; ++l) {
          const ops::LayerDesc& d = static_cast<const ops::LayerDesc*>(view.layers)[l];
          EXPECT_TRUE(d.k == 16 && d.n == 16) << net.kernel() << ": layer " << l << " packed " << int{d.k} << "-" << int{d.n};
        }
      continue;
    }
    try {
      (void)net.device_view();
      FAIL() << "a float16-accumulating network offered a device view";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("packs this network for float16 accumulators"), std::string::npos) << e.what();
    }
  }
}

void expect_refused(const Model& m, const std::string& backend, const std::string& needle) {
  try {
    Network net(m, options_for(backend));
    FAIL() << backend << " accepted a model whose float16 operands overflow";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported_model);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// What float16 operands cannot carry is refused when the network is built, naming the tensor and element:
// a hidden layer's bias beyond 65504 (its sum is the next layer's float16 operand: AMD's cvt_pkrtz would
// saturate it to 65504, NVIDIA's cvt to inf), and a weight beyond it. A last layer's bias is only refused
// where the network accumulates in float16.
TEST_P(FusedBackend, ValuesBeyondFloat16OperandsAreRefused) {
  // The case a user hit: 2 -> 1 (bias 1e5, relu) -> 1 (weight 1e-3), which the cpu backend computes as 100.
  std::mt19937 tiny_rng(1);
  Model tiny = test::random_model(tiny_rng, {2, 1, 1},
                                  {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::none)});
  tiny.layers[0].bias[0] = 1e5f;
  tiny.layers[1].weight[0] = 1e-3f;
  expect_refused(tiny, GetParam(), "layers.0.bias[0]: value 100000");
  EXPECT_NEAR(Network(tiny, "cpu").infer(std::vector<float>{0.0f, 0.0f})[0], 100.0f + tiny.layers[1].bias[0], 1e-3);

  std::mt19937 rng(seed(13));
  const auto relu = Activation::make(ActivationKind::relu), none = Activation::make(ActivationKind::none);
  Model m = test::random_model(rng, {16, 64, 64, 4}, {relu, relu, none});
  Model weight = m;
  weight.layers[2].weight[5] = -7e4f;
  expect_refused(weight, GetParam(), "layers.2.weight[5]: value -70000");
  m.layers[2].bias[3] = 1e5f;
  if (GetParam().find("f16acc") != std::string::npos)  // 16-64x2-4 is compiled in: float16 accumulation on every -f16acc path
    expect_refused(m, GetParam(), "layers.2.bias[3]: value 100000");
  else
    EXPECT_NO_THROW(Network(m, options_for(GetParam())));
}

// The outputs of `net` for `input` in I/O type T (float, or float16 bit patterns), as floats; the call
// must fail with ErrorCode::float16_range where `out_of_range`.
template <class T>
std::vector<float> run_checked(const Network& net, const std::vector<float>& input, bool out_of_range) {
  const std::size_t batch = input.size() / net.input_dim();
  std::vector<T> in(input.size()), out(batch * net.output_dim());
  std::transform(input.begin(), input.end(), in.begin(), test::to_io<T>);
  try {
    net.infer(in.data(), out.data(), batch);
    EXPECT_FALSE(out_of_range) << "no float16_range error";
  } catch (const Error& e) {
    EXPECT_TRUE(out_of_range) << e.what();
    EXPECT_EQ(e.code(), ErrorCode::float16_range) << e.what();
    EXPECT_NE(std::string(e.what()).find("beyond float16's range (|x| >= 65504)"), std::string::npos) << e.what();
  }
  std::vector<float> result(out.size());
  std::transform(out.begin(), out.end(), result.begin(), test::from_io<T>);
  return result;
}

// 2 -> 1 (hidden) -> 1: the hidden value is x0 + x1 + bias, the output a thousandth of its activation.
Model sum_then_thousandth(ActivationKind hidden, float bias = 0.0f) {
  std::mt19937 rng(16);
  Model m = test::random_model(rng, {2, 1, 1}, {Activation::make(hidden), Activation::make(ActivationKind::none)});
  m.layers[0].weight = {1.0f, 1.0f};
  m.layers[0].bias = {bias};
  m.layers[1].weight = {1e-3f};
  m.layers[1].bias = {0.0f};
  return m;
}

// 40 samples of (1, 1), but sample 17 is (x, x).
std::vector<float> with_sample_17(float x) {
  std::vector<float> in(2 * 40, 1.0f);
  in[34] = in[35] = x;
  return in;
}

// What float16 operands cannot carry at run time: an input or hidden activation at or beyond 65504, which
// depends on the data, so no check of the model can refuse it. The kernels check every value they hand
// the matrix instructions as an operand, and such a call fails with ErrorCode::float16_range instead of
// returning what cvt_pkrtz's saturation (AMD) or infinities (NVIDIA) make of it. Values just inside the
// range, ReLU's zeros for large negative sums and the bounded activations of large sums (unless the sums
// are float16 themselves) are computed as usual, a NaN input is no error (the other samples are right),
// and neither are the samples that pad a batch to whole tiles.
TEST_P(FusedBackend, ValuesLeavingFloat16AtRunTimeAreReported) {
  std::mt19937 rng(seed(16));
  const auto tiny = [&](ActivationKind hidden) { return Network(sum_then_thousandth(hidden), options_for(GetParam())); };
  const Network relu = tiny(ActivationKind::relu);
  run_checked<float>(relu, with_sample_17(4e4f), true);  // the case a user hit, at run time: 8e4 after the first layer
  run_checked<std::uint16_t>(relu, with_sample_17(4e4f), true);
  run_checked<float>(relu, with_sample_17(1e5f), true);  // an input beyond the range
  run_checked<float>(relu, with_sample_17(-1e5f), true);   // ... which only the input check sees (ReLU makes 0)
  run_checked<std::uint16_t>(relu, with_sample_17(-1e5f), true);  // (-inf in float16)
  for (const auto& got : {run_checked<float>(relu, with_sample_17(3e4f), false), run_checked<std::uint16_t>(relu, with_sample_17(3e4f), false)}) {
    EXPECT_NEAR(got[17], 60.0, 60.0 * tolerance(GetParam()));
    EXPECT_NEAR(got[0], 2e-3, tolerance(GetParam()));
  }
  // ReLU zeroes -8e4, unless that is a float16 sum (-inf, which could hide later positive terms)
  const auto zeroed = run_checked<float>(relu, with_sample_17(-4e4f), accumulates_in_f16(relu));
  if (!accumulates_in_f16(relu)) EXPECT_NEAR(zeroed[17], 0.0, tolerance(GetParam()));
  EXPECT_NEAR(run_checked<float>(relu, with_sample_17(std::nanf("")), false)[16], 2e-3, tolerance(GetParam()));
  run_checked<float>(tiny(ActivationKind::none), with_sample_17(-4e4f), true);  // -8e4: either sign counts
  const Network sigmoid = tiny(ActivationKind::sigmoid);  // float16 sums count: 8e4 overflows them
  const auto squashed = run_checked<float>(sigmoid, with_sample_17(4e4f), accumulates_in_f16(sigmoid));
  if (!accumulates_in_f16(sigmoid)) EXPECT_NEAR(squashed[17], 1e-3, tolerance(GetParam()));
  // exp(11.5) is beyond the range: a batch of 40 (a partial tile) whose padding samples held zeros would
  // fail; the real samples, (-1, -1), give exp(9.5) = 13360.
  const Network exponential(sum_then_thousandth(ActivationKind::exponential, 11.5f), options_for(GetParam()));
  const auto exp_out = run_checked<float>(exponential, std::vector<float>(2 * 40, -1.0f), false);
  EXPECT_NEAR(exp_out[39], std::exp(9.5) * 1e-3, std::exp(9.5) * 1e-3 * tolerance(GetParam()));

  // A compiled-in shape (16-64-64-4) over several sample blocks: hidden unit 5 of the first layer sums the
  // inputs, so a sample of 16 inputs of 5000 takes it to 8e4.
  const auto relu_act = Activation::make(ActivationKind::relu);
  Model m = test::random_model(rng, {16, 64, 64, 4}, {relu_act, relu_act, Activation::make(ActivationKind::none)});
  std::fill_n(m.layers[0].weight.begin() + 5 * 16, 16, 1.0f);
  m.layers[0].bias[5] = 0.0f;
  const Network net(m, options_for(GetParam()));
  const std::size_t batch = 1000;
  auto input = test::random_inputs(rng, batch * 16);
  std::fill_n(input.begin() + 16 * 901, 16, 3e3f);  // 4.8e4: inside
  const auto got = run_checked<float>(net, input, false);
  const auto ref = test::naive_forward(m, input, batch);
  // Relative to the magnitude of the terms each output sums (at least 1): sample 901's hidden values reach
  // 4.8e4, where rounding a float16 operand moves it by up to 32, and its outputs can cancel to far less.
  Model hidden_layers = m;
  hidden_layers.layers.pop_back();
  const auto hidden = test::naive_forward(hidden_layers, input, batch);
  const Layer& last = m.layers.back();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const std::size_t sample = i / last.out, unit = i % last.out;
    double terms = std::fabs(last.bias[unit]);
    for (std::size_t j = 0; j < last.in; ++j) terms += std::fabs(last.weight[unit * last.in + j] * hidden[sample * last.in + j]);
    ASSERT_LE(std::fabs(got[i] - ref[i]) / std::max({1.0, std::fabs(ref[i]), terms}), tolerance(GetParam())) << i;
  }
  std::fill_n(input.begin() + 16 * 901, 16, 5e3f);
  run_checked<float>(net, input, true);
  run_checked<std::uint16_t>(net, input, true);
  EXPECT_FALSE(net.enqueued_out_of_range()) << "no enqueued calls";
}

// A SIREN-style first layer: the sine of arguments up to +-1e4, which the hardware sine alone gets wrong
// (AMD's v_sin_f32 has a limited valid range, NVIDIA's MUFU.SIN loses accuracy): the kernels reduce them
// first (GpuMath::reduce_2pi). Multiples of 8 and a zero bias keep every argument exact in float16, in
// float32 and in float16 accumulators.
TEST_P(FusedBackend, SineOfLargeArgumentsMatchesFloat64) {
  std::mt19937 rng(seed(15));
  Model m = test::random_model(rng, {1, 1}, {Activation::make(ActivationKind::sine)});
  m.layers[0].weight = {1.0f};
  m.layers[0].bias = {0.0f};
  std::vector<float> x;
  for (int k = -1250; k <= 1250; ++k) x.push_back(8.0f * static_cast<float>(k));
  const auto got = Network(m, options_for(GetParam())).infer(x);
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = std::sin(static_cast<double>(x[i]));
    worst = std::max(worst, std::fabs(got[i] - want));
    ASSERT_LE(std::fabs(got[i] - want), tolerance(GetParam())) << "sin(" << x[i] << ")";
  }
  std::cout << GetParam() << ": sine of |x| <= 1e4, worst error " << worst << "\n";
}

// Inputs and hidden activations below float16's smallest normal value (6.1e-5), which cvt_pkrtz turns
// into float16 subnormals: kept by most matrix cores, flushed to zero by gfx90a's MFMA (emu-cdna2).
// Either way within the tolerance of float64.
TEST_P(FusedBackend, SubnormalHeavyInputsMatchFloat64) {
  std::mt19937 rng(seed(13));
  const auto none = Activation::make(ActivationKind::none), relu = Activation::make(ActivationKind::relu);
  Model m = test::random_model(rng, {8, 32, 32, 4}, {relu, none, none});
  for (auto& b : m.layers[0].bias) b *= 1e-4f;  // the first layer's outputs stay small too
  const std::size_t batch = 100;
  const auto input = test::random_inputs(rng, batch * 8, -4e-5f, 4e-5f);
  const auto got = Network(m, options_for(GetParam())).infer(input);
  const auto ref = test::naive_forward(m, input, batch);
  for (std::size_t i = 0; i < ref.size(); ++i)
    ASSERT_LE(std::fabs(got[i] - ref[i]) / std::max(1.0, std::fabs(ref[i])), tolerance(GetParam())) << "element " << i;
}

#ifndef MLPCORE_GPU_TESTS
// The difference between the two CDNA models, at the network level: with gfx90a's flushing the
// subnormal inputs contribute nothing, so the outputs are exactly those of zero inputs; gfx942 keeps
// them, and the outputs move.
TEST(EmulatedChips, Cdna2FlushesFloat16SubnormalsWhereCdna3KeepsThem) {
  std::mt19937 rng(14);
  const auto none = Activation::make(ActivationKind::none);
  const Model m = test::random_model(rng, {8, 16, 4}, {none, none});
  const std::size_t batch = 64;
  const auto tiny = test::random_inputs(rng, batch * 8, 1e-6f, 4e-5f);
  const std::vector<float> zeros(tiny.size(), 0.0f);
  const Network cdna2(m, "emu-cdna2"), cdna3(m, "emu-cdna");
  EXPECT_EQ(cdna2.infer(tiny), cdna2.infer(zeros));
  EXPECT_NE(cdna3.infer(tiny), cdna3.infer(zeros));
  EXPECT_EQ(cdna3.infer(zeros), cdna2.infer(zeros)) << "no subnormals, no difference";
}
#endif

#ifdef MLPCORE_GPU_TESTS
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FusedBackend);  // AtLeastOneGpuBackendRuns says why

TEST(GpuBackends, AtLeastOneGpuBackendRuns) {
  std::string why;
  for (const auto& b : list_backends())
    if (b.name == "cuda" || b.name == "hip") why += b.name + ": " + (b.available ? b.description : b.unavailable_reason) + "\n";
  EXPECT_FALSE(backends_under_test().empty()) << why;
  std::cout << why;
}

// enqueue cannot throw for its kernel: a call whose values left float16's range is recorded, and
// Network::enqueued_out_of_range reports it once, then clears it. (Device buffers through the CUDA driver.)
TEST_P(FusedBackend, EnqueuedCallsRecordValuesLeavingFloat16) {
  if (!GetParam().starts_with("cuda")) GTEST_SKIP() << "device buffers through the CUDA driver";
  const detail::CudaDriver driver;
  ASSERT_EQ(driver.try_init(), 0);
  const detail::CudaOnDevice gpu(driver, 0);
  const Network net(sum_then_thousandth(ActivationKind::relu), options_for(GetParam()));
  const auto enqueued = [&](float x) {
    const auto in = with_sample_17(x);
    std::vector<float> out(40);
    void* d_in = gpu.malloc(in.size() * sizeof(float));
    void* d_out = gpu.malloc(out.size() * sizeof(float));
    gpu.copy(d_in, in.data(), in.size() * sizeof(float));
    net.enqueue(static_cast<const float*>(d_in), static_cast<float*>(d_out), 40);
    gpu.copy(out.data(), d_out, out.size() * sizeof(float));  // on the null stream: after the kernel
    gpu.free(d_in);
    gpu.free(d_out);
    return out;
  };
  enqueued(4e4f);
  EXPECT_TRUE(net.enqueued_out_of_range());
  EXPECT_FALSE(net.enqueued_out_of_range()) << "reported once";
  EXPECT_NEAR(enqueued(3e4f)[17], 60.0, 60.0 * tolerance(GetParam()));
  EXPECT_FALSE(net.enqueued_out_of_range());
}

// CUDA device memory is mapped in the process without host access: the host backends refuse it,
// naming the buffer, instead of crashing.
TEST(GpuBackends, HostBackendsRefuseCudaDeviceMemory) {
  const detail::CudaDriver driver;
  int devices = 0;
  if (!driver.loaded() || driver.try_init() != 0 || driver.try_device_count(devices) != 0 || devices == 0) GTEST_SKIP() << "no CUDA device";
  const detail::CudaOnDevice gpu(driver, 0);
  const Model m = sum_then_thousandth(ActivationKind::relu);
  void* d_in = gpu.malloc(40 * m.input_dim() * sizeof(float));
  void* d_out = gpu.malloc(40 * m.output_dim() * sizeof(float));
  const std::vector<float> in(40 * m.input_dim(), 1.0f);
  std::vector<float> out(40 * m.output_dim(), NAN);
  for (const char* backend : {"cpu", "emu-nvidia"}) {
    const Network net(m, backend);
    for (const bool enqueue : {false, true}) {
      const auto call = [&](const void* input, void* output) {
        const auto* i = static_cast<const float*>(input);
        auto* o = static_cast<float*>(output);
        enqueue ? net.enqueue(i, o, 40) : net.infer(i, o, 40);
      };
      const std::string name = std::string(backend) + (enqueue ? ": enqueue" : ": infer");
      try {
        call(d_in, out.data());
        ADD_FAILURE() << name << " took a device input";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("input: is not host memory this process can read"), std::string::npos) << e.what();
      }
      try {
        call(in.data(), d_out);
        ADD_FAILURE() << name << " took a device output";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("output: is not host memory this process can write"), std::string::npos) << e.what();
      }
    }
  }
  for (const float v : out) EXPECT_TRUE(std::isnan(v)) << "a refused call wrote its output";
  gpu.free(d_in);
  gpu.free(d_out);
}

// A large batch against the CPU backend (the float64 reference is too slow for 2^20 samples).
TEST_P(FusedBackend, MillionSampleBatchMatchesTheCpuBackend) {
  std::mt19937 rng(seed(9));
  std::vector<Activation> acts(5, Activation::make(ActivationKind::relu));
  acts.back() = Activation::make(ActivationKind::none);
  const Model m = test::random_model(rng, {32, 64, 64, 64, 64, 16}, acts);
  const std::size_t batch = (1u << 20) + 3;
  const auto input = test::random_inputs(rng, batch * 32);
  const auto got = Network(m, options_for(GetParam())).infer(input);
  const auto want = Network(m, "cpu").infer(input);
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / std::max(1.0, std::fabs(double(want[i]))));
  EXPECT_LE(worst, tolerance(GetParam()));
  std::cout << GetParam() << ": 2^20 + 3 samples, worst relative error vs cpu " << worst << "\n";
}

// `net` (of `m`) on `batch` random samples in `layout`, its I/O of type T, against the CPU backend (the
// float64 reference takes minutes at 2^20 samples here).
template <class T>
void check_against_the_cpu_backend(const Network& net, const Model& m, const std::string& backend, std::size_t batch, Layout layout,
                                   std::mt19937& rng, const std::string& what) {
  auto values = test::random_inputs(rng, batch * m.input_dim());
  std::vector<T> input(values.size()), output(batch * m.output_dim(), to_io<T>(NAN));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = from_io(input[position(i, m.input_dim(), batch, layout)] = to_io<T>(values[i]));
  net.infer(input.data(), output.data(), batch, layout);
  const auto want = Network(m, "cpu").infer(values);
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double got = from_io(output[position(i, m.output_dim(), batch, layout)]);
    ASSERT_FALSE(std::isnan(got)) << what << ": output " << i << " never written";
    worst = std::max(worst, std::fabs(got - want[i]) / std::max(1.0, std::fabs(double(want[i]))));
  }
  EXPECT_LE(worst, tolerance(backend)) << what;
  std::cout << backend << ": " << what << ", worst relative error vs cpu " << worst << "\n";
}

// Feature-major calls of 2^20 samples or more take the kernel's large-batch twin where the plan has one for
// their I/O type (engine/src/fused_plan.h, CallRouting): specialized networks with twins of four sample
// tiles per warp for both I/O types (1 output) and for float16 I/O only (32 outputs,
// ops::large_batch_float32_io), and with input-prefetching twins (48 inputs); the built-in kernels' twins of
// 16-wide networks (four sample tiles) and 80-112-wide ones (two).
TEST_P(FusedBackend, LargeFeatureMajorBatchesMatchTheCpuBackend) {
  std::mt19937 rng(seed(10));
  struct Case {
    std::vector<std::size_t> widths;
    const char* twin;  // what Network::kernel() says of it last, for specialized kernels or the built-in ones
    bool builtin;
  };
  const std::vector<Case> cases = {{{3, 32, 32, 32, 32, 1}, "4 sample tiles per wave from 2^20 feature-major samples", false},
                                   {{1, 32, 32, 32, 32}, "4 sample tiles per wave from 2^20 feature-major samples with float16 I/O", false},
                                   {{48, 64, 64, 64, 4}, "input prefetched from 2^20 feature-major samples with float16 I/O", false},
                                   {{2, 16, 16, 16, 3}, "4 sample tiles per wave from 2^20 feature-major samples", true},
                                   {{24, 96, 96, 96, 12}, "2 sample tiles per wave from 2^20 feature-major samples", true}};
  for (const auto& [widths, twin, builtin] : cases) {
    std::vector<Activation> acts;
    // (the built-in kernels' twins are ReLU's: FusedPlan gives the per-tile twins of other activations none)
    for (std::size_t l = 0; l + 2 < widths.size(); ++l) acts.push_back(builtin ? Activation::make(ActivationKind::relu) : random_activation(rng, false));
    acts.push_back(Activation::make(ActivationKind::none));
    const Model m = test::random_model(rng, widths, acts);
    NetworkOptions options = options_for(GetParam());
    options.layouts = {false, true};
    const Network net(m, options);
    // (the description's end, or before what a specialized kernel's adds: ", compiled by ...")
    const std::string kernel = net.kernel();
    if (GetParam().starts_with("cuda") && GetParam().ends_with(kBuiltin) == builtin)
      EXPECT_TRUE(kernel.ends_with(twin) || kernel.find(std::string(twin) + ",") != std::string::npos) << kernel;
    // 2^20 samples: rows aligned for the vector loads and stores of column I/O; 2^20 + 17: the element path.
    for (const auto& [batch, name] : {std::pair{std::size_t{1} << 20, "2^20"}, std::pair{(std::size_t{1} << 20) + 17, "2^20 + 17"}}) {
      const std::string what = std::to_string(m.output_dim()) + " outputs, " + name + " feature-major samples, ";
      check_against_the_cpu_backend<float>(net, m, GetParam(), batch, Layout::feature_major, rng, what + "float32 I/O");
      check_against_the_cpu_backend<std::uint16_t>(net, m, GetParam(), batch, Layout::feature_major, rng, what + "float16 I/O");
    }
  }
}

// Calls of at most 2 blocks per multiprocessor take a kernel's small-batch twin (engine/src/fused_plan.h,
// CallRouting), larger ones the kernel, in both layouts and I/O types, at 1000 samples (the twin on a GPU of
// 8 multiprocessors or more) and 2^17 + 3 (the kernel on one of fewer than 256), against the CPU backend:
// specialized networks up to 64 wide with one input tile (the twin: the kernel's code assembled without its
// register bound), and the built-in kernels' twins of ReLU networks 40, 64, 96 and 112 wide (loading
// weights a tile ahead, ops::runtime_small_batch_policy; inputs of 1-3 tiles, padded layers).
TEST_P(FusedBackend, SmallBatchTwinsAndTheirKernelsMatchTheCpuBackend) {
  std::mt19937 rng(seed(11));
  struct Case {
    std::vector<std::size_t> widths;
    bool builtin;  // a case of the built-in kernels' twins: ReLU hidden layers, which theirs have compiled in
  };
  const std::vector<Case> cases = {{{3, 64, 64, 64, 64, 1}, false},
                                   {{16, 48, 48, 48, 5}, false},
                                   {{9, 40, 40, 40, 40, 2}, true},
                                   {{3, 64, 64, 64, 64, 64, 64, 3}, true},
                                   {{32, 96, 90, 96, 4}, true},
                                   {{24, 100, 100, 100, 8}, true},
                                   {{40, 112, 112, 16}, true}};
  for (const auto& [widths, builtin] : cases) {
    std::vector<Activation> acts;
    for (std::size_t l = 0; l + 2 < widths.size(); ++l) acts.push_back(builtin ? Activation::make(ActivationKind::relu) : random_activation(rng, false));
    acts.push_back(Activation::make(ActivationKind::none));
    const Model m = test::random_model(rng, widths, acts);
    NetworkOptions options = options_for(GetParam());
    options.layouts = {true, true};
    const Network net(m, options);
    if (GetParam().starts_with("cuda") && GetParam().ends_with(kBuiltin) == builtin)
      EXPECT_NE(net.kernel().find(builtin ? ", twins loading weights a tile ahead for small batches" : ", twins without the register bound for small batches"),
                std::string::npos)
          << net.kernel();
    for (const Layout layout : {Layout::sample_major, Layout::feature_major})
      for (const std::size_t batch : {std::size_t{1000}, (std::size_t{1} << 17) + 3}) {
        const std::string what = std::to_string(widths.size() - 2) + " hidden layers, " + std::to_string(batch) + " samples, " +
                                 (layout == Layout::feature_major ? "feature-major, " : "sample-major, ");
        check_against_the_cpu_backend<float>(net, m, GetParam(), batch, layout, rng, what + "float32 I/O");
        check_against_the_cpu_backend<std::uint16_t>(net, m, GetParam(), batch, layout, rng, what + "float16 I/O");
      }
  }
}
#endif

INSTANTIATE_TEST_SUITE_P(Backends, FusedBackend, ::testing::ValuesIn(backends_under_test()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name)
    if (c == '-' || c == '+') c = '_';
  return name;
});

}  // namespace
}  // namespace mlpcore
