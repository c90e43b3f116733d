// What the GUI tests share: where the sample traces are, scratch traces
// written on demand, and a damaged file to open.
#ifndef ACCORDION_TESTS_GUI_GUI_TEST_SUPPORT_H_
#define ACCORDION_TESTS_GUI_GUI_TEST_SUPPORT_H_

#include <QString>
#include <memory>
#include <string>

#include "traces/trace_writer.h"

#include "tests/support/synthetic_trace.h"

namespace accordion::gui::test_support {

// traces/samples/<name> in the source tree.
QString SampleTrace(const QString& name);

// A fresh empty directory under the system temp dir, removed at exit.
QString ScratchDir(const QString& tag);

// Writes a SYNTHETIC trace with `options` to `dir`/`file` and returns its path.
QString WriteSynthetic(const QString& dir, const QString& file, const synthetic::SyntheticTraceOptions& options);

// A SYNTHETIC 12-epoch MLP trace of `scheme` (kPowerSgd or kBatch) at
// `dir`/`file` with what schema v4 adds for the policies: every layer's
// gradient moments (the MSDR falls as 1 / (1 + epoch): AdaQS switches), the
// error profile of ranks 1, 2 and 4 at each check (PowerSGD) and LR decays
// at epochs 4 and 8 (Smith's batch grows there). PowerSGD: rank 4 / rank 1;
// batch: 128 / 512.
QString WritePolicyTrace(const QString& dir, const QString& file, Scheme scheme);

// What a trainer has written before its first epoch ends: a PowerSGD
// Accordion MLP run of 2 workers and its layers, status running, at `path`,
// held open (live) until the writer is dropped.
std::unique_ptr<TraceWriter> StartRunningTrace(const QString& path);

// A file that starts like an SQLite database but is cut short: the reader
// refuses it.
QString WriteTruncatedTrace(const QString& dir, const QString& file);

}  // namespace accordion::gui::test_support

#endif  // ACCORDION_TESTS_GUI_GUI_TEST_SUPPORT_H_
