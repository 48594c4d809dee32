#pragma once
// The little of the C++ standard library the kernel headers use, for NVRTC, which ships no standard
// headers: embedded under the names <cstddef>, <cstdint>, <cstring>, <cmath>, <bit>, <type_traits> and
// <utility> (engine/src/kernel_headers.h). Device code only; declarations of host math stay undefined.
#ifndef MLPCORE_NVRTC_STD
#define MLPCORE_NVRTC_STD
#if !defined(__CUDACC_RTC__)
#error "ops/nvrtc_std.h stands in for the standard headers under NVRTC only"
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

template <class T, T V>
struct integral_constant {
  static constexpr T value = V;
  using value_type = T;
  constexpr operator T() const noexcept { return V; }
};

template <class A, class B>
inline constexpr bool is_same_v = false;
template <class A>
inline constexpr bool is_same_v<A, A> = true;

template <class T> struct remove_cv { using type = T; };
template <class T> struct remove_cv<const T> { using type = T; };
template <class T> struct remove_cv<volatile T> { using type = T; };
template <class T> struct remove_cv<const volatile T> { using type = T; };
template <class T> struct remove_reference { using type = T; };
template <class T> struct remove_reference<T&> { using type = T; };
template <class T> struct remove_reference<T&&> { using type = T; };
template <class T>
using remove_cvref_t = typename remove_cv<typename remove_reference<T>::type>::type;

template <class T, T... I>
struct integer_sequence {};
template <class T, class A, class B>
struct concat_sequences;
template <class T, T... A, T... B>
struct concat_sequences<T, integer_sequence<T, A...>, integer_sequence<T, B...>> {
  using type = integer_sequence<T, A..., (static_cast<T>(sizeof...(A)) + B)...>;
};
template <class T, size_t N>
struct make_sequence {
  using type = typename concat_sequences<T, typename make_sequence<T, N / 2>::type, typename make_sequence<T, N - N / 2>::type>::type;
};
template <class T>
struct make_sequence<T, 0> {
  using type = integer_sequence<T>;
};
template <class T>
struct make_sequence<T, 1> {
  using type = integer_sequence<T, 0>;
};
template <class T, T N>
using make_integer_sequence = typename make_sequence<T, static_cast<size_t>(N)>::type;

template <class To, class From>
__device__ constexpr To bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}

__device__ inline void* memcpy(void* dst, const void* src, size_t n) {
  for (size_t i = 0; i < n; ++i) static_cast<unsigned char*>(dst)[i] = static_cast<const unsigned char*>(src)[i];
  return dst;
}

// Named by the host-side math (ops/activation_math.h's StdMath), never instantiated on the device.
template <class T> T exp(T);
template <class T> T log1p(T);
template <class T> T sin(T);
template <class T> T tanh(T);
}  // namespace std

#endif
