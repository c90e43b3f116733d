#include "gui/model/explorer_document.h"

#include <QCoreApplication>
#include <QDir>
#include <algorithm>
#include <QFileInfo>
#include <QThread>
#include <QThreadPool>
#include <QTimer>
#include <exception>
#include <filesystem>
#include <map>

#include "common/errors.h"
#include "gui/model/run_comparison.h"
#include "simulator/child_process.h"

namespace accordion::gui {

namespace {

// Settings must be still this long before a replay starts by itself.
constexpr int kAutoSimulateDelayMs = 600;
constexpr int kLivePollMs = 1000;
constexpr int kSweepDelayMs = 200;

// The bandwidths of the sweep plot: 0.1 to 400 Gb/s, 25 points.
std::vector<double> SweepBandwidths() { return LogSpaced(0.1, 400, 25); }

QString Text(const std::exception& e) { return QString::fromStdString(e.what()); }

// Runs from different folders may share a file name (one folder per seed):
// those are named with their folder too, in the list and in legends.
void DisambiguateNames(std::vector<std::shared_ptr<const RunData>>& runs) {
  std::map<std::string, int> uses;
  for (const auto& r : runs) ++uses[std::filesystem::path(r->path).filename().string()];
  for (auto& r : runs) {
    const std::filesystem::path path(r->path);
    const std::string file = path.filename().string();
    const std::string wanted = uses[file] > 1 ? (path.parent_path().filename() / file).string() : file;
    if (r->summary.name == wanted) continue;
    auto renamed = std::make_shared<RunData>(*r);
    renamed->summary.name = wanted;
    r = std::move(renamed);
  }
}

}  // namespace

ExplorerDocument::ExplorerDocument(QObject* parent)
    : QObject(parent),
      pool_(new QThreadPool(this)),
      simulation_pool_(new QThreadPool(this)),
      auto_simulation_timer_(new QTimer(this)),
      sweep_timer_(new QTimer(this)),
      live_timer_(new QTimer(this)) {
  sweep_timer_->setSingleShot(true);
  sweep_timer_->setInterval(kSweepDelayMs);
  connect(sweep_timer_, &QTimer::timeout, this, &ExplorerDocument::startSweep);
  pool_->setMaxThreadCount(2);
  simulation_pool_->setMaxThreadCount(1);
  auto_simulation_timer_->setSingleShot(true);
  auto_simulation_timer_->setInterval(kAutoSimulateDelayMs);
  connect(auto_simulation_timer_, &QTimer::timeout, this, &ExplorerDocument::startSimulation);
  live_timer_->setInterval(kLivePollMs);
  connect(live_timer_, &QTimer::timeout, this, &ExplorerDocument::pollLiveRuns);
}

ExplorerDocument::~ExplorerDocument() {
  if (simulation_cancel_) simulation_cancel_->store(true);
  if (estimate_job_.cancel) estimate_job_.cancel->store(true);
  if (sweep_job_.cancel) sweep_job_.cancel->store(true);
  if (eta_interval_job_.cancel) eta_interval_job_.cancel->store(true);
  if (policies_job_.cancel) policies_job_.cancel->store(true);
  // Jobs post their answers to this object; wait for them before it goes.
  pool_->waitForDone();
  simulation_pool_->waitForDone();
}

std::shared_ptr<const RunData> ExplorerDocument::run(int index) const {
  if (index < 0 || index >= runCount()) return nullptr;
  return runs_[index];
}

std::shared_ptr<const RunData> ExplorerDocument::currentRun() const { return run(current_); }

int ExplorerDocument::indexOfPath(const QString& path) const {
  const std::string wanted = QFileInfo(path).absoluteFilePath().toStdString();
  for (int i = 0; i < runCount(); ++i) {
    if (runs_[i]->path == wanted) return i;
  }
  return -1;
}

bool ExplorerDocument::isCompared(int index) const { return index >= 0 && index < runCount() && compared_[index]; }

int ExplorerDocument::colourOf(int index) const {
  return index >= 0 && index < static_cast<int>(colours_.size()) ? colours_[static_cast<size_t>(index)] : index;
}

void ExplorerDocument::setCompared(int index, bool compared) {
  if (index < 0 || index >= runCount() || compared_[index] == compared) return;
  compared_[index] = compared;
  emit comparedChanged();
}

std::vector<std::shared_ptr<const RunData>> ExplorerDocument::comparedRuns() const {
  std::vector<std::shared_ptr<const RunData>> out;
  for (int i = 0; i < runCount(); ++i) {
    if (compared_[i]) out.push_back(runs_[i]);
  }
  return out;
}

// --- opening and live runs

void ExplorerDocument::open(const QStringList& paths, bool make_current) {
  bool first = make_current;
  for (const QString& given : paths) {
    const QString path = QFileInfo(given).absoluteFilePath();
    if (first) make_current_.append(path);
    first = false;
    startLoad(path, false, next_order_++);
  }
}

void ExplorerDocument::startLoad(const QString& path, bool reload, uint64_t order) {
  if (pending_loads_++ == 0) emit loadingChanged(true);
  pool_->start([this, path, reload, order] {
    std::shared_ptr<const RunData> data;
    QString error;
    bool not_started = false;
    try {
      data = std::make_shared<const RunData>(LoadRunData(path.toStdString()));
    } catch (const std::exception& e) {
      error = Text(e);
      const QFileInfo file(path);
      if (!file.exists() && file.dir().exists()) {
        // Opened right after `accordion-train --trace` started, before the
        // trainer created the file: waited for like a run with no epoch yet.
        // (A missing directory is a mistyped path, answered at once.)
        not_started = true;
      } else {
        try {
          const TraceProgress progress = ReadTraceProgress(path.toStdString());
          not_started = progress.epochs == 0 && progress.status == RunStatus::kRunning;
        } catch (const std::exception&) {
          // Not a readable trace at all: the load's own reason stands.
        }
      }
    }
    QMetaObject::invokeMethod(
        this,
        [this, path, data, error, reload, order, not_started] {
          deliverLoad(path, data, error, reload, order, not_started);
        },
        Qt::QueuedConnection);
  });
}

void ExplorerDocument::deliverLoad(const QString& path, std::shared_ptr<const RunData> data, const QString& error,
                                   bool reload, uint64_t order, bool not_started) {
  if (reload) live_checks_.removeAll(path);
  const int waiting = static_cast<int>(waiting_.indexOf(path));
  if (waiting >= 0 && !data) {
    // Still no finished epoch: keep waiting, quietly.
  } else if (!data && not_started) {
    waiting_.append(path);
    waiting_order_.push_back(order);
    emit waitingForFirstEpoch(path);
    updateLiveTimer();
  }
  if (waiting >= 0 && data) {
    waiting_.removeAt(waiting);
    order = waiting_order_[static_cast<size_t>(waiting)];
    waiting_order_.erase(waiting_order_.begin() + waiting);
  }
  // A trace waited for keeps its wish to become current until it loads.
  const bool make_current = data ? make_current_.removeOne(path) : false;
  if (!data && !not_started && waiting < 0) make_current_.removeOne(path);
  if (!data) {
    // A live trace caught mid-write is read again at the next poll.
    if (!reload && !not_started && waiting < 0) emit openFailed(path, error);
  } else {
    int index = indexOfPath(path);
    if (index >= 0) {
      runs_[index] = std::move(data);
    } else {
      // Loads finish in any order; the list keeps the order they were asked for.
      index = static_cast<int>(std::upper_bound(order_.begin(), order_.end(), order) - order_.begin());
      runs_.insert(runs_.begin() + index, std::move(data));
      compared_.insert(compared_.begin() + index, true);
      order_.insert(order_.begin() + index, order);
      if (current_ >= index) ++current_;
    }
    DisambiguateNames(runs_);
    colours_ = RunColours(runs_);
    emit runsChanged();
    if (index == current_) {
      settingsOrRunChanged(true);  // the current run was read again
    } else if (make_current || current_ < 0) {
      setCurrentRun(index);
    }
    if (reload) emit liveRunUpdated(index);
    updateLiveTimer();
  }
  if (--pending_loads_ == 0) emit loadingChanged(false);
}

void ExplorerDocument::waitForLoads() {
  while (pending_loads_ > 0) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(1);
  }
}

