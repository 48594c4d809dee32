// `cmake --install` of this build into a temporary prefix, moved elsewhere (relocatable), then an
// out-of-tree project (tests/consumer) found through find_package, built and run against it.
#include <gtest/gtest.h>

#include <sstream>

#include "mlpcore/mlpcore.h"
#include "tests/cli_util.h"

namespace mlpcore {
namespace {

TEST(Install, ConsumerBuildsAndRunsAgainstTheRelocatedPackage) {
  test::TempDir dir;
  const auto installed = dir / "installed", moved = dir / "elsewhere", build = dir / "consumer-build";
  const auto install = test::run_command("cmake --install " + std::string(MLPCORE_BUILD_DIR) + " --prefix " + installed.string());
  ASSERT_EQ(install.exit_code, 0) << install.output;
  std::filesystem::rename(installed, moved);
  // The consumer compiles as this build did (a sanitizer build's libraries need the sanitizer runtime).
  const auto configure = test::run_command("cmake -S " + std::string(MLPCORE_SOURCE_DIR) + "/tests/consumer -B " + build.string() +
                                           " -G Ninja -DCMAKE_PREFIX_PATH=" + moved.string() + " '-DCMAKE_CXX_FLAGS=" +
                                           MLPCORE_BUILD_CXX_FLAGS + "'");
  ASSERT_EQ(configure.exit_code, 0) << configure.output;
  const auto compile = test::run_command("cmake --build " + build.string());
  ASSERT_EQ(compile.exit_code, 0) << compile.output;
  const std::string model = std::string(MLPCORE_SOURCE_DIR) + "/models/heart_sdf.safetensors";
  const auto run = test::run_command((build / "consumer").string() + " " + model + " 0.25 -0.5");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const double want = test::naive_forward(load_model(model), {0.25f, -0.5f}, 1)[0];
  std::istringstream out(run.output);
  double got = 0;
  std::string line;
  while (std::getline(out, line) && !(std::istringstream(line) >> got)) {
  }
  EXPECT_NEAR(got, want, 1e-4) << run.output;
  EXPECT_NE(run.output.find("mlpcore " + std::string(kVersionString) + " on cpu"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace mlpcore
