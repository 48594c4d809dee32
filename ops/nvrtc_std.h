#pragma once
// The standard headers the kernel headers include, for NVRTC and hiprtc, which ship none: embedded under
// the names <cstddef>, <cstdint> and <cmath> (engine/src/kernel_headers.h). Type names only, which hiprtc's
// built-in headers may declare too (a typedef may be repeated), and declarations of host math that stay
// undefined; the templates are ops/std_subset.h's.
#ifndef MLPCORE_NVRTC_STD
#define MLPCORE_NVRTC_STD
#if !defined(__CUDACC_RTC__) && !defined(__HIPCC_RTC__)
#error "ops/nvrtc_std.h stands in for the standard headers under NVRTC and hiprtc only"
#endif

namespace std {
using size_t = decltype(sizeof(0));
using ptrdiff_t = decltype(static_cast<int*>(nullptr) - static_cast<int*>(nullptr));
using uint8_t = unsigned char;
using uint16_t = unsigned short;
using uint32_t = unsigned int;
using uint64_t = unsigned long long;
using int32_t = int;
using int64_t = long long;
using uintptr_t = unsigned long long;
static_assert(sizeof(uintptr_t) == sizeof(void*), "64-bit device pointers");

// Named by the host-side math (ops/activation_math.h's StdMath), never instantiated on the device.
template <class T> T exp(T);
template <class T> T log1p(T);
template <class T> T sin(T);
template <class T> T tanh(T);
}  // namespace std

#endif
