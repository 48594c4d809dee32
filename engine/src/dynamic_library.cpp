#include "engine/src/dynamic_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace mlpcore::detail {

DynamicLibrary::DynamicLibrary(const char* library, const char* env, std::initializer_list<const char*> defaults) {
  std::vector<const char*> names = defaults;
  if (const char* chosen = library ? library : std::getenv(env)) names = {chosen};
  for (const char* name : names) {
    handle_ = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle_) {
      name_ = name;
      error_.clear();
      return;
    }
    const char* why = ::dlerror();
    error_ += (error_.empty() ? "" : "; ") + (why ? std::string(why) : std::string(name) + ": cannot load");
  }
}

void* DynamicLibrary::find_symbol(const char* name) const { return handle_ ? ::dlsym(handle_, name) : nullptr; }

void DynamicLibrary::missing(const char* name) {
  error_ = name_ + " has no " + name;
  close();
}

void DynamicLibrary::close() {
  if (handle_) ::dlclose(handle_);
  handle_ = nullptr;
}

}  // namespace mlpcore::detail
