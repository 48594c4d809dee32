#include "mlpcore/mlpcore_c.h"

#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include "mlpcore/error.h"
#include "mlpcore/model.h"
#include "mlpcore/network.h"

struct mlpcore_network {
  explicit mlpcore_network(mlpcore::Network n) : network(std::move(n)), kernel(network.kernel()) {}
  mlpcore::Network network;
  std::string kernel;  // mlpcore_network_kernel's
};

namespace {

int fail(const std::exception& e, char* error, std::size_t error_size) {
  if (error && error_size > 0) {
    std::strncpy(error, e.what(), error_size - 1);
    error[error_size - 1] = '\0';
  }
  return -1;
}

// Runs call() and turns an exception into -1 and the error text.
template <class Call>
int guarded(const mlpcore_network* network, const char* function, char* error, size_t error_size, Call call) {
  try {
    if (!network) throw mlpcore::Error(mlpcore::ErrorCode::invalid_argument, function, "network", "is null");
    call(network->network);
    return 0;
  } catch (const std::exception& e) {
    return fail(e, error, error_size);
  }
}

}  // namespace

extern "C" {

mlpcore_network* mlpcore_network_create_with_options(const char* model_path, const char* backend, unsigned threads, int quiet,
                                                     char* error, size_t error_size) {
  try {
    const mlpcore::NetworkOptions options{backend ? backend : "auto", threads, quiet == 0};
    return new mlpcore_network(mlpcore::Network(mlpcore::load_model(model_path ? model_path : ""), options));
  } catch (const std::exception& e) {
    fail(e, error, error_size);
    return nullptr;
  }
}

mlpcore_network* mlpcore_network_create_with_layouts(const char* model_path, const char* backend, int quiet, int specialize,
                                                     const char* kernel_cache, const char* kernels_file, unsigned layouts, char* error,
                                                     size_t error_size) {
  try {
    mlpcore::NetworkOptions options;
    options.backend = backend ? backend : "auto";
    options.notices = quiet == 0;
    options.specialize = specialize != 0;
    options.kernel_cache = kernel_cache ? kernel_cache : "";
    options.kernels_file = kernels_file ? kernels_file : "";
    if (layouts == 0 || layouts > 3)
      throw mlpcore::Error(mlpcore::ErrorCode::invalid_argument, "mlpcore_network_create_with_layouts", "layouts",
                           std::to_string(layouts) + " is not a set of (1 << MLPCORE_SAMPLE_MAJOR) and (1 << MLPCORE_FEATURE_MAJOR)");
    options.layouts = {(layouts & (1u << MLPCORE_SAMPLE_MAJOR)) != 0, (layouts & (1u << MLPCORE_FEATURE_MAJOR)) != 0};
    return new mlpcore_network(mlpcore::Network(mlpcore::load_model(model_path ? model_path : ""), options));
  } catch (const std::exception& e) {
    fail(e, error, error_size);
    return nullptr;
  }
}

mlpcore_network* mlpcore_network_create_with_kernels(const char* model_path, const char* backend, int quiet, int specialize,
                                                     const char* kernel_cache, const char* kernels_file, char* error, size_t error_size) {
  return mlpcore_network_create_with_layouts(model_path, backend, quiet, specialize, kernel_cache, kernels_file, 1u << MLPCORE_SAMPLE_MAJOR,
                                             error, error_size);
}

mlpcore_network* mlpcore_network_create(const char* model_path, const char* backend, char* error, size_t error_size) {
  return mlpcore_network_create_with_options(model_path, backend, 0, 0, error, error_size);
}

void mlpcore_network_destroy(mlpcore_network* network) { delete network; }

size_t mlpcore_network_input_dim(const mlpcore_network* network) { return network ? network->network.input_dim() : 0; }
size_t mlpcore_network_output_dim(const mlpcore_network* network) { return network ? network->network.output_dim() : 0; }
const char* mlpcore_network_backend(const mlpcore_network* network) { return network ? network->network.backend().name.c_str() : ""; }
const char* mlpcore_network_kernel(const mlpcore_network* network) { return network ? network->kernel.c_str() : ""; }

int mlpcore_network_infer(const mlpcore_network* network, const float* input, float* output, size_t batch, char* error, size_t error_size) {
  return guarded(network, "mlpcore_network_infer", error, error_size, [&](const mlpcore::Network& n) { n.infer(input, output, batch); });
}

int mlpcore_network_enqueue(const mlpcore_network* network, const float* input, float* output, size_t batch, void* stream, char* error,
                            size_t error_size) {
  return guarded(network, "mlpcore_network_enqueue", error, error_size, [&](const mlpcore::Network& n) { n.enqueue(input, output, batch, stream); });
}

int mlpcore_network_infer_f16(const mlpcore_network* network, const uint16_t* input, uint16_t* output, size_t batch, char* error,
                              size_t error_size) {
  return guarded(network, "mlpcore_network_infer_f16", error, error_size, [&](const mlpcore::Network& n) { n.infer(input, output, batch); });
}

int mlpcore_network_enqueue_f16(const mlpcore_network* network, const uint16_t* input, uint16_t* output, size_t batch, void* stream,
                                char* error, size_t error_size) {
  return guarded(network, "mlpcore_network_enqueue_f16", error, error_size,
                 [&](const mlpcore::Network& n) { n.enqueue(input, output, batch, stream); });
}

namespace {

mlpcore::Layout layout_of(int layout, const char* function) {
  if (layout != MLPCORE_SAMPLE_MAJOR && layout != MLPCORE_FEATURE_MAJOR)
    throw mlpcore::Error(mlpcore::ErrorCode::invalid_argument, function, "layout", std::to_string(layout) + " is neither MLPCORE_SAMPLE_MAJOR nor MLPCORE_FEATURE_MAJOR");
  return layout == MLPCORE_FEATURE_MAJOR ? mlpcore::Layout::feature_major : mlpcore::Layout::sample_major;
}

}  // namespace

int mlpcore_network_infer_layout(const mlpcore_network* network, const void* input, void* output, size_t batch, int f16, int layout,
                                 char* error, size_t error_size) {
  return guarded(network, "mlpcore_network_infer_layout", error, error_size, [&](const mlpcore::Network& n) {
    const mlpcore::Layout l = layout_of(layout, "mlpcore_network_infer_layout");
    if (f16)
      n.infer(static_cast<const std::uint16_t*>(input), static_cast<std::uint16_t*>(output), batch, l);
    else
      n.infer(static_cast<const float*>(input), static_cast<float*>(output), batch, l);
  });
}

int mlpcore_network_enqueue_layout(const mlpcore_network* network, const void* input, void* output, size_t batch, int f16, int layout,
                                   void* stream, char* error, size_t error_size) {
  return guarded(network, "mlpcore_network_enqueue_layout", error, error_size, [&](const mlpcore::Network& n) {
    const mlpcore::Layout l = layout_of(layout, "mlpcore_network_enqueue_layout");
    if (f16)
      n.enqueue(static_cast<const std::uint16_t*>(input), static_cast<std::uint16_t*>(output), batch, stream, l);
    else
      n.enqueue(static_cast<const float*>(input), static_cast<float*>(output), batch, stream, l);
  });
}

int mlpcore_network_enqueued_out_of_range(const mlpcore_network* network, int* out_of_range, char* error, size_t error_size) {
  return guarded(network, "mlpcore_network_enqueued_out_of_range", error, error_size, [&](const mlpcore::Network& n) {
    if (!out_of_range) throw mlpcore::Error(mlpcore::ErrorCode::invalid_argument, "mlpcore_network_enqueued_out_of_range", "out_of_range", "is null");
    *out_of_range = n.enqueued_out_of_range() ? 1 : 0;
  });
}

}  // extern "C"
