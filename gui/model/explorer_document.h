// ExplorerDocument: the state the explorer's views show - the opened runs,
// the current settings, the schedule derived from them and the what-if
// projections - and the background work that produces them. Views read it
// and listen to its signals; no widget code here (QtCore only), so its
// logic is tested without pixels.
//
// Every settings change re-derives the current run's regimes at once (on
// the calling thread: milliseconds) and starts the analytic estimate in the
// background; the bandwidth sweep (fifty replays) follows once the settings
// have been still for a fifth of a second, so dragging a slider does not
// load the machine with sweeps nobody sees; with auto-simulation on, the
// SimGrid replay follows once they have been still a little longer. A
// background result that arrives after the settings or the run changed
// again is dropped, not shown.
//
// Thread safety: an object of the GUI thread. Its methods are called and
// its signals emitted there only; the background jobs in its thread pools
// read what they were given (runs are immutable, shared_ptr<const>) and
// hand their results back to the GUI thread with queued calls.
#ifndef ACCORDION_GUI_MODEL_EXPLORER_DOCUMENT_H_
#define ACCORDION_GUI_MODEL_EXPLORER_DOCUMENT_H_

#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <map>
#include <memory>
#include <vector>

#include "gui/model/eta_interval_sweep.h"
#include "gui/model/explorer_settings.h"
#include "gui/model/policy_table.h"
#include "gui/model/regime_analysis.h"
#include "gui/model/run_data.h"
#include "gui/model/what_if.h"

class QThreadPool;
class QTimer;

namespace accordion::gui {

class ExplorerDocument : public QObject {
  Q_OBJECT

 public:
  explicit ExplorerDocument(QObject* parent = nullptr);
  ~ExplorerDocument() override;

  // --- runs
  int runCount() const { return static_cast<int>(runs_.size()); }
  // Running traces opened before their first epoch, waited for.
  QStringList waitingPaths() const { return waiting_; }
  std::shared_ptr<const RunData> run(int index) const;
  int currentIndex() const { return current_; }  // -1 when no run is open
  std::shared_ptr<const RunData> currentRun() const;
  int indexOfPath(const QString& path) const;  // -1 when not open
  // Runs drawn in the comparison views (all opened runs by default).
  bool isCompared(int index) const;
  void setCompared(int index, bool compared);
  std::vector<std::shared_ptr<const RunData>> comparedRuns() const;
  // The run's palette index in every view that draws several runs: one per
  // setting among the open runs (RunColours), so seeds share theirs.
  int colourOf(int index) const;

  // Reads the traces in the background; each one that loads is added (or
  // replaces the run already open from that path) in the order given, and
  // the first becomes current (unless `make_current` is false: traces a
  // watched folder finds later join the list without taking the view).
  // Failures emit openFailed with the reader's one-line reason.
  void open(const QStringList& paths, bool make_current = true);
  // Blocks until every open() so far has finished (tests, the report).
  void waitForLoads();
  void closeRun(int index);
  void setCurrentRun(int index);

  // --- settings
  // Each run has its own schedule settings: it opens with those it was
  // recorded with (its scheme, levels, η and interval), and what is explored
  // on it stays with it - making another run current shows that run's, never
  // the last run's.
  const ScheduleSettings& scheduleSettings() const { return schedule_settings_; }
  void setScheduleSettings(const ScheduleSettings& settings);
  // The current run's recorded settings (defaults when no run is open), and
  // whether the current settings are those.
  ScheduleSettings recordedSettings() const;
  bool settingsAsRecorded() const { return schedule_settings_ == recordedSettings(); }
  // Back to the current run's recorded settings.
  void resetToRecorded();
  const WhatIfSettings& whatIfSettings() const { return what_if_settings_; }
  void setWhatIfSettings(const WhatIfSettings& settings);
  // Whether every view that lists layers lists blocks instead (LayerBlocks:
  // "layer1.0.conv1.weight" is in "layer1"): one setting for all of them, so
  // the norms, ratios, layer list and level map never disagree.
  bool groupByBlock() const { return group_by_block_; }
  void setGroupByBlock(bool on);

  // --- derived for the current run (null when no run is open)
  std::shared_ptr<const RegimeAnalysis> regimes() const { return regimes_; }

  // The analytic estimate for the current settings; null until it lands or
  // when the run cannot be replayed (projectionProblem() says why).
  std::shared_ptr<const WhatIfProjection> estimate() const { return estimate_; }
  // The SimGrid replay for the current settings; null until it lands.
  std::shared_ptr<const WhatIfProjection> simulation() const { return simulation_; }
  // The best projection for the current settings: the simulation when it
  // has landed, else the estimate.
  std::shared_ptr<const WhatIfProjection> projection() const;
  QString projectionProblem() const { return projection_problem_; }
  std::shared_ptr<const std::vector<SweepPointResult>> sweep() const { return sweep_; }

  // --- the η × interval sweep (the Sweep tab): on request only, it is a
  // few hundred schedules and α–β replays. It depends on the current run,
  // scheme, levels and cluster but not on η or the interval, so moving
  // those keeps it. Starts computing it in the background unless the one
  // held or running is for the same inputs; etaIntervalSweepChanged when it
  // lands (or is dropped because they changed).
  void requestEtaIntervalSweep();
  // For the current inputs; null until it lands, or when no run is open.
  std::shared_ptr<const EtaIntervalSweep> etaIntervalSweep() const;
  bool etaIntervalSweepRunning() const { return eta_interval_job_.running; }

