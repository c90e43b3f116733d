#include "traces/trace_tables.h"

namespace accordion {

namespace {

// Short names for the checks below: each is made of the value alone by the
// writer, the reader and the validator. Levels are kAny here because they are
// checked against the run's scheme (record_checks.cc).
constexpr ValueCheck kAny = ValueCheck::kAny;
constexpr ValueCheck kFinite = ValueCheck::kFinite;
constexpr ValueCheck kNonNegative = ValueCheck::kNonNegative;
constexpr ValueCheck kFraction = ValueCheck::kFraction;
constexpr ValueCheck kAtLeastOne = ValueCheck::kAtLeastOne;
constexpr ValueCheck kNotEmpty = ValueCheck::kNotEmpty;
// With an upper limit (record_checks.h): what no real run produces.
constexpr ValueCheck kRanks = ValueCheck::kRanks;
constexpr ValueCheck kElements = ValueCheck::kElements;
constexpr ValueCheck kIterations = ValueCheck::kIterations;
constexpr ValueCheck kBytes = ValueCheck::kBytes;
constexpr ValueCheck kSeconds = ValueCheck::kSeconds;
constexpr ValueCheck kJsonObject = ValueCheck::kJsonObject;

}  // namespace

const Table<MetaEntry>& MetaTable() {
  static const Table<MetaEntry> table("meta", {"key"},
                                      {Column("key", &MetaEntry::key), Column("value", &MetaEntry::value)});
  return table;
}

const Table<RunInfo>& RunTable() {
  using R = RunInfo;
  static const Table<RunInfo> table(
      "run", {"id"},
      {ConstantColumn<R>("id", 1), Column("status", &R::status), Column("synthetic", &R::synthetic),
       Column("model", &R::model, kNotEmpty), Column("dataset", &R::dataset),
       Column("train_samples", &R::train_samples, kAtLeastOne), Column("scheme", &R::scheme),
       Column("policy", &R::policy), Column("level_low", &R::level_low, kAny),  // a level of the scheme
       Column("level_high", &R::level_high, kAny),                              // a level of the scheme
       Column("eta", &R::eta, kNonNegative), Column("interval", &R::interval, kAtLeastOne),
       Column("world_size", &R::world_size, kRanks), Column("backend", &R::backend), Column("device", &R::device),
       Column("batch_size", &R::batch_size, kAtLeastOne), Column("epochs_planned", &R::epochs_planned, kAtLeastOne),
       Column("seed", &R::seed), Column("config_json", &R::config_json, kJsonObject),
       Column("versions_json", &R::versions_json, kJsonObject), Column("started_utc", &R::started_utc),
       NullWhenEmptyColumn("finished_utc", &R::finished_utc),
       // v2; "" (unknown) in v1 files, required from v2 (record_checks.cc).
       Since(2, Column("writer", &R::writer)), Since(2, Column("ranks_per_node", &R::ranks_per_node, kNonNegative)),
       // v4; above 1 (record_checks.cc), 2 in older files.
       Since(4, Column("msdr_factor", &R::msdr_factor, kFinite))},
      /*key_check=*/"id = 1");
  return table;
}

const Table<LayerInfo>& LayersTable() {
  using R = LayerInfo;
  static const Table<LayerInfo> table(
      "layers", {"layer_id"},
      {Column("layer_id", &R::layer_id),                                 // 0..L-1
       Column("name", &R::name, kNotEmpty), Column("shape", &R::shape),  // its product is numel
       Column("numel", &R::numel, kElements), Column("compressible", &R::compressible),
       Column("floats_dense", &R::floats_dense, kNonNegative), Column("floats_low", &R::floats_low, kNonNegative),
       Column("floats_high", &R::floats_high, kNonNegative)});
  return table;
}

const Table<EpochRecord>& EpochsTable() {
  using R = EpochRecord;
  static const Table<EpochRecord> table(
      "epochs", {"epoch"},
      {Column("epoch", &R::epoch), Column("lr", &R::lr, kNonNegative),
       Column("batch_size", &R::batch_size, kAtLeastOne), Column("iterations", &R::iterations, kIterations),
       Column("critical", &R::critical), Column("model_grad_norm", &R::model_grad_norm, kNonNegative),
       // NULL from v3: not recorded (kNotRecorded, NaN in the record).
       NullWhenNaNColumn(3, "train_loss", &R::train_loss, kNonNegative),
       NullWhenNaNColumn(3, "train_acc", &R::train_acc, kFraction),
       NullWhenNaNColumn(3, "test_loss", &R::test_loss, kNonNegative),
       NullWhenNaNColumn(3, "test_acc", &R::test_acc, kFraction), Column("compute_s", &R::compute_s, kSeconds),
       Column("compress_s", &R::compress_s, kSeconds), Column("comm_s", &R::comm_s, kSeconds),
       Column("total_s", &R::total_s, kSeconds), Column("floats_sent", &R::floats_sent, kNonNegative),
       // v4; older files: kNotRecorded (TraceView derives it).
       Since(4, NullWhenNaNColumn(4, "schedule_lr", &R::schedule_lr, kNonNegative))});
  return table;
}

const Table<EpochLayerRecord>& EpochLayersTable() {
  using R = EpochLayerRecord;
  static const Table<EpochLayerRecord> table(
      "epoch_layers", {"epoch", "layer_id"},
      {Column("epoch", &R::epoch), Column("layer_id", &R::layer_id), Column("grad_norm", &R::grad_norm, kNonNegative),
       Column("ratio", &R::ratio, kNonNegative),                            // NULL where no check ran
       Column("critical", &R::critical), Column("level", &R::level, kAny),  // a level of the scheme
       Column("floats_sent", &R::floats_sent, kNonNegative),
       // v4, NULL where not recorded (a synthetic trace).
       Since(4, NullWhenNaNColumn(4, "grad_mean_norm", &R::grad_mean_norm, kNonNegative)),
       Since(4, NullWhenNaNColumn(4, "grad_std", &R::grad_std, kNonNegative))});
  return table;
}

const Table<IterationRecord>& IterationsTable() {
  using R = IterationRecord;
  static const Table<IterationRecord> table(
      "iterations", {"epoch", "iteration", "rank"},
      {Column("epoch", &R::epoch), Column("iteration", &R::iteration, kIterations), Column("rank", &R::rank),
       Column("forward_s", &R::forward_s, kSeconds), Column("backward_s", &R::backward_s, kSeconds),
       Column("compress_s", &R::compress_s, kSeconds), Column("comm_s", &R::comm_s, kSeconds),
       Column("total_s", &R::total_s, kSeconds)});
  return table;
}

const Table<GradReadyRecord>& GradReadyTable() {
  using R = GradReadyRecord;
  static const Table<GradReadyRecord> table(
      "grad_ready", {"epoch", "iteration", "rank", "layer_id"},
      {Column("epoch", &R::epoch), Column("iteration", &R::iteration, kIterations), Column("rank", &R::rank),
       Column("layer_id", &R::layer_id), Column("offset_s", &R::offset_s, kSeconds)});
  return table;
}

const Table<CollectiveRecord>& CollectivesTable() {
  using R = CollectiveRecord;
  static const Table<CollectiveRecord> table(
      "collectives", {"epoch", "iteration", "rank", "seq"},
      {Column("epoch", &R::epoch), Column("iteration", &R::iteration, kIterations), Column("rank", &R::rank),
       Column("seq", &R::seq, kNonNegative), Column("op", &R::op), Column("bucket", &R::bucket, kNonNegative),
       Column("tag", &R::tag), Column("bytes", &R::bytes, kBytes), Column("start_s", &R::start_s, kSeconds),
       Column("duration_s", &R::duration_s, kSeconds)});
  return table;
}

const Table<HessianRecord>& HessianTable() {
  using R = HessianRecord;
  static const Table<HessianRecord> table(
      "hessian", {"epoch", "block"},
      {Column("epoch", &R::epoch), Column("block", &R::block),  // "" for the whole model
       Column("eigenvalue", &R::eigenvalue, kFinite),           // negative on non-convex losses
       Column("iterations", &R::iterations, kNonNegative), Column("seconds", &R::seconds, kSeconds)});
  return table;
}

const Table<NetworkProbeRecord>& NetworkProbeTable() {
  using R = NetworkProbeRecord;
  static const Table<NetworkProbeRecord> table(
      "network_probe", {"op", "bytes", "repeat"},
      {Column("op", &R::op), Column("bytes", &R::bytes, kAtLeastOne), Column("repeat", &R::repeat, kNonNegative),
       Column("seconds", &R::seconds, kSeconds)},
      /*key_check=*/"", /*since=*/2);
  return table;
}

const Table<ErrorProfileRecord>& ErrorProfileTable() {
  using R = ErrorProfileRecord;
  static const Table<ErrorProfileRecord> table("error_profile", {"epoch", "layer_id", "level"},
                                               {Column("epoch", &R::epoch), Column("layer_id", &R::layer_id),
                                                Column("level", &R::level, kAny),  // a level of the scheme
                                                Column("rel_error", &R::rel_error, kFraction)},
                                               /*key_check=*/"", /*since=*/4);
  return table;
}

const std::vector<const TableLayout*>& TraceTableLayouts() {
  static const std::vector<const TableLayout*> layouts = {
      &MetaTable().layout(),         &RunTable().layout(),         &LayersTable().layout(),
      &EpochsTable().layout(),       &EpochLayersTable().layout(), &IterationsTable().layout(),
      &GradReadyTable().layout(),    &CollectivesTable().layout(), &HessianTable().layout(),
      &NetworkProbeTable().layout(), &ErrorProfileTable().layout()};
  return layouts;
}

}  // namespace accordion
