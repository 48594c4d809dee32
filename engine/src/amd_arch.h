#pragma once
// AMD GPU architectures on the host side: gcnArchName ("gfx1100:sramecc+:xnack-") to the tile family,
// matching the device-side flags of ops/arch_config.h, and the choice of code object.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/src/code_objects.h"

namespace mlpcore::detail {

enum class Arch { unknown, gfx9, gfx11, gfx12 };  // unknown: no matrix-core kernel for it
const char* to_string(Arch arch) noexcept;

// The processor part of a gcnArchName ("gfx1100" of "gfx1100:sramecc+:xnack-"), or nothing if it is not
// of the form gfx<hex digits>.
std::optional<std::string> processor_of(std::string_view gcn_arch_name);
Arch arch_family(std::string_view processor);

// The code object built for exactly this processor; nullptr if there is none. Code objects are built
// without xnack/sramecc settings, so they load in either mode.
const EmbeddedCodeObject* select_code_object(std::string_view processor, std::span<const EmbeddedCodeObject> objects);

}  // namespace mlpcore::detail
