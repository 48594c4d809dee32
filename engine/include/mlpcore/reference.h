#pragma once
// The float64 reference every backend is checked against, and the error measure used to compare.
#include <cstddef>
#include <span>
#include <vector>

#include "mlpcore/model.h"

namespace mlpcore {

// Plain float64 evaluation of the model: [batch, input_dim] -> [batch, output_dim].
std::vector<double> reference_forward(const Model& model, std::span<const float> input, std::size_t batch);

struct Deviation {
  double max_abs = 0.0;     // max |y - r|
  double max_rel = 0.0;     // max |y - r| / max(1, |r|): what tolerances bound
  std::size_t worst = 0;    // index of the element with the largest max_rel
  bool within(double tolerance) const { return max_rel <= tolerance; }
};

// Equal infinities and NaN against NaN count as exact; a NaN or infinity on one side only is infinitely wrong.
Deviation compare(std::span<const float> output, std::span<const double> reference);

}  // namespace mlpcore
