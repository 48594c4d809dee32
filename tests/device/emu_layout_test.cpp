// The emulator's matrix instructions against AMD's reference layouts: the encoded layout of every lane and
// register, and the instructions' actual behaviour on matrices placed through the reference layout.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
#include <set>

#include "ops/emu/amd_instructions.h"
#include "ops/emu/wave_emulator.h"
#include "ops/half_bits.h"
#include "tests/device/layout_reference.h"

namespace mlpcore::emu::amd {
namespace {

struct Reference {
  MatrixInstruction instruction;
  const char* arch;
  const char* name;
  unsigned wave;
};

const std::vector<Reference>& references() {
  static const std::vector<Reference> refs = {
      {MatrixInstruction::wmma_gfx11_f32_f16, "rdna3", "v_wmma_f32_16x16x16_f16", 32},
      {MatrixInstruction::wmma_gfx11_f32_bf16, "rdna3", "v_wmma_f32_16x16x16_bf16", 32},
      {MatrixInstruction::wmma_gfx11_f16_f16, "rdna3", "v_wmma_f16_16x16x16_f16", 32},
      {MatrixInstruction::wmma_gfx12_f32_f16, "rdna4", "v_wmma_f32_16x16x16_f16", 32},
      {MatrixInstruction::wmma_gfx12_f32_bf16, "rdna4", "v_wmma_f32_16x16x16_bf16", 32},
      {MatrixInstruction::mfma_f32_16x16x16_f16, "cdna1", "v_mfma_f32_16x16x16f16", 64},
      {MatrixInstruction::mfma_f32_16x16x16_f16, "cdna2", "v_mfma_f32_16x16x16f16", 64},
      {MatrixInstruction::mfma_f32_16x16x16_f16, "cdna3", "v_mfma_f32_16x16x16_f16", 64},
      {MatrixInstruction::mfma_f32_16x16x16_bf16, "cdna2", "v_mfma_f32_16x16x16bf16_1k", 64},
      {MatrixInstruction::mfma_f32_16x16x16_bf16, "cdna3", "v_mfma_f32_16x16x16_bf16", 64},
      {MatrixInstruction::mfma_f32_16x16x4_f32, "cdna2", "v_mfma_f32_16x16x4f32", 64},
  };
  return refs;
}

std::string label(const Reference& r) { return std::string(r.arch) + "_" + r.name; }
void PrintTo(const Reference& r, std::ostream* os) { *os << label(r); }

class EmulatedInstruction : public ::testing::TestWithParam<Reference> {};

TEST_P(EmulatedInstruction, EncodedLayoutMatchesEveryReferenceRow) {
  const Reference& ref = GetParam();
  const InstructionShape& s = shape(ref.instruction);
  EXPECT_EQ(s.wave, ref.wave);
  const std::pair<char, Operand> operands[] = {{'A', Operand::a}, {'B', Operand::b}, {'C', Operand::c}, {'D', Operand::d}};
  for (const auto& [letter, op] : operands) {
    const auto table = test::reference_layout(ref.arch, ref.name, ref.wave, letter);
    const bool packed = (op == Operand::a || op == Operand::b) && s.ab_16bit;
    const int regs = op == Operand::a ? s.a_regs : op == Operand::b ? s.b_regs : s.cd_regs;
    // The reference lists exactly the registers the shape says, so nothing is missed on either side.
    ASSERT_EQ(table.size(), static_cast<std::size_t>(s.wave * regs * (packed ? 2 : 1))) << letter;
    for (const auto& [slot, element] : table) {
      const auto [lane, reg, half] = slot;
      const Element e = layout(ref.instruction, op, lane, reg, half);
      EXPECT_EQ(e.row, element.first) << letter << " lane " << lane << " v" << reg << " half " << half;
      EXPECT_EQ(e.col, element.second) << letter << " lane " << lane << " v" << reg << " half " << half;
    }
  }
}

// Encodes a value into a register slot the way the instruction stores it.
void put(std::uint32_t& reg, unsigned half, float value, MatrixInstruction i, bool sixteen_bit, bool bf16) {
  if (!sixteen_bit) {
    reg = std::bit_cast<std::uint32_t>(value);
    return;
  }
  const std::uint32_t bits = bf16 ? ops::float_to_bf16_bits(value) : ops::float_to_f16_bits(value);
  reg = (reg & ~(0xffffu << (16 * half))) | bits << (16 * half);
  (void)i;
}

// Runs the instruction on D = A B + C with the three matrices placed through the reference layout, and
// reads D back through it. D registers start as NaN, so any register the instruction leaves unwritten shows.
// D must equal `want`, by default the float64 product rounded once; `numerics` is the emulated chip's.
void check_product(const Reference& ref, const std::function<float(int, int)>& a, const std::function<float(int, int)>& b,
                   const std::function<float(int, int)>& c, const std::function<float(int, int)>& want = nullptr, ChipNumerics numerics = {}) {
  const InstructionShape& s = shape(ref.instruction);
  const bool bf16 = std::string(ref.name).find("bf16") != std::string::npos;
  const auto ta = test::reference_layout(ref.arch, ref.name, ref.wave, 'A');
  const auto tb = test::reference_layout(ref.arch, ref.name, ref.wave, 'B');
  const auto tc = test::reference_layout(ref.arch, ref.name, ref.wave, 'C');
  const auto td = test::reference_layout(ref.arch, ref.name, ref.wave, 'D');
  std::vector<std::array<std::uint32_t, kMaxRegs>> d_regs(s.wave);
  launch({1, 1, 1}, {s.wave, 1, 1}, s.wave, [&] {
    const unsigned lane = lane_id();
    std::uint32_t ra[kMaxRegs] = {}, rb[kMaxRegs] = {}, rc[kMaxRegs] = {}, rd[kMaxRegs];
    for (auto& r : rd) r = 0x7fc00000u;
    for (const auto& [slot, e] : ta)
      if (std::get<0>(slot) == lane) put(ra[std::get<1>(slot)], std::get<2>(slot), a(e.first, e.second), ref.instruction, s.ab_16bit, bf16);
    for (const auto& [slot, e] : tb)
      if (std::get<0>(slot) == lane) put(rb[std::get<1>(slot)], std::get<2>(slot), b(e.first, e.second), ref.instruction, s.ab_16bit, bf16);
    for (const auto& [slot, e] : tc)
      if (std::get<0>(slot) == lane) put(rc[std::get<1>(slot)], std::get<2>(slot), c(e.first, e.second), ref.instruction, s.d_16bit, false);
    matrix_op(ref.instruction, ra, rb, rc, rd);
    std::copy(rd, rd + kMaxRegs, d_regs[lane].begin());
  }, numerics);
  for (const auto& [slot, e] : td) {
    const auto [lane, reg, half] = slot;
    const std::uint32_t r = d_regs[lane][reg];
    const float got = s.d_16bit ? ops::f16_bits_to_float(static_cast<std::uint16_t>(r)) : std::bit_cast<float>(r);
    double exact = c(e.first, e.second);
    for (int k = 0; k < s.k; ++k) exact += static_cast<double>(a(e.first, k)) * b(k, e.second);
    ASSERT_EQ(got, want ? want(e.first, e.second) : static_cast<float>(exact))
        << "D lane " << lane << " v" << reg << " = element (" << e.first << ", " << e.second << ")";
  }
}

TEST_P(EmulatedInstruction, ComputesAOnMatricesPlacedByTheReference) {
  const Reference& ref = GetParam();
  const int k = shape(ref.instruction).k;
  // Distinct small integers are exact in float16, bfloat16 and float32, and so are these products.
  auto code = [](int r, int c) { return static_cast<float>(r * 16 + c) - 100.0f; };
  auto zero = [](int, int) { return 0.0f; };
  check_product(ref, [&](int m, int kk) { return code(m, kk); }, [&](int kk, int n) { return kk == n % k ? 1.0f : 0.0f; }, zero);
  check_product(ref, [&](int m, int kk) { return kk == m % k ? 1.0f : 0.0f; }, [&](int kk, int n) { return code(kk, n); }, zero);
  check_product(ref, zero, zero, [&](int m, int n) { return code(m, n) / 2.0f; });
  check_product(ref, [&](int m, int kk) { return static_cast<float>((m + 2 * kk) % 5) - 2.0f; },
                [&](int kk, int n) { return static_cast<float>((3 * kk + n) % 7) - 3.0f; }, [&](int m, int n) { return static_cast<float>(m - n); });
}

// The order of the float32 sums shows on products 2^24, 1, 1, -2^24 (float64: 2). CDNA's 16-bit MFMA
// add each group of 4 pairwise, (2^24 + 1) + (1 - 2^24) = 2^24 - (2^24 - 1) = 1 (microsoft/MMA-Sim); one
// product at a time, what the emulator does where AMD publishes no order, gives ((2^24 + 1) + 1) - 2^24
// = 0, since 2^24 + 1 rounds to 2^24.
TEST_P(EmulatedInstruction, SumsInTheDocumentedOrder) {
  const Reference& ref = GetParam();
  const MatrixInstruction i = ref.instruction;
  const bool pairwise = i == MatrixInstruction::mfma_f32_16x16x16_f16 || i == MatrixInstruction::mfma_f32_16x16x16_bf16;
  const float a_k[4] = {4096.0f, 1.0f, 1.0f, -4096.0f}, b_k[4] = {4096.0f, 1.0f, 1.0f, 4096.0f};
  check_product(ref, [&](int, int k) { return k < 4 ? a_k[k] : 0.0f; }, [&](int k, int) { return k < 4 ? b_k[k] : 0.0f; },
                [](int, int) { return 0.0f; }, [&](int, int) { return pairwise ? 1.0f : 0.0f; });
}

// gfx90a's 16-bit MFMA (emu::kCdna2Numerics) flush subnormal A and B elements and float32-subnormal C
// elements and sums to zero; the other instructions keep them on every chip. Float16 2^-20 (subnormal)
// x 2^-4 = 2^-24; bfloat16 2^-70 x 2^-70 = 2^-140, a float32 subnormal; C = 1e-40, a float32 subnormal.
TEST_P(EmulatedInstruction, Cdna2MfmaFlushSubnormalsToZero) {
  const Reference& ref = GetParam();
  const InstructionShape& s = shape(ref.instruction);
  const bool flushes = ref.instruction == MatrixInstruction::mfma_f32_16x16x16_f16 || ref.instruction == MatrixInstruction::mfma_f32_16x16x16_bf16;
  const bool bf16 = std::string(ref.name).find("bf16") != std::string::npos;
  const float a0 = bf16 ? 0x1p-70f : 0x1p-20f, b0 = bf16 ? 0x1p-70f : 0x1p-4f;
  auto zero = [](int, int) { return 0.0f; };
  check_product(ref, [&](int, int k) { return k == 0 ? a0 : 0.0f; }, [&](int k, int) { return k == 0 ? b0 : 0.0f; }, zero,
                [&](int, int) { return flushes ? 0.0f : a0 * b0; }, kCdna2Numerics);
  if (!s.d_16bit)
    check_product(ref, zero, zero, [](int, int) { return 1e-40f; }, [&](int, int) { return flushes ? 0.0f : 1e-40f; }, kCdna2Numerics);
  check_product(ref, [&](int, int k) { return k == 0 ? a0 : 0.0f; }, [&](int k, int) { return k == 0 ? b0 : 0.0f; }, zero);  // other chips keep them
}

INSTANTIATE_TEST_SUITE_P(Reference, EmulatedInstruction, ::testing::ValuesIn(references()),
                         [](const auto& info) { return label(info.param); });

TEST(EmulatedInstructionCoverage, EveryReferenceInstructionWeUseIsChecked) {
  // In the reference but unused by mlpcore: wave64 RDNA, the 32x32 MFMA, and RDNA4's float16-accumulating
  // WMMA (mlpcore accumulates in float32). Everything else is checked above.
  std::set<std::string> covered;
  for (const auto& r : references()) covered.insert(std::string(r.arch) + "/" + r.name + "/" + std::to_string(r.wave));
  std::set<std::string> in_file;
  for (const auto& r : test::reference_layouts())
    if (r.instruction.find("32x32") == std::string::npos && !(r.arch.starts_with("rdna") && r.wave == 64) &&
        !(r.arch == "rdna4" && r.instruction == "v_wmma_f16_16x16x16_f16"))
      in_file.insert(r.arch + "/" + r.instruction + "/" + std::to_string(r.wave));
  EXPECT_EQ(covered, in_file);
}

}  // namespace
}  // namespace mlpcore::emu::amd
