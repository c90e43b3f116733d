// ComparisonCaveat: what keeps runs drawn side by side from being like for
// like - a different model, dataset or number of workers - said in one line,
// so the Compare tab never lets one model's accuracy be read against
// another's without saying so. Plain C++ (no Qt), tested without a display.
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

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_RUN_COMPARISON_H_
