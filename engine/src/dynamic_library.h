#pragma once
// A shared library opened at run time (dlopen) and closed with its owner: how the GPU runtimes are
// reached, so that mlpcore loads (and falls back to the CPU) on machines without them.
#include <initializer_list>
#include <string>

namespace mlpcore::detail {

class DynamicLibrary {
 public:
  // Opens `library` if given, else $`env` if set, else the first of `defaults` that loads.
  DynamicLibrary(const char* library, const char* env, std::initializer_list<const char*> defaults);
  ~DynamicLibrary() { close(); }
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  // Why it is not loaded: each name's dlopen error, or the symbol it lacks.
  const std::string& error() const { return error_; }

  // The symbol `name` as `F` (a function pointer type); nullptr if the library does not export it.
  template <class F>
  F find(const char* name) const {
    return reinterpret_cast<F>(find_symbol(name));
  }
  // `f` = the symbol `name`, which the library must export: without it the library is closed and
  // error() names the symbol (later binds then do nothing).
  template <class F>
  void bind(F& f, const char* name) {
    if (!loaded()) return;
    f = find<F>(name);
    if (!f) missing(name);
  }

 private:
  void* find_symbol(const char* name) const;
  void missing(const char* name);
  void close();

  void* handle_ = nullptr;
  std::string name_;  // the one that loaded
  std::string error_;
};

}  // namespace mlpcore::detail
