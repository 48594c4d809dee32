#pragma once
// The one definition of every activation (formulas in models/FORMAT.md), shared by all backends.
#include <cmath>

#include "mlpcore/activation_kind.h"
#include "ops/host_device.h"

namespace mlpcore::ops {

template <class T>
MLPCORE_HOST_DEVICE inline T activate(ActivationKind kind, T param, T x) {
  using std::exp;
  using std::log1p;
  using std::sin;
  using std::tanh;
  switch (kind) {
    case ActivationKind::none: return x;
    case ActivationKind::relu: return x < T(0) ? T(0) : x;  // NaN passes through, as in PyTorch
    case ActivationKind::leaky_relu: return x < T(0) ? param * x : x;
    case ActivationKind::sigmoid: return T(1) / (T(1) + exp(-x));
    case ActivationKind::tanh: return tanh(x);
    case ActivationKind::softplus: {
      // (1/beta) log(1 + exp(beta x)) written so that exp never overflows.
      const T bx = param * x;
      const T positive = bx > T(0) ? bx : T(0);
      return (positive + log1p(exp(-(bx > T(0) ? bx : -bx)))) / param;
    }
    case ActivationKind::exponential: return exp(x);
    case ActivationKind::sine: return sin(x);
    case ActivationKind::silu: return x / (T(1) + exp(-x));
  }
  return x;
}

}  // namespace mlpcore::ops
