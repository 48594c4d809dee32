#pragma once
// The fused MLP code objects built into this library (cmake/MlpcoreAmdgpu.cmake), one per architecture.
#include <cstddef>
#include <span>

namespace mlpcore::detail {

struct EmbeddedCodeObject {
  const char* arch;  // e.g. "gfx1100"
  const unsigned char* data;
  std::size_t size;
};

// Empty when the library was built with MLPCORE_AMDGPU=OFF.
std::span<const EmbeddedCodeObject> amd_code_objects();

}  // namespace mlpcore::detail
