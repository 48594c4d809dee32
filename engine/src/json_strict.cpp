#include "engine/src/json_strict.h"

#include <vector>

namespace mlpcore {
namespace {

using nlohmann::json;

// Builds the value through nlohmann's SAX interface, which parses without recursion. The DOM parser with a
// callback was worse than quadratic on headers of many small objects; this builder does constant work per
// event plus one map look-up per key, and stops at the first problem.
class StrictBuilder : public nlohmann::json_sax<json> {
 public:
  json root;
  std::optional<std::string> problem;

  bool null() override { return put(json(nullptr)); }
  bool boolean(bool v) override { return put(json(v)); }
  bool number_integer(number_integer_t v) override { return put(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return put(json(v)); }
  bool string(string_t& v) override { return put(json(std::move(v))); }
  bool binary(binary_t&) override { return fail("binary values are not JSON"); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    json& object = *stack_.back();
    if (object.contains(k)) return fail("duplicate key '" + k + "'");
    pending_ = &object[std::move(k)];
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return fail(std::string("invalid JSON (") + e.what() + ")");
  }

 private:
  bool fail(std::string why) {
    if (!problem) problem = std::move(why);
    return false;
  }
  // Places a value where the parser is: the root, the object key just read, or the end of an array.
  json* place(json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    if (pending_) {
      json* slot = pending_;
      pending_ = nullptr;
      *slot = std::move(v);
      return slot;
    }
    stack_.back()->push_back(std::move(v));
    return &stack_.back()->back();
  }
  bool counted() {
    if (++values_ <= kMaxJsonValues) return true;
    return fail("holds more than " + std::to_string(kMaxJsonValues) + " JSON values");
  }
  bool put(json&& v) {
    if (!counted()) return false;
    place(std::move(v));
    return true;
  }
  bool open(json&& container) {
    if (!counted()) return false;
    if (stack_.size() >= kMaxJsonDepth)
      return fail("nested deeper than " + std::to_string(kMaxJsonDepth) + " arrays or objects");
    stack_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::vector<json*> stack_;
  json* pending_ = nullptr;
  std::size_t values_ = 0;
};

}  // namespace

StrictJson parse_json_strict(std::string_view text) {
  StrictJson result;
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    result.problem = "NUL byte at offset " + std::to_string(nul);
    return result;
  }
  StrictBuilder builder;
  const bool ok = json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, true);
  if (!ok || builder.problem) {
    result.problem = builder.problem.value_or("invalid JSON");
    return result;
  }
  result.value = std::move(builder.root);
  return result;
}

std::string describe_json(const json& value) {
  if (value.is_array()) return "an array of " + std::to_string(value.size()) + " values";
  if (value.is_object()) return "an object of " + std::to_string(value.size()) + " keys";
  return value.dump();
}

}  // namespace mlpcore
