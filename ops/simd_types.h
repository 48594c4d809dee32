#pragma once
// Fragment vectors: clang's ext_vector_type on the device (what the matrix builtins take), a plain array
// with the same indexing on the host emulator.
#include "ops/arch_config.h"

namespace mlpcore::ops {

using half_t = _Float16;

#if defined(__clang__) && !MLPCORE_EMULATOR
template <class T, int N>
using vec = T __attribute__((ext_vector_type(N)));
#else
template <class T, int N>
struct vec {
  T e[N];
  constexpr T& operator[](int i) { return e[i]; }
  constexpr const T& operator[](int i) const { return e[i]; }
};
#endif

}  // namespace mlpcore::ops
