#pragma once
// JSON parsing that refuses what nlohmann::json would silently accept: duplicate object keys.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace mlpcore {

// Returns the parsed value, or an explanation of why the text is not acceptable JSON.
struct StrictJson {
  nlohmann::json value;
  std::optional<std::string> problem;
};
StrictJson parse_json_strict(std::string_view text);

}  // namespace mlpcore
