#pragma once
// JSON parsing that refuses what nlohmann::json would silently accept or choke on: duplicate object keys,
// NUL bytes (its lexer ends the text at the first one), nesting deep enough to exhaust the stack of
// whoever later walks or prints the value, and more values than any model needs. Time is linear in the
// text (one map look-up per key) and stops at the first problem.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace mlpcore {

// Deep enough for any header the format defines (3 levels), shallow enough for recursive code.
inline constexpr std::size_t kMaxJsonDepth = 64;
// Values (scalars, arrays, objects) in one document: a model's header needs about 8 per tensor, 65 536 for
// the most tensors a model may have. The bound stops a 16 MiB header of tiny values early, in well under
// a second, instead of building a DOM of millions of nodes.
inline constexpr std::size_t kMaxJsonValues = 1u << 17;

// Returns the parsed value, or an explanation of why the text is not acceptable JSON.
struct StrictJson {
  nlohmann::json value;
  std::optional<std::string> problem;
};
StrictJson parse_json_strict(std::string_view text);

// A value as an error message shows it: scalars as JSON, arrays and objects by kind and size only, so a
// message never serialises a large or deep user value.
std::string describe_json(const nlohmann::json& value);

}  // namespace mlpcore
