#include "gui/model/regime_analysis.h"

#include <algorithm>
#include <cctype>

#include "analysis/communication_accounting.h"
#include "common/errors.h"
#include "traces/scheme_description.h"

namespace accordion::gui {

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Per epoch: whether any of `layers` (all when empty) is flagged.
std::vector<bool> AnyOf(const std::vector<std::vector<bool>>& flags, const std::vector<int>& layers) {
  std::vector<bool> out(flags.size(), false);
  for (size_t e = 0; e < flags.size(); ++e) {
    if (layers.empty()) {
      out[e] = std::any_of(flags[e].begin(), flags[e].end(), [](bool b) { return b; });
    } else {
      for (int l : layers) {
        if (l >= 0 && l < static_cast<int>(flags[e].size()) && flags[e][l]) out[e] = true;
      }
    }
  }
  return out;
}

std::vector<bool> LevelMatters(const TraceView& view, const CommunicationScheme& scheme, double low, double high) {
  std::vector<bool> out;
  const bool batch = DescriptionOf(scheme.scheme()).level_kind == LevelKind::kGlobalBatch;
  for (const LayerInfo& layer : view.layers) {
    out.push_back(batch || FloatsPerStep(scheme, layer.shape, low) != FloatsPerStep(scheme, layer.shape, high));
  }
  return out;
}

// [epoch][layer]: `levels` is not `high` where `matters` says the level
// changes what the layer sends.
std::vector<std::vector<bool>> LowLevel(const std::vector<std::vector<double>>& levels, double high,
                                        const std::vector<bool>& matters) {
  std::vector<std::vector<bool>> out(levels.size());
  for (size_t e = 0; e < levels.size(); ++e) {
    out[e].assign(levels[e].size(), false);
    for (size_t l = 0; l < levels[e].size() && l < matters.size(); ++l) {
      out[e][l] = matters[l] && levels[e][l] != high;
    }
  }
  return out;
}

// The recorded regimes: a layer's own flag, or the whole model's where the
// run decided for the model at once (batch size).
std::vector<std::vector<bool>> RecordedFlags(const TraceView& view) {
  std::vector<std::vector<bool>> flags = view.critical;
  for (int e = 0; e < view.num_epochs(); ++e) {
    if (!view.epochs[e].critical) continue;
    std::fill(flags[e].begin(), flags[e].end(), true);
  }
  return flags;
}

}  // namespace

std::vector<Band> BandsOf(const std::vector<bool>& flags) {
  std::vector<Band> bands;
  const int n = static_cast<int>(flags.size());
  for (int e = 0; e < n; ++e) {
    if (!flags[e]) continue;
    if (!bands.empty() && bands.back().last == e - 1) {
      bands.back().last = e;
    } else {
      bands.push_back({e, e});
    }
  }
  return bands;
}

const char* RegimeTermsExplained() {
  return "Critical: Accordion's check found a layer's gradient norm changing by η or more. "
         "Low level (traffic changes): an epoch in which a layer whose two levels send differently runs the low "
         "level, so Accordion sends other than static high - the Level map's low cells, the What-if's shaded "
         "epochs and the Sweep's count. Critical, no effect: a critical epoch that changes no traffic - only "
         "layers both levels send alike (PowerSGD's 1-D tensors) are critical, or the batch, which only grows, "
         "is already large.";
}

std::vector<Band> RegimeAnalysis::BandsFor(const std::vector<int>& layers) const {
  if (!schedulable) return {};
  return BandsOf(AnyOf(low_level, layers));
}

std::vector<Band> RegimeAnalysis::NoEffectBandsFor(const std::vector<int>& layers) const {
  if (!schedulable) return {};
  std::vector<bool> any = AnyOf(comparison.accordion.critical, layers);
  const std::vector<bool> low = AnyOf(low_level, layers);
  for (size_t e = 0; e < any.size(); ++e) any[e] = any[e] && !low[e];
  return BandsOf(any);
}

