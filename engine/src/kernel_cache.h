#pragma once
// The per-user disk cache of compiled specialized kernels. An entry is a kernel file
// (engine/src/kernel_file.h) named by a hash of its source key, target, compiler (its code_version) and
// the kernel-file format version, written to a temporary file and renamed into place, so concurrent
// processes never see half an entry; an entry that fails its checks is treated as missing, rebuilt and
// replaced.
#include <filesystem>
#include <optional>
#include <string>

#include "engine/src/kernel_file.h"

namespace mlpcore::detail {

class KernelCache {
 public:
  // setting: "off" disables it; a directory uses that; "" takes $MLPCORE_KERNEL_CACHE (the same
  // choices), else $XDG_CACHE_HOME/mlpcore/kernels, else $HOME/.cache/mlpcore/kernels.
  explicit KernelCache(const std::string& setting);

  bool enabled() const { return !dir_.empty(); }
  const std::filesystem::path& directory() const { return dir_; }

  // The entry for this source, target and compiler, if there is an intact one.
  std::optional<KernelFile> load(const std::string& source_key, const std::string& target, const std::string& compiler) const;
  // Stores k; returns "" or why it could not (the cache is an optimisation: callers go on).
  std::string store(const KernelFile& k) const;

 private:
  std::filesystem::path entry(const std::string& source_key, const std::string& target, const std::string& compiler) const;
  std::filesystem::path dir_;
};

}  // namespace mlpcore::detail
