#include "mlpcore/network.h"

#include <cstdint>
#include <cstdio>
#include <mutex>

#include "engine/src/backend.h"
#include "engine/src/host_memory.h"
#include "mlpcore/error.h"

namespace mlpcore {

std::vector<BackendInfo> list_backends() {
  std::vector<BackendInfo> out;
  for (const auto& b : detail::all_backends()) out.push_back(b.info);
  return out;
}

std::string default_backend() {
  for (const auto& b : detail::all_backends())
    if (b.info.available) return b.info.name;
  return "cpu";
}

namespace {

// Why "auto" did not take the backends before the one it chose; said on stderr in one line.
struct PassedOver {
  std::string unavailable;  // the machine's reasons: the same for every network, said once per process
  std::string cannot_run;   // this model's reasons: said for every network

  void notice(const std::string& chosen) const {
    if (!cannot_run.empty()) {
      std::fprintf(stderr, "mlpcore: using backend %s%s%s\n", chosen.c_str(), cannot_run.c_str(), unavailable.c_str());
      return;
    }
    static std::once_flag once;
    if (!unavailable.empty()) std::call_once(once, [&] { std::fprintf(stderr, "mlpcore: using backend %s%s\n", chosen.c_str(), unavailable.c_str()); });
  }
};

}  // namespace

Network::Network(const Model& model, std::string_view backend) : Network(model, NetworkOptions{std::string(backend)}) {}

Network::Network(const Model& model, const NetworkOptions& options) {
  model.validate("model");
  if (!options.layouts.sample_major && !options.layouts.feature_major)
    throw Error(ErrorCode::invalid_argument, "NetworkOptions", "layouts", "names no layout (sample_major, feature_major or both)");
  const bool automatic = options.backend == "auto";
  std::string known;
  PassedOver passed;
  for (auto& b : detail::all_backends()) {
    known += (known.empty() ? "" : ", ") + b.info.name;
    if (!automatic && b.info.name != options.backend) continue;
    if (!b.info.available) {
      if (!automatic) throw Error(ErrorCode::backend_unavailable, "backend '" + b.info.name + "'", "", b.info.unavailable_reason);
      passed.unavailable += "; " + b.info.name + " unavailable (" + b.info.unavailable_reason + ")";
      continue;
    }
    try {
      impl_ = b.create(model, options);
    } catch (const Error& e) {
      // "auto" goes on to the next backend when this one cannot run the model, or its device failed to
      // take it (out of memory, a module that does not load); cpu runs every valid model.
      if (!automatic || (e.code() != ErrorCode::unsupported_model && e.code() != ErrorCode::device)) throw;
      passed.cannot_run += "; " + b.info.name + " cannot run this model (" + e.what() + ")";
      continue;
    }
    info_ = std::move(b.info);
    input_dim_ = model.input_dim();
    output_dim_ = model.output_dim();
    if (automatic && options.notices) passed.notice(info_.name);
    return;
  }
  throw Error(ErrorCode::unknown_backend, "backend '" + options.backend + "'", "", "unknown (known: auto, " + known + ")");
}

Network::~Network() = default;
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;

std::string Network::kernel() const { return impl_->kernel(); }

const BackendInfo& Network::backend() const noexcept { return info_; }
std::size_t Network::input_dim() const noexcept { return input_dim_; }
std::size_t Network::output_dim() const noexcept { return output_dim_; }

namespace {

// A call's buffers as the backend will read them: `dim` values of `io` per sample.
struct CallBuffer {
  const void* data;
  std::size_t dim;
  detail::Io io;
};

// Host backends read and write host memory; a GPU device pointer (or an unmapped one) would crash them.
void check_host_access(const char* call, const char* field, const CallBuffer& buffer, std::size_t batch, detail::HostAccess access) {
  const std::size_t value_bytes = buffer.dim * detail::io_bytes(buffer.io);
  if (batch > SIZE_MAX / value_bytes)
    throw Error(ErrorCode::invalid_argument, call, "batch", std::to_string(batch) + " samples of " + std::to_string(buffer.dim) + " values exceed the address space");
  if (!detail::host_can_access(buffer.data, batch * value_bytes, access))
    throw Error(ErrorCode::invalid_argument, call, field,
                std::string("is not host memory this process can ") + (access == detail::HostAccess::read ? "read" : "write") +
                    " (this backend runs on the host: a GPU device pointer needs the hip or cuda backend)");
}

void check_call(const detail::BackendNetwork* impl, const CallBuffer& input, const CallBuffer& output, std::size_t batch, Layout layout,
                const char* call) {
  if (!impl) throw Error(ErrorCode::invalid_argument, call, "", "the network was moved from");
  if (batch == 0) throw Error(ErrorCode::invalid_argument, call, "batch", "must be at least 1");
  if (!input.data) throw Error(ErrorCode::invalid_argument, call, "input", "is null");
  if (!output.data) throw Error(ErrorCode::invalid_argument, call, "output", "is null");
  if (layout != Layout::sample_major && layout != Layout::feature_major)
    throw Error(ErrorCode::invalid_argument, call, "layout", "is " + std::to_string(static_cast<int>(layout)) + ", not a Layout");
  if (!impl->serves(layout))
    throw Error(ErrorCode::invalid_argument, call, "layout",
                std::string(to_string(layout)) + ": this network's specialized kernels were built without it (NetworkOptions::layouts)");
  if (!impl->takes_device_memory()) {
    check_host_access(call, "input", input, batch, detail::HostAccess::read);
    check_host_access(call, "output", output, batch, detail::HostAccess::read_write);
  }
}

}  // namespace

const char* to_string(Layout layout) noexcept { return layout == Layout::feature_major ? "feature_major" : "sample_major"; }

void Network::infer(const float* input, float* output, std::size_t batch, Layout layout) const {
  check_call(impl_.get(), {input, input_dim_, detail::Io::f32}, {output, output_dim_, detail::Io::f32}, batch, layout, "infer");
  impl_->infer({input, output, batch, detail::Io::f32, layout});
}

void Network::infer(const std::uint16_t* input, std::uint16_t* output, std::size_t batch, Layout layout) const {
  check_call(impl_.get(), {input, input_dim_, detail::Io::f16}, {output, output_dim_, detail::Io::f16}, batch, layout, "infer");
  impl_->infer({input, output, batch, detail::Io::f16, layout});
}

void Network::enqueue(const float* input, float* output, std::size_t batch, void* stream, Layout layout) const {
  check_call(impl_.get(), {input, input_dim_, detail::Io::f32}, {output, output_dim_, detail::Io::f32}, batch, layout, "enqueue");
  impl_->enqueue({input, output, batch, detail::Io::f32, layout}, stream);
}

void Network::enqueue(const std::uint16_t* input, std::uint16_t* output, std::size_t batch, void* stream, Layout layout) const {
  check_call(impl_.get(), {input, input_dim_, detail::Io::f16}, {output, output_dim_, detail::Io::f16}, batch, layout, "enqueue");
  impl_->enqueue({input, output, batch, detail::Io::f16, layout}, stream);
}

bool Network::enqueued_out_of_range() const { return impl_->take_enqueued_out_of_range(); }

void Network::infer(std::span<const float> input, std::span<float> output, std::size_t batch, Layout layout) const {
  if (input.size() != batch * input_dim_)
    throw Error(ErrorCode::invalid_argument, "infer", "input",
                "holds " + std::to_string(input.size()) + " floats, expected batch*input_dim = " + std::to_string(batch * input_dim_));
  if (output.size() != batch * output_dim_)
    throw Error(ErrorCode::invalid_argument, "infer", "output",
                "holds " + std::to_string(output.size()) + " floats, expected batch*output_dim = " + std::to_string(batch * output_dim_));
  infer(input.data(), output.data(), batch, layout);
}

DeviceNetworkView Network::device_view() const {
  if (!impl_) throw Error(ErrorCode::invalid_argument, "device_view", "", "the network was moved from");
  const auto view = impl_->device_view();
  if (!view) throw Error(ErrorCode::invalid_argument, "device_view", "", "backend '" + info_.name + "' runs no device kernels");
  return *view;
}

std::vector<float> Network::infer(std::span<const float> input) const {
  if (input_dim_ == 0 || input.size() % input_dim_ != 0)
    throw Error(ErrorCode::invalid_argument, "infer", "input",
                "holds " + std::to_string(input.size()) + " floats, not a multiple of input_dim " + std::to_string(input_dim_));
  const std::size_t batch = input.size() / input_dim_;
  std::vector<float> output(batch * output_dim_);
  infer(input, output, batch);
  return output;
}

}  // namespace mlpcore
