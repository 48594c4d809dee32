#pragma once
// Running a model: pick a backend, build a Network once, call infer() as often as needed.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlpcore/device_view.h"
#include "mlpcore/model.h"

namespace mlpcore {

struct BackendInfo {
  std::string name;           // as accepted by Network and the CLI's --backend
  std::string description;
  bool available = false;
  std::string unavailable_reason;  // why not, when !available
  // Largest max(|y - r| / max(1, |r|)) over outputs y against the float64 reference r that `verify`
  // accepts; it follows from the backend's arithmetic precision (docs in README).
  double verify_tolerance = 0.0;
};

// Every backend mlpcore knows, available here or not, in order of preference.
std::vector<BackendInfo> list_backends();
// The most preferred available backend: what "auto" takes for a model every backend can run (for other
// models "auto" moves on to the next one that can, see NetworkOptions::backend).
std::string default_backend();

namespace detail {
class BackendNetwork;
}

// The most threads the cpu backend takes (NetworkOptions::threads, MLPCORE_NUM_THREADS, --threads).
inline constexpr unsigned kMaxCpuThreads = 1024;

// How a call's input and output arrays lie in memory.
enum class Layout : unsigned char {
  sample_major,   // [batch, dim]: each sample's values together (PyTorch's [batch, features]); the default
  feature_major,  // [dim, batch]: each feature's values together (a renderer's structure-of-arrays buffers)
};
const char* to_string(Layout layout) noexcept;  // "sample_major", "feature_major"

// How a Network is built. The defaults are what Network(model) does.
struct NetworkOptions {
  // A name from list_backends(), or "auto": the most preferred available backend that can run this model.
  std::string backend = "auto";
  // Threads the cpu backend may use. 0: MLPCORE_NUM_THREADS when set, else the CPUs this process may run
  // on (its affinity mask and cgroup CPU quota).
  unsigned threads = 0;
  // "auto" prints one line on stderr when it passes over a backend (unavailable here, or unable to run
  // this model) and why, and a GPU backend when it cannot specialize a kernel; false keeps stderr quiet.
  bool notices = true;
  // GPU backends compile a kernel specialized for this model when the network is built (cuda: with
  // NVRTC, hip: with hiprtc, both found at run time) and keep it in the kernel cache. Without a compiler, or with false, they
  // run the kernels compiled into the library: the model's own where its shape is one of
  // ops/fused_shapes.h, the run-time-shaped ones otherwise.
  bool specialize = true;
  // Where compiled kernels are cached: a directory, "off", or "" for $MLPCORE_KERNEL_CACHE (the same
  // choices), else $XDG_CACHE_HOME/mlpcore/kernels, else ~/.cache/mlpcore/kernels.
  std::string kernel_cache;
  // A file written by `mlpcore compile` for this model and GPU: its kernel is loaded instead of compiled
  // (machines without a run-time compiler). Error(kernel_file) if it was built for another model or GPU.
  std::string kernels_file;
  // The layouts the calls will use. A specialized kernel is compiled for these only (each layout adds its
  // compile time), and a call in another layout on such a network is refused; the kernels built into the
  // library, and the host backends, serve both.
  struct Layouts {
    bool sample_major = true;
    bool feature_major = false;
    bool operator==(const Layouts&) const = default;
  } layouts;
};

// A model prepared on one backend. Construction copies and packs the weights; the Model can be discarded.
// Thread safety: a Network is immutable after construction, and infer() may be called concurrently from
// any number of threads on the same Network.
class Network {
 public:
  // backend: a name from list_backends() or "auto". Throws Error(unknown_backend | backend_unavailable).
  explicit Network(const Model& model, std::string_view backend = "auto");
  // Throws as above, and Error(unsupported_model) when a named backend cannot run this model; "auto" then
  // moves on to the next backend (ultimately cpu, which runs every valid model).
  Network(const Model& model, const NetworkOptions& options);
  ~Network();
  Network(Network&&) noexcept;
  Network& operator=(Network&&) noexcept;

  const BackendInfo& backend() const noexcept;
  // Which kernel runs the network and where it came from: "specialized for 64-64x5-4, compiled by
  // NVRTC 13.0 for sm_90 in 1.42 s", "... from the kernel cache in 3 ms", "run-time-shaped, 128 wide, for
  // 3-128x8-1".
  std::string kernel() const;
  std::size_t input_dim() const noexcept;
  std::size_t output_dim() const noexcept;

