// A corpus of malformed model files, each with the error it must produce; plus every truncation and
// random byte corruption of a valid file, which must fail cleanly (mlpcore::Error) or load.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "mlpcore/error.h"
#include "mlpcore/model.h"
#include "tests/test_util.h"

namespace mlpcore {
namespace {

using Json = nlohmann::ordered_json;
using Bytes = std::vector<std::byte>;

void append(Bytes& out, const void* p, std::size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  out.insert(out.end(), b, b + n);
}

Bytes container(std::uint64_t header_len, const std::string& header, const Bytes& data) {
  Bytes out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((header_len >> (8 * i)) & 0xffu));
  append(out, header.data(), header.size());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}
Bytes container(const std::string& header, const Bytes& data) { return container(header.size(), header, data); }

// A valid two-layer model: 3 -> 4 (relu) -> 2, weights F32/F16, biases F32/BF16.
struct Valid {
  Json header;
  Bytes data;

  Valid() {
    auto add = [&](const std::string& name, const std::string& dtype, std::vector<std::uint64_t> shape, std::size_t elem) {
      std::size_t n = elem;
      for (auto d : shape) n *= d;
      header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {data.size(), data.size() + n}}};
      for (std::size_t i = 0; i < n / elem; ++i) {
        if (elem == 4) {
          const float v = 0.1f * static_cast<float>(i % 7) - 0.3f;
          append(data, &v, 4);
        } else {
          const std::uint16_t v = dtype == "F16" ? 0x3c00 : 0x3f80;  // 1.0
          append(data, &v, 2);
        }
      }
    };
    header["__metadata__"] = {{"mlpcore", R"({"version": 1, "activations": ["relu", "none"]})"}};
    add("layers.0.weight", "F32", {4, 3}, 4);
    add("layers.0.bias", "F32", {4}, 4);
    add("layers.1.weight", "F16", {2, 4}, 2);
    add("layers.1.bias", "BF16", {2}, 2);
  }
  Bytes bytes() const { return container(header.dump(), data); }
};

// Removes data bytes [begin, end) and moves the tensors stored after them down.
void drop(Valid& v, std::uint64_t begin, std::uint64_t end) {
  v.data.erase(v.data.begin() + static_cast<long>(begin), v.data.begin() + static_cast<long>(end));
  for (auto& [name, entry] : v.header.items())
    if (name != "__metadata__" && entry["data_offsets"][0].get<std::uint64_t>() >= end)
      for (auto& o : entry["data_offsets"]) o = o.get<std::uint64_t>() - (end - begin);
}

Bytes edit(const std::function<void(Json&)>& change) {
  Valid v;
  change(v.header);
  return v.bytes();
}
Bytes graph(const std::string& mlpcore_json) {
  return edit([&](Json& h) { h["__metadata__"]["mlpcore"] = mlpcore_json; });
}
Bytes activations(const std::string& list) { return graph(R"({"version": 1, "activations": )" + list + "}"); }
Bytes poke(std::size_t data_offset, std::vector<std::uint8_t> value) {
  Valid v;
  for (std::size_t i = 0; i < value.size(); ++i) v.data[data_offset + i] = std::byte{value[i]};
  return v.bytes();
}

// A file whose one tensor entry is complete but for `key`, whose value is an array nested 60 000 deep: an
// entry with a key missing would be refused before the nested value is looked at. (Checked with
// fuzz_model's seeds against the loader before the SAX parser: these overflowed its stack.)
Bytes with_nested_value(const std::string& key) {
  const std::string value = std::string(60000, '[') + "4" + std::string(60000, ']');
  const std::string shape = key == "\"shape\": " ? value : "[1]";
  const std::string offsets = key == "\"data_offsets\": " ? value : "[0, 4]";
  return container("{\"layers.0.bias\": {\"dtype\": \"F32\", \"shape\": " + shape + ", \"data_offsets\": " + offsets + "}}", Bytes(4));
}