std::vector<Band> RegimeAnalysis::RecordedBandsFor(const std::vector<int>& layers) const {
  return BandsOf(AnyOf(recorded_low_level.empty() ? recorded_critical : recorded_low_level, layers));
}

RegimeAnalysis AnalyseRegimes(const RunData& run, const ScheduleSettings& settings) {
  const TraceView& view = run.view();
  RegimeAnalysis a;
  a.resolved = Resolve(view.run, settings);
  a.options = AccordionOptions()
                  .eta(settings.eta)
                  .interval(settings.interval)
                  .level_low(a.resolved.level_low)
                  .level_high(a.resolved.level_high);
  a.recorded_critical = RecordedFlags(view);
  a.recorded_model_bands = a.RecordedBandsFor({});
  for (int e = 0; e + 1 < view.num_epochs(); ++e) {
    if (IsLrDecay(view.epochs[e].lr, view.epochs[e + 1].lr)) a.lr_decay_epochs.push_back(e);
  }
  if (!DescriptionOf(a.resolved.scheme).has_levels()) {
    a.problem = std::string(ToString(a.resolved.scheme)) + " communication has no levels to switch: choose " +
                JoinSchemeTitles(SchemeSet::kWithLevels, ", ", " or ") + " to explore";
    return a;
  }
  try {
    a.comparison = CompareSchedules(view, a.resolved.scheme, a.options);
  } catch (const InputError& e) {
    a.problem = e.what();
    return a;
  }
  a.schedulable = true;
  const Schedule& s = a.comparison.accordion;
  for (int e = 0; e < s.num_epochs(); ++e) {
    if (s.checked[e]) a.check_epochs.push_back(e);
  }
  a.level_matters = LevelMatters(view, s.scheme, s.level_low, s.level_high);
  a.low_level = LowLevel(s.levels, s.level_high, a.level_matters);
  a.model_bands = a.BandsFor({});
  a.no_effect_bands = a.NoEffectBandsFor({});
  // Where the run switched between two levels of this scheme, its traffic
  // changed where it ran the low one.
  if (s.scheme.scheme() == view.run.scheme && view.run.level_low != view.run.level_high) {
    a.recorded_low_level = LowLevel(view.levels, view.run.level_high,
                                    LevelMatters(view, s.scheme, view.run.level_low, view.run.level_high));
    a.recorded_model_bands = a.RecordedBandsFor({});
  }
  return a;
}

std::vector<int> LayersMatching(const RunData& run, const std::string& filter) {
  const std::string needle = Lower(filter);
  std::vector<int> out;
  const std::vector<LayerInfo>& layers = run.view().layers;
  for (int l = 0; l < static_cast<int>(layers.size()); ++l) {
    if (needle.empty() || Lower(layers[l].name).find(needle) != std::string::npos) out.push_back(l);
  }
  return out;
}

std::string LayerGroup(const std::string& layer_name) {
  const size_t dot = layer_name.find('.');
  return dot == std::string::npos ? layer_name : layer_name.substr(0, dot);
}

std::vector<LayerBlock> LayerBlocks(const RunData& run, const std::vector<int>& layers) {
  const std::vector<LayerInfo>& infos = run.view().layers;
  std::vector<int> wanted = layers;
  if (wanted.empty()) {
    for (int l = 0; l < static_cast<int>(infos.size()); ++l) wanted.push_back(l);
  }
  std::vector<LayerBlock> blocks;
  for (int l : wanted) {
    if (l < 0 || l >= static_cast<int>(infos.size())) continue;
    const std::string group = LayerGroup(infos[static_cast<size_t>(l)].name);
    auto it = std::find_if(blocks.begin(), blocks.end(), [&](const LayerBlock& b) { return b.name == group; });
    if (it == blocks.end()) {
      blocks.push_back({group, {l}});
    } else {
      it->layers.push_back(l);
    }
  }
  return blocks;
}

}  // namespace accordion::gui
