// PyTorch -> mlpcore: models exported by models/export/mlpcore_export.py and run by `mlpcore run`
// match PyTorch's own forward pass.
#include <gtest/gtest.h>

#include <fstream>

#include "mlpcore/mlpcore.h"
#include "tests/cli_util.h"

namespace mlpcore {
namespace {

TEST(Exporter, MlpcoreRunMatchesPyTorch) {
  test::TempDir dir;
  const auto py = test::run_command(std::string(MLPCORE_PYTHON) + " " + MLPCORE_SOURCE_DIR + "/tests/export_roundtrip.py " + dir.path().string());
  ASSERT_EQ(py.exit_code, 0) << "needs Debian's python3-torch and python3-numpy (scripts/install_deps.sh)\n" << py.output;
  std::ifstream names(dir / "names.txt");
  int checked = 0;
  for (std::string name; std::getline(names, name);) {
    const auto model = (dir / (name + ".safetensors")).string();
    // The exporter's metadata loads, as text.
    const Model loaded = load_model(model);
    EXPECT_EQ(loaded.extra_metadata.at("epochs"), "10") << name;
    EXPECT_EQ(loaded.extra_metadata.at("tags"), R"(["sdf", 2])") << name;
    const auto r = test::run_command(test::cli("run " + model + " -i " + (dir / (name + "_in.npy")).string() + " -o " +
                                                (dir / (name + "_got.npy")).string()));
    ASSERT_EQ(r.exit_code, 0) << name << "\n" << r.output;
    const Matrix got = read_npy(dir / (name + "_got.npy"));
    const Matrix want = read_npy(dir / (name + "_out.npy"));
    ASSERT_EQ(got.rows, want.rows) << name;
    ASSERT_EQ(got.cols, want.cols) << name;
    // Both sides compute in float32, in different orders.
    for (std::size_t i = 0; i < want.values.size(); ++i)
      ASSERT_NEAR(got.values[i], want.values[i], 1e-4 * std::max(1.0f, std::fabs(want.values[i]))) << name << " element " << i;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace mlpcore
