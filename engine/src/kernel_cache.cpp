#include "engine/src/kernel_cache.h"

#include <cstdlib>
#include <system_error>

#include "engine/src/file_io.h"
#include "engine/src/specialized_source.h"

namespace mlpcore::detail {
namespace {

std::filesystem::path default_directory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "mlpcore" / "kernels";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "mlpcore" / "kernels";
  return {};
}

std::filesystem::path directory_for(const std::string& setting) {
  if (setting == "off") return {};
  if (!setting.empty()) return setting;
  if (const char* env = std::getenv("MLPCORE_KERNEL_CACHE"); env && *env) return directory_for(env);
  return default_directory();
}

}  // namespace

KernelCache::KernelCache(const std::string& setting) : dir_(directory_for(setting)) {}

std::filesystem::path KernelCache::entry(const std::string& source_key, const std::string& target, const std::string& compiler) const {
  const std::string what = source_key + '\n' + target + '\n' + compiler + '\n' + std::to_string(kKernelFileVersion);
  return dir_ / (specialized_source_key(what) + ".mlpck");
}

std::optional<KernelFile> KernelCache::load(const std::string& source_key, const std::string& target, const std::string& compiler) const {
  if (!enabled()) return std::nullopt;
  const std::filesystem::path path = entry(source_key, target, compiler);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    KernelFile k = read_kernel_file(path);
    if (k.source_key != source_key || k.target != target || k.compiler != compiler) return std::nullopt;
    return k;
  } catch (const std::exception&) {
    return std::nullopt;  // corrupt or unreadable: compiled again and replaced
  }
}

std::string KernelCache::store(const KernelFile& k) const {
  if (!enabled()) return "";
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return "cannot create " + dir_.string() + ": " + ec.message();
  try {
    write_file_atomically(entry(k.source_key, k.target, k.compiler), encode_kernel_file(k));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace mlpcore::detail
