// Built with MLPCORE_AMDGPU=OFF: no AMD code objects, so the hip backend reports itself unavailable.
#include "engine/src/amd_code_objects.h"

namespace mlpcore::detail {
std::span<const EmbeddedCodeObject> amd_code_objects() { return {}; }
}  // namespace mlpcore::detail
