// Sanity rules for trace rows, shared by the writer (refuse to write them),
// the reader (refuse to hand them out) and the validator.
//
// Each check throws TraceError (kInvalidValue, kOutOfRange or kInconsistent)
// with a message naming the table, the row and the offending value.
#ifndef ACCORDION_TRACES_RECORD_CHECKS_H_
#define ACCORDION_TRACES_RECORD_CHECKS_H_

#include <string>

#include "traces/records.h"

namespace accordion {

void CheckRun(const RunInfo& run);
// `expected_id` is the layer's position in the layer list.
void CheckLayer(const LayerInfo& layer, int expected_id);
void CheckEpoch(const EpochRecord& epoch, const RunInfo& run);
void CheckEpochLayer(const EpochLayerRecord& row, const RunInfo& run, int num_layers);
void CheckIteration(const IterationRecord& row, const RunInfo& run);
void CheckGradReady(const GradReadyRecord& row, const RunInfo& run, int num_layers);
void CheckCollective(const CollectiveRecord& row, const RunInfo& run);
void CheckHessian(const HessianRecord& row, const RunInfo& run);

// Parses "64,3,3,3" (the layers.shape column); throws kInvalidValue.
std::vector<int64_t> ParseShape(const std::string& text);
std::string FormatShape(const std::vector<int64_t>& shape);

}  // namespace accordion

#endif  // ACCORDION_TRACES_RECORD_CHECKS_H_