// A header of `count` tensors whose entries are empty objects: 2 MB at 160 000, which once took minutes.
Bytes many_small_objects(std::size_t count) {
  std::string h = "{";
  for (std::size_t i = 0; i < count; ++i) h += (i ? ",\"t" : "\"t") + std::to_string(i) + "\":{}";
  return container(h + "}", {});
}

struct Case {
  std::string name;
  std::function<Bytes()> make;
  ErrorCode code;
  std::string needle;  // must appear in the message
};

std::vector<Case> corpus() {
  const std::string nested = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  return {
      {"empty_file", [] { return Bytes{}; }, ErrorCode::truncated, "fewer than the 8-byte header length"},
      {"five_bytes", [] { return Bytes(5); }, ErrorCode::truncated, "header length"},
      {"header_length_zero", [] { return container(0, "", {}); }, ErrorCode::header_length, "outside 1.."},
      {"header_length_huge", [] { return container(1ull << 40, "{}", {}); }, ErrorCode::header_length, "1099511627776"},
      {"header_length_all_ones", [] { return container(~0ull, "{}", {}); }, ErrorCode::header_length, "outside"},
      {"header_length_over_cap", [] { return container(kMaxHeaderBytes + 1, "{}", {}); }, ErrorCode::header_length, "outside"},
      {"header_longer_than_file", [] { return container(100, "{}", {}); }, ErrorCode::truncated, "exceeds"},
      {"header_not_object_start", [] { return container("[1, 2]", {}); }, ErrorCode::header_json, "must start with '{'"},
      {"header_bad_json", [] { return container("{\"a\": ", {}); }, ErrorCode::header_json, "invalid JSON"},
      {"header_trailing_garbage", [] { return container("{} xyz", {}); }, ErrorCode::header_json, "invalid JSON"},
      {"header_invalid_utf8", [] { return container("{\"\xff\xfe\": 1}", {}); }, ErrorCode::header_json, "invalid JSON"},
      {"header_deeply_nested", [nested] { return container(nested, {}); }, ErrorCode::header_json, "nested deeper than 64"},
      // Found by hand: 60 000 '[' in a shape, data_offsets or the graph's version overflowed the stack when the
      // error message printed the value.
      {"shape_nested_60000", [] { return with_nested_value("\"shape\": "); }, ErrorCode::header_json, "nested deeper than 64"},
      {"offsets_nested_60000", [] { return with_nested_value("\"data_offsets\": "); }, ErrorCode::header_json, "nested deeper than 64"},
      {"version_nested_60000",
       [] { return graph("{\"version\": " + std::string(60000, '[') + std::string(60000, ']') + ", \"activations\": [\"relu\", \"none\"]}"); },
       ErrorCode::metadata, "nested deeper than 64"},
      {"version_nested_shallow", [] { return graph(R"({"version": [[[1]]], "activations": ["relu", "none"]})"); }, ErrorCode::metadata,
       "is an array of 1 values"},
      {"header_nul_byte",
       [] {
         Valid v;
         std::string h = v.header.dump();
         h.insert(h.size() - 1, std::string("\0,\"extra\": 1", 12));
         return container(h, v.data);
       },
       ErrorCode::header_json, "NUL byte at offset"},
      {"tensor_name_control_characters",
       [] { return edit([](Json& h) { h["evil\x1b[2J\nname"] = h["layers.0.bias"]; h.erase("layers.0.bias"); }); },
       ErrorCode::unexpected_tensor, "tensor 'evil\\x1b[2J\\x0aname'"},
      {"header_160000_objects", [] { return many_small_objects(160000); }, ErrorCode::header_json, "holds more than 131072 JSON values"},
      {"header_8194_entries", [] { return many_small_objects(kMaxTensors + 2); }, ErrorCode::header_json, "lists 8194 entries; a model has at most 8192 tensors"},
      {"header_duplicate_tensor",
       [] {
         Valid v;
         std::string h = v.header.dump();
         h.insert(h.size() - 1, R"(,"layers.0.bias":{"dtype":"F32","shape":[4],"data_offsets":[48,64]})");
         return container(h, v.data);
       },
       ErrorCode::header_json, "duplicate key 'layers.0.bias'"},
      {"entry_not_object", [] { return edit([](Json& h) { h["layers.0.bias"] = 5; }); }, ErrorCode::tensor_entry, "tensor 'layers.0.bias': entry must be"},
      {"entry_missing_dtype", [] { return edit([](Json& h) { h["layers.0.bias"].erase("dtype"); }); }, ErrorCode::tensor_entry, "missing key 'dtype'"},
      {"entry_missing_shape", [] { return edit([](Json& h) { h["layers.0.bias"].erase("shape"); }); }, ErrorCode::tensor_entry, "missing key 'shape'"},
      {"entry_missing_offsets", [] { return edit([](Json& h) { h["layers.0.bias"].erase("data_offsets"); }); }, ErrorCode::tensor_entry, "missing key 'data_offsets'"},
      {"entry_unknown_key", [] { return edit([](Json& h) { h["layers.0.bias"]["stride"] = 1; }); }, ErrorCode::tensor_entry, "unknown key 'stride'"},
      {"dtype_not_string", [] { return edit([](Json& h) { h["layers.0.bias"]["dtype"] = 4; }); }, ErrorCode::tensor_entry, "dtype: must be a string"},
      {"dtype_unknown", [] { return edit([](Json& h) { h["layers.0.bias"]["dtype"] = "F31"; }); }, ErrorCode::dtype, "unknown dtype 'F31'"},
      {"dtype_unsupported_f64", [] { return edit([](Json& h) { h["layers.0.bias"]["dtype"] = "F64"; h["layers.0.bias"]["shape"] = {2}; }); }, ErrorCode::dtype, "F64 is not supported"},
      {"dtype_unsupported_i32", [] { return edit([](Json& h) { h["layers.0.bias"]["dtype"] = "I32"; }); }, ErrorCode::dtype, "I32 is not supported"},
      {"shape_negative", [] { return edit([](Json& h) { h["layers.0.bias"]["shape"] = {-4}; }); }, ErrorCode::tensor_entry, "non-negative integers"},
      {"shape_float", [] { return edit([](Json& h) { h["layers.0.bias"]["shape"] = {4.0}; }); }, ErrorCode::tensor_entry, "non-negative integers"},
      {"shape_not_array", [] { return edit([](Json& h) { h["layers.0.bias"]["shape"] = "4"; }); }, ErrorCode::tensor_entry, "shape: must be an array"},
      {"shape_rank_9", [] { return edit([](Json& h) { h["layers.0.bias"]["shape"] = std::vector<int>(9, 1); }); }, ErrorCode::tensor_entry, "at most 8"},
      {"shape_overflows", [] { return edit([](Json& h) { h["layers.0.bias"]["shape"] = {1ull << 40, 1ull << 40}; }); }, ErrorCode::shape, "too large"},
      {"offsets_three_values", [] { return edit([](Json& h) { h["layers.0.bias"]["data_offsets"] = {48, 64, 80}; }); }, ErrorCode::tensor_entry, "at most 2"},
      {"offsets_one_value", [] { return edit([](Json& h) { h["layers.0.bias"]["data_offsets"] = {48}; }); }, ErrorCode::tensor_entry, "exactly [begin, end]"},
      {"offsets_reversed", [] { return edit([](Json& h) { h["layers.0.bias"]["data_offsets"] = {64, 48}; }); }, ErrorCode::offsets, "is after end"},
      {"offsets_past_data", [] { return edit([](Json& h) { h["layers.1.bias"]["data_offsets"] = {80, 1000}; }); }, ErrorCode::offsets, "past the"},
      {"offsets_huge", [] { return edit([](Json& h) { h["layers.1.bias"]["data_offsets"] = {~0ull - 1, ~0ull}; }); }, ErrorCode::offsets, "past the"},
      {"offsets_wrong_size", [] { return edit([](Json& h) { h["layers.0.bias"]["data_offsets"] = {48, 60}; }); }, ErrorCode::offsets, "shape × dtype needs 16"},
      {"offsets_overlap",
       [] { return edit([](Json& h) { h["layers.0.bias"]["data_offsets"] = {40, 56}; h["layers.1.weight"]["data_offsets"] = {56, 72}; h["layers.1.bias"]["data_offsets"] = {76, 80}; }); },
       ErrorCode::offsets, "overlaps tensor 'layers.0.weight'"},
      {"offsets_hole",
       [] {
         Valid v;
         v.data.insert(v.data.begin() + 48, 8, std::byte{0});
         for (const char* t : {"layers.0.bias", "layers.1.weight", "layers.1.bias"})
           for (auto& o : v.header[t]["data_offsets"]) o = o.get<std::uint64_t>() + 8;
         return v.bytes();
       },
       ErrorCode::offsets, "bytes 48..56 before it belong to no tensor"},
      {"trailing_bytes", [] { Valid v; v.data.resize(v.data.size() + 3); return v.bytes(); }, ErrorCode::offsets, "3 bytes after the last tensor"},
      {"file_cut_short", [] { Bytes b = Valid().bytes(); b.pop_back(); return b; }, ErrorCode::offsets, "past the"},
      {"metadata_not_object", [] { return edit([](Json& h) { h["__metadata__"] = "x"; }); }, ErrorCode::metadata, "__metadata__: must be a JSON object"},
      {"metadata_value_not_string", [] { return edit([](Json& h) { h["__metadata__"]["mlpcore"] = Json::object(); }); }, ErrorCode::metadata, "__metadata__.mlpcore: value must be a string"},
      {"metadata_absent", [] { return edit([](Json& h) { h.erase("__metadata__"); }); }, ErrorCode::metadata, "not an mlpcore model"},
      {"graph_bad_json", [] { return graph("{version: 1}"); }, ErrorCode::metadata, "invalid JSON"},
      {"graph_not_object", [] { return graph("[1]"); }, ErrorCode::metadata, "must be a JSON object"},
      {"graph_duplicate_key", [] { return graph(R"({"version": 1, "version": 1, "activations": ["relu", "none"]})"); }, ErrorCode::metadata, "duplicate key 'version'"},
      {"graph_unknown_key", [] { return graph(R"({"version": 1, "activations": ["relu", "none"], "dropout": 0.5})"); }, ErrorCode::metadata, "mlpcore.dropout: unknown key"},
      {"version_missing", [] { return graph(R"({"activations": ["relu", "none"]})"); }, ErrorCode::metadata, "version: missing"},
      {"version_2", [] { return graph(R"({"version": 2, "activations": ["relu", "none"]})"); }, ErrorCode::metadata, "reads version 1"},
      {"version_string", [] { return graph(R"({"version": "1", "activations": ["relu", "none"]})"); }, ErrorCode::metadata, "reads version 1"},
      {"activations_missing", [] { return graph(R"({"version": 1})"); }, ErrorCode::metadata, "activations: missing"},
      {"activations_empty", [] { return activations("[]"); }, ErrorCode::metadata, "one per layer"},
      {"activations_not_array", [] { return activations(R"("relu")"); }, ErrorCode::metadata, "one per layer"},
      {"activation_unknown", [] { return activations(R"(["gelu", "none"])"); }, ErrorCode::activation, "activations[0]: unknown activation 'gelu'"},
      {"activation_number", [] { return activations(R"([1, "none"])"); }, ErrorCode::activation, "must be a name"},
      {"activation_object_without_name", [] { return activations(R"([{"alpha": 0.1}, "none"])"); }, ErrorCode::activation, "needs a \"name\""},
      {"activation_wrong_parameter", [] { return activations(R"([{"name": "leaky_relu", "beta": 0.1}, "none"])"); }, ErrorCode::activation, "beta: is not a parameter of leaky_relu"},
      {"activation_parameter_on_relu", [] { return activations(R"([{"name": "relu", "alpha": 0.1}, "none"])"); }, ErrorCode::activation, "is not a parameter of relu"},
      {"softplus_beta_zero", [] { return activations(R"([{"name": "softplus", "beta": 0}, "none"])"); }, ErrorCode::activation, "softplus beta 0 is outside the supported range [0.001, 10000]"},
      {"softplus_beta_tiny", [] { return activations(R"([{"name": "softplus", "beta": 1e-40}, "none"])"); }, ErrorCode::activation, "beta: softplus beta 1e-40 is outside"},
      {"softplus_beta_huge", [] { return activations(R"([{"name": "softplus", "beta": 1e5}, "none"])"); }, ErrorCode::activation, "softplus beta 100000 is outside"},
      {"leaky_alpha_large", [] { return activations(R"([{"name": "leaky_relu", "alpha": -2000}, "none"])"); }, ErrorCode::activation, "leaky_relu alpha -2000 is outside"},
      {"softplus_beta_string", [] { return activations(R"([{"name": "softplus", "beta": "2"}, "none"])"); }, ErrorCode::activation, "must be a finite number"},
      {"leaky_alpha_huge", [] { return activations(R"([{"name": "leaky_relu", "alpha": 1e300}, "none"])"); }, ErrorCode::activation, "leaky_relu alpha 1e+300 is outside the supported range"},
      {"too_few_activations", [] { return activations(R"(["relu"])"); }, ErrorCode::unexpected_tensor, "lists 1 activations"},
      {"too_many_activations", [] { return activations(R"(["relu", "none", "none"])"); }, ErrorCode::missing_tensor, "layers.2.weight': missing"},
      {"unexpected_tensor", [] { return edit([](Json& h) { h["extra"] = {{"dtype", "F32"}, {"shape", {0}}, {"data_offsets", {84, 84}}}; }); },
       ErrorCode::unexpected_tensor, "tensor 'extra': is not part of the format"},
      {"index_with_leading_zero", [] { return edit([](Json& h) { h["layers.01.bias"] = h["layers.0.bias"]; h.erase("layers.0.bias"); }); }, ErrorCode::unexpected_tensor, "layers.01.bias"},
      {"bias_without_weight", [] { Valid v; v.header.erase("layers.1.weight"); drop(v, 64, 80); return v.bytes(); },
       ErrorCode::missing_tensor, "tensor 'layers.1.weight': missing"},
      {"weight_rank_1", [] { return edit([](Json& h) { h["layers.0.weight"]["shape"] = {12}; }); }, ErrorCode::shape, "must have rank 2 [out, in]"},
      {"weight_zero_dim", [] { Valid v; drop(v, 64, 80); v.header["layers.1.weight"]["shape"] = {0, 4}; v.header["layers.1.weight"]["data_offsets"] = {64, 64}; return v.bytes(); },
       ErrorCode::shape, "layers.1.weight': shape [0, 4] has a dimension outside 1.."},
      {"bias_zero_length", [] { Valid v; drop(v, 80, 84); v.header["layers.1.bias"]["shape"] = {0}; v.header["layers.1.bias"]["data_offsets"] = {80, 80}; return v.bytes(); },
       ErrorCode::shape, "layers.1.bias': shape [0] has a dimension outside 1.."},
      {"bias_wrong_length", [] { return edit([](Json& h) { h["layers.1.bias"]["dtype"] = "F32"; h["layers.1.bias"]["shape"] = {1}; }); }, ErrorCode::shape, "does not match the weight's 2 outputs"},
      {"bias_rank_2", [] { return edit([](Json& h) { h["layers.0.bias"]["shape"] = {2, 2}; }); }, ErrorCode::shape, "must have rank 1 [out]"},
      {"layer_chain_mismatch", [] { return edit([](Json& h) { h["layers.1.weight"]["shape"] = {4, 2}; }); }, ErrorCode::layer_chain, "takes 2 inputs but layer 0 produces 4"},
      {"nan_in_f32_weight", [] { return poke(4 * 5, {0x00, 0x00, 0xc0, 0x7f}); }, ErrorCode::non_finite, "layers.0.weight': element 5"},
      {"inf_in_f32_bias", [] { return poke(48, {0x00, 0x00, 0x80, 0xff}); }, ErrorCode::non_finite, "layers.0.bias': element 0"},
      {"inf_in_f16_weight", [] { return poke(64 + 2 * 3, {0x00, 0x7c}); }, ErrorCode::non_finite, "layers.1.weight': element 3"},
      {"nan_in_bf16_bias", [] { return poke(80 + 2, {0xc0, 0x7f}); }, ErrorCode::non_finite, "layers.1.bias': element 1"},
  };
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class MalformedModel : public ::testing::TestWithParam<Case> {};

TEST_P(MalformedModel, FailsWithItsErrorNamingTheFile) {
  const Case& c = GetParam();
  test::TempDir dir;
  const auto path = dir / (c.name + ".safetensors");
  const Bytes bytes = c.make();
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    load_model(path);
    FAIL() << c.name << " loaded";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), c.code) << to_string(e.code()) << ": " << message;
    EXPECT_EQ(message.rfind(path.string(), 0), 0u) << message;
    EXPECT_NE(message.find(c.needle), std::string::npos) << "expected '" << c.needle << "' in: " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, MalformedModel, ::testing::ValuesIn(corpus()),
                         [](const auto& info) { return info.param.name; });

