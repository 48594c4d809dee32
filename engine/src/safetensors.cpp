#include "engine/src/safetensors.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "engine/src/json_strict.h"
#include "mlpcore/error.h"
#include "mlpcore/model.h"

namespace mlpcore::safetensors {
namespace {

using nlohmann::json;
constexpr std::size_t kMaxRank = 8;

// Every dtype the safetensors specification names, with its size in bytes.
std::optional<std::size_t> dtype_size(const std::string& dtype) {
  static const std::array<std::pair<const char*, std::size_t>, 15> sizes = {{
      {"BOOL", 1}, {"U8", 1}, {"I8", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2},
      {"F16", 2}, {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4}, {"F64", 8}, {"I64", 8}, {"U64", 8},
  }};
  for (const auto& [name, size] : sizes)
    if (dtype == name) return size;
  return std::nullopt;
}

std::uint64_t read_u64_le(std::span<const std::byte> bytes) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(bytes[static_cast<std::size_t>(i)]);
  return v;
}

struct Range {
  std::uint64_t begin, end;
  std::size_t tensor;
};

std::vector<std::uint64_t> parse_unsigned_array(const json& j, const std::string& source, const std::string& field,
                                                std::size_t max_len) {
  if (!j.is_array() || j.size() > max_len)
    throw Error(ErrorCode::tensor_entry, source, field, "must be an array of at most " + std::to_string(max_len) +
                                                            " non-negative integers");
  std::vector<std::uint64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_unsigned()) throw Error(ErrorCode::tensor_entry, source, field, "must hold non-negative integers, found " + describe_json(v));
    out.push_back(v.get<std::uint64_t>());
  }
  return out;
}

TensorView parse_entry(const std::string& name, const json& entry, const std::string& source, std::uint64_t data_len,
                       std::uint64_t& begin, std::uint64_t& end) {
  const std::string field = "tensor '" + name + "'";
  if (!entry.is_object()) throw Error(ErrorCode::tensor_entry, source, field, "entry must be a JSON object");
  for (const auto& [key, value] : entry.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      throw Error(ErrorCode::tensor_entry, source, field, "unknown key '" + key + "'");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(key)) throw Error(ErrorCode::tensor_entry, source, field, std::string("missing key '") + key + "'");
  if (!entry["dtype"].is_string()) throw Error(ErrorCode::tensor_entry, source, field + ".dtype", "must be a string");

  TensorView view;
  view.name = name;
  view.dtype = entry["dtype"].get<std::string>();
  const auto size = dtype_size(view.dtype);
  if (!size) throw Error(ErrorCode::dtype, source, field, "unknown dtype '" + view.dtype + "'");
  view.shape = parse_unsigned_array(entry["shape"], source, field + ".shape", kMaxRank);
  const auto offsets = parse_unsigned_array(entry["data_offsets"], source, field + ".data_offsets", 2);
  if (offsets.size() != 2) throw Error(ErrorCode::tensor_entry, source, field + ".data_offsets", "must hold exactly [begin, end]");
  begin = offsets[0];
  end = offsets[1];

  std::uint64_t bytes = *size;
  for (const auto d : view.shape) {
    if (d != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / d)
      throw Error(ErrorCode::shape, source, field, "shape is too large");
    bytes *= d;
  }
  if (begin > end) throw Error(ErrorCode::offsets, source, field, "data_offsets begin " + std::to_string(begin) + " is after end " + std::to_string(end));
  if (end > data_len)
    throw Error(ErrorCode::offsets, source, field, "data_offsets end " + std::to_string(end) + " is past the " +
                                                       std::to_string(data_len) + " data bytes in the file");
  if (end - begin != bytes)
    throw Error(ErrorCode::offsets, source, field, "data_offsets span " + std::to_string(end - begin) + " bytes but shape × dtype needs " +
                                                       std::to_string(bytes));
  return view;
}

void check_coverage(std::vector<Range> ranges, const std::vector<TensorView>& tensors, std::uint64_t data_len,
                    const std::string& source) {
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  const Range* previous = nullptr;
  for (const auto& r : ranges) {
    const std::string field = "tensor '" + tensors[r.tensor].name + "'";
    if (r.begin < covered)
      throw Error(ErrorCode::offsets, source, field, "data overlaps tensor '" + tensors[previous->tensor].name + "'");
    if (r.begin > covered)
      throw Error(ErrorCode::offsets, source, field, "bytes " + std::to_string(covered) + ".." + std::to_string(r.begin) +
                                                         " before it belong to no tensor");
    covered = r.end;
    previous = &r;
  }
  if (covered != data_len)
    throw Error(ErrorCode::offsets, source, "data", std::to_string(data_len - covered) + " bytes after the last tensor belong to no tensor");
}

}  // namespace

Contents parse(std::span<const std::byte> bytes, const std::string& source) {
  if (bytes.size() < 8)
    throw Error(ErrorCode::truncated, source, "header length", "file has " + std::to_string(bytes.size()) +
                                                                   " bytes, fewer than the 8-byte header length");
  const std::uint64_t header_len = read_u64_le(bytes.first(8));
  if (header_len == 0 || header_len > kMaxHeaderBytes)
    throw Error(ErrorCode::header_length, source, "header length",
                std::to_string(header_len) + " is outside 1.." + std::to_string(kMaxHeaderBytes));
  if (header_len > bytes.size() - 8)
    throw Error(ErrorCode::truncated, source, "header", "header length " + std::to_string(header_len) + " exceeds the " +
                                                            std::to_string(bytes.size() - 8) + " bytes after it");
  const auto header_bytes = bytes.subspan(8, header_len);
  const auto data = bytes.subspan(8 + header_len);
  const std::string_view header_text(reinterpret_cast<const char*>(header_bytes.data()), header_bytes.size());
  if (header_text.front() != '{') throw Error(ErrorCode::header_json, source, "header", "must start with '{'");

  auto parsed = parse_json_strict(header_text);
  if (parsed.problem) throw Error(ErrorCode::header_json, source, "header", *parsed.problem);
  const json& header = parsed.value;
  if (!header.is_object()) throw Error(ErrorCode::header_json, source, "header", "must be a JSON object");
  if (header.size() > kMaxTensors + 1)
    throw Error(ErrorCode::header_json, source, "header",
                "lists " + std::to_string(header.size()) + " entries; a model has at most " + std::to_string(kMaxTensors) + " tensors");

  Contents contents;
  std::vector<Range> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw Error(ErrorCode::metadata, source, "__metadata__", "must be a JSON object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) throw Error(ErrorCode::metadata, source, "__metadata__." + key, "value must be a string");
        contents.metadata[key] = value.get<std::string>();
      }
      contents.has_metadata = true;
      continue;
    }
    std::uint64_t begin = 0, end = 0;
    contents.tensors.push_back(parse_entry(name, entry, source, data.size(), begin, end));
    contents.tensors.back().data = data.subspan(begin, end - begin);
    ranges.push_back({begin, end, contents.tensors.size() - 1});
  }
  check_coverage(std::move(ranges), contents.tensors, data.size(), source);
  return contents;
}

std::vector<std::byte> serialize(const std::vector<TensorData>& tensors, const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keep the data 8-byte aligned, as the reference writer does

  std::vector<std::byte> out(8 + text.size());
  const std::uint64_t len = text.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::byte>((len >> (8 * i)) & 0xffu);
  std::memcpy(out.data() + 8, text.data(), text.size());
  for (const auto& t : tensors) out.insert(out.end(), t.data.begin(), t.data.end());
  return out;
}

}  // namespace mlpcore::safetensors
