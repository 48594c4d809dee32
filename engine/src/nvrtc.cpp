#include "engine/src/nvrtc.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlpcore/error.h"

namespace mlpcore::detail {

Nvrtc::Nvrtc(const char* library)
    : RuntimeCompiler(library, {"NVRTC", "nvrtc", "CUBIN", "MLPCORE_NVRTC_LIBRARY"},
                      {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"}) {
  lib_.bind(get_ptx_size_, "nvrtcGetPTXSize");
  lib_.bind(get_ptx_, "nvrtcGetPTX");
  takes_no_cache_ = version_number() >= std::optional{std::pair{12, 9}};  // nullopt (unknown) is the least
}

bool Nvrtc::assembles_alone() const {
  std::call_once(jit_link_once_, [this] {
    if (!version_number()) return;
    jit_link_.emplace(version_number()->first, takes_no_cache_);
    if (!jit_link_->loaded() || jit_link_->version_number() != version_number()) jit_link_.reset();
  });
  return jit_link_.has_value();
}

std::string Nvrtc::code_version() const { return version() + (assembles_alone() ? "" : " without nvJitLink"); }

namespace {

// What ptxas -v says of the code (per kernel: registers, stack frame, spills), read into `c`.
void read_ptxas_report(CompiledCode& c) {
  c.local_arrays = c.assembly.find(".local") != std::string::npos;  // a __local_depot, and its ld/st.local
  for (const std::string spills : {" bytes spill stores", " bytes spill loads"})
    for (std::size_t at = c.log.find(spills); at != std::string::npos; at = c.log.find(spills, at + 1)) {
      c.reports_spills = true;
      const std::size_t digits = c.log.find_last_not_of("0123456789", at - 1) + 1;
      if (digits < at) c.spill_bytes = std::max(c.spill_bytes, std::stoi(c.log.substr(digits, at - digits)));
    }
}

}  // namespace

CompiledCode Nvrtc::compile_code(const std::string& source, const std::string& target, Assembly assembly) const {
  // "sm_90", checked by the caller (nvidia_target). -default-device: constexpr helpers without __device__
  // (the tiles' geometry) are callable in kernels, as nvcc's --expt-relaxed-constexpr allows; ptxas -v
  // reports registers and spills in the log. --no-cache (NVRTC 12.9 and later, the release whose guide
  // adds "Caching"): where a CUDA driver is installed, NVRTC would otherwise take a cubin it built before
  // from the driver's compute cache, without running ptxas and so without its report (an H100 kept a
  // kernel that spilled 1 KB to fit its register bound, 5 times slower; engine/src/specialize.cpp).
  // mlpcore's own kernel cache keeps compiled kernels. Assembly::light: ptxas -O1 (ops::assembled_light).
  const std::string arch_option = "-arch=" + target;
  std::vector<const char*> options = {arch_option.c_str(), "-std=c++20", "-default-device", "-Xptxas=-v"};
  if (takes_no_cache_) options.push_back("--no-cache");
  if (assembly == Assembly::light) options.push_back("-Xptxas=-O1");
  CompiledCode out;
  RuntimeCompiler::Output compiled = RuntimeCompiler::compile(source, "NVRTC (" + target + ")", options, [&](void* program) {
    std::size_t size = 0;
    if (get_ptx_size_(program, &size) == 0 && size > 1) {
      out.assembly.resize(size);
      get_ptx_(program, out.assembly.data());
      out.assembly.resize(size - 1);
    }
  });
  out.code = std::move(compiled.code);
  out.log = std::move(compiled.log);
  read_ptxas_report(out);
  return out;
}

CompiledCode Nvrtc::assemble_again(const std::string& source, const CompiledCode& compiled, const std::string& target, Assembly assembly) const {
  if (compiled.assembly.empty() || !assembles_alone()) return compile_code(source, target, assembly);
  try {
    CompiledCode out = jit_link_->assemble(compiled.assembly, target, assembly);
    out.assembly = compiled.assembly;
    read_ptxas_report(out);
    return out;
  } catch (const Error&) {
    return compile_code(source, target, assembly);  // only slower: the same PTX, and NVRTC's ptxas
  }
}

std::optional<CompiledCode> Nvrtc::assemble_unbounded(const CompiledCode& compiled, const std::string& target) const {
  // The bound is one line of the kernel's header in PTX: "\t.minnctapersm 5" after its .maxntid.
  const std::string directive = ".minnctapersm";
  const std::size_t at = compiled.assembly.find(directive);
  if (at == std::string::npos || !assembles_alone()) return std::nullopt;
  std::string ptx = compiled.assembly;
  const std::size_t line = ptx.rfind('\n', at) + 1, end = ptx.find('\n', at);
  ptx.erase(line, end == std::string::npos ? std::string::npos : end + 1 - line);
  if (ptx.find(directive) != std::string::npos) return std::nullopt;  // one kernel a program: one bound
  try {
    CompiledCode out = jit_link_->assemble(ptx, target, Assembly::full);
    out.assembly = std::move(ptx);
    read_ptxas_report(out);
    return out;
  } catch (const Error&) {
    return std::nullopt;
  }
}

const Nvrtc& nvrtc() {
  // Never unloaded: NVRTC keeps allocations (its C++ runtime's exception pool) that dlclose at exit
  // would orphan, and a process that compiled once may compile again until it ends.
  static const Nvrtc* const compiler = new Nvrtc;
  return *compiler;
}

}  // namespace mlpcore::detail
