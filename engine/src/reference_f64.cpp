#include <algorithm>
#include <cmath>

#include "mlpcore/error.h"
#include "mlpcore/reference.h"

namespace mlpcore {

std::vector<double> reference_forward(const Model& model, std::span<const float> input, std::size_t batch) {
  model.validate("model");
  if (input.size() != batch * model.input_dim())
    throw Error(ErrorCode::invalid_argument, "reference_forward", "input", "size does not match batch*input_dim");
  std::vector<double> out;
  out.reserve(batch * model.output_dim());
  std::vector<double> x, y;
  for (std::size_t s = 0; s < batch; ++s) {
    x.assign(input.begin() + static_cast<std::ptrdiff_t>(s * model.input_dim()),
             input.begin() + static_cast<std::ptrdiff_t>((s + 1) * model.input_dim()));
    for (const auto& l : model.layers) {
      y.assign(l.out, 0.0);
      for (std::size_t o = 0; o < l.out; ++o) {
        double acc = l.bias[o];
        for (std::size_t i = 0; i < l.in; ++i) acc += static_cast<double>(l.weight[o * l.in + i]) * x[i];
        y[o] = apply(l.activation, acc);
      }
      x.swap(y);
    }
    out.insert(out.end(), x.begin(), x.end());
  }
  return out;
}

Deviation compare(std::span<const float> output, std::span<const double> reference) {
  if (output.size() != reference.size())
    throw Error(ErrorCode::invalid_argument, "compare", "output", "size differs from the reference's");
  Deviation d;
  for (std::size_t i = 0; i < output.size(); ++i) {
    const double y = output[i], r = reference[i];
    double abs_err = 0.0;
    if (!(y == r || (std::isnan(y) && std::isnan(r)))) {
      abs_err = std::fabs(y - r);
      if (!std::isfinite(abs_err)) abs_err = INFINITY;
    }
    const double rel_err = std::isinf(abs_err) ? INFINITY : abs_err / std::max(1.0, std::fabs(r));
    d.max_abs = std::max(d.max_abs, abs_err);
    if (rel_err > d.max_rel) {
      d.max_rel = rel_err;
      d.worst = i;
    }
  }
  return d;
}

}  // namespace mlpcore
