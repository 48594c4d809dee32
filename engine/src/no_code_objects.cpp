// Stands in for a GPU family this library was built without (MLPCORE_AMDGPU=OFF or MLPCORE_CUDA=OFF):
// no code objects, so that backend reports itself unavailable. Compiled once per missing family with
// MLPCORE_NO_CODE_OBJECTS set to the function's name.
#include "engine/src/code_objects.h"

namespace mlpcore::detail {
std::span<const EmbeddedCodeObject> MLPCORE_NO_CODE_OBJECTS() { return {}; }
}  // namespace mlpcore::detail
