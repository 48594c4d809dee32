#pragma once
// What every backend implements; Network owns one and does all argument checking before calling it.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlpcore/model.h"
#include "mlpcore/device_view.h"
#include "mlpcore/network.h"

namespace mlpcore::detail {

// The element type of a call's input and output: float32, or float16 (IEEE binary16 bit patterns).
enum class Io { f32, f16 };
inline std::size_t io_bytes(Io io) { return io == Io::f16 ? 2 : 4; }

// One call's buffers: input [batch, input_dim] and output [batch, output_dim] of `io` values, row-major,
// or their transposes with Layout::feature_major.
struct IoBuffers {
  const void* input;
  void* output;
  std::size_t batch;
  Io io;
  Layout layout = Layout::sample_major;
};

class BackendNetwork {
 public:
  virtual ~BackendNetwork() = default;
  // Pointers are valid and batch >= 1; must be safe to call concurrently.
  virtual void infer(const IoBuffers& call) const = 0;
  // Buffers in the backend's own memory, asynchronous on `stream` for GPU backends. Host backends: infer.
  virtual void enqueue(const IoBuffers& call, void* /*stream*/) const { infer(call); }
  // Network::enqueued_out_of_range(): reads and clears the record of enqueued calls' float16 range
  // checks (backends whose enqueue runs infer report through it, and keep none).
  virtual bool take_enqueued_out_of_range() const { return false; }
  // The packed network for device-side evaluation (ops/device_api.h); empty for the cpu backend.
  virtual std::optional<DeviceNetworkView> device_view() const { return std::nullopt; }
  // Network::kernel().
  virtual std::string kernel() const = 0;
  // Whether calls in `layout` run (a specialized kernel serves the layouts it was built for).
  virtual bool serves(Layout) const { return true; }
  // Whether calls may pass buffers in GPU memory (GPU backends); the others read and write host memory,
  // and Network checks that the host can before calling them.
  virtual bool takes_device_memory() const { return false; }
};

struct Backend {
  BackendInfo info;
  using Factory = std::function<std::unique_ptr<BackendNetwork>(const Model&, const NetworkOptions&)>;
  Factory create;  // empty when unavailable
};

std::vector<Backend> all_backends();  // in order of preference

struct PackedNetwork;
// The device view of packed data already uploaded (pointers in the backend's memory).
DeviceNetworkView device_view_of(const void* weights, const void* biases, const void* layers, const PackedNetwork& packed);

std::unique_ptr<BackendNetwork> create_cpu_network(const Model& model, const NetworkOptions& options);
std::unique_ptr<BackendNetwork> create_emu_rdna3_network(const Model& model);
std::unique_ptr<BackendNetwork> create_emu_rdna4_network(const Model& model);
std::unique_ptr<BackendNetwork> create_emu_cdna_network(const Model& model);
std::unique_ptr<BackendNetwork> create_emu_cdna2_network(const Model& model);
std::unique_ptr<BackendNetwork> create_emu_nvidia_network(const Model& model);
std::unique_ptr<BackendNetwork> create_emu_nvidia_f16acc_network(const Model& model);

}  // namespace mlpcore::detail