TEST(MalformedModelCorpus, HasAtLeastFortyCases) { EXPECT_GE(corpus().size(), 40u); }

TEST(MalformedModelCorpus, TheBaseFileIsValid) {
  const Model m = parse_model(Valid().bytes(), "base");
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[1].weight, std::vector<float>(8, 1.0f));
  EXPECT_EQ(m.layers[1].bias, std::vector<float>(2, 1.0f));
}

TEST(MalformedModelCorpus, EveryTruncationFailsCleanly) {
  const Bytes full = Valid().bytes();
  for (std::size_t n = 0; n < full.size(); ++n)
    EXPECT_THROW(parse_model(std::span(full).first(n), "cut"), Error) << "prefix of " << n << " bytes";
}

TEST(MalformedModelCorpus, RandomCorruptionEitherLoadsOrFailsCleanly) {
  const Bytes full = Valid().bytes();
  std::mt19937 rng(11);
  int failures = 0;
  for (int i = 0; i < 3000; ++i) {
    Bytes b = full;
    for (int k = 0; k < 1 + i % 3; ++k) b[rng() % b.size()] = static_cast<std::byte>(rng());
    try {
      parse_model(b, "fuzz");
    } catch (const Error&) {
      ++failures;
    }
  }
  EXPECT_GT(failures, 0);
}