void ExplorerDocument::closeRun(int index) {
  if (index < 0 || index >= runCount()) return;
  // Closed is forgotten: opened again, it starts from its recorded settings.
  explored_.erase(runs_[index]->path);
  runs_.erase(runs_.begin() + index);
  compared_.erase(compared_.begin() + index);
  order_.erase(order_.begin() + index);
  DisambiguateNames(runs_);
  colours_ = RunColours(runs_);
  if (index < current_ || current_ >= runCount()) --current_;
  emit runsChanged();
  updateLiveTimer();
  adoptRunSettings();
  settingsOrRunChanged(true);
  emit currentRunChanged();
}

void ExplorerDocument::setCurrentRun(int index) {
  if (index < -1 || index >= runCount() || index == current_) return;
  current_ = index;
  adoptRunSettings();
  settingsOrRunChanged(true);
  emit currentRunChanged();
}

ScheduleSettings ExplorerDocument::recordedSettings() const {
  ScheduleSettings s;
  const auto run = currentRun();
  if (!run) return s;
  // The scheme and levels empty: the trace's own (see ScheduleSettings).
  s.eta = run->view().run.eta;
  s.interval = run->view().run.interval;
  return s;
}

void ExplorerDocument::adoptRunSettings() {
  const auto run = currentRun();
  if (!run) return;
  const auto explored = explored_.find(run->path);
  const ScheduleSettings s = explored != explored_.end() ? explored->second : recordedSettings();
  if (s == schedule_settings_) return;
  schedule_settings_ = s;
  emit scheduleSettingsChanged();
}

