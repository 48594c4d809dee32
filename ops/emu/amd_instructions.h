#pragma once
// AMD matrix-core and cross-lane instructions as the hardware defines them, for the wave emulator.
// Register layouts are encoded here independently of the tile headers; both are tested against AMD's
// Matrix Instruction Calculator output (tests/data/amd_matrix_layouts.csv).
#include <cstdint>

namespace mlpcore::emu::amd {

enum class MatrixInstruction {
  wmma_gfx11_f32_f16,   // v_wmma_f32_16x16x16_f16, wave32 (RDNA3)
  wmma_gfx11_f32_bf16,  // v_wmma_f32_16x16x16_bf16, wave32
  wmma_gfx11_f16_f16,   // v_wmma_f16_16x16x16_f16, wave32, OPSEL = 0: C/D in bits 15:0
  wmma_gfx12_f32_f16,   // v_wmma_f32_16x16x16_f16, wave32 (RDNA4)
  wmma_gfx12_f32_bf16,  // v_wmma_f32_16x16x16_bf16, wave32
  mfma_f32_16x16x16_f16,   // v_mfma_f32_16x16x16f16 (gfx908/90a), v_mfma_f32_16x16x16_f16 (gfx94x)
  mfma_f32_16x16x16_bf16,  // v_mfma_f32_16x16x16bf16_1k / _bf16
  mfma_f32_16x16x4_f32,    // v_mfma_f32_16x16x4f32
};

enum class Operand { a, b, c, d };

struct InstructionShape {
  const char* name;
  unsigned wave;
  int a_regs, b_regs, cd_regs;  // VGPRs per lane
  int k;                        // M = N = 16 for every instruction here
  bool ab_16bit;                // A/B pack two 16-bit values per VGPR
  bool ab_replicated;           // RDNA3: lanes 16-31 must repeat lanes 0-15
  bool d_16bit;                 // D is f16 in bits 15:0
};
const InstructionShape& shape(MatrixInstruction instruction);

struct Element {
  int row, col;
};
// The element of `operand` that lane `lane` holds in VGPR `reg` (relative to the operand's first), in bits
// 15:0 (half 0) or 31:16 (half 1) for packed 16-bit values; half 0 for 32-bit values.
Element layout(MatrixInstruction instruction, Operand operand, unsigned lane, unsigned reg, unsigned half);

constexpr int kMaxRegs = 8;
// Executes the instruction as a wave collective. Per lane: a, b, c are its input VGPRs, d receives its
// output VGPRs. Accumulation is float32; products of 16-bit inputs are exact in float32; the 16-bit MFMA
// sum each group of 4 products pairwise before adding it (the order of the others is not published);
// with emu::ChipNumerics::mfma_flushes_subnormals (gfx90a) they flush subnormals to zero.
// Throws EmulatorError for RDNA3 A/B operands that are not replicated across the half-waves.
void matrix_op(MatrixInstruction instruction, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
               std::uint32_t* d);

// v_cvt_pkrtz_f16_f32: two floats to float16, round toward zero, `lo` in bits 15:0. Bit-exact: finite
// values beyond the range become +-65504, infinities stay infinite, NaN stays NaN (quiet), subnormal
// float16 results are produced, float32 subnormals become signed zero.
std::uint32_t cvt_pkrtz(float lo, float hi);
std::uint16_t f32_to_f16_rtz(float value);

// v_pk_max_f16: the larger of each pair of halves, a NaN losing to a number (ops::max_f16x2_bits).
std::uint32_t pk_max_f16(std::uint32_t a, std::uint32_t b);

// v_permlanex16_b32 (gfx10+): lane l reads `src` of the lane in the other 16-lane row of its 32-lane
// group whose index is nibble (l % 16) of {sel_hi:sel_lo}. A wave collective (every lane active, so the
// fetch-inactive and bound-control bits have no effect).
std::uint32_t permlanex16(std::uint32_t old, std::uint32_t src, std::uint32_t sel_lo, std::uint32_t sel_hi);

}  // namespace mlpcore::emu::amd
