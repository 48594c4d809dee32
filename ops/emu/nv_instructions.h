#pragma once
// NVIDIA tensor-core and conversion instructions as the PTX ISA defines them, for the wave emulator.
// Fragment layouts are encoded here independently of tile_mma_sm80.h; tests check both against the
// PTX ISA's description of mma.m16n8k16.
#include <cstdint>

namespace mlpcore::emu::nv {

enum class Operand { a, b, c };  // C and D share a layout
struct Element {
  int row, col;
};
// mma.m16n8k16 .f16 A (16x16, .row), B (16x8, .col), C/D (16x8, .f32): element `i` of lane `lane`'s
// fragment (A: 8 halves in 4 registers, B: 4 halves in 2, C/D: 4 floats).
Element layout(Operand operand, unsigned lane, unsigned i);

// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 as a warp collective (warp of 32): products of the
// float16 inputs are exact in float32 and accumulate in float32.
void mma_m16n8k16(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], const float* c, float* d);

// mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16: the same with float16 C and D (4 halves in 2
// registers, C/D layout as above). The PTX ISA leaves the accumulation's internal precision open; this
// models it as exact products summed in float32 and rounded once to float16 (nearest even), so tests
// bound such results against float64 instead of comparing bits with the hardware.
void mma_m16n8k16_f16(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], const std::uint32_t (&c)[2], std::uint32_t (&d)[2]);
// mma.sync.aligned.m16n8k8 (.f32 and .f16 accumulators): K = 8. Its A and B fragments are the first 4
// and 2 elements of m16n8k16's (same positions, `layout`); computed as m16n8k16 with K 8-15 absent.
void mma_m16n8k8(const std::uint32_t (&a)[2], std::uint32_t b, const float* c, float* d);
void mma_m16n8k8_f16(const std::uint32_t (&a)[2], std::uint32_t b, const std::uint32_t (&c)[2], std::uint32_t (&d)[2]);

// max.NaN.f16x2 against +0: ReLU on packed halves; negative values give +0 (and -0, a choice: the PTX ISA
// does not say which zero), a NaN the canonical NaN.
std::uint32_t relu_f16x2(std::uint32_t x);

// abs.f16x2: the magnitudes of two packed halves (their sign bits cleared).
std::uint32_t abs_f16x2(std::uint32_t x);

// max.f16x2: the larger of each pair of halves, a NaN losing to a number (ops::max_f16x2_bits).
std::uint32_t max_f16x2(std::uint32_t a, std::uint32_t b);

// cvt.rn.f16x2.f32: round to nearest even, `lo` in bits 15:0.
std::uint32_t cvt_rn_f16x2(float lo, float hi);
// cvt.rn.relu.f16x2.f32: the same after clamping negative values to 0; a NaN becomes the canonical NaN.
std::uint32_t cvt_rn_relu_f16x2(float lo, float hi);

}  // namespace mlpcore::emu::nv