void ExplorerDocument::resetToRecorded() { setScheduleSettings(recordedSettings()); }

void ExplorerDocument::setGroupByBlock(bool on) {
  if (on == group_by_block_) return;
  group_by_block_ = on;
  emit groupByBlockChanged();
}

void ExplorerDocument::setFollowLive(bool on) {
  follow_live_ = on;
  updateLiveTimer();
}

void ExplorerDocument::updateLiveTimer() {
  bool any_live = !waiting_.isEmpty();
  for (const auto& r : runs_) any_live = any_live || r->live();
  if (follow_live_ && any_live) {
    if (!live_timer_->isActive()) live_timer_->start();
  } else {
    live_timer_->stop();
  }
}

void ExplorerDocument::pollLiveRuns() {
  for (const QString& path : waiting_) {
    if (live_checks_.contains(path)) continue;
    live_checks_.append(path);
    startLoad(path, true, 0);
  }
  for (const auto& r : runs_) {
    if (!r->live()) continue;
    const QString path = QString::fromStdString(r->path);
    if (live_checks_.contains(path)) continue;
    live_checks_.append(path);
    const int known_epochs = r->view().num_epochs();
    const RunStatus known_status = r->view().run.status;
    if (pending_loads_++ == 0) emit loadingChanged(true);
    // Checked off the UI thread: a trace being written may be slow to open.
    pool_->start([this, path, known_epochs, known_status] {
      std::shared_ptr<const RunData> data;
      try {
        const TraceProgress now = ReadTraceProgress(path.toStdString());
        if (now.epochs != known_epochs || now.status != known_status) {
          data = std::make_shared<const RunData>(LoadRunData(path.toStdString()));
        }
      } catch (const std::exception&) {
        // Caught between two writes, or gone: the next poll tries again.
      }
      QMetaObject::invokeMethod(
          this,
          [this, path, data] {
            if (data) {
              deliverLoad(path, data, QString(), true, 0, false);
              return;
            }
            live_checks_.removeAll(path);
            if (--pending_loads_ == 0) emit loadingChanged(false);
          },
          Qt::QueuedConnection);
    });
  }
}

// --- settings and what they derive