// The header cap is 16 MiB: a header that size, of small objects (most work per byte for the JSON parser),
// in the tensor list or inside the metadata, is rejected with a short message. (CTest's timeout bounds it.)
TEST(MalformedModelCorpus, HeadersAtTheSizeCapAreRejectedWithShortMessages) {
  std::string inside_metadata = "{\"__metadata__\": {";
  for (std::size_t i = 0; inside_metadata.size() < kMaxHeaderBytes - 64; ++i)
    inside_metadata += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":{\"a\":[]}";
  inside_metadata += "}}";
  std::string tensors = "{";
  for (std::size_t i = 0; tensors.size() < kMaxHeaderBytes - 64; ++i) tensors += (i ? ",\"t" : "\"t") + std::to_string(i) + "\":{}";
  tensors += "}";
  for (const auto& header : {inside_metadata, tensors}) {
    ASSERT_LE(header.size(), kMaxHeaderBytes);
    try {
      parse_model(container(header, {}), "big");
      FAIL() << "loaded";
    } catch (const Error& e) {
      EXPECT_LT(std::string(e.what()).size(), 300u) << e.what();
    }
  }
}

TEST(MalformedModelCorpus, DirectoriesAndMissingFilesAreIoErrors) {
  test::TempDir dir;
  for (const auto& path : {dir.path(), dir / "absent.safetensors"}) {
    try {
      load_model(path);
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::io) << e.what();
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace mlpcore
