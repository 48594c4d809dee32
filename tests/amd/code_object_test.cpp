// Reads the real code objects of the tile test kernels (built for every configured AMD architecture by
// cmake/MlpcoreAmdgpu.cmake) and checks their ISA and metadata: the intended matrix instruction, the
// cvt_pkrtz packing, the RDNA3-only cross-half-wave shuffle, and no scratch or LDS.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

namespace {

std::string run(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string out;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe.get())) > 0;) out.append(buf.data(), n);
  return out;
}

std::vector<std::string> targets() {
  std::vector<std::string> out;
  std::stringstream ss(MLPCORE_AMDGPU_TARGETS);
  for (std::string t; std::getline(ss, t, ',');) out.push_back(t);
  return out;
}

std::string code_object(const std::string& arch) { return std::string(MLPCORE_CODE_OBJECT_DIR) + "/tile_kernels_" + arch + ".co"; }

// Kernel name -> its instruction mnemonics, from llvm-objdump.
std::map<std::string, std::vector<std::string>> disassemble(const std::string& path) {
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
std::map<std::string, std::map<std::string, std::string>> metadata(const std::string& path) {
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

std::size_t count_prefix(const std::vector<std::string>& mnemonics, const std::string& prefix) {
  return static_cast<std::size_t>(std::count_if(mnemonics.begin(), mnemonics.end(), [&](const std::string& m) { return m.starts_with(prefix); }));
}

struct Expectation {
  std::string matrix_instruction;
  std::string pack_instruction;  // cvt_pkrtz, spelled per generation
  int wave;
  bool shuffles;  // RDNA3 rebuilds the replicated B layout across half-waves
};

Expectation expectation(const std::string& arch) {
  if (arch.starts_with("gfx11")) return {"v_wmma_f32_16x16x16_f16", "v_cvt_pk_rtz_f16_f32", 32, true};
  if (arch.starts_with("gfx12")) return {"v_wmma_f32_16x16x16_f16", "v_cvt_pk_rtz_f16_f32", 32, false};
  if (arch.starts_with("gfx94") || arch == "gfx950") return {"v_mfma_f32_16x16x16_f16", "v_cvt_pkrtz_f16_f32", 64, false};
  return {"v_mfma_f32_16x16x16f16", "v_cvt_pkrtz_f16_f32", 64, false};
}

class CodeObject : public ::testing::TestWithParam<std::string> {};

TEST_P(CodeObject, TileKernelsUseTheMatrixCoresAsDesigned) {
  const std::string arch = GetParam();
  const Expectation want = expectation(arch);
  const auto isa = disassemble(code_object(arch));
  const auto meta = metadata(code_object(arch));
  // One tile: one matrix instruction. The chain: 2x2 tiles for layer 1, 2 for layer 2.
  for (const auto& [kernel, matrix_ops] : {std::pair<std::string, std::size_t>{"mlpcore_test_tile_gemm", 1}, {"mlpcore_test_tile_chain", 6}}) {
    SCOPED_TRACE(arch + " " + kernel);
    ASSERT_TRUE(isa.count(kernel)) << "kernel missing from " << code_object(arch);
    ASSERT_TRUE(meta.count(kernel)) << "metadata missing";
    const auto& code = isa.at(kernel);
    const auto& m = meta.at(kernel);
    EXPECT_EQ(count_prefix(code, want.matrix_instruction), matrix_ops);
    EXPECT_GT(count_prefix(code, want.pack_instruction), 0u);
    EXPECT_EQ(m.at("private_segment_fixed_size"), "0") << "scratch spills";
    EXPECT_EQ(m.at("group_segment_fixed_size"), "0") << "LDS use";
    EXPECT_EQ(m.at("wavefront_size"), std::to_string(want.wave));
    EXPECT_EQ(count_prefix(code, "ds_"), 0u) << "LDS traffic";
    std::cout << arch << " " << kernel << ": " << m.at("vgpr_count") << " VGPRs, " << m.at("sgpr_count") << " SGPRs"
              << (m.count("agpr_count") ? ", " + m.at("agpr_count") + " AGPRs" : "") << ", " << code.size() << " instructions\n";
  }
  const auto& chain = isa.at("mlpcore_test_tile_chain");
  if (want.shuffles)
    EXPECT_EQ(count_prefix(chain, "v_permlanex16_b32"), 8u) << "4 per hidden tile, 2 hidden tiles";
  else
    EXPECT_EQ(count_prefix(chain, "v_permlane"), 0u) << "D is reused as B in place";
}

INSTANTIATE_TEST_SUITE_P(Amdgpu, CodeObject, ::testing::ValuesIn(targets()), [](const auto& info) { return info.param; });

}  // namespace
