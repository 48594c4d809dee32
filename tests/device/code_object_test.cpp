// Reads the real code objects of the tile test kernels (built for every configured AMD architecture by
// cmake/MlpcoreAmdgpu.cmake) and checks their ISA and metadata: the intended matrix instruction, the
// cvt_pkrtz packing, the RDNA3-only cross-half-wave shuffle, and no scratch or LDS.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ops/fused_shapes.h"
#include "tests/device/amd_isa.h"

namespace {

using namespace mlpcore::test;

std::string code_object(const std::string& arch) { return std::string(MLPCORE_CODE_OBJECT_DIR) + "/tile_kernels_" + arch + ".co"; }

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

struct FusedKernel {
  std::string name;
  std::size_t matrix_ops;  // per 16-sample tile: sum over layers (copies of the layer code) of out_tiles * in_tiles
  std::size_t shuffles;    // RDNA3: 4 per hidden output tile
};

std::vector<FusedKernel> fused_kernels() {
  std::vector<FusedKernel> out;
  // The run-time-shaped kernels, whatever the depth: the loop's layer code, W x W tiles (every layer padded
  // to the widest; AMD's policy runs no first layer of one K tile, FusedPolicy::one_tile_first_layer), and
  // the last layer's, W x W tiles of which the output's run.
#define MLPCORE_EXPECT_RUNTIME(width) out.push_back({"mlpcore_mlp_w" #width, 2 * (width) * (width), 4 * (width)});
  MLPCORE_RUNTIME_WIDTHS(MLPCORE_EXPECT_RUNTIME)
#undef MLPCORE_EXPECT_RUNTIME
#define MLPCORE_EXPECT_FIXED(index, hidden, output, ...)                                  \
  {                                                                                        \
    const std::vector<std::size_t> w = {__VA_ARGS__};                                      \
    FusedKernel k{"mlpcore_mlp_fixed_" #index, 0, 0};                                      \
    for (std::size_t l = 0; l + 1 < w.size(); ++l) k.matrix_ops += w[l] * w[l + 1];        \
    for (std::size_t l = 1; l + 1 < w.size(); ++l) k.shuffles += 4 * w[l];                 \
    out.push_back(k);                                                                      \
  }
  MLPCORE_FIXED_SHAPES(MLPCORE_EXPECT_FIXED)
#undef MLPCORE_EXPECT_FIXED
  const std::size_t float32_kernels = out.size();
  for (std::size_t i = 0; i < float32_kernels; ++i) out.push_back({out[i].name + "_f16", out[i].matrix_ops, out[i].shuffles});  // float16 I/O twins
  const std::size_t sample_major_kernels = out.size();
  for (std::size_t i = 0; i < sample_major_kernels; ++i) out.push_back({out[i].name + "_fm", out[i].matrix_ops, out[i].shuffles});  // feature-major twins
  return out;
}

// The fused MLP kernels the hip backend runs (float32 and float16 I/O, sample- and feature-major): one matrix instruction per (output tile, K tile) of every
// layer, activations in registers (no LDS instruction at all, so none between layers), no scratch.
TEST_P(CodeObject, FusedMlpKernelsChainLayersInRegisters) {
  const std::string arch = GetParam();
  const Expectation want = expectation(arch);
  const std::string path = std::string(MLPCORE_FUSED_CODE_OBJECT_DIR) + "/fused_mlp_kernels_" + arch + ".co";
  const auto isa = disassemble(path);
  const auto meta = metadata(path);
  for (const auto& k : fused_kernels()) {
    SCOPED_TRACE(arch + " " + k.name);
    ASSERT_TRUE(isa.count(k.name) && meta.count(k.name)) << "kernel missing from " << path;
    const auto& code = isa.at(k.name);
    const std::string vgprs = expect_fused_kernel_isa(want, code, meta.at(k.name), k.matrix_ops, k.shuffles);
    EXPECT_GT(count_prefix(code, want.pack_instruction), 0u);
    std::cout << arch << " " << k.name << ": " << vgprs << ", " << meta.at(k.name).at("sgpr_count") << " SGPRs, " << k.matrix_ops
              << " matrix instructions\n";
  }
}

// A user's kernel on the device-side API (tests/kernels/device_api_kernels.hip), every MaxTiles
// variant: the same matrix instructions (one pass of the wave's sample tiles in a loop), lanes' inputs
// and outputs through the wave's LDS scratch, registers between layers, and no scratch memory: neither
// spills nor per-lane arrays.
TEST_P(CodeObject, DeviceApiKernelsUseTheMatrixCoresAndNoScratch) {
  const std::string arch = GetParam();
  const Expectation want = expectation(arch);
  const std::string path = std::string(MLPCORE_CODE_OBJECT_DIR) + "/device_api_kernels_" + arch + ".co";
  const auto isa = disassemble(path);
  const auto meta = metadata(path);
  for (const std::size_t max_tiles : {1u, 2u, 4u, 8u}) {
    const std::string kernel = "mlpcore_test_sdf_at_points_t" + std::to_string(max_tiles);
    SCOPED_TRACE(arch + " " + kernel);
    ASSERT_TRUE(isa.count(kernel) && meta.count(kernel)) << path;
    const auto& code = isa.at(kernel);
    const auto& m = meta.at(kernel);
    EXPECT_EQ(count_prefix(code, want.matrix_instruction), max_tiles * max_tiles) << "MaxTiles^2 blocks per layer, one sample tile per pass";
    EXPECT_GT(count_prefix(code, "ds_"), 0u) << "inputs and outputs pass through LDS";
    EXPECT_EQ(m.at("group_segment_fixed_size"), std::to_string(2 * (want.wave * (3 + 1) + 4) * 4))
        << "2 waves x (lanes x (3 + 1) floats + the range flag's 4)";
    EXPECT_EQ(m.at("private_segment_fixed_size"), "0") << "scratch: spills or per-lane arrays";
    std::cout << arch << " " << kernel << ": " << m.at("vgpr_count") << " VGPRs\n";
  }
}

// The renderer's own kernel (apps/sdf_render_gpu.cpp: sphere tracing, the network evaluated through the
// device-side API), built as a user's program builds it: every trace<MaxTiles> variant, no scratch memory.
TEST_P(CodeObject, RendererKernelsUseNoScratch) {
  const std::string arch = GetParam();
  const std::string path = std::string(MLPCORE_CODE_OBJECT_DIR) + "/sdf_render_gpu_" + arch + ".co";
  const auto isa = disassemble(path);
  int variants = 0;
  for (const auto& [kernel, m] : metadata(path)) {
    if (kernel.find("traceILi") == std::string::npos) continue;
    ++variants;
    SCOPED_TRACE(arch + " " + kernel);
    EXPECT_GT(count_prefix(isa.at(kernel), expectation(arch).matrix_instruction), 0u);
    EXPECT_EQ(m.at("private_segment_fixed_size"), "0") << "scratch: spills or per-lane arrays";
    std::cout << arch << " " << kernel << ": " << m.at("vgpr_count") << " VGPRs\n";
  }
  EXPECT_EQ(variants, 4) << "trace<1>, <2>, <4>, <8>";
}

// docs/amd-kernels.md (clang-19) and docs/amd-kernels-clang17.md (Debian 13's ROCm HIP toolchain) are
// generated from these code objects by scripts/amd_kernel_report.py; the one whose compiler this build
// used must match them exactly (regenerate it whenever the kernels change). Built by a compiler neither
// names, the numbers legitimately differ: then only the report's structure is checked.
TEST(CodeObjectReport, DocsMatchTheCodeObjects) {
  const std::string generated = run(std::string(MLPCORE_PYTHON) + " " + MLPCORE_SOURCE_DIR + "/scripts/amd_kernel_report.py --build " +
                                    MLPCORE_BUILD_DIR + " --clang " + MLPCORE_HIP_CLANG + " --objdump " + MLPCORE_LLVM_OBJDUMP +
                                    " --readelf " + MLPCORE_LLVM_READELF);
  std::ofstream(std::string(MLPCORE_BUILD_DIR) + "/amd-kernel-report.md") << generated;  // kept for CI's log and for regenerating the docs
  for (const char* section : {"| 32-64x4-16 |", "| 32-128x4-16 |", "| 3-64x4-1 |"}) EXPECT_NE(generated.find(section), std::string::npos) << section;
  const auto built = targets();
  for (const std::string arch : {"gfx1100", "gfx1201", "gfx90a"}) {  // the report's GPUs, where this build has their code
    if (std::find(built.begin(), built.end(), arch) != built.end()) EXPECT_NE(generated.find("## " + arch), std::string::npos) << arch;
  }
  const std::string compiler_line = generated.substr(0, generated.find("do not edit"));
  for (const char* doc : {"docs/amd-kernels.md", "docs/amd-kernels-clang17.md"}) {
    std::ifstream in(std::string(MLPCORE_SOURCE_DIR) + "/" + doc);
    std::stringstream committed;
    committed << in.rdbuf();
    if (committed.str().find(compiler_line.substr(compiler_line.find("(`"))) != std::string::npos)
      EXPECT_EQ(generated, committed.str()) << "regenerate: scripts/amd_kernel_report.py --build BUILD --clang CLANG --out " << doc;
  }
}

INSTANTIATE_TEST_SUITE_P(Amdgpu, CodeObject, ::testing::ValuesIn(targets()), [](const auto& info) { return info.param; });

}  // namespace
