#include "ops/emu/amd_instructions.h"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <span>
#include <string>

#include "ops/emu/wave_emulator.h"
#include "ops/half_bits.h"

namespace mlpcore::emu::amd {
namespace {

using MI = MatrixInstruction;

bool is_gfx11(MI i) { return i == MI::wmma_gfx11_f32_f16 || i == MI::wmma_gfx11_f32_bf16 || i == MI::wmma_gfx11_f16_f16; }
bool is_gfx12(MI i) { return i == MI::wmma_gfx12_f32_f16 || i == MI::wmma_gfx12_f32_bf16; }
bool is_bf16(MI i) { return i == MI::wmma_gfx11_f32_bf16 || i == MI::wmma_gfx12_f32_bf16 || i == MI::mfma_f32_16x16x16_bf16; }
bool is_mfma_16bit(MI i) { return i == MI::mfma_f32_16x16x16_f16 || i == MI::mfma_f32_16x16x16_bf16; }

// Zero, keeping the sign, for magnitudes below the format's smallest normal value.
float flush_below(float v, float smallest_normal) { return std::fabs(v) < smallest_normal ? std::copysign(0.0f, v) : v; }
constexpr float kF16SmallestNormal = 6.103515625e-05f;  // 2^-14

float element_value(MI i, std::uint32_t reg, unsigned half) {
  if (i == MI::mfma_f32_16x16x4_f32) return std::bit_cast<float>(reg);
  const auto bits = static_cast<std::uint16_t>(reg >> (16 * half));
  return is_bf16(i) ? ops::bf16_bits_to_float(bits) : ops::f16_bits_to_float(bits);
}

struct MatrixOperands {
  MI instruction;
  std::uint32_t a[kMaxRegs], b[kMaxRegs], c[kMaxRegs];
};
struct MatrixResult {
  std::uint32_t d[kMaxRegs];
};

void execute_matrix(std::span<const void* const> in, std::span<void* const> out) {
  const auto* first = static_cast<const MatrixOperands*>(in[0]);
  const MI instr = first->instruction;
  const InstructionShape& s = shape(instr);
  if (in.size() != s.wave)
    throw EmulatorError(std::string(s.name) + " needs wave" + std::to_string(s.wave) + ", launched with wave" + std::to_string(in.size()));
  for (const void* p : in)
    if (static_cast<const MatrixOperands*>(p)->instruction != instr)
      throw EmulatorError("lanes of one wave issued different matrix instructions");
  auto lane = [&](unsigned l) -> const MatrixOperands& { return *static_cast<const MatrixOperands*>(in[l]); };

  if (s.ab_replicated)
    for (unsigned l = 16; l < s.wave; ++l)
      for (int r = 0; r < s.a_regs; ++r)
        for (const char* which : {"A", "B"}) {
          const bool is_a = which[0] == 'A';
          const std::uint32_t mine = is_a ? lane(l).a[r] : lane(l).b[r];
          const std::uint32_t twin = is_a ? lane(l % 16).a[r] : lane(l % 16).b[r];
          if (mine != twin)
            throw EmulatorError(std::string(s.name) + ": " + which + " operand is not replicated across half-waves: lane " +
                                std::to_string(l) + " v" + std::to_string(r) + " differs from lane " + std::to_string(l % 16) +
                                " (RDNA3 needs lanes 16-31 to repeat lanes 0-15)");
        }

  // Gather the matrices through the layout; NaN marks any element no register supplies.
  float a[16][16], b[16][16], c[16][16];
  for (auto* m : {&a, &b, &c})
    for (auto& row : *m)
      for (float& v : row) v = NAN;
  const unsigned halves = s.ab_16bit ? 2 : 1;
  for (unsigned l = 0; l < s.wave; ++l) {
    for (int r = 0; r < s.a_regs; ++r)
      for (unsigned h = 0; h < halves; ++h) {
        const Element ea = layout(instr, Operand::a, l, static_cast<unsigned>(r), h);
        a[ea.row][ea.col] = element_value(instr, lane(l).a[r], h);
        const Element eb = layout(instr, Operand::b, l, static_cast<unsigned>(r), h);
        b[eb.row][eb.col] = element_value(instr, lane(l).b[r], h);
      }
    for (int r = 0; r < s.cd_regs; ++r) {
      const Element ec = layout(instr, Operand::c, l, static_cast<unsigned>(r), 0);
      c[ec.row][ec.col] = s.d_16bit ? ops::f16_bits_to_float(static_cast<std::uint16_t>(lane(l).c[r])) : std::bit_cast<float>(lane(l).c[r]);
    }
  }

  // The order of the float32 sums. CDNA's 16-bit MFMA adds each group of 4 products pairwise, then the
  // group to the accumulator (as modelled by microsoft/MMA-Sim, validated on MI-series hardware); the
  // products of 16-bit values are exact in float32. AMD publishes no order for RDNA3/4's WMMA nor for
  // the float32 MFMA: they add one product at a time here, an order the hardware may not share.
  const bool pairwise_groups_of_4 = is_mfma_16bit(instr);
  // ChipNumerics::mfma_flushes_subnormals (gfx90a): 16-bit subnormal A and B elements, and float32
  // subnormal C and D elements, are zero.
  const bool flush = is_mfma_16bit(instr) && chip_numerics().mfma_flushes_subnormals;
  if (flush) {
    const float ab_smallest_normal = is_bf16(instr) ? FLT_MIN : kF16SmallestNormal;
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 16; ++k) {
        a[r][k] = flush_below(a[r][k], ab_smallest_normal);
        b[k][r] = flush_below(b[k][r], ab_smallest_normal);
        c[r][k] = flush_below(c[r][k], FLT_MIN);
      }
  }
  float d[16][16];
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      float acc = c[m][n];
      if (pairwise_groups_of_4)
        for (int k = 0; k < s.k; k += 4) acc += (a[m][k] * b[k][n] + a[m][k + 1] * b[k + 1][n]) + (a[m][k + 2] * b[k + 2][n] + a[m][k + 3] * b[k + 3][n]);
      else
        for (int k = 0; k < s.k; ++k) acc += a[m][k] * b[k][n];
      d[m][n] = flush ? flush_below(acc, FLT_MIN) : acc;
    }

