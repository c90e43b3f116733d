#include "gui/model/run_comparison.h"

#include <algorithm>
#include <functional>
#include <map>

#include "analysis/results_table.h"

namespace accordion::gui {

namespace {

// The distinct values of `key` over `runs`, in the order they first appear.
std::vector<std::string> Distinct(const std::vector<std::shared_ptr<const RunData>>& runs,
                                  const std::function<std::string(const RunSummary&)>& key) {
  std::vector<std::string> values;
  for (const auto& run : runs) {
    if (!run) continue;
    const std::string v = key(run->summary);
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  return values;
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator, const std::string& last) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? last : separator;
    out += parts[i];
  }
  return out;
}

}  // namespace

std::string ComparisonCaveat(const std::vector<std::shared_ptr<const RunData>>& runs) {
  // Workers matter beside model and dataset: the time to train, the global
  // batch and (TopK's all-gather) the floats each worker sends follow them.
  struct Field {
    const char* name;
    std::function<std::string(const RunSummary&)> key;
  };
  const Field fields[] = {
      {"model", [](const RunSummary& s) { return s.model; }},
      {"dataset", [](const RunSummary& s) { return s.dataset; }},
      {"workers", [](const RunSummary& s) { return std::to_string(s.workers); }},
  };
  std::vector<std::string> differences;
  for (const Field& field : fields) {
    const std::vector<std::string> values = Distinct(runs, field.key);
    if (values.size() > 1) differences.push_back(std::string(field.name) + " (" + Join(values, ", ", ", ") + ")");
  }
  if (differences.empty()) return {};
  return "Not like for like: these runs differ in " + Join(differences, ", ", " and ") + ".";
}

std::vector<int> RunColours(const std::vector<std::shared_ptr<const RunData>>& runs) {
  std::map<SettingKey, int> of_setting;
  std::vector<int> colours;
  colours.reserve(runs.size());
  for (const auto& run : runs) {
    if (!run) {
      colours.push_back(-1);
      continue;
    }
    colours.push_back(of_setting.emplace(SettingKeyOf(run->view()), static_cast<int>(of_setting.size())).first->second);
  }
  return colours;
}

}  // namespace accordion::gui
