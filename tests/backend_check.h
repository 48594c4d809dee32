#pragma once
// A backend network (engine/src/backend.h) run on random inputs against the float64 reference: the tests
// that build one from a plan of their own (specialized sources, large-batch twins on small batches).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/src/backend.h"
#include "tests/test_util.h"

namespace mlpcore::test {

// Runs `batch` random samples in `layout` and I/O type T (float or float16 bits) through `net`, and checks
// every output against the float64 reference of the inputs as stored: within `tolerance` relative to
// max(1, |r|), every output written (the output is poisoned with NaN first), nothing past its end. `worst`
// keeps the largest error seen.
template <class T>
void check_backend_batch(const detail::BackendNetwork& net, const Model& model, std::size_t batch, Layout layout, double tolerance, std::mt19937& rng,
                         const std::string& what, double& worst) {
  auto values = random_inputs(rng, batch * model.input_dim());
  std::vector<T> input(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)  // the reference sees the input as stored
    values[i] = from_io(input[position(i, model.input_dim(), batch, layout)] = to_io<T>(values[i]));
  const std::size_t n = batch * model.output_dim();
  std::vector<T> output(n + 32);
  const T poison = to_io<T>(NAN), guard = to_io<T>(12345.0f);
  std::fill(output.begin(), output.begin() + static_cast<std::ptrdiff_t>(n), poison);
  std::fill(output.begin() + static_cast<std::ptrdiff_t>(n), output.end(), guard);
  net.infer({input.data(), output.data(), batch, std::is_same_v<T, float> ? detail::Io::f32 : detail::Io::f16, layout});
  const auto ref = naive_forward(model, values, batch);
  for (std::size_t i = 0; i < n; ++i) {
    const float y = from_io(output[position(i, model.output_dim(), batch, layout)]);
    ASSERT_FALSE(std::isnan(y)) << what << ": output " << i << " never written";
    const double err = std::fabs(y - ref[i]) / std::max(1.0, std::fabs(ref[i]));
    worst = std::max(worst, err);
    ASSERT_LE(err, tolerance) << what << ": output " << i << " got " << y << " want " << ref[i];
  }
  for (std::size_t i = n; i < output.size(); ++i) ASSERT_EQ(output[i], guard) << what << ": wrote past the output";
}

}  // namespace mlpcore::test
