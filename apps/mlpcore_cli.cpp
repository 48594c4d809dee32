// The mlpcore command-line tool: info, run, verify, bench, backends.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include "mlpcore/mlpcore.h"

namespace {

using namespace mlpcore;

constexpr int kExitVerifyFailed = 1;
constexpr int kExitError = 2;

std::string activation_text(const Activation& a) {
  std::string s = to_string(a.kind);
  if (!a.has_param()) return s;
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%s=%g)", a.kind == ActivationKind::leaky_relu ? "alpha" : "beta", static_cast<double>(a.param));
  return s + buf;
}

int cmd_info(const std::string& path) {
  const Model model = load_model(path);
  std::printf("model: %s\n", path.c_str());
  std::printf("input %zu, output %zu, %zu layers, %zu parameters\n", model.input_dim(), model.output_dim(), model.layers.size(),
              model.parameter_count());
  std::printf("%-6s %-14s %-24s %-7s %s\n", "layer", "shape", "activation", "weight", "bias");
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& l = model.layers[i];
    const std::string shape = std::to_string(l.in) + " -> " + std::to_string(l.out);
    std::printf("%-6zu %-14s %-24s %-7s %s\n", i, shape.c_str(), activation_text(l.activation).c_str(), to_string(l.weight_dtype),
                l.bias_dtype ? to_string(*l.bias_dtype) : "none");
  }
  for (const auto& [key, value] : model.extra_metadata) std::printf("metadata %s: %s\n", key.c_str(), value.c_str());
  return 0;
}

Matrix read_input(const std::string& path) {
  if (path == "-") {
    std::string text;
    char buf[1 << 16];
    while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
      text.append(buf, static_cast<std::size_t>(std::cin.gcount()));
      if (text.size() > kMaxNpyFileBytes) throw Error(ErrorCode::file_too_large, "standard input", "", "too much input");
    }
    return parse_text(text, "standard input");
  }
  return read_matrix(path);
}

// The output must not be one of the files the run reads: it would be lost (through any link or name).
void refuse_overwriting(const std::string& output_path, const std::vector<std::string>& inputs) {
  std::error_code ec;
  for (const auto& input : inputs)
    if (input != "-" && std::filesystem::equivalent(output_path, input, ec) && !ec)
      throw Error(ErrorCode::invalid_argument, output_path, "--output", "is the input file " + input + "; refusing to overwrite it");
}

// Feature-major calls take [in, batch] arrays and give [out, batch] ones: the matrices' rows are features.
int cmd_run(const std::string& model_path, const std::string& input_path, const std::string& output_path, const NetworkOptions& options,
            Layout layout) {
  const bool to_stdout = output_path.empty() || output_path == "-";
  if (!to_stdout) refuse_overwriting(output_path, {model_path, input_path});
  const Model model = load_model(model_path);
  const Matrix input = read_input(input_path);
  const bool columns = layout == Layout::feature_major;
  const std::size_t features = columns ? input.rows : input.cols, batch = columns ? input.cols : input.rows;
  if (features != model.input_dim())
    throw Error(ErrorCode::shape, input_path == "-" ? "standard input" : input_path, "",
                std::string(columns ? "feature-major input has " : "samples have ") + std::to_string(features) +
                    (columns ? " rows" : " values") + " but the model takes " + std::to_string(model.input_dim()));
  const Network net(model, options);
  Matrix output = columns ? Matrix{net.output_dim(), batch, std::vector<float>(batch * net.output_dim())}
                          : Matrix{batch, net.output_dim(), std::vector<float>(batch * net.output_dim())};
  net.infer(input.values, output.values, batch, layout);
  if (to_stdout) std::fputs(format_text(output).c_str(), stdout);
  else write_matrix(output_path, output);
  if (options.notices) std::fprintf(stderr, "ran %zu samples on backend %s\n", batch, net.backend().name.c_str());
  return 0;
}

