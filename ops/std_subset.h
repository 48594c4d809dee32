#pragma once
// The standard-library templates the kernel headers use, as mlpcore::ops::stdx names: the standard's own in
// a C++ compile; under NVRTC and hiprtc, which ship no standard library, equivalents defined here. They live
// in our namespace rather than std because hiprtc's built-in headers define std templates of their own
// (integral_constant, is_same, enable_if, ... in HIP 5.x; which ones differs between ROCm versions), and a
// second definition in std would not compile.
#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
#include <cstddef>  // ops/nvrtc_std.h: std::size_t

namespace mlpcore::ops::stdx {

template <class T, T V>
struct integral_constant {
  static constexpr T value = V;
  using value_type = T;
  constexpr operator T() const noexcept { return V; }
};

template <bool B, class T, class F>
struct conditional {
  using type = T;
};
template <class T, class F>
struct conditional<false, T, F> {
  using type = F;
};
template <bool B, class T, class F>
using conditional_t = typename conditional<B, T, F>::type;

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
template <class T, std::size_t N>
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
using make_integer_sequence = typename make_sequence<T, static_cast<std::size_t>(N)>::type;

template <class To, class From>
__device__ constexpr To bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}

}  // namespace mlpcore::ops::stdx

#else
#include <bit>
#include <type_traits>
#include <utility>

namespace mlpcore::ops::stdx {
using std::bit_cast;
using std::conditional_t;
using std::integer_sequence;
using std::integral_constant;
using std::is_same_v;
using std::make_integer_sequence;
using std::remove_cvref_t;
}  // namespace mlpcore::ops::stdx
#endif
