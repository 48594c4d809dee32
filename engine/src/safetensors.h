#pragma once
// A small, strict reader and writer of the safetensors container (https://github.com/huggingface/safetensors):
// 8-byte little-endian header length, a JSON header, then the raw tensor bytes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace mlpcore::safetensors {

struct TensorView {
  std::string name;
  std::string dtype;                    // safetensors dtype name, e.g. "F32"
  std::vector<std::uint64_t> shape;
  std::span<const std::byte> data;      // points into the parsed buffer
};

struct Contents {
  std::vector<TensorView> tensors;      // in header order
  bool has_metadata = false;
  std::map<std::string, std::string> metadata;
};

// Validates the whole container (lengths, JSON, entries, dtypes, offsets: in range, sized to shape × dtype,
// non-overlapping, no holes) and throws mlpcore::Error naming `source` on any problem.
Contents parse(std::span<const std::byte> bytes, const std::string& source);

struct TensorData {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::vector<std::byte> data;
};

std::vector<std::byte> serialize(const std::vector<TensorData>& tensors, const std::map<std::string, std::string>& metadata);

}  // namespace mlpcore::safetensors
