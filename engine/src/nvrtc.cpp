#include "engine/src/nvrtc.h"

#include <memory>

#include "engine/src/kernel_headers.h"
#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

constexpr int kSuccess = 0;

}  // namespace

Nvrtc::Nvrtc(const char* library)
    : lib_(library, "MLPCORE_NVRTC_LIBRARY", {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"}) {
  lib_.bind(version_, "nvrtcVersion");
  lib_.bind(get_error_string_, "nvrtcGetErrorString");
  lib_.bind(create_program_, "nvrtcCreateProgram");
  lib_.bind(destroy_program_, "nvrtcDestroyProgram");
  lib_.bind(compile_program_, "nvrtcCompileProgram");
  lib_.bind(get_program_log_size_, "nvrtcGetProgramLogSize");
  lib_.bind(get_program_log_, "nvrtcGetProgramLog");
  lib_.bind(get_cubin_size_, "nvrtcGetCUBINSize");
  lib_.bind(get_cubin_, "nvrtcGetCUBIN");
  lib_.bind(get_ptx_size_, "nvrtcGetPTXSize");
  lib_.bind(get_ptx_, "nvrtcGetPTX");
}

std::string Nvrtc::version() const {
  int major = 0, minor = 0;
  if (!loaded() || version_(&major, &minor) != kSuccess) return "NVRTC (unknown version)";
  return "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
}

std::string Nvrtc::describe(int result) const {
  const char* s = get_error_string_ ? get_error_string_(result) : nullptr;
  return s ? s : "nvrtcResult " + std::to_string(result);
}

Nvrtc::Output Nvrtc::compile(const std::string& source, int arch) const {
  const std::string where = "NVRTC (sm_" + std::to_string(arch) + ")";
  if (!loaded()) throw Error(ErrorCode::device, where, "", "not loaded: " + load_error());
  std::vector<std::string> names, texts;
  for (const KernelHeader& h : kernel_headers()) {
    names.emplace_back(h.name);
    texts.emplace_back(h.text());
  }
  std::vector<const char*> name_ptrs, text_ptrs;
  for (std::size_t i = 0; i < names.size(); ++i) {
    name_ptrs.push_back(names[i].c_str());
    text_ptrs.push_back(texts[i].c_str());
  }
  void* program = nullptr;
  if (const int r = create_program_(&program, source.c_str(), "mlpcore_specialized.cu", static_cast<int>(names.size()), text_ptrs.data(), name_ptrs.data()))
    throw Error(ErrorCode::device, where, "", "nvrtcCreateProgram: " + describe(r));
  const auto destroy = [this](void* p) { destroy_program_(&p); };
  const std::unique_ptr<void, decltype(destroy)> owner(program, destroy);
  const std::string arch_option = "-arch=sm_" + std::to_string(arch);
  // -default-device: constexpr helpers without __device__ (the tiles' geometry) are callable in kernels,
  // as nvcc's --expt-relaxed-constexpr allows; ptxas -v reports registers and spills in the log.
  const char* options[] = {arch_option.c_str(), "-std=c++20", "-default-device", "-Xptxas=-v"};
  const int result = compile_program_(program, 4, options);
  Output out;
  std::size_t size = 0;
  if (get_program_log_size_(program, &size) == kSuccess && size > 1) {
    out.log.resize(size);
    get_program_log_(program, out.log.data());
    out.log.resize(size - 1);
  }
  if (result != kSuccess) throw Error(ErrorCode::device, where, "", "nvrtcCompileProgram: " + describe(result) + "\n" + out.log);
  if (const int r = get_cubin_size_(program, &size); r != kSuccess || size == 0)
    throw Error(ErrorCode::device, where, "", "nvrtcGetCUBINSize: " + describe(r));
  out.cubin.resize(size);
  if (const int r = get_cubin_(program, reinterpret_cast<char*>(out.cubin.data()))) throw Error(ErrorCode::device, where, "", "nvrtcGetCUBIN: " + describe(r));
  if (get_ptx_size_(program, &size) == kSuccess && size > 1) {
    out.ptx.resize(size);
    get_ptx_(program, out.ptx.data());
    out.ptx.resize(size - 1);
  }
  return out;
}

}  // namespace mlpcore::detail