void ExplorerDocument::setScheduleSettings(const ScheduleSettings& settings) {
  if (const auto run = currentRun()) {
    if (settings == recordedSettings()) {
      explored_.erase(run->path);
    } else {
      explored_[run->path] = settings;
    }
  }
  if (settings == schedule_settings_) return;
  schedule_settings_ = settings;
  emit scheduleSettingsChanged();
  settingsOrRunChanged(true);
}

void ExplorerDocument::setWhatIfSettings(const WhatIfSettings& settings) {
  if (settings == what_if_settings_) return;
  what_if_settings_ = settings;
  emit whatIfSettingsChanged();
  settingsOrRunChanged(false);
}

void ExplorerDocument::rederive() {
  const auto run = currentRun();
  regimes_ = run ? std::make_shared<const RegimeAnalysis>(AnalyseRegimes(*run, schedule_settings_)) : nullptr;
  emit regimesChanged();
}

void ExplorerDocument::settingsOrRunChanged(bool rederive_regimes) {
  ++generation_;
  if (rederive_regimes) rederive();
  // A replay of other settings is of no use any more.
  if (simulation_running_) cancelSimulation();
  if (simulation_) {
    simulation_.reset();
    emit simulationFinished();
  }
  if (estimate_job_.cancel) estimate_job_.cancel->store(true);
  if (sweep_job_.cancel) sweep_job_.cancel->store(true);
  startEstimate();
  sweep_timer_->start();
  scheduleAutoSimulation();
}

std::shared_ptr<const WhatIfProjection> ExplorerDocument::projection() const {
  return simulation_ ? simulation_ : estimate_;
}

void ExplorerDocument::startEstimate() {
  if (estimate_job_.running) {
    estimate_job_.again = true;
    return;
  }
  const auto run = currentRun();
  if (!run || !run->replayable) {
    estimate_.reset();
    projection_problem_ = run ? QString::fromStdString(run->replay_problem) : QString();
    emit estimateChanged();
    return;
  }
  estimate_job_.running = true;
  estimate_job_.cancel = std::make_shared<std::atomic<bool>>(false);
  const uint64_t generation = generation_;
  const ScheduleSettings s = schedule_settings_;
  const WhatIfSettings w = what_if_settings_;
  const auto cancel = estimate_job_.cancel;
  pool_->start([this, run, s, w, generation, cancel] {
    std::shared_ptr<const WhatIfProjection> result;
    QString problem;
    try {
      // The estimate is quick, but it builds the platform in a child
      // process, and a newer request or closing the window must not wait on it.
      result = std::make_shared<const WhatIfProjection>(
          ProjectWhatIf(*run, s, w, sim::TimingSource::kAnalytic, cancel.get()));
    } catch (const std::exception& e) {
      problem = Text(e);
    }
    QMetaObject::invokeMethod(
        this,
        [this, result, problem, generation] {
          estimate_job_.running = false;
          if (estimate_job_.again || generation != generation_) {
            estimate_job_.again = false;
            startEstimate();  // settings moved on: this answer is stale
            return;
          }
          estimate_ = result;
          projection_problem_ = problem;
          emit estimateChanged();
        },
        Qt::QueuedConnection);
  });
}

void ExplorerDocument::startSweep() {
  if (sweep_job_.running) {
    sweep_job_.again = true;
    return;
  }
  const auto run = currentRun();
  if (!run || !run->replayable) {
    sweep_.reset();
    emit sweepChanged();
    return;
  }
  sweep_job_.running = true;
  sweep_job_.cancel = std::make_shared<std::atomic<bool>>(false);
  const uint64_t generation = generation_;
  const ScheduleSettings s = schedule_settings_;
  const WhatIfSettings w = what_if_settings_;
  const auto cancel = sweep_job_.cancel;
  pool_->start([this, run, s, w, generation, cancel] {
    std::shared_ptr<const std::vector<SweepPointResult>> result;
    try {
      result = std::make_shared<const std::vector<SweepPointResult>>(
          SweepBandwidth(*run, s, w, SweepBandwidths(), cancel.get()));
    } catch (const std::exception&) {
      // Cancelled, or a platform whose bandwidth cannot be swept: no plot.
    }
    QMetaObject::invokeMethod(
        this,
        [this, result, generation] {
          sweep_job_.running = false;
          if (sweep_job_.again || generation != generation_) {
            sweep_job_.again = false;
            if (!sweep_timer_->isActive()) startSweep();  // else the timer starts it
            return;
          }
          sweep_ = result;
          emit sweepChanged();
        },
        Qt::QueuedConnection);
  });
}