  // input: [batch, input_dim] row-major float32; output: [batch, output_dim]. batch >= 1. Host memory
  // (GPU backends also accept device pointers here); returns when the output is written.
  // Throws Error(invalid_argument) for batch 0, null pointers or wrongly sized spans, and on host backends
  // (cpu, emu-*) for an input the process cannot read or an output it cannot write, such as a GPU device
  // pointer the host has not mapped (only their first and last bytes are probed: a buffer that is too
  // short is the caller's).
  // With Layout::feature_major, input is [input_dim, batch] and output [output_dim, batch] instead (the
  // network must serve that layout: NetworkOptions::layouts, else Error(invalid_argument)); every backend
  // reads and writes it directly. GPU backends take at most 2^32 - 64 samples per call, 2^28 feature-major
  // (Error(invalid_argument) beyond: split the call); the cpu backend has no such bound.
  void infer(std::span<const float> input, std::span<float> output, std::size_t batch, Layout layout = Layout::sample_major) const;
  void infer(const float* input, float* output, std::size_t batch, Layout layout = Layout::sample_major) const;
  std::vector<float> infer(std::span<const float> input) const;  // batch = input.size() / input_dim

  // For renderers that keep their data on the GPU: input and output are in the backend's memory (device
  // memory of a GPU backend, host memory of cpu and emu-*), and `stream` is the GPU stream to run on
  // (hipStream_t or cudaStream_t; nullptr: the default stream). A GPU backend enqueues the work and
  // returns without waiting or allocating; a host backend runs it before returning (and refuses device
  // pointers as infer does).
  void enqueue(const float* input, float* output, std::size_t batch, void* stream = nullptr, Layout layout = Layout::sample_major) const;

  // The same with float16 input and output: IEEE binary16 values as their bit patterns (reinterpret a
  // CUDA/HIP __half* or a _Float16* as std::uint16_t*). The GPU kernels read and write float16 directly,
  // half the memory traffic of float32; they round inputs to float16 in either mode, so only the outputs
  // lose precision (to float16's). Host backends convert around their float32 computation.
  void infer(const std::uint16_t* input, std::uint16_t* output, std::size_t batch, Layout layout = Layout::sample_major) const;
  void enqueue(const std::uint16_t* input, std::uint16_t* output, std::size_t batch, void* stream = nullptr,
               Layout layout = Layout::sample_major) const;

  // float16 operands carry values up to 65504 (README, "What float16 operands cannot carry"). A call whose
  // inputs or hidden activations (with float16 accumulation: sums) reach it would give wrong outputs:
  // infer throws Error(float16_range) for it on every float16-operand backend (the cpu backend computes
  // in float32 and never does); the GPU backends leave the output buffer as it was, the emulated ones
  // have written it. enqueue on a GPU backend cannot wait to say so and records it instead (on host
  // backends it throws as infer does). This returns whether an enqueued call since the last check did,
  // and clears the record; call it once all enqueued work is done (after synchronizing every stream used:
  // the record is the network's, shared by all threads and streams that enqueue on it). Those outputs
  // are then wrong: run the call again scaled down, or on cpu.
  bool enqueued_out_of_range() const;

  // The packed network for your own kernels (ops/device_api.h, CMake target mlpcore::device): device
  // pointers for hip/cuda, host pointers for the emu-* backends. Throws Error(invalid_argument) on cpu and
  // where the network accumulates in float16 (cuda-f16acc; see kernel()): the device API does not.
  // Where the network's own kernels run narrow edges, the view is of a packing in full tiles of its own.
  DeviceNetworkView device_view() const;

 private:
  BackendInfo info_;
  std::size_t input_dim_ = 0;
  std::size_t output_dim_ = 0;
  std::unique_ptr<detail::BackendNetwork> impl_;
};

// Ahead-of-time compilation (`mlpcore compile`): the model's specialized kernels for `target`, written to
// `path` for NetworkOptions::kernels_file on machines without a run-time compiler. No GPU is needed.
//   - NVIDIA, "sm_80", "sm_86", "sm_89", "sm_90", ..., as `backend` "cuda" or "cuda-f16acc" runs them: NVRTC.
//   - AMD, "gfx1100", "gfx1201", "gfx90a", "gfx942", ..., for `backend` "hip": hiprtc, else a clang with the
//     AMDGPU target found on this machine ($MLPCORE_AMDGPU_CLANG, the one that built this library, ROCm's
//     amdclang++, clang++-20..17).
// Returns what it compiled, for whom, with which compiler, and how long that took. Throws
// Error(invalid_argument) for an unknown backend or target, Error(device) when no compiler is found or
// builds it, Error(io) when writing fails.
// `layouts`: the I/O layouts the kernels serve (NetworkOptions::layouts; a network loading the file must
// ask for the same).
std::string compile_kernels(const Model& model, std::string_view backend, std::string_view target, const std::filesystem::path& path,
                            NetworkOptions::Layouts layouts = {});

}  // namespace mlpcore
