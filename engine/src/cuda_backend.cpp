// The cuda backend: the fused kernels' fat binary loaded into the device's primary context (the one the
// CUDA runtime and PyTorch use, so their streams and buffers work with enqueue), weights packed and
// uploaded once. Without the driver, a GPU or an sm_80+ GPU it reports why and the engine falls back.
#include <mutex>

#include "engine/src/backend.h"
#include "engine/src/cuda_backend.h"
#include "engine/src/cuda_driver.h"
#include "engine/src/device_buffer.h"
#include "engine/src/fused_packing.h"
#include "ops/tile_mma_sm80.h"

namespace mlpcore::detail {
namespace {

using Tile = ops::TileMmaSm80;

// Makes the network's context current for a scope.
class ContextScope {
 public:
  ContextScope(const CudaDriver& d, void* context) : d_(d) { d_.push(context); }
  ~ContextScope() { d_.pop(); }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const CudaDriver& d_;
};

class CudaNetwork final : public BackendNetwork {
 public:
  CudaNetwork(const Model& model, const CudaDriver& driver, const CudaProbe& probe)
      : d_(driver), device_(probe.device), context_(driver.retain_context(probe.device)) {
    try {
      ContextScope scope(d_, context_);
      const PackedNetwork packed = pack_network<Tile>(model, "cuda");
      module_ = d_.load_module(probe.fatbin->data);
      const std::string name = fused_kernel_name(model, packed);
      for (const Io io : {Io::f32, Io::f16}) {
        const std::string io_name = name + fused_kernel_suffix(io);
        kernels_[static_cast<int>(io)] = d_.function(module_, io_name.c_str());
        if (!kernels_[static_cast<int>(io)]) throw Error(ErrorCode::device, "backend 'cuda'", "", "fat binary has no kernel " + io_name);
      }
      weights_ = upload(d_, packed.weights);
      biases_ = upload(d_, packed.biases);
      layers_ = upload(d_, packed.layers);
      view_ = {static_cast<const ops::half_t*>(weights_->get()), static_cast<const float*>(biases_->get()),
               static_cast<const ops::LayerDesc*>(layers_->get()), static_cast<std::uint32_t>(packed.layers.size()), packed.input_dim,
               packed.output_dim};
      device_view_ = device_view_of(weights_->get(), static_cast<const float*>(biases_->get()), layers_->get(), packed);
    } catch (...) {
      release();
      throw;
    }
  }

  ~CudaNetwork() override { release(); }

  void infer(const IoBuffers& call) const override {
    check_fused_batch(call.batch);
    std::lock_guard lock(mutex_);
    ContextScope scope(d_, context_);
    const std::size_t in_bytes = call.batch * view_.input_dim * io_bytes(call.io), out_bytes = call.batch * view_.output_dim * io_bytes(call.io);
    DeviceBuffer<CudaDriver> in(d_, in_bytes), out(d_, out_bytes);
    d_.copy(in.get(), call.input, in_bytes);
    launch({in.get(), out.get(), call.batch, call.io}, nullptr);
    d_.copy(call.output, out.get(), out_bytes);  // synchronous: waits for the kernel on the legacy default stream
  }

  std::optional<DeviceNetworkView> device_view() const override { return device_view_; }

  void enqueue(const IoBuffers& call, void* stream) const override {
    check_fused_batch(call.batch);
    ContextScope scope(d_, context_);
    launch(call, stream);
  }

 private:
  void launch(const IoBuffers& call, void* stream) const {
    auto n = static_cast<unsigned>(call.batch);
    ops::NetworkView view = view_;
    const void* input = call.input;
    void* output = call.output;
    void* args[] = {&view, &input, &output, &n};
    d_.launch(kernels_[static_cast<int>(call.io)], fused_grid(call.batch), kFusedWavesPerBlock * Tile::kWave, args, stream);
  }

  void release() noexcept {
    try {
      ContextScope scope(d_, context_);
      weights_.reset();
      biases_.reset();
      layers_.reset();
      d_.unload_module(module_);
    } catch (const Error&) {  // the context is gone: so are its allocations
    }
    d_.release_context(device_);
  }

  const CudaDriver& d_;
  int device_;
  void* context_;
  void* module_ = nullptr;
  void* kernels_[2] = {};  // by Io
  std::unique_ptr<DeviceBuffer<CudaDriver>> weights_, biases_, layers_;
  ops::NetworkView view_{};
  DeviceNetworkView device_view_{};
  mutable std::mutex mutex_;
};

const CudaDriver& driver() {
  static const CudaDriver d;
  return d;
}

}  // namespace

CudaProbe probe_cuda(const CudaDriver& d, std::span<const EmbeddedCodeObject> objects) {
  CudaProbe p;
  if (objects.empty()) return p.reason = "this build has no CUDA fat binary (configured with MLPCORE_CUDA=OFF or without nvcc)", p;
  if (!d.loaded()) return p.reason = "no CUDA driver: " + d.load_error(), p;
  if (const int error = d.try_init()) return p.reason = "no NVIDIA GPU (" + d.describe(error, "cuInit") + ")", p;
  int count = 0;
  if (const int error = d.try_device_count(count)) return p.reason = "no NVIDIA GPU (" + d.describe(error, "cuDeviceGetCount") + ")", p;
  if (count == 0) return p.reason = "no NVIDIA GPU (cuDeviceGetCount found 0 devices)", p;
  const std::string name = d.device_name(0);
  const int cc = d.compute_capability(0);
  if (cc < 80) return p.reason = "device 0 (" + name + ") is sm_" + std::to_string(cc) + "; the tensor-core kernels need sm_80 or newer", p;
  p.available = true;
  p.fatbin = &objects.front();
  p.description = (name.starts_with("NVIDIA") ? "" : "NVIDIA ") + name + " (sm_" + std::to_string(cc) + "), device 0";
  return p;
}

const CudaProbe& cuda_probe() {
  static const CudaProbe probe = probe_cuda(driver(), cuda_code_objects());
  return probe;
}

std::unique_ptr<BackendNetwork> create_cuda_network(const Model& model) {
  const CudaProbe& probe = cuda_probe();
  if (!probe.available) throw Error(ErrorCode::backend_unavailable, "backend 'cuda'", "", probe.reason);
  return std::make_unique<CudaNetwork>(model, driver(), probe);
}

}  // namespace mlpcore::detail
