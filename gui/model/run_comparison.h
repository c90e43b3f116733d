// ComparisonCaveat: what keeps runs drawn side by side from being like for
// like - a different model, dataset or number of workers - said in one line,
// so the Compare tab never lets one model's accuracy be read against
// another's without saying so; RunColours: one colour per setting, so a
// run's swatch is its curve's colour everywhere. Plain C++ (no Qt), tested
// without a display.
#ifndef ACCORDION_GUI_MODEL_RUN_COMPARISON_H_
#define ACCORDION_GUI_MODEL_RUN_COMPARISON_H_

#include <memory>
#include <string>
#include <vector>

#include "gui/model/run_data.h"

namespace accordion::gui {

// "" when every run has the same model, dataset and number of workers;
// otherwise one sentence naming each that differs and its values, in the
// order the runs come: "Not like for like: these runs differ in model (mlp,
// resnet18) and workers (2, 8)."
std::string ComparisonCaveat(const std::vector<std::shared_ptr<const RunData>>& runs);

// Each run's palette index: one per setting (the results table's grouping:
// seeds of one setting share it), numbered in the order settings first
// appear in `runs`; -1 for a missing run. The run list's swatch, Compare's
// curves and the report's take it from the same open runs.
std::vector<int> RunColours(const std::vector<std::shared_ptr<const RunData>>& runs);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_RUN_COMPARISON_H_