// --- the η × interval sweep

ExplorerDocument::EtaIntervalInputs ExplorerDocument::etaIntervalInputs() const {
  EtaIntervalInputs in;
  in.run = currentRun();
  in.schedule = schedule_settings_;
  // Each cell sets its own: these only stand in for them in the baselines,
  // which do not depend on them.
  in.schedule.eta = AccordionOptions().eta();
  in.schedule.interval = AccordionOptions().interval();
  in.what_if = what_if_settings_;
  return in;
}

std::shared_ptr<const EtaIntervalSweep> ExplorerDocument::etaIntervalSweep() const {
  return eta_interval_inputs_ == etaIntervalInputs() ? eta_interval_sweep_ : nullptr;
}

void ExplorerDocument::requestEtaIntervalSweep() {
  const EtaIntervalInputs in = etaIntervalInputs();
  if (in == eta_interval_inputs_ && (eta_interval_sweep_ || eta_interval_job_.running)) return;
  eta_interval_inputs_ = in;
  eta_interval_sweep_.reset();
  if (eta_interval_job_.running) {
    // It ends soon and starts again with these inputs.
    eta_interval_job_.cancel->store(true);
    return;
  }
  if (!in.run) {
    emit etaIntervalSweepChanged();
    return;
  }
  eta_interval_job_.running = true;
  eta_interval_job_.cancel = std::make_shared<std::atomic<bool>>(false);
  const auto cancel = eta_interval_job_.cancel;
  pool_->start([this, in, cancel] {
    std::shared_ptr<const EtaIntervalSweep> result;
    try {
      result = std::make_shared<const EtaIntervalSweep>(
          SweepEtaInterval(*in.run, in.schedule, in.what_if, SweepOptionsFor(in.run->view().run), cancel.get()));
    } catch (const sim::Cancelled&) {
      // Its inputs changed: the next one is on its way.
    } catch (const std::exception& e) {
      auto failed = std::make_shared<EtaIntervalSweep>();
      failed->problem = e.what();
      result = std::move(failed);
    }
    QMetaObject::invokeMethod(
        this,
        [this, in, result] {
          eta_interval_job_.running = false;
          if (!result || !(in == eta_interval_inputs_)) {
            // Cancelled, or asked for other inputs meanwhile: serve the latest.
            eta_interval_inputs_ = {};
            requestEtaIntervalSweep();
            return;
          }
          eta_interval_sweep_ = result;
          emit etaIntervalSweepChanged();
        },
        Qt::QueuedConnection);
  });
}

// --- the policy comparison

ExplorerDocument::EtaIntervalInputs ExplorerDocument::policyInputs() const {
  EtaIntervalInputs in;
  in.run = currentRun();
  in.schedule = schedule_settings_;
  in.what_if = what_if_settings_;
  return in;
}

std::shared_ptr<const PolicyTable> ExplorerDocument::policies() const {
  return policy_inputs_ == policyInputs() ? policies_ : nullptr;
}