  // --- the policy comparison (the Policies tab): static low and high,
  // Accordion and AdaQS or Smith et al. on the current run, each projected
  // by the α–β estimate on the what-if's cluster (PolicyTable). On request
  // only, like the η × interval sweep: it depends on the run, every schedule
  // setting and the cluster. Starts it in the background unless the one held
  // or running is for the same inputs; policiesChanged when it lands.
  void requestPolicies();
  // For the current inputs; null until it lands, or when no run is open.
  std::shared_ptr<const PolicyTable> policies() const;
  bool policiesRunning() const { return policies_job_.running; }

  // --- SimGrid replay
  void startSimulation();
  void cancelSimulation();
  bool simulationRunning() const { return simulation_running_; }
  // Start the replay by itself once settings have been still for a moment.
  void setAutoSimulate(bool on);
  bool autoSimulate() const { return auto_simulate_; }

  // --- live runs: traces still being written are re-read when they grow. A
  // running trace opened before its first epoch is waited for (signal
  // waitingForFirstEpoch) and added when that epoch lands; so is a path that
  // does not exist yet in a directory that does (the trainer is starting and
  // will create it), checked as often as the live runs.
  void setFollowLive(bool on);
  bool followLive() const { return follow_live_; }
  // Checks every live run now (a timer does it every second).
  void pollLiveRuns();

  // Blocks until the background estimate, sweep and simulation started so
  // far are done and their results delivered (tests and the report).
  void waitForIdle();

 signals:
  void runsChanged();
  void currentRunChanged();
  void openFailed(const QString& path, const QString& message);
  void loadingChanged(bool loading);
  void scheduleSettingsChanged();
  void whatIfSettingsChanged();
  void regimesChanged();
  void estimateChanged();
  void simulationStarted();
  void simulationProgress(int done, int total);
  void simulationFinished();  // landed, failed or cancelled
  void simulationFailed(const QString& message);
  void sweepChanged();
  void etaIntervalSweepChanged();
  void policiesChanged();
  void liveRunUpdated(int index);
  void waitingForFirstEpoch(const QString& path);
  void comparedChanged();
  void groupByBlockChanged();

 private:
  // At most one job of a kind runs; a request while it runs is remembered
  // and served, with the settings of that moment, when it ends.
  struct JobSlot {
    bool running = false;
    bool again = false;
    std::shared_ptr<std::atomic<bool>> cancel;
  };

  void rederive();
  void settingsOrRunChanged(bool rederive_regimes);
  void startEstimate();
  void startSweep();
  // What the η × interval sweep is computed from: run, scheme, levels, cluster.
  struct EtaIntervalInputs {
    std::shared_ptr<const RunData> run;
    ScheduleSettings schedule;  // η and interval as the run recorded them
    WhatIfSettings what_if;
    bool operator==(const EtaIntervalInputs& o) const {
      return run == o.run && schedule == o.schedule && what_if == o.what_if;
    }
  };
  EtaIntervalInputs etaIntervalInputs() const;
  // What the policy comparison is computed from: the same, with the
  // schedule settings as they are (η and the interval included).
  EtaIntervalInputs policyInputs() const;
  void scheduleAutoSimulation();
  void startLoad(const QString& path, bool reload, uint64_t order);
  void deliverLoad(const QString& path, std::shared_ptr<const RunData> run, const QString& error, bool reload,
                   uint64_t order, bool not_started);
  void updateLiveTimer();
  // Takes the settings of the run at `current_`: explored on it, else recorded.
  void adoptRunSettings();
  bool busy() const;

  std::vector<std::shared_ptr<const RunData>> runs_;
  std::vector<int> colours_;  // RunColours(runs_)
  std::vector<bool> compared_;
  std::vector<uint64_t> order_;  // when each run was asked for: list order
  uint64_t next_order_ = 0;
  std::map<std::string, ScheduleSettings> explored_;  // by run path: settings changed from the recorded ones
  int current_ = -1;
  ScheduleSettings schedule_settings_;
  WhatIfSettings what_if_settings_;
  std::shared_ptr<const RegimeAnalysis> regimes_;
  std::shared_ptr<const WhatIfProjection> estimate_;
  std::shared_ptr<const WhatIfProjection> simulation_;
  std::shared_ptr<const std::vector<SweepPointResult>> sweep_;
  std::shared_ptr<const EtaIntervalSweep> eta_interval_sweep_;
  EtaIntervalInputs eta_interval_inputs_;  // of eta_interval_sweep_, or of the job running
  std::shared_ptr<const PolicyTable> policies_;
  EtaIntervalInputs policy_inputs_;  // of policies_, or of the job running
  QString projection_problem_;

  // Bumped whenever the current run or any setting changes.
  uint64_t generation_ = 0;
  JobSlot estimate_job_;
  JobSlot sweep_job_;
  JobSlot eta_interval_job_;
  JobSlot policies_job_;
  std::shared_ptr<std::atomic<bool>> simulation_cancel_;
  uint64_t simulation_id_ = 0;  // the replay whose answer is awaited
  int simulations_in_flight_ = 0;
  bool simulation_running_ = false;
  bool auto_simulate_ = false;
  bool follow_live_ = true;
  bool group_by_block_ = false;
  int pending_loads_ = 0;
  QStringList make_current_;  // first path of each open(): current once loaded
  QStringList live_checks_;   // live traces being checked or re-read
  QStringList waiting_;       // running traces with no finished epoch yet
  std::vector<uint64_t> waiting_order_;
  QThreadPool* pool_ = nullptr;
  QThreadPool* simulation_pool_ = nullptr;
  QTimer* auto_simulation_timer_ = nullptr;
  QTimer* sweep_timer_ = nullptr;
  QTimer* live_timer_ = nullptr;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_EXPLORER_DOCUMENT_H_
