#include "engine/src/amd_arch.h"

#include <cctype>

namespace mlpcore::detail {

const char* to_string(Arch arch) noexcept {
  switch (arch) {
    case Arch::gfx9: return "CDNA (gfx9 MFMA)";
    case Arch::gfx11: return "RDNA3 (gfx11 WMMA)";
    case Arch::gfx12: return "RDNA4 (gfx12 WMMA)";
    case Arch::unknown: break;
  }
  return "no matrix-core kernel";
}

std::optional<std::string> processor_of(std::string_view name) {
  const std::string_view processor = name.substr(0, name.find(':'));
  if (processor.size() < 4 || processor.size() > 16 || !processor.starts_with("gfx")) return std::nullopt;
  for (char c : processor.substr(3))
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) return std::nullopt;
  return std::string(processor);
}

Arch arch_family(std::string_view p) {
  if (p.starts_with("gfx11")) return Arch::gfx11;
  if (p.starts_with("gfx12")) return Arch::gfx12;
  for (const char* mfma : {"gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"})
    if (p == mfma) return Arch::gfx9;
  return Arch::unknown;
}

const EmbeddedCodeObject* select_code_object(std::string_view processor, std::span<const EmbeddedCodeObject> objects) {
  for (const auto& o : objects)
    if (processor == o.arch) return &o;
  return nullptr;
}

}  // namespace mlpcore::detail
