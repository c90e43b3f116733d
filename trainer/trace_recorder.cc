#include "trainer/trace_recorder.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <type_traits>

#include "common/version.h"
#include "trainer/nccl_communicator.h"

namespace accordion {

std::string RecordedVersionsJson() {
  nlohmann::json j;
  j["toolkit"] = kVersion;
  j["libtorch"] = TORCH_VERSION;
  j["sqlite"] = SqliteVersion();
  j["compiler"] = __VERSION__;
  const std::string nccl = NcclBuildVersion();
  if (!nccl.empty()) j["nccl_communicator"] = nccl;
  return j.dump();
}

std::string TrainerBuildDescription() {
  const std::string nccl = NcclBuildVersion();
  return std::string("LibTorch ") + TORCH_VERSION + "; NCCL communicator " +
         (nccl.empty() ? "not linked (a CPU-only LibTorch: Gloo only)" : "linked, " + nccl);
}

namespace {

// A flat byte encoding of one rank's samples, for the all-gather. Both ends
// are the same program, so native layout is fine.
class Bytes {
 public:
  template <typename T>
  void Put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void Put(const std::string& s) {
    Put(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <typename T>
  T Get() {
    T v;
    if (pos_ + sizeof(T) > in_.size()) throw std::runtime_error("trace samples: short message");
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string GetString() {
    const auto n = Get<uint32_t>();
    if (pos_ + n > in_.size()) throw std::runtime_error("trace samples: short message");
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  const std::string& in_;
  size_t pos_ = 0;
};

std::string Encode(const EpochData& d) {
  Bytes b;
  b.Put(static_cast<uint64_t>(d.iterations.size()));
  for (const IterationRecord& r : d.iterations) b.Put(r);
  b.Put(static_cast<uint64_t>(d.grad_ready.size()));
  for (const GradReadyRecord& r : d.grad_ready) b.Put(r);
  b.Put(static_cast<uint64_t>(d.collectives.size()));
  for (const CollectiveRecord& r : d.collectives) {
    b.Put(r.epoch);
    b.Put(r.iteration);
    b.Put(r.rank);
    b.Put(r.seq);
    b.Put(r.op);
    b.Put(r.bucket);
    b.Put(r.tag);
    b.Put(r.bytes);
    b.Put(r.start_s);
    b.Put(r.duration_s);
  }
  return std::move(b.str());
}

void DecodeInto(const std::string& bytes, EpochData& d) {
  Reader in(bytes);
  for (auto n = in.Get<uint64_t>(); n > 0; --n) d.iterations.push_back(in.Get<IterationRecord>());
  for (auto n = in.Get<uint64_t>(); n > 0; --n) d.grad_ready.push_back(in.Get<GradReadyRecord>());
  for (auto n = in.Get<uint64_t>(); n > 0; --n) {
    CollectiveRecord r;
    r.epoch = in.Get<int>();
    r.iteration = in.Get<int64_t>();
    r.rank = in.Get<int>();
    r.seq = in.Get<int>();
    r.op = in.Get<CollectiveOp>();
    r.bucket = in.Get<int>();
    r.tag = in.GetString();
    r.bytes = in.Get<int64_t>();
    r.start_s = in.Get<double>();
    r.duration_s = in.Get<double>();
    d.collectives.push_back(std::move(r));
  }
}

}  // namespace

TraceRecorder::TraceRecorder(Communicator& comm, std::unique_ptr<TraceWriter> writer, bool recording,
                             int sample_iterations)
    : comm_(comm), writer_(std::move(writer)), recording_(recording), sample_iterations_(sample_iterations) {}

void TraceRecorder::AddIteration(const IterationRecord& timing, const ExchangeTimings& exchange) {
  IterationRecord it = timing;
  it.rank = comm_.rank();
  samples_.iterations.push_back(it);
  for (size_t l = 0; l < exchange.grad_ready_s.size(); ++l) {
    samples_.grad_ready.push_back({it.epoch, it.iteration, it.rank, static_cast<int>(l), exchange.grad_ready_s[l]});
  }
  for (CollectiveRecord c : exchange.collectives) {
    c.epoch = it.epoch;
    c.iteration = it.iteration;
    c.rank = it.rank;
    samples_.collectives.push_back(std::move(c));
  }
}

void TraceRecorder::EndEpoch(EpochData data) {
  if (!recording_) return;
  const std::vector<std::string> all = AllGatherBytes(comm_, Encode(samples_));
  samples_ = EpochData();
  if (!writer_) return;
  for (const std::string& bytes : all) DecodeInto(bytes, data);
  writer_->WriteEpoch(data);
}

void TraceRecorder::ProbeNetwork(torch::Device device, const NetworkProbeOptions& options) {
  if (!recording_) return;
  const std::vector<NetworkProbeRecord> probe = accordion::ProbeNetwork(comm_, device, options);
  if (writer_ && !probe.empty()) writer_->WriteNetworkProbe(probe);
}

void TraceRecorder::Finish(RunStatus status) {
  if (writer_) writer_->Finish(status);
}

void FillEpochLayerRecords(const CommunicationScheme& scheme, const std::vector<LayerInfo>& layers, int epoch,
                           const std::vector<double>& levels, const std::vector<bool>& critical,
                           const AccordionDecision& decision, const RawGradientStatistics& stats, EpochData& data) {
  EpochRecord& rec = data.epoch;
  // One verdict for the model (the batch scheme, AdaQS, Smith) or one per layer.
  const bool one_group = decision.ratios.size() == 1;
  for (size_t l = 0; l < layers.size(); ++l) {
    EpochLayerRecord r;
    r.epoch = epoch;
    r.layer_id = static_cast<int>(l);
    r.grad_norm = stats.norms[l];
    r.grad_mean_norm = stats.mean_norms[l];
    r.grad_std = stats.stds[l];
    r.ratio = decision.ratios[one_group ? 0 : l];
    r.critical = critical[l];
    r.level = levels[l];
    r.floats_sent = FloatsPerStep(scheme, layers[l].shape, r.level) * static_cast<double>(rec.iterations);
    rec.floats_sent += r.floats_sent;
    data.layers.push_back(r);
  }
}

}  // namespace accordion
