#include "engine/src/runtime_compiler.h"

#include <memory>

#include "engine/src/kernel_headers.h"
#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

constexpr int kSuccess = 0;  // NVRTC_SUCCESS, HIPRTC_SUCCESS

}  // namespace

RuntimeCompiler::RuntimeCompiler(const char* library, const RuntimeCompilerNames& names, std::initializer_list<const char*> defaults)
    : lib_(library, names.env, defaults), names_(names) {
  const std::string p = names.prefix;
  lib_.bind(version_, (p + "Version").c_str());
  lib_.bind(get_error_string_, (p + "GetErrorString").c_str());
  lib_.bind(create_program_, (p + "CreateProgram").c_str());
  lib_.bind(destroy_program_, (p + "DestroyProgram").c_str());
  lib_.bind(compile_program_, (p + "CompileProgram").c_str());
  lib_.bind(get_program_log_size_, (p + "GetProgramLogSize").c_str());
  lib_.bind(get_program_log_, (p + "GetProgramLog").c_str());
  lib_.bind(get_code_size_, (p + "Get" + names.code + "Size").c_str());
  lib_.bind(get_code_, (p + "Get" + names.code).c_str());
}

std::optional<std::pair<int, int>> RuntimeCompiler::version_number() const {
  int major = 0, minor = 0;
  if (!loaded() || version_(&major, &minor) != kSuccess) return std::nullopt;
  return std::pair{major, minor};
}

std::string RuntimeCompiler::version() const {
  const auto v = version_number();
  if (!v) return std::string(names_.product) + " (unknown version)";
  return std::string(names_.product) + " " + std::to_string(v->first) + "." + std::to_string(v->second);
}

std::string RuntimeCompiler::describe(int result) const {
  const char* s = get_error_string_ ? get_error_string_(result) : nullptr;
  return s ? s : std::string(names_.prefix) + "Result " + std::to_string(result);
}

RuntimeCompiler::Output RuntimeCompiler::compile(const std::string& source, const std::string& where, std::span<const char* const> options,
                                                 const std::function<void(void* program)>& also) const {
  if (!loaded()) throw Error(ErrorCode::device, where, "", "not loaded: " + load_error());
  const std::string p = names_.prefix;
  std::vector<const char*> names, texts;
  std::vector<std::string> owned;  // the headers' text, NUL-terminated
  owned.reserve(kernel_headers().size());
  for (const KernelHeader& h : kernel_headers()) {
    names.push_back(h.name);
    texts.push_back(owned.emplace_back(h.text()).c_str());
  }
  void* program = nullptr;
  if (const int r = create_program_(&program, source.c_str(), "mlpcore_specialized.cu", static_cast<int>(names.size()), texts.data(), names.data()))
    throw Error(ErrorCode::device, where, "", p + "CreateProgram: " + describe(r));
  const auto destroy = [this](void* prog) { destroy_program_(&prog); };
  const std::unique_ptr<void, decltype(destroy)> owner(program, destroy);
  const int result = compile_program_(program, static_cast<int>(options.size()), options.data());
  Output out;
  std::size_t size = 0;
  if (get_program_log_size_(program, &size) == kSuccess && size > 1) {
    out.log.resize(size);
    get_program_log_(program, out.log.data());
    out.log.resize(size - 1);
  }
  if (result != kSuccess) throw Error(ErrorCode::device, where, "", p + "CompileProgram: " + describe(result) + "\n" + out.log);
  const std::string get = p + "Get" + names_.code;
  if (const int r = get_code_size_(program, &size); r != kSuccess || size == 0)
    throw Error(ErrorCode::device, where, "", get + "Size: " + (r != kSuccess ? describe(r) : "no code"));
  out.code.resize(size);
  if (const int r = get_code_(program, reinterpret_cast<char*>(out.code.data()))) throw Error(ErrorCode::device, where, "", get + ": " + describe(r));
  if (also) also(program);
  return out;
}

}  // namespace mlpcore::detail
