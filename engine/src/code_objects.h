#pragma once
// GPU code built into this library: the fused MLP kernels as AMD code objects (one per architecture) and
// as two CUDA fat binaries (cubins for each sm, plus PTX for newer GPUs), "fatbin" and "fatbin-light", one
// per assembly (ops/fused_kernel_entry.h).
#include <cstddef>
#include <span>

namespace mlpcore::detail {

struct EmbeddedCodeObject {
  const char* arch;  // e.g. "gfx1100", or "fatbin", "fatbin-light"
  const unsigned char* data;
  std::size_t size;
};

// Empty when the library was built with MLPCORE_AMDGPU=OFF, resp. MLPCORE_CUDA=OFF.
std::span<const EmbeddedCodeObject> amd_code_objects();
std::span<const EmbeddedCodeObject> cuda_code_objects();

}  // namespace mlpcore::detail