  for (unsigned l = 0; l < s.wave; ++l) {
    auto& result = *static_cast<MatrixResult*>(out[l]);
    for (int r = 0; r < s.cd_regs; ++r) {
      const Element e = layout(instr, Operand::d, l, static_cast<unsigned>(r), 0);
      if (s.d_16bit)  // OPSEL = 0 writes bits 15:0; bits 31:16 keep C's
        result.d[r] = (lane(l).c[r] & 0xffff0000u) | ops::float_to_f16_bits(d[e.row][e.col]);
      else
        result.d[r] = std::bit_cast<std::uint32_t>(d[e.row][e.col]);
    }
  }
}

struct PermlaneOperands {
  std::uint32_t old, src, sel_lo, sel_hi;
};

void execute_permlanex16(std::span<const void* const> in, std::span<void* const> out) {
  for (std::size_t l = 0; l < in.size(); ++l) {
    const auto& mine = *static_cast<const PermlaneOperands*>(in[l]);
    const std::size_t index = l % 16;
    const std::uint32_t sel = index < 8 ? mine.sel_lo : mine.sel_hi;
    const std::size_t source_index = (sel >> (4 * (index % 8))) & 0xfu;
    const std::size_t group = l / 32 * 32;
    const std::size_t other_row = ((l % 32) < 16 ? 16 : 0);
    const std::size_t source = group + other_row + source_index;
    *static_cast<std::uint32_t*>(out[l]) = static_cast<const PermlaneOperands*>(in[source])->src;
  }
}

}  // namespace

const InstructionShape& shape(MatrixInstruction i) {
  static const InstructionShape gfx11{"v_wmma_f32_16x16x16_f16 (gfx11)", 32, 8, 8, 8, 16, true, true, false};
  static const InstructionShape gfx11_bf16{"v_wmma_f32_16x16x16_bf16 (gfx11)", 32, 8, 8, 8, 16, true, true, false};
  static const InstructionShape gfx11_f16{"v_wmma_f16_16x16x16_f16 (gfx11)", 32, 8, 8, 8, 16, true, true, true};
  static const InstructionShape gfx12{"v_wmma_f32_16x16x16_f16 (gfx12)", 32, 4, 4, 8, 16, true, false, false};
  static const InstructionShape gfx12_bf16{"v_wmma_f32_16x16x16_bf16 (gfx12)", 32, 4, 4, 8, 16, true, false, false};
  static const InstructionShape mfma16{"v_mfma_f32_16x16x16_f16", 64, 2, 2, 4, 16, true, false, false};
  static const InstructionShape mfma16_bf16{"v_mfma_f32_16x16x16_bf16", 64, 2, 2, 4, 16, true, false, false};
  static const InstructionShape mfma4{"v_mfma_f32_16x16x4_f32", 64, 1, 1, 4, 4, false, false, false};
  switch (i) {
    case MI::wmma_gfx11_f32_f16: return gfx11;
    case MI::wmma_gfx11_f32_bf16: return gfx11_bf16;
    case MI::wmma_gfx11_f16_f16: return gfx11_f16;
    case MI::wmma_gfx12_f32_f16: return gfx12;
    case MI::wmma_gfx12_f32_bf16: return gfx12_bf16;
    case MI::mfma_f32_16x16x16_f16: return mfma16;
    case MI::mfma_f32_16x16x16_bf16: return mfma16_bf16;
    case MI::mfma_f32_16x16x4_f32: return mfma4;
  }
  throw EmulatorError("unknown matrix instruction");
}