std::vector<float> random_inputs(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

int cmd_verify(const std::string& model_path, const NetworkOptions& options, std::size_t batch, std::uint64_t seed) {
  const Model model = load_model(model_path);
  const Network net(model, options);
  const auto input = random_inputs(batch * model.input_dim(), seed);
  const auto output = net.infer(input);
  const auto reference = reference_forward(model, input, batch);
  const Deviation d = compare(output, reference);
  const bool ok = d.within(net.backend().verify_tolerance);
  std::printf("backend %s, %zu samples (inputs uniform in [-1, 1], seed %llu)\n", net.backend().name.c_str(), batch,
              static_cast<unsigned long long>(seed));
  std::printf("max abs error %.3g, max rel error %.3g (|y-r|/max(1,|r|) vs float64 reference), tolerance %.3g: %s\n", d.max_abs,
              d.max_rel, net.backend().verify_tolerance, ok ? "PASS" : "FAIL");
  if (!ok)
    std::printf("worst: sample %zu output %zu: got %.9g, reference %.9g\n", d.worst / net.output_dim(), d.worst % net.output_dim(),
                static_cast<double>(output[d.worst]), reference[d.worst]);
  return ok ? 0 : kExitVerifyFailed;
}

int cmd_bench(const std::string& model_path, const NetworkOptions& options, std::size_t batch, int repeats, int warmup, Layout layout) {
  const Model model = load_model(model_path);
  const Network net(model, options);
  const auto input = random_inputs(batch * model.input_dim(), 1);
  std::vector<float> output(batch * net.output_dim());
  for (int i = 0; i < warmup; ++i) net.infer(input, output, batch, layout);
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    net.infer(input, output, batch, layout);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::printf("backend %s, batch %zu, %d warm-up + %d timed runs%s\n", net.backend().name.c_str(), batch, warmup, repeats,
              layout == Layout::feature_major ? ", feature-major arrays" : "");
  std::printf("kernel: %s\n", net.kernel().c_str());
  std::printf("median %.6f s (min %.6f, max %.6f): %.4g samples/s\n", median, seconds.front(), seconds.back(),
              static_cast<double>(batch) / median);
  return 0;
}

int cmd_backends() {
  const auto backends = list_backends();
  int width = 0;  // names in one column
  for (const auto& b : backends) width = std::max(width, static_cast<int>(b.name.size()));
  for (const auto& b : backends) {
    if (b.available) std::printf("%-*s  available      %s\n", width, b.name.c_str(), b.description.c_str());
    else std::printf("%-*s  not available  %s: %s\n", width, b.name.c_str(), b.description.c_str(), b.unavailable_reason.c_str());
  }
  std::printf("default: %s\n", default_backend().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mlpcore: run small MLPs on GPU matrix cores (and a CPU reference)"};
  app.set_version_flag("--version", kVersionString);
  app.require_subcommand(1);

  std::string model_path, input_path, output_path;
  NetworkOptions options;
  bool quiet = false;
  std::size_t verify_batch = 0, bench_batch = 0;
  std::uint64_t seed = 1;
  int repeats = 10, warmup = 2;

  auto* info = app.add_subcommand("info", "Describe a model: layers, shapes, activations, parameters, dtypes");
  info->add_option("model", model_path, "Model file (.safetensors)")->required();

  auto* run = app.add_subcommand("run", "Run a model on inputs from a .npy or text file");
  run->add_option("model", model_path, "Model file (.safetensors)")->required();
  run->add_option("--input,-i", input_path, "Input: .npy [batch, in] or [in]; text (one sample per line); '-' reads text from stdin. With --layout "
                  "feature_major: [in, batch] (a 1-D array, and each text line, are one feature's values)")->required();
  run->add_option("--output,-o", output_path, "Output: a .npy path, a text path, or '-' for stdout (default)");

  auto* verify = app.add_subcommand("verify", "Compare a backend with the float64 reference on random inputs");
  verify->add_option("model", model_path, "Model file (.safetensors)")->required();
  verify->add_option("--batch,-n", verify_batch, "Number of random samples")->default_val(1000)->check(CLI::Range(std::size_t{1}, std::size_t{1} << 26));
  verify->add_option("--seed,-s", seed, "Random seed")->default_val(1);

  auto* bench = app.add_subcommand("bench", "Measure samples per second (median of timed runs after warm-up)");
  bench->add_option("model", model_path, "Model file (.safetensors)")->required();
  bench->add_option("--batch,-n", bench_batch, "Samples per call")->default_val(65536)->check(CLI::Range(std::size_t{1}, std::size_t{1} << 28));
  bench->add_option("--repeats,-r", repeats, "Timed runs")->default_val(10)->check(CLI::Range(1, 100000));
  bench->add_option("--warmup,-w", warmup, "Untimed warm-up runs")->default_val(2)->check(CLI::Range(0, 100000));

  auto* backends = app.add_subcommand("backends", "List backends and why unavailable ones cannot run here");

  std::string target, kernels_path, compile_backend;
  auto* compile = app.add_subcommand("compile", "Compile a model's specialized kernels ahead of time, for machines without NVRTC or hiprtc (load with --kernels)");
  compile->add_option("model", model_path, "Model file (.safetensors)")->required();
  compile->add_option("--target", target, "GPU to compile for: sm_80, sm_86, sm_89, sm_90, ... (NVRTC), gfx1100, gfx1201, gfx90a, gfx942, ... (hiprtc, else a clang with the AMDGPU target found here)")->required();
  compile->add_option("--backend,-b", compile_backend, "cuda (float32 accumulation) or cuda-f16acc for sm_ targets, hip for gfx ones (default: cuda, resp. hip)");
  compile->add_option("--output,-o", kernels_path, "Kernel file to write")->required();
  std::string compile_layout = "sample_major";
  compile->add_option("--layout", compile_layout, "The I/O layouts its calls will use: sample_major, feature_major or both (as run --layout)")
      ->check(CLI::IsMember({"sample_major", "feature_major", "both"}))
      ->capture_default_str();

  std::string layout_name = "sample_major";
  for (auto* command : {run, bench})
    command->add_option("--layout", layout_name, "sample_major: arrays [batch, dim]; feature_major: [dim, batch] (the kernels read and write it directly)")
        ->check(CLI::IsMember({"sample_major", "feature_major"}))
        ->capture_default_str();
  std::string build_layouts;
  for (auto* command : {run, verify, bench}) {
    command->add_option("--layouts", build_layouts,
                        "The layouts to build the network for: sample_major, feature_major or both (default: the calls' --layout; verify's "
                        "calls are sample-major). A kernel file from `mlpcore compile --layout both` needs both")
        ->check(CLI::IsMember({"sample_major", "feature_major", "both"}));
    command->add_option("--kernels", options.kernels_file, "Kernel file from `mlpcore compile` for this model and GPU, used instead of compiling");
    command->add_option("--kernel-cache", options.kernel_cache, "Compiled-kernel cache directory, or 'off' (default: MLPCORE_KERNEL_CACHE, else XDG_CACHE_HOME/mlpcore/kernels, else ~/.cache/mlpcore/kernels)");
    command->add_flag("--no-specialize{false}", options.specialize, "Run the kernels built into mlpcore instead of compiling one for the model");
    command->add_option("--backend,-b", options.backend, "Backend name, or 'auto': the first available one that can run the model");
    command->add_option("--threads,-t", options.threads, "Threads for the cpu backend (default: MLPCORE_NUM_THREADS, else the CPUs this process may use)")
        ->check(CLI::Range(1u, kMaxCpuThreads));
    command->add_flag("--quiet,-q", quiet, "No notices on stderr (which backend 'auto' passed over, samples run)");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitError;
  }
  options.notices = !quiet;
  try {
    int status = kExitError;
    if (*info) status = cmd_info(model_path);
    const Layout layout = layout_name == "feature_major" ? Layout::feature_major : Layout::sample_major;
    const std::string built = build_layouts.empty() ? layout_name : build_layouts;
    options.layouts = {built != "feature_major", built != "sample_major"};
    if (built != "both" && built != layout_name)
      throw Error(ErrorCode::invalid_argument, "--layouts", "", built + " does not serve the calls' layout, " + layout_name);
    if (*run) status = cmd_run(model_path, input_path, output_path, options, layout);
    if (*verify) status = cmd_verify(model_path, options, verify_batch, seed);
    if (*bench) status = cmd_bench(model_path, options, bench_batch, repeats, warmup, layout);
    if (*backends) status = cmd_backends();
    if (*compile) {
      refuse_overwriting(kernels_path, {model_path});
      std::printf("%s\nwritten to %s\n", compile_kernels(load_model(model_path), compile_backend.empty() ? (target.starts_with("gfx") ? "hip" : "cuda") : compile_backend, target, kernels_path,
                                                   {compile_layout != "feature_major", compile_layout != "sample_major"}).c_str(), kernels_path.c_str());
      status = 0;
    }
    // Text on stdout may sit in its buffer until now: a full disk or closed pipe is an error, not exit 0.
    if (std::fflush(stdout) != 0) throw Error(ErrorCode::io, "standard output", "", std::string("write failed: ") + std::strerror(errno));
    if (std::ferror(stdout)) throw Error(ErrorCode::io, "standard output", "", "write failed");
    return status;
  } catch (const mlpcore::Error& e) {
    std::fprintf(stderr, "mlpcore: error: %s\n", e.what());
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlpcore: error: %s\n", e.what());
    return kExitError;
  }
}
