// The GPU kernels' math (ops/activation_math.h GpuMath) where it is more than the hardware's instruction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ops/activation_math.h"
#include "tests/test_util.h"

namespace mlpcore::ops {
namespace {

// GpuMath::sin hands the hardware sine, valid only near zero, x reduced by a multiple of 2pi: for
// arguments up to +-1e4 (SIREN-style first layers) the reduced argument is within [-pi, pi] (give or take
// |x| 2^-23, where x / 2pi rounds to the neighbouring multiple) and has the float64 sine of x to 2e-6.
TEST(GpuMath, SineReducesLargeArgumentsAccurately) {
  double worst = 0;
  for (int i = -200000; i <= 200000; ++i) {
    const float x = static_cast<float>(i) * 0.05f;
    const float r = GpuMath::reduce_2pi(x);
    ASSERT_LE(std::fabs(r), 3.1416f + std::fabs(x) * 0x1p-23f) << "x = " << x;
    worst = std::max(worst, std::fabs(std::sin(static_cast<double>(r)) - std::sin(static_cast<double>(x))));
  }
  EXPECT_LE(worst, 2e-6);
  std::cout << "worst |sin(reduce_2pi(x)) - sin(x)| for |x| <= 1e4: " << worst << "\n";
}

// with_activation hands each kind to its callback once, as the compile-time constant of that kind (the
// run-time-shaped kernels' per-tile twins compile each activation's code from it).
TEST(WithActivation, CallsOnceWithTheKindAsAConstant) {
  for (const ActivationKind kind : test::all_activation_kinds()) {
    int calls = 0;
    with_activation(kind, [&](auto constant) {
      ++calls;
      EXPECT_EQ(decltype(constant)::value, kind);
    });
    EXPECT_EQ(calls, 1) << static_cast<int>(kind);
  }
}

}  // namespace
}  // namespace mlpcore::ops
