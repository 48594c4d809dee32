#pragma once
// The one definition of every activation (formulas in models/FORMAT.md), shared by all backends. The
// math library is a parameter: StdMath (the CPU reference) or GpuMath (the matrix-core kernels, which use
// only the hardware's exp/log/sin so that no device math library is needed).
#include <cmath>

#include "mlpcore/activation_kind.h"
#include "ops/arch_config.h"
#include "ops/host_device.h"
#include "ops/std_subset.h"

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
  template <class T>
  static T divide(T a, T b) { return a / b; }
};

// float only: v_exp_f32, v_log_f32, v_sin_f32 on AMD, MUFU on NVIDIA (a few ulp). On NVIDIA the fast
// intrinsics: CUDA's expf and IEEE division expand to long sequences, and in a specialized kernel with
// several such activations NVRTC then gave up unrolling a layer (its registers went to local memory).
// (NVRTC has CUDA's math functions built in, not the compiler builtins nvcc maps onto them.)
struct GpuMath {
#if MLPCORE_DEVICE_NVIDIA
  MLPCORE_HOST_DEVICE static float exp(float x) { return __expf(x); }
  MLPCORE_HOST_DEVICE static float log1p(float x) { return __logf(1.0f + x); }
  MLPCORE_HOST_DEVICE static float divide(float a, float b) { return __fdividef(a, b); }  // 0 for |b| > 2^126
#else
  MLPCORE_HOST_DEVICE static float divide(float a, float b) { return a / b; }
#endif
#if defined(__CUDACC_RTC__)
  MLPCORE_HOST_DEVICE static float round(float x) { return rintf(x); }
  MLPCORE_HOST_DEVICE static float fma(float a, float b, float c) { return fmaf(a, b, c); }
#else
#if !MLPCORE_DEVICE_NVIDIA
  MLPCORE_HOST_DEVICE static float exp(float x) { return __builtin_expf(x); }
  MLPCORE_HOST_DEVICE static float log1p(float x) { return __builtin_logf(1.0f + x); }
#endif
  MLPCORE_HOST_DEVICE static float round(float x) { return __builtin_rintf(x); }
  MLPCORE_HOST_DEVICE static float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
#endif
  // The hardware sine is accurate only near zero (AMD's v_sin_f32 has a limited valid range; CUDA's sinf
  // would take a slow path through local memory), so reduce first: x - k 2pi with 2pi in two parts
  // (Cody-Waite), into [-pi, pi] (give or take |x| 2^-23) and accurate to ~1e-6 for |x| up to 1e4 and
  // beyond (SIREN-style networks).
  MLPCORE_HOST_DEVICE static float reduce_2pi(float x) {
    const float k = round(x * 0.159154943091895336f);
    return fma(k, 1.74845553e-7f, fma(-k, 6.28318548f, x));  // 6.28318548f = 2pi + 1.74845553e-7
  }
  MLPCORE_HOST_DEVICE static float sin(float x) {
    const float r = reduce_2pi(x);
#if MLPCORE_DEVICE_NVIDIA
    return __sinf(r);
#else
    return __builtin_sinf(r);
#endif
  }
  // exp overflows to infinity for large x and the result is then exactly 1; -1 for very negative x.
  MLPCORE_HOST_DEVICE static float tanh(float x) { return 1.0f - divide(2.0f, exp(2.0f * x) + 1.0f); }
};

template <class T, class Math = StdMath>
MLPCORE_HOST_DEVICE inline T activate(ActivationKind kind, T param, T x) {
  switch (kind) {
    case ActivationKind::none: return x;
    case ActivationKind::relu: return x < T(0) ? T(0) : x;  // NaN passes through, as in PyTorch
    case ActivationKind::leaky_relu: return x < T(0) ? param * x : x;
    case ActivationKind::sigmoid: return Math::divide(T(1), T(1) + Math::exp(-x));
    case ActivationKind::tanh: return Math::tanh(x);
    case ActivationKind::softplus: {
      // (1/beta) log(1 + exp(beta x)) written so that exp never overflows.
      const T bx = param * x;
      const T positive = bx > T(0) ? bx : T(0);
      return Math::divide(positive + Math::log1p(Math::exp(-(bx > T(0) ? bx : -bx))), param);
    }
    case ActivationKind::exponential: return Math::exp(x);
    case ActivationKind::sine: return Math::sin(x);
    case ActivationKind::silu: return Math::divide(x, T(1) + Math::exp(-x));
  }
  return x;
}

// An activation as a compile-time constant; it converts to its ActivationKind.
template <ActivationKind K>
using ActivationConstant = stdx::integral_constant<ActivationKind, K>;

// f(ActivationConstant<kind>{}): code written once for a run-time kind, compiled once per activation, so
// that the kind is tested once per call rather than once per value.
template <class F>
MLPCORE_HOST_DEVICE void with_activation(ActivationKind kind, F&& f) {
  switch (kind) {
    case ActivationKind::none: return f(ActivationConstant<ActivationKind::none>{});
    case ActivationKind::relu: return f(ActivationConstant<ActivationKind::relu>{});
    case ActivationKind::leaky_relu: return f(ActivationConstant<ActivationKind::leaky_relu>{});
    case ActivationKind::sigmoid: return f(ActivationConstant<ActivationKind::sigmoid>{});
    case ActivationKind::tanh: return f(ActivationConstant<ActivationKind::tanh>{});
    case ActivationKind::softplus: return f(ActivationConstant<ActivationKind::softplus>{});
    case ActivationKind::exponential: return f(ActivationConstant<ActivationKind::exponential>{});
    case ActivationKind::sine: return f(ActivationConstant<ActivationKind::sine>{});
    case ActivationKind::silu: return f(ActivationConstant<ActivationKind::silu>{});
  }
}

}  // namespace mlpcore::ops
