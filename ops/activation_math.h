#pragma once
// The one definition of every activation (formulas in models/FORMAT.md), shared by all backends. The
// math library is a parameter: StdMath (the CPU reference) or GpuMath (the matrix-core kernels, which use
// only the hardware's exp/log/sin so that no device math library is needed).
#include <cmath>

#include "mlpcore/activation_kind.h"
#include "ops/host_device.h"

namespace mlpcore::ops {

struct StdMath {
  template <class T>
  static T exp(T x) { return std::exp(x); }
  template <class T>
  static T log1p(T x) { return std::log1p(x); }
  template <class T>
  static T sin(T x) { return std::sin(x); }
  template <class T>
  static T tanh(T x) { return std::tanh(x); }
};

// float only: v_exp_f32, v_log_f32, v_sin_f32 on AMD (a few ulp; sin loses accuracy for |x| >> 1e4).
struct GpuMath {
  MLPCORE_HOST_DEVICE static float exp(float x) { return __builtin_expf(x); }
  MLPCORE_HOST_DEVICE static float log1p(float x) { return __builtin_logf(1.0f + x); }
  MLPCORE_HOST_DEVICE static float sin(float x) { return __builtin_sinf(x); }
  // exp overflows to infinity for large x and the result is then exactly 1; -1 for very negative x.
  MLPCORE_HOST_DEVICE static float tanh(float x) { return 1.0f - 2.0f / (__builtin_expf(2.0f * x) + 1.0f); }
};

template <class T, class Math = StdMath>
MLPCORE_HOST_DEVICE inline T activate(ActivationKind kind, T param, T x) {
  switch (kind) {
    case ActivationKind::none: return x;
    case ActivationKind::relu: return x < T(0) ? T(0) : x;  // NaN passes through, as in PyTorch
    case ActivationKind::leaky_relu: return x < T(0) ? param * x : x;
    case ActivationKind::sigmoid: return T(1) / (T(1) + Math::exp(-x));
    case ActivationKind::tanh: return Math::tanh(x);
    case ActivationKind::softplus: {
      // (1/beta) log(1 + exp(beta x)) written so that exp never overflows.
      const T bx = param * x;
      const T positive = bx > T(0) ? bx : T(0);
      return (positive + Math::log1p(Math::exp(-(bx > T(0) ? bx : -bx)))) / param;
    }
    case ActivationKind::exponential: return Math::exp(x);
    case ActivationKind::sine: return Math::sin(x);
    case ActivationKind::silu: return x / (T(1) + Math::exp(-x));
  }
  return x;
}

}  // namespace mlpcore::ops
