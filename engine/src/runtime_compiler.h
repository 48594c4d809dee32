#pragma once
// What compiles a model's specialized source (engine/src/specialized_source.h) for one GPU, and the run-time
// compilers that share NVRTC's C API (NVRTC itself, and hiprtc, whose calls differ only in their prefix),
// loaded at run time like the GPU runtimes: no link dependency, the kernel headers embedded in this library.
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/src/dynamic_library.h"

namespace mlpcore::detail {

// One kernel's loadable code object, and what its compiler says of it.
struct CompiledCode {
  std::vector<std::byte> code;
  bool local_arrays = false;  // arrays left in local memory, where the compiler tells (NVRTC: its PTX declares .local)
  std::string assembly;       // what the code was assembled from, where the compiler gives it (NVRTC: PTX)
  std::string log;            // the compiler's messages (NVRTC: ptxas's registers, stack frame and spills)
  int spill_bytes = 0;        // the most bytes of registers a kernel spilled, where the compiler tells (NVRTC: ptxas)
  bool reports_spills = false;  // whether the compiler told (spill_bytes is then known)
};

// How much the assembler optimizes a kernel (ops::assembled_light, or compile_kernel's second try under
// a register bound): NVRTC runs ptxas at -O3 (full) or -O1 (light); hiprtc and clang keep their -O3
// either way.
enum class Assembly { full, light };

// NVRTC, hiprtc, or a clang found on the machine (`mlpcore compile` for AMD without hiprtc).
class KernelCompiler {
 public:
  virtual ~KernelCompiler() = default;
  virtual std::string version() const = 0;  // "NVRTC 13.0"
  // version(), and what else changes the code it gives (NVRTC without nvJitLink: no small-batch twins of
  // their own): the kernel cache's key, so that it keeps the two apart. Costs a library load where
  // version() does not.
  virtual std::string code_version() const { return version(); }
  // `source` compiled for `target` ("sm_90", "gfx1100"), assembled as `assembly` says. Throws
  // Error(device) with the compiler's log when it fails.
  virtual CompiledCode compile_code(const std::string& source, const std::string& target, Assembly assembly) const = 0;
  // `source` for `target` assembled again as `assembly` says, from what compile_code gave for it (its
  // second argument): by the assembler alone where the compiler can (NVRTC with nvJitLink: ptxas on the
  // same PTX), else compiled again.
  virtual CompiledCode assemble_again(const std::string& source, const CompiledCode&, const std::string& target, Assembly assembly) const {
    return compile_code(source, target, assembly);
  }
  // What compile_code gave under a register bound (a kernel's minimum of blocks per multiprocessor),
  // assembled again at full for `target` without the bound, where the assembler alone can (NVRTC with
  // nvJitLink: its PTX's .minnctapersm dropped); none elsewhere, or for code without such a bound.
  virtual std::optional<CompiledCode> assemble_unbounded(const CompiledCode&, const std::string& target) const {
    (void)target;
    return std::nullopt;
  }
};

// The names that tell one NVRTC-shaped library from another.
struct RuntimeCompilerNames {
  const char* product;  // "NVRTC", "hiprtc": in messages and version()
  const char* prefix;   // of every entry point: "nvrtc", "hiprtc"
  const char* code;     // the entry points' word for the compiled code: "CUBIN" (nvrtcGetCUBIN), "Code"
  const char* env;      // the variable that names the library to load instead
};

class RuntimeCompiler : public KernelCompiler {
 public:
  bool loaded() const { return lib_.loaded(); }
  const std::string& load_error() const { return lib_.error(); }
  const char* product() const { return names_.product; }  // "NVRTC"
  std::string version() const override;
  std::optional<std::pair<int, int>> version_number() const;  // {major, minor}, where the library says

  struct Output {
    std::vector<std::byte> code;
    std::string log;  // the compiler's messages (with NVRTC's -Xptxas=-v: registers and spills per kernel)
  };

 protected:
  // Loads `library` if given, else $names.env, else the first of `defaults` that loads.
  RuntimeCompiler(const char* library, const RuntimeCompilerNames& names, std::initializer_list<const char*> defaults);

  // `source` with the embedded kernel headers, compiled with `options`; `also` reads more from the
  // compiled program (NVRTC's PTX) before it is destroyed. Errors name `where`.
  Output compile(const std::string& source, const std::string& where, std::span<const char* const> options,
                 const std::function<void(void* program)>& also = {}) const;
  std::string describe(int result) const;

  DynamicLibrary lib_;

 private:
  RuntimeCompilerNames names_;
  int (*version_)(int*, int*) = nullptr;
  const char* (*get_error_string_)(int) = nullptr;
  int (*create_program_)(void**, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*destroy_program_)(void**) = nullptr;
  int (*compile_program_)(void*, int, const char* const*) = nullptr;
  int (*get_program_log_size_)(void*, std::size_t*) = nullptr;
  int (*get_program_log_)(void*, char*) = nullptr;
  int (*get_code_size_)(void*, std::size_t*) = nullptr;
  int (*get_code_)(void*, char*) = nullptr;
};

}  // namespace mlpcore::detail
