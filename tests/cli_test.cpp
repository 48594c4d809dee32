// The mlpcore CLI end to end: every command, its outputs checked against the float64 reference, and
// its error exits.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "mlpcore/mlpcore.h"
#include "tests/cli_util.h"

namespace mlpcore {
namespace {

using test::cli;
using test::run_command;
using test::sample_model;

void expect_matches_reference(const Model& model, const Matrix& input, const Matrix& output) {
  ASSERT_EQ(output.rows, input.rows);
  ASSERT_EQ(output.cols, model.output_dim());
  const auto ref = test::naive_forward(model, input.values, input.rows);
  for (std::size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(output.values[i], ref[i], 1e-4 * std::max(1.0, std::fabs(ref[i])));
}

TEST(Cli, BackendsListsCpuAndExplainsTheOthers) {
  const auto r = run_command(cli("backends"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("(^|\n)cpu +available "))) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("(^|\n)hip +not available "))) << r.output;
  EXPECT_NE(r.output.find("default: cpu"), std::string::npos) << r.output;
}

TEST(Cli, InfoDescribesTheModel) {
  const auto r = run_command(cli("info " + sample_model("all_activations")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const Model m = load_model(sample_model("all_activations"));
  EXPECT_NE(r.output.find("input 3, output 4, 9 layers, " + std::to_string(m.parameter_count()) + " parameters"), std::string::npos) << r.output;
  for (const char* text : {"leaky_relu(alpha=0.2)", "softplus(beta=2)", "exponential", "20 -> 32", "BF16", "none"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << " in " << r.output;
}

TEST(Cli, RunNpyToNpyMatchesTheReferenceAndLeavesTheInputAlone) {
  test::TempDir dir;
  std::mt19937 rng(3);
  const Matrix input{123, 3, test::random_inputs(rng, 369)};
  write_npy(dir / "in.npy", input);
  const auto before = read_npy(dir / "in.npy").values;
  const auto r = run_command(cli("run " + sample_model("all_activations") + " --input " + (dir / "in.npy").string() + " --output " +
                                 (dir / "out.npy").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ran 123 samples on backend cpu"), std::string::npos) << r.output;
  expect_matches_reference(load_model(sample_model("all_activations")), input, read_npy(dir / "out.npy"));
  EXPECT_EQ(read_npy(dir / "in.npy").values, before);
}

// --layout feature_major: [in, batch] in, [out, batch] out, on cpu and on an emulated GPU kernel's _fm twin.
TEST(Cli, RunFeatureMajorArraysMatchesTheReference) {
  test::TempDir dir;
  std::mt19937 rng(4);
  const Model model = load_model(sample_model("all_activations"));
  const Matrix samples{45, 3, test::random_inputs(rng, 135)};
  Matrix columns{3, 45, std::vector<float>(135)};
  for (std::size_t n = 0; n < 45; ++n)
    for (std::size_t f = 0; f < 3; ++f) columns.values[f * 45 + n] = samples.values[n * 3 + f];
  write_npy(dir / "in.npy", columns);
  const auto ref = test::naive_forward(model, samples.values, 45);
  // (the emulated kernel's network built for both layouts, as a kernel file from `compile --layout both` needs)
  for (const auto& [backend, tolerance] : {std::pair<std::string, double>{"cpu", 1e-4}, {"emu-rdna3 --layouts both", 1e-2}}) {
    SCOPED_TRACE(backend);
    const auto r = run_command(cli("run " + sample_model("all_activations") + " -b " + backend + " --layout feature_major -i " +
                                   (dir / "in.npy").string() + " -o " + (dir / "out.npy").string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("ran 45 samples"), std::string::npos) << r.output;
    const Matrix out = read_npy(dir / "out.npy");
    std::filesystem::remove(dir / "out.npy");
    ASSERT_EQ(out.rows, model.output_dim());
    ASSERT_EQ(out.cols, 45u);
    for (std::size_t n = 0; n < 45; ++n)
      for (std::size_t u = 0; u < model.output_dim(); ++u) {
        const double want = ref[n * model.output_dim() + u];
        EXPECT_NEAR(out.values[u * 45 + n], want, tolerance * std::max(1.0, std::fabs(want))) << n << " " << u;
      }
  }
  const auto wrong = run_command(cli("run " + sample_model("heart_sdf") + " --layout feature_major -i " + (dir / "in.npy").string()));
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.output.find("feature-major input has 3 rows but the model takes 2"), std::string::npos) << wrong.output;
  const auto unserved =
      run_command(cli("run " + sample_model("all_activations") + " --layouts sample_major --layout feature_major -i " + (dir / "in.npy").string()));
  EXPECT_NE(unserved.exit_code, 0);
  EXPECT_NE(unserved.output.find("--layouts: sample_major does not serve the calls' layout, feature_major"), std::string::npos) << unserved.output;
}

TEST(Cli, RunReadsTextFromStdinAndPrintsText) {
  const auto r = run_command("printf '0 0\\n0.5 -0.25\\n' | " + cli("run " + sample_model("heart_sdf") + " -i -"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string values;  // stdout's lines; stderr's "ran ..." and fallback notice may come first or last
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (!line.starts_with("ran ") && !line.starts_with("mlpcore: ")) values += line + "\n";
  const Matrix printed = parse_text(values, "stdout");
  expect_matches_reference(load_model(sample_model("heart_sdf")), Matrix{2, 2, {0.0f, 0.0f, 0.5f, -0.25f}}, printed);
}

TEST(Cli, RunOneDimensionalNpyIsOneSample) {
  test::TempDir dir;
  write_npy(dir / "in.npy", Matrix{1, 2, {0.1f, 0.2f}});
  const auto r = run_command(cli("run " + sample_model("heart_sdf") + " -i " + (dir / "in.npy").string() + " -o " + (dir / "out.txt").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_matches_reference(load_model(sample_model("heart_sdf")), Matrix{1, 2, {0.1f, 0.2f}}, read_matrix(dir / "out.txt"));
}

TEST(Cli, VerifyPassesOnTheSampleModels) {
  for (const char* name : {"heart_sdf", "all_activations"}) {
    const auto r = run_command(cli("verify " + sample_model(name) + " --batch 777 --seed 5"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("777 samples"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
  }
}

TEST(Cli, BenchReportsThroughput) {
  const auto r = run_command(cli("bench " + sample_model("heart_sdf") + " --batch 1000 --repeats 3 --warmup 1"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("batch 1000, 1 warm-up + 3 timed runs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("samples/s"), std::string::npos) << r.output;
}

struct CliError {
  std::string args;
  std::string needle;
};

TEST(Cli, ErrorsExitNonZeroWithAClearMessage) {
  test::TempDir dir;
  std::ofstream(dir / "three.txt") << "1 2 3\n";
  std::ofstream(dir / "junk.safetensors") << "not a model";
  const std::string heart = sample_model("heart_sdf");
  const std::vector<CliError> cases = {
      {"info " + (dir / "absent.safetensors").string(), "absent.safetensors: no such file"},
      {"info " + (dir / "junk.safetensors").string(), "junk.safetensors: header length"},
      {"run " + heart + " -i " + (dir / "three.txt").string(), "samples have 3 values but the model takes 2"},
      {"run " + heart + " -i " + (dir / "absent.npy").string(), "absent.npy: no such file"},
      {"run " + heart + " -i " + (dir / "three.txt").string() + " --backend tpu", "samples have 3 values"},
      {"verify " + heart + " --backend tpu", "backend 'tpu': unknown"},
      {"verify " + heart + " --backend hip", "backend 'hip': "},
      {"verify " + heart + " --batch 0", "batch"},
      {"frobnicate", "subcommand is required"},
  };
  for (const auto& c : cases) {
    const auto r = run_command(cli(c.args));
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.needle), std::string::npos) << c.args << "\n" << r.output;
  }
  const auto r = run_command(cli("run " + heart + " -i " + (dir / "three.txt").string() + " -o " + (dir / "out.npy").string()));
  EXPECT_FALSE(std::filesystem::exists(dir / "out.npy")) << "no output written on error";
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Output is never lost silently and never replaces what the run reads.
TEST(Cli, RunChecksEveryWriteAndNeverOverwritesItsInputs) {
  test::TempDir dir;
  const std::string heart = sample_model("heart_sdf");
  write_npy(dir / "in.npy", Matrix{2, 2, {0.1f, 0.2f, 0.3f, 0.4f}});
  const std::string in = (dir / "in.npy").string();
  const std::string before = read_text(dir / "in.npy");

  // A full disk: to a file argument and to stdout.
  for (const std::string& command : {cli("run " + heart + " -i " + in + " -o /dev/full"), "(" + cli("run " + heart + " -i " + in) + " > /dev/full)"}) {
    const auto r = run_command(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
    EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << command << "\n" << r.output;
  }
  // The input, the model, or either through a symbolic link, as the output.
  std::filesystem::create_symlink(dir / "in.npy", dir / "alias.npy");
  for (const std::string& out : {in, (dir / "alias.npy").string(), heart}) {
    const auto r = run_command(cli("run " + heart + " -i " + in + " -o " + out));
    EXPECT_EQ(r.exit_code, 2) << out << "\n" << r.output;
    EXPECT_NE(r.output.find("refusing to overwrite"), std::string::npos) << r.output;
  }
  EXPECT_EQ(read_text(dir / "in.npy"), before);
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "alias.npy"));

  // Through a symbolic link the file it names gets the output and the link stays; the suffix's case does not matter.
  write_npy(dir / "target.npy", Matrix{1, 1, {7.0f}});
  std::filesystem::create_symlink(dir / "target.npy", dir / "link.NPY");
  const auto r = run_command(cli("run " + heart + " -i " + in + " -o " + (dir / "link.NPY").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.NPY"));
  expect_matches_reference(load_model(heart), read_npy(dir / "in.npy"), read_npy(dir / "target.npy"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 4) << "no temporary file is left";

  // A link to a file not there yet: the file is made, the link stays. A replaced file keeps its permissions.
  std::filesystem::create_symlink(dir / "new.txt", dir / "dangling.txt");
  ASSERT_EQ(run_command(cli("run " + heart + " -i " + in + " -o " + (dir / "dangling.txt").string())).exit_code, 0);
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "dangling.txt"));
  expect_matches_reference(load_model(heart), read_npy(dir / "in.npy"), read_matrix(dir / "new.txt"));
  std::filesystem::permissions(dir / "new.txt", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                                    std::filesystem::perms::group_read);
  ASSERT_EQ(run_command(cli("run " + heart + " -i " + in + " -o " + (dir / "new.txt").string())).exit_code, 0);
  EXPECT_EQ(std::filesystem::status(dir / "new.txt").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write | std::filesystem::perms::group_read);

  // -o /dev/stdout into a file opened for appending: the values land after what was there.
  std::ofstream(dir / "log.txt") << "header\n";
  const auto appended = run_command("(" + cli("run " + heart + " -i " + in + " --quiet -o /dev/stdout") + " >> " + (dir / "log.txt").string() + ")");
  ASSERT_EQ(appended.exit_code, 0) << appended.output;
  const std::string log = read_text(dir / "log.txt");
  ASSERT_TRUE(log.starts_with("header\n")) << log;
  expect_matches_reference(load_model(heart), read_npy(dir / "in.npy"), parse_text(log.substr(7), "log"));
}

TEST(Cli, QuietRunPrintsOnlyTheValues) {
  const auto r = run_command("printf '0 0\\n' | " + cli("run " + sample_model("heart_sdf") + " -i - --quiet --threads 1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  expect_matches_reference(load_model(sample_model("heart_sdf")), Matrix{1, 2, {0.0f, 0.0f}}, parse_text(r.output, "stdout"));
}

#ifdef MLPCORE_FAKE_HIP
// "auto" with a GPU backend that cannot run the model (wider than the fused kernels take) runs it on cpu
// and says why in one line; --quiet silences that. (A stand-in HIP runtime makes hip available.)
TEST(Cli, AutoRunsAModelTooWideForTheGpuOnCpuWithANotice) {
  test::TempDir dir;
  std::mt19937 rng(5);
  const Model wide = test::random_model(rng, {3, 256, 256, 1}, {Activation::make(ActivationKind::relu), Activation::make(ActivationKind::relu),
                                                                Activation::make(ActivationKind::none)});
  save_model(wide, dir / "wide.safetensors");
  write_npy(dir / "in.npy", Matrix{1, 3, {0.1f, -0.2f, 0.3f}});
  const std::string env = std::string("MLPCORE_HIP_LIBRARY=") + MLPCORE_FAKE_HIP + " FAKE_HIP_ARCH=gfx1100 ";
  const std::string args = "run " + (dir / "wide.safetensors").string() + " -i " + (dir / "in.npy").string();
  const auto r = run_command(env + cli(args));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mlpcore: using backend cpu; hip cannot run this model ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("layers.0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ran 1 samples on backend cpu"), std::string::npos) << r.output;
  const auto quiet = run_command(env + cli(args + " --quiet"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find("mlpcore:"), std::string::npos) << quiet.output;
  const auto named = run_command(env + cli(args + " --backend hip"));
  EXPECT_EQ(named.exit_code, 2) << named.output;
  EXPECT_NE(named.output.find("wider than"), std::string::npos) << named.output;
}
#endif

TEST(SdfDemo, DrawsTheHeartFromTheDefaultBackend) {
  const auto r = run_command(MLPCORE_SDF_DEMO);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("on backend 'cpu'"), std::string::npos) << r.output;
  const auto inside = std::count(r.output.begin(), r.output.end(), '#');
  EXPECT_GT(inside, 200) << r.output;   // the heart covers roughly a third of the 64x32 grid
  EXPECT_LT(inside, 1200) << r.output;
  const double centre = test::naive_forward(load_model(sample_model("heart_sdf")), {0.0f, 0.0f}, 1)[0];
  char expected[64];
  std::snprintf(expected, sizeof expected, "sdf(0, 0) = %.4f", centre);
  EXPECT_NE(r.output.find(expected), std::string::npos) << expected << " in " << r.output;
}

}  // namespace
}  // namespace mlpcore
