// The tile test kernels as real code objects, one per architecture, for tests/device/code_object_test.cpp.
#include "ops/native_tile.h"
#include "tests/kernels/tile_kernels.h"

using mlpcore::ops::NativeTile;

extern "C" MLPCORE_KERNEL void mlpcore_test_tile_gemm(const float* a, const float* b, const float* c, float* d) {
  mlpcore::test_kernels::tile_gemm<NativeTile>(a, b, c, d);
}

extern "C" MLPCORE_KERNEL void mlpcore_test_tile_chain(const float* x, const float* w1, const float* b1, const float* w2,
                                                       const float* b2, float* y) {
  mlpcore::test_kernels::tile_chain<NativeTile>(x, w1, b1, w2, b2, y);
}