void ExplorerDocument::requestPolicies() {
  const EtaIntervalInputs in = policyInputs();
  if (in == policy_inputs_ && (policies_ || policies_job_.running)) return;
  policy_inputs_ = in;
  policies_.reset();
  if (policies_job_.running) {
    // It ends soon and starts again with these inputs.
    policies_job_.cancel->store(true);
    return;
  }
  if (!in.run) {
    emit policiesChanged();
    return;
  }
  policies_job_.running = true;
  policies_job_.cancel = std::make_shared<std::atomic<bool>>(false);
  const auto cancel = policies_job_.cancel;
  pool_->start([this, in, cancel] {
    std::shared_ptr<const PolicyTable> result;
    try {
      result = std::make_shared<const PolicyTable>(
          ComparePoliciesOf(*in.run, in.schedule, in.what_if, sim::TimingSource::kAnalytic, cancel.get()));
    } catch (const sim::Cancelled&) {
      // Its inputs changed: the next one is on its way.
    } catch (const std::exception& e) {
      auto failed = std::make_shared<PolicyTable>();
      failed->problem = e.what();
      result = std::move(failed);
    }
    QMetaObject::invokeMethod(
        this,
        [this, in, result] {
          policies_job_.running = false;
          if (!result || !(in == policy_inputs_)) {
            // Cancelled, or asked for other inputs meanwhile: serve the latest.
            policy_inputs_ = {};
            requestPolicies();
            return;
          }
          policies_ = result;
          emit policiesChanged();
        },
        Qt::QueuedConnection);
  });
}

// --- the SimGrid replay

void ExplorerDocument::setAutoSimulate(bool on) {
  auto_simulate_ = on;
  if (on && !simulation_ && !simulation_running_) {
    scheduleAutoSimulation();
  } else if (!on) {
    auto_simulation_timer_->stop();
  }
}

void ExplorerDocument::scheduleAutoSimulation() {
  const auto run = currentRun();
  if (auto_simulate_ && run && run->replayable) {
    auto_simulation_timer_->start();
  } else {
    auto_simulation_timer_->stop();
  }
}

void ExplorerDocument::startSimulation() {
  auto_simulation_timer_->stop();
  const auto run = currentRun();
  if (!run) return;
  if (!run->replayable) {
    emit simulationFailed(QString::fromStdString(run->replay_problem));
    return;
  }
  if (simulation_running_) cancelSimulation();
  simulation_.reset();
  simulation_cancel_ = std::make_shared<std::atomic<bool>>(false);
  const uint64_t id = ++simulation_id_;
  const uint64_t generation = generation_;
  const ScheduleSettings s = schedule_settings_;
  const WhatIfSettings w = what_if_settings_;
  const auto cancel = simulation_cancel_;
  simulation_running_ = true;
  ++simulations_in_flight_;
  emit simulationStarted();
  simulation_pool_->start([this, run, s, w, id, generation, cancel] {
    std::shared_ptr<const WhatIfProjection> result;
    QString problem;
    try {
      result = std::make_shared<const WhatIfProjection>(
          ProjectWhatIf(*run, s, w, sim::TimingSource::kSimulate, cancel.get(), [this, id](int done, int total) {
            QMetaObject::invokeMethod(
                this,
                [this, id, done, total] {
                  if (id == simulation_id_ && simulation_running_) emit simulationProgress(done, total);
                },
                Qt::QueuedConnection);
          }));
    } catch (const sim::Cancelled&) {
      problem = "cancelled";
    } catch (const std::exception& e) {
      problem = Text(e);
    }
    QMetaObject::invokeMethod(
        this,
        [this, result, problem, id, generation] {
          --simulations_in_flight_;
          if (id != simulation_id_ || generation != generation_) return;  // cancelled or stale
          simulation_running_ = false;
          if (result) {
            simulation_ = result;
          } else {
            emit simulationFailed(problem);
          }
          emit simulationFinished();
        },
        Qt::QueuedConnection);
  });
}

void ExplorerDocument::cancelSimulation() {
  auto_simulation_timer_->stop();
  if (!simulation_running_) return;
  simulation_cancel_->store(true);
  ++simulation_id_;  // its answer, if any, is ignored
  simulation_running_ = false;
  emit simulationFinished();
}

bool ExplorerDocument::busy() const {
  return pending_loads_ > 0 || estimate_job_.running || sweep_job_.running || eta_interval_job_.running ||
         policies_job_.running || simulations_in_flight_ > 0 || auto_simulation_timer_->isActive() ||
         sweep_timer_->isActive();
}

void ExplorerDocument::waitForIdle() {
  while (busy()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(1);
  }
}

}  // namespace accordion::gui
