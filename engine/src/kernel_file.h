#pragma once
// A compiled specialized kernel as a file: what `mlpcore compile` writes, `--kernels` loads, and the
// kernel cache keeps. The fields say what it was built from, so a file for another network, GPU or
// version of the kernel headers is refused by name instead of being run.
//   "MLPCKERN" | u32 version (kKernelFileVersion) | 4 x (u32 length, text) | u32 modules (1 to kMaxKernelModules) |
//   per module: u64 code bytes | u64 FNV-1a of the code | code
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace mlpcore::detail {

struct KernelFile {
  std::string target;      // "sm_90", "gfx1100"
  std::string source_key;  // specialized_source_key() of the source it was compiled from
  std::string compiler;    // its code_version(): "NVRTC 13.0", "NVRTC 13.0 without nvJitLink"
  std::string network;     // what it was compiled for, for messages: "64-64x5-4 (nvidia, float32 accumulation)"
  std::vector<std::vector<std::byte>> modules;  // code objects, one per kernel (compiled each on its own), then per small-batch twin
};

// 3: up to 6 modules; 4: up to 10 (the small-batch twins). Part of a kernel cache entry's name, so that
// entries of another format are compiled again, not read and refused.
inline constexpr std::uint32_t kKernelFileVersion = 4;
// The most a kernel file may hold: real ones are well under 1 MiB.
inline constexpr std::size_t kMaxKernelFileBytes = 64u << 20;
// A plan has at most six kernels: float32 and float16 I/O in each of its KernelSlots (engine/src/fused_plan.h:
// two layouts and the feature-major twins for large batches); and four small-batch twins, of the two
// layouts' kernels (has_small_batch_twin).
inline constexpr std::uint32_t kMaxKernelModules = 10;

// Throws std::logic_error for a file of no modules or more than kMaxKernelModules (it could not be read back).
std::vector<std::byte> encode_kernel_file(const KernelFile& k);
// Throws Error(kernel_file) naming `path` and the field that is wrong.
KernelFile decode_kernel_file(std::span<const std::byte> bytes, const std::string& path);
KernelFile read_kernel_file(const std::filesystem::path& path);

// Throws Error(kernel_file) unless `k` was compiled from `source_key` for `target`.
void check_kernel_file_matches(const KernelFile& k, const std::string& path, const std::string& source_key, const std::string& target,
                               const std::string& network);

}  // namespace mlpcore::detail
