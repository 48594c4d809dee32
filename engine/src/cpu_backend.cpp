// The CPU reference backend: float32 Eigen GEMMs over blocks of samples, split across threads.
#include <Eigen/Core>
#include <algorithm>
#include <thread>

#include "engine/src/backend.h"
#include "ops/activation_math.h"
#include "ops/half_bits.h"

namespace mlpcore::detail {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRowMap = Eigen::Map<const RowMatrix>;
using RowMap = Eigen::Map<RowMatrix>;

constexpr std::size_t kBlockRows = 256;         // keeps a block's activations in L2
constexpr std::size_t kRowsPerThread = 4096;    // below this a thread costs more than it saves

template <ActivationKind K>
void activate_all(float* values, std::size_t n, float param) {
  for (std::size_t i = 0; i < n; ++i) values[i] = ops::activate<float>(K, param, values[i]);
}

void activate_all(const Activation& act, float* values, std::size_t n) {
  switch (act.kind) {
    case ActivationKind::none: return;
    case ActivationKind::relu: return activate_all<ActivationKind::relu>(values, n, act.param);
    case ActivationKind::leaky_relu: return activate_all<ActivationKind::leaky_relu>(values, n, act.param);
    case ActivationKind::sigmoid: return activate_all<ActivationKind::sigmoid>(values, n, act.param);
    case ActivationKind::tanh: return activate_all<ActivationKind::tanh>(values, n, act.param);
    case ActivationKind::softplus: return activate_all<ActivationKind::softplus>(values, n, act.param);
    case ActivationKind::exponential: return activate_all<ActivationKind::exponential>(values, n, act.param);
    case ActivationKind::sine: return activate_all<ActivationKind::sine>(values, n, act.param);
    case ActivationKind::silu: return activate_all<ActivationKind::silu>(values, n, act.param);
  }
}

class CpuNetwork final : public BackendNetwork {
 public:
  explicit CpuNetwork(const Model& model) {
    for (const auto& l : model.layers) {
      layers_.push_back({ConstRowMap(l.weight.data(), static_cast<Eigen::Index>(l.out), static_cast<Eigen::Index>(l.in)),
                         Eigen::Map<const Eigen::RowVectorXf>(l.bias.data(), static_cast<Eigen::Index>(l.out)), l.activation});
      widest_ = std::max(widest_, static_cast<Eigen::Index>(l.out));
    }
  }

  void infer(const IoBuffers& call) const override {
    if (call.io == Io::f32) return infer(static_cast<const float*>(call.input), static_cast<float*>(call.output), call.batch);
    // float16 buffers: widened to float32 around the float32 path.
    const std::size_t in_dim = static_cast<std::size_t>(layers_.front().weight.cols());
    const std::size_t out_dim = static_cast<std::size_t>(layers_.back().weight.rows());
    const auto* in16 = static_cast<const std::uint16_t*>(call.input);
    std::vector<float> in(call.batch * in_dim), out(call.batch * out_dim);
    std::transform(in16, in16 + in.size(), in.begin(), ops::f16_bits_to_float);
    infer(in.data(), out.data(), call.batch);
    std::transform(out.begin(), out.end(), static_cast<std::uint16_t*>(call.output), ops::float_to_f16_bits);
  }

 private:
  void infer(const float* input, float* output, std::size_t batch) const {
    const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t threads = std::min(hw, (batch + kRowsPerThread - 1) / kRowsPerThread);
    if (threads <= 1) return run_rows(input, output, 0, batch);
    std::vector<std::thread> pool;
    const std::size_t per_thread = (batch + threads - 1) / threads;
    for (std::size_t begin = 0; begin < batch; begin += per_thread)
      pool.emplace_back([=, this] { run_rows(input, output, begin, std::min(batch, begin + per_thread)); });
    for (auto& t : pool) t.join();
  }

  struct Dense {
    RowMatrix weight;  // [out, in]
    Eigen::RowVectorXf bias;
    Activation activation;
  };

  void run_rows(const float* input, float* output, std::size_t begin, std::size_t end) const {
    const auto in_dim = static_cast<Eigen::Index>(layers_.front().weight.cols());
    const auto out_dim = static_cast<Eigen::Index>(layers_.back().weight.rows());
    RowMatrix ping(kBlockRows, widest_), pong(kBlockRows, widest_);
    for (std::size_t row = begin; row < end; row += kBlockRows) {
      const auto rows = static_cast<Eigen::Index>(std::min(kBlockRows, end - row));
      ConstRowMap x(input + row * static_cast<std::size_t>(in_dim), rows, in_dim);
      RowMatrix* current = nullptr;
      for (std::size_t i = 0; i < layers_.size(); ++i) {
        const Dense& l = layers_[i];
        RowMatrix& next = current == &ping ? pong : ping;
        auto h = next.topLeftCorner(rows, l.weight.rows());
        if (current) h.noalias() = current->topLeftCorner(rows, l.weight.cols()) * l.weight.transpose();
        else h.noalias() = x * l.weight.transpose();
        h.rowwise() += l.bias;
        for (Eigen::Index r = 0; r < rows; ++r) activate_all(l.activation, &h(r, 0), static_cast<std::size_t>(h.cols()));
        current = &next;
      }
      RowMap(output + row * static_cast<std::size_t>(out_dim), rows, out_dim) = current->topLeftCorner(rows, out_dim);
    }
  }

  std::vector<Dense> layers_;
  Eigen::Index widest_ = 0;
};

}  // namespace

std::unique_ptr<BackendNetwork> create_cpu_network(const Model& model, const NetworkOptions&) { return std::make_unique<CpuNetwork>(model); }

}  // namespace mlpcore::detail
