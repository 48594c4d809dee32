// apps/sdf_render end to end: the neural torus against the analytic one, and the device-side API path on
// the wave emulator against the host path.
#include <gtest/gtest.h>

#include <regex>

#include "tests/cli_util.h"

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

namespace mlpcore {
namespace {

std::vector<unsigned char> read_png(const std::filesystem::path& path, int& w, int& h) {
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &w, &h, &channels, 3);
  if (!data) return {};
  std::vector<unsigned char> rgb(data, data + 3 * w * h);
  stbi_image_free(data);
  return rgb;
}

TEST(Render, NeuralTorusLooksLikeTheTrueOne) {
  test::TempDir dir;
  const auto r = test::run_command(std::string(MLPCORE_SDF_RENDER) + " --backend cpu --size 64 --out " + (dir / "n.png").string() +
                                   " --reference " + (dir / "t.png").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(mean difference ([0-9.]+) of 255, ([0-9.]+)% of pixels)"))) << r.output;
  EXPECT_LT(std::stod(m[1]), 4.0) << r.output;
  EXPECT_LT(std::stod(m[2]), 3.0) << r.output;
  int w = 0, h = 0;
  const auto image = read_png(dir / "n.png", w, h);
  ASSERT_EQ(w, 64);
  ASSERT_EQ(h, 64);
  const auto hits = std::regex_search(r.output, m, std::regex(R"(([0-9]+) pixels on the surface)")) ? std::stoi(m[1]) : 0;
  EXPECT_GT(hits, 64 * 64 / 5) << "the torus fills a good part of the frame";
}

TEST(Render, DeviceApiKernelOnTheEmulatorDrawsTheSameImage) {
  test::TempDir dir;
  const std::string render = MLPCORE_SDF_RENDER;
  const auto host = test::run_command(render + " --backend emu-cdna --size 16 --out " + (dir / "host.png").string());
  ASSERT_EQ(host.exit_code, 0) << host.output;
  const auto lanes = test::run_command(render + " --backend emu-cdna --device-api --size 16 --out " + (dir / "lanes.png").string());
  ASSERT_EQ(lanes.exit_code, 0) << lanes.output;
  EXPECT_NE(lanes.output.find("(device-side API)"), std::string::npos) << lanes.output;
  int w = 0, h = 0;
  const auto a = read_png(dir / "host.png", w, h), b = read_png(dir / "lanes.png", w, h);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  int differing = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differing += std::abs(int(a[i]) - int(b[i])) > 8;
  EXPECT_LE(differing, 3) << "the same kernels march the same rays; only float rounding order differs";
  const auto cpu_only = test::run_command(render + " --backend cpu --device-api --size 16 --out " + (dir / "x.png").string());
  EXPECT_EQ(cpu_only.exit_code, 2);
  EXPECT_NE(cpu_only.output.find("runs on the emu-* backends"), std::string::npos) << cpu_only.output;
}

}  // namespace
}  // namespace mlpcore
