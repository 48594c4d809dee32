// The cpu backend: the network packed once for the kernels of the best instruction set this CPU runs
// (cpu_kernels.h), evaluated block by block, the blocks spread over a pool of threads kept for the
// network's lifetime.
#include <algorithm>
#include <new>

#include "engine/src/backend.h"
#include "engine/src/cpu_count.h"
#include "engine/src/cpu_kernels.h"
#include "engine/src/thread_pool.h"
#include "ops/half_bits.h"

namespace mlpcore::detail {
namespace {

// Below this many multiply-adds a task costs more to hand to another thread than to run.
constexpr std::size_t kMinTaskMacs = std::size_t{1} << 20;
// Tasks per thread: a thread slowed down (by other processes) leaves its share to the others.
constexpr std::size_t kTasksPerThread = 4;

// Each thread's scratch, kept from call to call: infer allocates nothing once it has grown.
class Scratch {
 public:
  ~Scratch() { release(); }
  float* get(std::size_t floats) {
    if (floats > size_) {
      release();
      data_ = static_cast<float*>(::operator new[](floats * sizeof(float), kAlignment));
      size_ = floats;
    }
    return data_;
  }

 private:
  static constexpr std::align_val_t kAlignment{64};
  void release() {
    if (data_) ::operator delete[](data_, kAlignment);
    data_ = nullptr;
    size_ = 0;
  }
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

class CpuNetwork final : public BackendNetwork {
 public:
  CpuNetwork(const Model& model, unsigned threads)
      : kernels_(best_cpu_kernels()), net_(pack_cpu_network(model)), pool_(threads) {
    in_dim_ = model.input_dim();
    out_dim_ = model.output_dim();
    activation_floats_ = cpu_activation_floats(net_.layers.data(), net_.layers.size());
    std::size_t macs = 0;
    for (const auto& l : net_.layers) macs += l.in * l.padded_out;
    const std::size_t min_rows = std::max<std::size_t>(1, kMinTaskMacs / macs);
    min_task_blocks_ = (min_rows + kCpuBlockRows - 1) / kCpuBlockRows;
  }

  std::string kernel() const override {
    return std::string("float32 ") + kernels_.isa + " kernels on " + std::to_string(pool_.threads()) + " thread" + (pool_.threads() == 1 ? "" : "s");
  }

  void infer(const IoBuffers& call) const override {
    const std::size_t blocks = (call.batch + kCpuBlockRows - 1) / kCpuBlockRows;
    const std::size_t tasks = std::max<std::size_t>(1, std::min(blocks / min_task_blocks_, pool_.threads() * kTasksPerThread));
    const std::size_t blocks_per_task = (blocks + tasks - 1) / tasks;
    pool_.run((blocks + blocks_per_task - 1) / blocks_per_task, [&](std::size_t task) {
      thread_local Scratch scratch;
      float* buffers = scratch.get(2 * activation_floats_ + (staged(call) ? kCpuBlockRows * (in_dim_ + out_dim_) : 0));
      const std::size_t end = std::min(call.batch, (task + 1) * blocks_per_task * kCpuBlockRows);
      for (std::size_t row = task * blocks_per_task * kCpuBlockRows; row < end; row += kCpuBlockRows)
        run_block(call, row, std::min(kCpuBlockRows, end - row), buffers);
    });
  }

 private:
  static bool staged(const IoBuffers& call) { return call.io == Io::f16 || call.layout == Layout::feature_major; }

  void run_block(const IoBuffers& call, std::size_t row, std::size_t rows, float* scratch) const {
    if (!staged(call)) {
      kernels_.forward_block(net_.layers.data(), net_.layers.size(), static_cast<const float*>(call.input) + row * in_dim_,
                             static_cast<float*>(call.output) + row * out_dim_, rows, scratch);
      return;
    }
    // float16 values widened, or feature-major columns gathered, around the float32 path a block at a time.
    float* in = scratch + 2 * activation_floats_;
    float* out = in + kCpuBlockRows * in_dim_;
    const bool columns = call.layout == Layout::feature_major;
    const auto index = [&](std::size_t r, std::size_t f, std::size_t dim) { return columns ? f * call.batch + row + r : (row + r) * dim + f; };
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t f = 0; f < in_dim_; ++f) {
        const std::size_t i = index(r, f, in_dim_);
        in[r * in_dim_ + f] = call.io == Io::f16 ? ops::f16_bits_to_float(static_cast<const std::uint16_t*>(call.input)[i])
                                                 : static_cast<const float*>(call.input)[i];
      }
    kernels_.forward_block(net_.layers.data(), net_.layers.size(), in, out, rows, scratch);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t u = 0; u < out_dim_; ++u) {
        const std::size_t i = index(r, u, out_dim_);
        const float v = out[r * out_dim_ + u];
        if (call.io == Io::f16)
          static_cast<std::uint16_t*>(call.output)[i] = ops::float_to_f16_bits(v);
        else
          static_cast<float*>(call.output)[i] = v;
      }
  }

  const CpuKernels& kernels_;
  PackedCpuNetwork net_;
  mutable ThreadPool pool_;  // run() is safe to call concurrently
  std::size_t in_dim_ = 0, out_dim_ = 0, activation_floats_ = 0, min_task_blocks_ = 1;
};

}  // namespace

std::unique_ptr<BackendNetwork> create_cpu_network(const Model& model, const NetworkOptions& options) {
  return std::make_unique<CpuNetwork>(model, cpu_threads(options.threads));
}

}  // namespace mlpcore::detail
