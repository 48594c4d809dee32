#include "mlpcore/error.h"

#include <cstdio>
#include <string_view>

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
    case ErrorCode::kernel_file: return "kernel_file";
    case ErrorCode::float16_range: return "float16_range";
  }
  return "unknown";
}

namespace {

// Messages quote what users and files give (tensor names, keys, values): control characters are escaped and
// each part is cut, so a message is one bounded line whatever the input held.
std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= max_bytes) {
      out += "... (" + std::to_string(text.size() - i) + " more bytes)";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    out += hex;
  }
  return out;
}

constexpr std::size_t kMaxMessagePart = 512;

}  // namespace

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(printable(message, 8 * kMaxMessagePart)), code_(code) {}

Error::Error(ErrorCode code, const std::string& where, const std::string& field, const std::string& problem)
    : Error(code, printable(where, kMaxMessagePart) + ": " + (field.empty() ? "" : printable(field, kMaxMessagePart) + ": ") +
                      printable(problem, 2 * kMaxMessagePart)) {}

}  // namespace mlpcore
