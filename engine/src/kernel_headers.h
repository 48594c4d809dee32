#pragma once
// The headers a specialized kernel's source includes (ops/, mlpcore/activation_kind.h, and the few
// standard headers NVRTC lacks, ops/nvrtc_std.h), embedded in the library at build time
// (cmake/EmbedFiles.cmake) so that a run-time compiler needs nothing on disk.
#include <cstddef>
#include <span>
#include <string_view>

namespace mlpcore::detail {

struct KernelHeader {
  const char* name;  // as included: "ops/fused_mlp.h", "cstdint"
  const unsigned char* data;
  std::size_t size;
  std::string_view text() const { return {reinterpret_cast<const char*>(data), size}; }
};

std::span<const KernelHeader> kernel_headers();

}  // namespace mlpcore::detail
