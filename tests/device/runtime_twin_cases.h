#pragma once
// What the emulator tests of the run-time-shaped kernels' twins share: networks given by their widths and
// each layer's activation kind, and the widths an X-macro list of ops/fused_shapes.h names.
#include <iostream>
#include <random>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/mlp_network.h"
#include "tests/test_util.h"

namespace mlpcore::test {

struct TwinCase {
  std::vector<std::size_t> widths;
  std::vector<ActivationKind> kinds;  // one per layer; leaky ReLU's slope 0.1
};

inline Model twin_case_model(const TwinCase& c, std::mt19937& rng) {
  std::vector<Activation> acts;
  for (const ActivationKind k : c.kinds) acts.push_back(k == ActivationKind::leaky_relu ? Activation::make(k, 0.1f) : Activation::make(k));
  return random_model(rng, c.widths, acts);
}

// f(std::integral_constant<int, W>{}, model) for W = 1 .. ops::kMaxTilesPerLayer, for a network 16 W wide
// with three hidden layers (no compiled-in shape has three) of ReLU, then of SiLU, from 3 inputs (and with
// wide_inputs, then from as many inputs as the hidden layers' units) to 2 outputs.
template <class F>
void for_each_uniform_network(std::mt19937& rng, F f, bool wide_inputs = false) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (
        [&] {
          const std::size_t width = 16 * (I + 1);
          for (const std::size_t inputs : {std::size_t{3}, width}) {
            if (inputs == width && !wide_inputs) break;
            for (const ActivationKind hidden : {ActivationKind::relu, ActivationKind::silu}) {
              const Activation act = Activation::make(hidden);
              f(std::integral_constant<int, I + 1>{},
                random_model(rng, {inputs, width, width, width, 2}, {act, act, act, Activation::make(ActivationKind::none)}));
            }
          }
        }(),
        ...);
  }(std::make_integer_sequence<int, ops::kMaxTilesPerLayer>{});
}

inline void print_worst_errors(double worst, double worst_f16acc) {
  std::cout << "worst relative error " << worst << " (tolerance 1e-2), with float16 accumulation " << worst_f16acc << " (tolerance 3e-2)\n";
}

}  // namespace mlpcore::test

// The widths (in tiles) that LIST, an X-macro list of ops/fused_shapes.h, names.
#define MLPCORE_INSERT_WIDTH(W) widths.insert(W);
#define MLPCORE_WIDTH_SET(LIST)   \
  ([] {                           \
    std::set<int> widths;         \
    LIST(MLPCORE_INSERT_WIDTH)    \
    return widths;                \
  }())
