#pragma once
// The tile family of the architecture being compiled. Targets without matrix cores get the RDNA3 tile,
// whose instructions there are traps that name the missing instruction.
#include "ops/arch_config.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"

namespace mlpcore::ops {
#if MLPCORE_ARCH_GFX12
using NativeTile = TileWmmaGfx12;
#elif MLPCORE_ARCH_GFX9
using NativeTile = TileMfmaGfx9;
#else
using NativeTile = TileWmmaGfx11;
#endif
}  // namespace mlpcore::ops
