#pragma once
// AMD's published examples (../shared/seeds), rewritten as our own kernels with the same lane and index
// logic, on our instruction wrappers.
#include "tests/kernels/amd_test_intrinsics.h"

namespace mlpcore::test_kernels {

// AMD lab notes, "sgemm_16x16x4": D (16x16) = A (16x4) B (4x16), fp32, one wave64 as a 16x4 block.
MLPCORE_DEVICE void cdna_sgemm_16x16x4(const float* a, const float* b, float* d) {
  ops::amd::f32x4 dmn = {};
  const unsigned x = ops::thread_x(), y = ops::thread_y();
  const unsigned mk = y + 4 * x;   // A[x][y]
  const unsigned kn = x + 16 * y;  // B[y][x]
  dmn = ops::amd::mfma_f32_16x16x4_f32(a[mk], b[kn], dmn);
  for (unsigned i = 0; i < 4; ++i) d[x + i * 16 + y * 4 * 16] = dmn[static_cast<int>(i)];
}

// GPUOpen's RDNA3 WMMA hello world: C = A B with float16 in and out (OPSEL = 0), wave32.
MLPCORE_DEVICE void rdna3_wmma_hello(const ops::half_t* a, const ops::half_t* b, ops::half_t* c) {
  ops::amd::f16x16 a_frag, b_frag, c_frag = {};
  const unsigned lane = ops::lane_id() % 16;
  for (unsigned ele = 0; ele < 16; ++ele) b_frag[static_cast<int>(ele)] = b[16 * ele + lane];
  for (unsigned ele = 0; ele < 16; ++ele) a_frag[static_cast<int>(ele)] = a[16 * lane + ele];
  c_frag = ops::amd::wmma_f16_16x16x16_f16_gfx11(a_frag, b_frag, c_frag);
  for (unsigned ele = 0; ele < 8; ++ele) {
    const unsigned r = ele * 2 + ops::lane_id() / 16;
    c[16 * r + lane] = c_frag[static_cast<int>(ele * 2)];
  }
}

// GPUOpen's RDNA4 WMMA matmul with cvt_pkrtz packing: C = A B, float32 in memory, wave32. The blog's
// simplified layout puts K = ele + 8 * laneGroup in both A and B; the true layout interleaves K, which is
// the same permutation on both sides, so the product is unchanged.
MLPCORE_DEVICE void rdna4_wmma_matmul(const float* a, const float* b, float* c) {
  constexpr unsigned kWidth = 8;
  const unsigned lane = ops::lane_id() % 16, group = ops::lane_id() / 16;
  ops::amd::f16x8 a_frag, b_frag;
  ops::amd::f32x8 c_frag = {};
  for (unsigned ele = 0; ele < kWidth; ele += 2) {
    const auto bp = ops::amd::cvt_pkrtz(b[16 * (ele + group * kWidth) + lane], b[16 * (ele + 1 + group * kWidth) + lane]);
    const auto ap = ops::amd::cvt_pkrtz(a[16 * lane + ele + group * kWidth], a[16 * lane + ele + 1 + group * kWidth]);
    b_frag[static_cast<int>(ele)] = bp[0];
    b_frag[static_cast<int>(ele + 1)] = bp[1];
    a_frag[static_cast<int>(ele)] = ap[0];
    a_frag[static_cast<int>(ele + 1)] = ap[1];
  }
  c_frag = ops::amd::wmma_f32_16x16x16_f16_gfx12(a_frag, b_frag, c_frag);
  for (unsigned ele = 0; ele < kWidth; ++ele) c[16 * (ele + group * kWidth) + lane] = c_frag[static_cast<int>(ele)];
}

// GPUOpen's RDNA4 "minimumMlp": two 16x16 layers chained through registers, the first layer's D reused
// as the second layer's B (and, as in the blog, as its C): out = W1 h + h, h = W0 x.
MLPCORE_DEVICE void rdna4_minimum_mlp(const ops::half_t* w, const ops::half_t* x, float* out) {
  constexpr unsigned kWidth = 8;
  const unsigned lane = ops::lane_id() % 16, group = ops::lane_id() / 16;
  ops::amd::f16x8 a_frag, b_frag;
  ops::amd::f32x8 c_frag = {};
  for (unsigned ele = 0; ele < kWidth; ++ele) {
    b_frag[static_cast<int>(ele)] = x[16 * (ele + group * kWidth) + lane];
    a_frag[static_cast<int>(ele)] = w[16 * lane + ele + group * kWidth];
  }
  c_frag = ops::amd::wmma_f32_16x16x16_f16_gfx12(a_frag, b_frag, c_frag);
  w += 16 * 16;
  for (unsigned ele = 0; ele < kWidth; ++ele) {
    b_frag[static_cast<int>(ele)] = static_cast<ops::half_t>(c_frag[static_cast<int>(ele)]);
    a_frag[static_cast<int>(ele)] = w[16 * lane + ele + group * kWidth];
  }
  c_frag = ops::amd::wmma_f32_16x16x16_f16_gfx12(a_frag, b_frag, c_frag);
  for (unsigned ele = 0; ele < kWidth; ++ele) out[16 * (ele + group * kWidth) + lane] = c_frag[static_cast<int>(ele)];
}

}  // namespace mlpcore::test_kernels
