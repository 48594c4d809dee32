#pragma once
// The tile family of the architecture being compiled. AMD targets without matrix cores get the RDNA3
// tile, and NVIDIA ones before sm_80 the sm_80 tile: there their instructions are traps that name them.
// MLPCORE_IF_F16ACC(code) keeps `code` where the family also has a float16-accumulating tile,
// NativeF16AccTile (NVIDIA only, so far).
#include "ops/arch_config.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"

namespace mlpcore::ops {
#if MLPCORE_ARCH_GFX12
using NativeTile = TileWmmaGfx12;
#elif MLPCORE_ARCH_GFX9
using NativeTile = TileMfmaGfx9;
#elif defined(__CUDACC__)
using NativeTile = TileMmaSm80;
using NativeF16AccTile = TileMmaSm80F16Acc;
#define MLPCORE_IF_F16ACC(...) __VA_ARGS__
#else
using NativeTile = TileWmmaGfx11;
#endif
#ifndef MLPCORE_IF_F16ACC
#define MLPCORE_IF_F16ACC(...)
#endif
}  // namespace mlpcore::ops
