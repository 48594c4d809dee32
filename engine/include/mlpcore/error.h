#pragma once
// Every failure in mlpcore is reported as mlpcore::Error: a std::runtime_error whose code() says what
// kind of problem it is and whose message names the file or argument, the tensor or field, and the problem.
#include <stdexcept>
#include <string>

namespace mlpcore {

enum class ErrorCode {
  io,                   // a file cannot be opened, read or written
  file_too_large,       // a file exceeds the size limit for its kind
  truncated,            // a file ends before the data its header announces
  header_length,        // the safetensors header length is impossible
  header_json,          // the header is not valid JSON of the expected form
  tensor_entry,         // a tensor's header entry is malformed (keys, types)
  dtype,                // unknown or unsupported dtype
  shape,                // a tensor or array shape is wrong
  offsets,              // data offsets out of range, overlapping, mis-sized or leaving holes
  unexpected_tensor,    // a tensor that is not part of the format
  missing_tensor,       // a weight the graph needs is absent
  layer_chain,          // consecutive layers disagree on their width
  metadata,             // the mlpcore metadata is missing or malformed
  activation,           // unknown activation or bad activation parameter
  non_finite,           // NaN or infinity in weights
  invalid_argument,     // an API or CLI argument is wrong
  unknown_backend,      // no backend of that name exists
  backend_unavailable,  // the backend exists but cannot run on this machine
  unsupported_model,    // a valid model this backend cannot run (e.g. a layer too wide for a fused kernel)
  device,               // a GPU runtime call failed
  kernel_file,          // a compiled-kernel file is malformed, or built for another network or GPU
  float16_range,        // a call's inputs or hidden activations left float16's range on a float16-operand backend
};

const char* to_string(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  // Builds the message "<where>: <field>: <problem>" (field omitted when empty).
  Error(ErrorCode code, const std::string& where, const std::string& field, const std::string& problem);
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace mlpcore