Element layout(MatrixInstruction i, Operand op, unsigned lane, unsigned reg, unsigned half) {
  const int l = static_cast<int>(lane), r = static_cast<int>(reg), h = static_cast<int>(half);
  const int idx = l % 16, group = l / 16;  // lane within its 16-lane row, and the row
  if (is_gfx11(i)) {  // A/B: 16 consecutive K per lane, replicated; C/D: rows interleaved between halves
    switch (op) {
      case Operand::a: return {idx, 2 * r + h};
      case Operand::b: return {2 * r + h, idx};
      default: return {2 * r + group, idx};
    }
  }
  if (is_gfx12(i)) {  // A/B: K 0-3 and 8-11 in lanes 0-15, K 4-7 and 12-15 in lanes 16-31; C/D rows contiguous
    const int k = 2 * (r % 2) + h + 8 * (r / 2) + 4 * group;
    switch (op) {
      case Operand::a: return {idx, k};
      case Operand::b: return {k, idx};
      default: return {r + 8 * group, idx};
    }
  }
  if (i == MI::mfma_f32_16x16x4_f32) {
    switch (op) {
      case Operand::a: return {idx, group};
      case Operand::b: return {group, idx};
      default: return {4 * group + r, idx};
    }
  }
  switch (op) {  // MFMA 16x16x16: lane row `group` holds K 4g..4g+3 of A/B and rows 4g..4g+3 of C/D
    case Operand::a: return {idx, 4 * group + 2 * r + h};
    case Operand::b: return {4 * group + 2 * r + h, idx};
    default: return {4 * group + r, idx};
  }
}

void matrix_op(MatrixInstruction instruction, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
               std::uint32_t* d) {
  const InstructionShape& s = shape(instruction);
  MatrixOperands in{instruction, {}, {}, {}};
  std::memcpy(in.a, a, 4 * static_cast<std::size_t>(s.a_regs));
  std::memcpy(in.b, b, 4 * static_cast<std::size_t>(s.b_regs));
  std::memcpy(in.c, c, 4 * static_cast<std::size_t>(s.cd_regs));
  MatrixResult result{};
  wave_collective(s.name, execute_matrix, &in, &result);
  std::memcpy(d, result.d, 4 * static_cast<std::size_t>(s.cd_regs));
}

std::uint16_t f32_to_f16_rtz(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exponent = (x >> 23) & 0xffu;
  const std::uint32_t mantissa = x & 0x7fffffu;
  if (exponent == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0u));
  const int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7bffu);  // toward zero: the largest finite value
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    return static_cast<std::uint16_t>(sign | ((mantissa | 0x800000u) >> (14 - e)));
  }
  return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(e) << 10 | (mantissa >> 13));
}

std::uint32_t cvt_pkrtz(float lo, float hi) {
  return static_cast<std::uint32_t>(f32_to_f16_rtz(lo)) | static_cast<std::uint32_t>(f32_to_f16_rtz(hi)) << 16;
}

std::uint32_t pk_max_f16(std::uint32_t a, std::uint32_t b) { return ops::max_f16x2_bits(a, b); }

std::uint32_t permlanex16(std::uint32_t old, std::uint32_t src, std::uint32_t sel_lo, std::uint32_t sel_hi) {
  PermlaneOperands in{old, src, sel_lo, sel_hi};
  std::uint32_t result = 0;
  wave_collective("v_permlanex16_b32", execute_permlanex16, &in, &result);
  return result;
}

}  // namespace mlpcore::emu::amd
