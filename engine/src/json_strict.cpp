#include "engine/src/json_strict.h"

#include <set>
#include <vector>

namespace mlpcore {

StrictJson parse_json_strict(std::string_view text) {
  std::vector<std::set<std::string>> open_objects;
  std::optional<std::string> duplicate;
  auto track_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) open_objects.emplace_back();
    if (event == E::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == E::key && !open_objects.empty() && !duplicate) {
      const std::string key = parsed.get<std::string>();
      if (!open_objects.back().insert(key).second) duplicate = key;
    }
    return true;
  };
  StrictJson result;
  try {
    result.value = nlohmann::json::parse(text.begin(), text.end(), track_keys);
  } catch (const nlohmann::json::exception& e) {
    result.problem = std::string("invalid JSON (") + e.what() + ")";
    return result;
  }
  if (duplicate) result.problem = "duplicate key '" + *duplicate + "'";
  return result;
}

}  // namespace mlpcore
