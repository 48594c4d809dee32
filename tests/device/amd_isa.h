#pragma once
// Reading an AMD code object as the ISA checks do: its kernels' instructions (llvm-objdump) and metadata
// (llvm-readelf --notes), and what each architecture's fused kernels are expected to use.
#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace mlpcore::test {

// The architectures this build has code objects for (cmake/MlpcoreAmdgpu.cmake).
inline std::vector<std::string> targets() {
  std::vector<std::string> out;
  std::stringstream ss(MLPCORE_AMDGPU_TARGETS);
  for (std::string t; std::getline(ss, t, ',');) out.push_back(t);
  return out;
}

inline std::string run(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string out;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe.get())) > 0;) out.append(buf.data(), n);
  return out;
}

// Kernel name -> its instruction mnemonics, from llvm-objdump.
inline std::map<std::string, std::vector<std::string>> disassemble(const std::string& path) {
  std::map<std::string, std::vector<std::string>> out;
  std::stringstream text(run(std::string(MLPCORE_LLVM_OBJDUMP) + " -d --no-show-raw-insn " + path));
  static const std::regex symbol(R"(^[0-9a-f]+ <([^>]+)>:$)");
  std::vector<std::string>* current = nullptr;
  for (std::string line; std::getline(text, line);) {
    std::smatch m;
    if (std::regex_match(line, m, symbol)) {
      current = &out[m[1]];
      continue;
    }
    std::stringstream words(line);
    std::string mnemonic;
    if (current && line.starts_with("\t") && words >> mnemonic) current->push_back(mnemonic);
  }
  return out;
}

// Kernel name -> its metadata fields (.vgpr_count, ...), from llvm-readelf --notes.
inline std::map<std::string, std::map<std::string, std::string>> metadata(const std::string& path) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::stringstream text(run(std::string(MLPCORE_LLVM_READELF) + " --notes " + path));
  static const std::regex field(R"(^(  - |    )\.(\w+):\s*(\S*)\s*$)");  // kernel-level keys only
  std::map<std::string, std::string> kernel;
  auto flush = [&] {
    if (kernel.count("name")) out[kernel["name"]] = kernel;
    kernel.clear();
  };
  for (std::string line; std::getline(text, line);) {
    if (line.starts_with("  - ")) flush();
    std::smatch m;
    if (std::regex_match(line, m, field)) kernel[m[2]] = m[3];
    if (line.starts_with("amdhsa.target")) flush();
  }
  flush();
  return out;
}

inline std::size_t count_prefix(const std::vector<std::string>& mnemonics, const std::string& prefix) {
  return static_cast<std::size_t>(std::count_if(mnemonics.begin(), mnemonics.end(), [&](const std::string& m) { return m.starts_with(prefix); }));
}

struct Expectation {
  std::string matrix_instruction;
  std::string pack_instruction;  // cvt_pkrtz, spelled per generation
  int wave;
  bool shuffles;  // RDNA3 rebuilds the replicated B layout across half-waves
};

inline Expectation expectation(const std::string& arch) {
  if (arch.starts_with("gfx11")) return {"v_wmma_f32_16x16x16_f16", "v_cvt_pk_rtz_f16_f32", 32, true};
  if (arch.starts_with("gfx12")) return {"v_wmma_f32_16x16x16_f16", "v_cvt_pk_rtz_f16_f32", 32, false};
  if (arch.starts_with("gfx94") || arch == "gfx950") return {"v_mfma_f32_16x16x16_f16", "v_cvt_pkrtz_f16_f32", 64, false};
  return {"v_mfma_f32_16x16x16f16", "v_cvt_pkrtz_f16_f32", 64, false};
}

// What every fused kernel's code holds: `matrix_ops` matrix instructions, RDNA3's `shuffles` (none
// elsewhere), no LDS, no scratch (spills or per-lane arrays), the architecture's wave size. Returns
// "N VGPRs" for the caller's report.
inline std::string expect_fused_kernel_isa(const Expectation& want, const std::vector<std::string>& code,
                                           const std::map<std::string, std::string>& meta, std::size_t matrix_ops, std::size_t shuffles) {
  EXPECT_EQ(count_prefix(code, want.matrix_instruction), matrix_ops) << "one per (output tile, K tile) of each layer's code, per sample tile";
  EXPECT_EQ(count_prefix(code, "v_permlanex16_b32"), want.shuffles ? shuffles : 0u);
  EXPECT_EQ(count_prefix(code, "ds_"), 0u) << "LDS traffic";
  EXPECT_EQ(meta.at("private_segment_fixed_size"), "0") << "scratch: spills or per-lane arrays";
  EXPECT_EQ(meta.at("group_segment_fixed_size"), "0");
  EXPECT_EQ(meta.at("wavefront_size"), std::to_string(want.wave));
  return meta.at("vgpr_count") + " VGPRs";
}

}  // namespace mlpcore::test
