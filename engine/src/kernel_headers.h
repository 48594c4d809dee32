#pragma once
// The headers a specialized kernel's source includes (ops/, mlpcore/activation_kind.h, and the few
// standard headers NVRTC lacks, ops/nvrtc_std.h), embedded in the library at build time
// (cmake/EmbedKernelHeaders.cmake) so that a run-time compiler needs nothing on disk.
#include <span>
#include <string_view>

namespace mlpcore::detail {

struct KernelHeader {
  std::string_view name;  // as included: "ops/fused_mlp.h", "cstdint"
  std::string_view text;
};

std::span<const KernelHeader> kernel_headers();

}  // namespace mlpcore::detail
