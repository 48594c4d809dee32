#include "mlpcore/error.h"

namespace mlpcore {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::io: return "io";
    case ErrorCode::file_too_large: return "file_too_large";
    case ErrorCode::truncated: return "truncated";
    case ErrorCode::header_length: return "header_length";
    case ErrorCode::header_json: return "header_json";
    case ErrorCode::tensor_entry: return "tensor_entry";
    case ErrorCode::dtype: return "dtype";
    case ErrorCode::shape: return "shape";
    case ErrorCode::offsets: return "offsets";
    case ErrorCode::unexpected_tensor: return "unexpected_tensor";
    case ErrorCode::missing_tensor: return "missing_tensor";
    case ErrorCode::layer_chain: return "layer_chain";
    case ErrorCode::metadata: return "metadata";
    case ErrorCode::activation: return "activation";
    case ErrorCode::non_finite: return "non_finite";
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::unknown_backend: return "unknown_backend";
    case ErrorCode::backend_unavailable: return "backend_unavailable";
    case ErrorCode::unsupported_model: return "unsupported_model";
    case ErrorCode::device: return "device";
  }
  return "unknown";
}

Error::Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

Error::Error(ErrorCode code, const std::string& where, const std::string& field, const std::string& problem)
    : Error(code, where + ": " + (field.empty() ? "" : field + ": ") + problem) {}

}  // namespace mlpcore
