#include "ops/emu/nv_instructions.h"

#include <cmath>
#include <cstring>
#include <span>
#include <string>

#include "ops/emu/wave_emulator.h"
#include "ops/half_bits.h"

namespace mlpcore::emu::nv {
namespace {

struct MmaOperands {
  std::uint32_t a[4], b[2];
  float c[4];
  int k;  // 16, or 8: A holds registers 0-1 only, B register 0
};
struct MmaResult {
  float d[4];
};

float half_of(std::uint32_t reg, unsigned i) { return ops::f16_bits_to_float(static_cast<std::uint16_t>(reg >> (16 * (i % 2)))); }

void execute_mma(std::span<const void* const> in, std::span<void* const> out) {
  if (in.size() != 32) throw EmulatorError("mma.sync.m16n8k16/k8 needs a warp of 32, launched with " + std::to_string(in.size()));
  const int k = static_cast<const MmaOperands*>(in[0])->k;
  float a[16][16], b[16][8], c[16][8];
  for (auto& row : a)
    for (float& v : row) v = NAN;
  for (auto& row : b)
    for (float& v : row) v = NAN;
  for (auto& row : c)
    for (float& v : row) v = NAN;
  for (unsigned l = 0; l < 32; ++l) {
    const auto& o = *static_cast<const MmaOperands*>(in[l]);
    if (o.k != k) throw EmulatorError("mma.sync: lanes of one warp ran different shapes");
    for (unsigned i = 0; i < static_cast<unsigned>(k / 2); ++i) {
      const Element e = layout(Operand::a, l, i);
      a[e.row][e.col] = half_of(o.a[i / 2], i);
    }
    for (unsigned i = 0; i < static_cast<unsigned>(k / 4); ++i) {
      const Element e = layout(Operand::b, l, i);
      b[e.row][e.col] = half_of(o.b[i / 2], i);
    }
    for (unsigned i = 0; i < 4; ++i) {
      const Element e = layout(Operand::c, l, i);
      c[e.row][e.col] = o.c[i];
    }
  }
  for (unsigned l = 0; l < 32; ++l)
    for (unsigned i = 0; i < 4; ++i) {
      const Element e = layout(Operand::c, l, i);
      float acc = c[e.row][e.col];
      for (int j = 0; j < k; ++j) acc += a[e.row][j] * b[j][e.col];
      static_cast<MmaResult*>(out[l])->d[i] = acc;
    }
}

}  // namespace

Element layout(Operand operand, unsigned lane, unsigned i) {
  const int group = static_cast<int>(lane / 4), thread_in_group = static_cast<int>(lane % 4), n = static_cast<int>(i);
  switch (operand) {
    case Operand::a: return {group + ((n < 2 || (n >= 4 && n < 6)) ? 0 : 8), thread_in_group * 2 + (n & 1) + (n >= 4 ? 8 : 0)};
    case Operand::b: return {thread_in_group * 2 + (n & 1) + (n >= 2 ? 8 : 0), group};
    case Operand::c: break;
  }
  return {group + (n >= 2 ? 8 : 0), thread_in_group * 2 + (n & 1)};
}

namespace {

void mma(const MmaOperands& in, float* d) {
  MmaResult result{};
  wave_collective(in.k == 8 ? "mma.sync.m16n8k8" : "mma.sync.m16n8k16", execute_mma, &in, &result);
  std::memcpy(d, result.d, sizeof result.d);
}

// float16 C and D around the float32 computation: D rounded once.
template <class F>
void with_f16_accumulators(const std::uint32_t (&c)[2], std::uint32_t (&d)[2], F mma_f32) {
  const float c32[4] = {half_of(c[0], 0), half_of(c[0], 1), half_of(c[1], 0), half_of(c[1], 1)};
  float d32[4];
  mma_f32(c32, d32);
  d[0] = cvt_rn_f16x2(d32[0], d32[1]);
  d[1] = cvt_rn_f16x2(d32[2], d32[3]);
}

}  // namespace

void mma_m16n8k16(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], const float* c, float* d) {
  MmaOperands in{{a[0], a[1], a[2], a[3]}, {b[0], b[1]}, {c[0], c[1], c[2], c[3]}, 16};
  mma(in, d);
}

void mma_m16n8k8(const std::uint32_t (&a)[2], std::uint32_t b, const float* c, float* d) {
  MmaOperands in{{a[0], a[1]}, {b}, {c[0], c[1], c[2], c[3]}, 8};
  mma(in, d);
}

void mma_m16n8k16_f16(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], const std::uint32_t (&c)[2], std::uint32_t (&d)[2]) {
  with_f16_accumulators(c, d, [&](const float* c32, float* d32) { mma_m16n8k16(a, b, c32, d32); });
}

void mma_m16n8k8_f16(const std::uint32_t (&a)[2], std::uint32_t b, const std::uint32_t (&c)[2], std::uint32_t (&d)[2]) {
  with_f16_accumulators(c, d, [&](const float* c32, float* d32) { mma_m16n8k8(a, b, c32, d32); });
}

std::uint32_t relu_f16x2(std::uint32_t x) {
  const auto relu = [](std::uint32_t h) -> std::uint32_t { return (h & 0x7fffu) > 0x7c00u ? 0x7fffu : h & 0x8000u ? 0u : h; };
  return relu(x & 0xffffu) | relu(x >> 16) << 16;
}

std::uint32_t abs_f16x2(std::uint32_t x) { return x & 0x7fff7fffu; }

std::uint32_t max_f16x2(std::uint32_t a, std::uint32_t b) { return ops::max_f16x2_bits(a, b); }

std::uint32_t cvt_rn_f16x2(float lo, float hi) {
  return static_cast<std::uint32_t>(ops::float_to_f16_bits(lo)) | static_cast<std::uint32_t>(ops::float_to_f16_bits(hi)) << 16;
}

std::uint32_t cvt_rn_relu_f16x2(float lo, float hi) {
  const auto relu_bits = [](float x) -> std::uint32_t { return x != x ? 0x7fffu : ops::float_to_f16_bits(x < 0.0f ? 0.0f : x); };
  return relu_bits(lo) | relu_bits(hi) << 16;
}

}  // namespace mlpcore::emu::nv
