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

// The explorer's one vocabulary for regimes, in every tab and the report:
// - critical: Accordion's check found a layer's gradient norm changing by η
//   or more (the controller's flag);
// - low level (traffic changes): an epoch in which a layer whose two levels
//   send differently runs the low level, so Accordion sends other than
//   static high - the Level map's low cells, the What-if's shaded epochs,
//   the Sweep's count;
// - critical, no effect: a critical epoch that changes no traffic (only
//   layers both levels send alike are critical, or the batch, which only
//   grows, is already large).
inline constexpr char kLowLevelTerm[] = "low level: traffic changes";
inline constexpr char kNoEffectTerm[] = "critical, no effect";
// The three terms in a sentence each, for captions and tooltips.
const char* RegimeTermsExplained();

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
  // Re-derived now, [epoch][layer]: the layer runs the low level and its
  // level matters (kLowLevelTerm).
  std::vector<std::vector<bool>> low_level;
  // For the model: the low-level epochs (model_bands) and the critical
  // epochs that change no traffic (no_effect_bands).
  std::vector<Band> model_bands;
  std::vector<Band> no_effect_bands;
  // As the run recorded them (its own settings), for the same views: the
  // epochs it ran the low level where it switched between two levels of
  // the scheme re-derived now, else the epochs it flagged critical.
  std::vector<Band> recorded_model_bands;
  std::vector<std::vector<bool>> recorded_critical;   // [epoch][layer]
  std::vector<std::vector<bool>> recorded_low_level;  // [epoch][layer]; empty: use recorded_critical

  // Low-level epochs for a subset of layers (any of them at the low level
  // where it matters); all layers when `layers` is empty. NoEffectBandsFor:
  // epochs where a layer of the subset is critical but none is at a low
  // level that matters.
  std::vector<Band> BandsFor(const std::vector<int>& layers) const;
  std::vector<Band> NoEffectBandsFor(const std::vector<int>& layers) const;
  // The same as the run recorded them.
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
