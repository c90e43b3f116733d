// RegimeAnalysis: what the regime views draw for one run under one
// ScheduleSettings - Accordion's schedule re-derived by the analysis
// module's AccordionController (never a copy of the algorithm), its cost
// against static low and static high, and the critical regimes as bands.
#ifndef ACCORDION_GUI_MODEL_REGIME_ANALYSIS_H_
#define ACCORDION_GUI_MODEL_REGIME_ANALYSIS_H_

#include <string>
#include <vector>

#include "analysis/schedule_report.h"
#include "gui/model/explorer_settings.h"
#include "gui/model/run_data.h"

namespace accordion::gui {

// Epochs first..last, inclusive.
struct Band {
  int first = 0;
  int last = 0;
  bool operator==(const Band& o) const { return first == o.first && last == o.last; }
};

// Maximal runs of true in `flags`.
std::vector<Band> BandsOf(const std::vector<bool>& flags);

struct RegimeAnalysis {
  ResolvedSchedule resolved;
  AccordionOptions options;
  bool schedulable = false;          // false for dense: there are no levels to switch
  std::string problem;               // why not, when not
  ScheduleComparison comparison;     // schedule and costs (when schedulable)
  std::vector<int> check_epochs;     // a check ran at the end of these epochs
  std::vector<int> lr_decay_epochs;  // the LR decays after these epochs
  // Per layer: whether its level changes what it sends - the two levels
  // send different floats (a batch level always does: it changes the steps,
  // not a step's floats). PowerSGD sends 1-D tensors uncompressed at both.
  std::vector<bool> level_matters;  // [layer]
  // Re-derived now: per layer, and for the model the epochs where a layer
  // whose level matters is critical - the epochs whose traffic the regimes
  // change. no_effect_bands: epochs critical only in layers whose level does
  // not matter ("critical, no effect": same floats as static high).
  std::vector<std::vector<Band>> layer_bands;  // [layer]
  std::vector<Band> model_bands;
  std::vector<Band> no_effect_bands;
  // As the run recorded them (its own settings), for the same two views.
  std::vector<std::vector<Band>> recorded_layer_bands;
  std::vector<Band> recorded_model_bands;
  std::vector<std::vector<bool>> recorded_critical;  // [epoch][layer]
  std::vector<bool> recorded_level_matters;          // [layer]; empty: every layer

  // Critical epochs for a subset of layers (any of them whose level matters
  // critical); all layers when `layers` is empty. NoEffectBandsFor: epochs
  // where only layers of the subset whose level does not matter are.
  std::vector<Band> BandsFor(const std::vector<int>& layers) const;
  std::vector<Band> NoEffectBandsFor(const std::vector<int>& layers) const;
  // The same as the run recorded them; filtered by level_matters where the
  // run switched between two levels of the scheme re-derived now.
  std::vector<Band> RecordedBandsFor(const std::vector<int>& layers) const;
  // Floats per worker over the run.
  double accordion_floats() const { return comparison.accordion_cost.total_floats; }
  double low_floats() const { return comparison.low_cost.total_floats; }
  double high_floats() const { return comparison.high_cost.total_floats; }
};

// Never throws for a valid run: bad settings (a level that is not one of the
// scheme's) leave schedulable false with the reason in problem.
RegimeAnalysis AnalyseRegimes(const RunData& run, const ScheduleSettings& settings);

// Layers whose name contains `filter` (case-insensitive); all for "".
std::vector<int> LayersMatching(const RunData& run, const std::string& filter);

// A layer's group: the name up to its first '.' ("layer1.0.conv1.weight" ->
// "layer1"), or the whole name when it has none.
std::string LayerGroup(const std::string& layer_name);

// A block of layers sharing a LayerGroup, as the views list it when grouped.
struct LayerBlock {
  std::string name;         // the LayerGroup
  std::vector<int> layers;  // its layers, in the trace's order
};
// The blocks of `layers` (all layers when empty), in the order of each
// block's first layer.
std::vector<LayerBlock> LayerBlocks(const RunData& run, const std::vector<int>& layers = {});

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_REGIME_ANALYSIS_H_
