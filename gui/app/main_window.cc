#include "gui/app/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QUrl>

#include "common/version.h"
#include "gui/app/compare_view.h"
#include "gui/app/explorer_views.h"
#include "gui/app/export_check.h"
#include "gui/app/level_map_view.h"
#include "gui/app/plot_widget.h"
#include "gui/app/policies_view.h"
#include "gui/app/recent_files.h"
#include "gui/app/regimes_view.h"
#include "gui/app/run_list_view.h"
#include "gui/app/schedule_controls.h"
#include "gui/app/sweep_view.h"
#include "gui/app/timeline_view.h"
#include "gui/app/what_if_view.h"
#include "gui/model/explorer_document.h"
#include "gui/model/trace_folder.h"

namespace accordion::gui {

namespace {

const char kTraceFilter[] = "Accordion traces (*.trace *.db *.sqlite);;All files (*)";
const char kGeometryKey[] = "mainWindow/geometry";
const char kStateKey[] = "mainWindow/state";
const char kOpenDirKey[] = "open/lastDir";
// The run list's height in a window taller than kShortWindow, and below
// (five rows and three), besides its filter box.
constexpr int kShortWindow = 850;
constexpr int kRunsDockTall = 165;
constexpr int kRunsDockShort = 112;

}  // namespace

QStringList MainWindow::tabKeys() { return ExplorerViewKeys(); }

RegimesView* MainWindow::regimesView() const { return view<RegimesView>(); }
LevelMapView* MainWindow::levelMapView() const { return view<LevelMapView>(); }
WhatIfView* MainWindow::whatIfView() const { return view<WhatIfView>(); }
CompareView* MainWindow::compareView() const { return view<CompareView>(); }
TimelineView* MainWindow::timelineView() const { return view<TimelineView>(); }
SweepView* MainWindow::sweepView() const { return view<SweepView>(); }
PoliciesView* MainWindow::policiesView() const { return view<PoliciesView>(); }

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      document_(new ExplorerDocument(this)),
      run_list_(new RunListView(document_, this)),
      controls_(new ScheduleControls(document_, this)),
      tabs_(new QTabWidget(this)) {
  setObjectName("mainWindow");
  setAcceptDrops(true);
  tabs_->setObjectName("tabs");
  tabs_->setDocumentMode(true);
  for (const ExplorerView& view : ExplorerViews()) {
    const int tab = tabs_->addTab(view.make(document_, tabs_), tr(view.title));
    tabs_->setTabToolTip(tab, tr(view.tool_tip));
  }
  setCentralWidget(tabs_);

  for (PlotWidget* plot : tabs_->findChildren<PlotWidget*>()) {
    connect(plot, &PlotWidget::activated, this, [this](PlotWidget* p) { last_figure_ = p; });
  }

  createDocks();
  createMenus();
  state_label_ = new QLabel(this);
  statusBar()->addPermanentWidget(state_label_);

  connect(run_list_, &RunListView::closeRequested, document_, &ExplorerDocument::closeRun);
  connect(document_, &ExplorerDocument::openFailed, this, [this](const QString& path, const QString& message) {
    RecentFiles::remove(path);
    rebuildRecentMenu();
    reportError(tr("Cannot open trace"), tr("Cannot open %1:\n%2").arg(QDir::toNativeSeparators(path), message));
  });
  connect(document_, &ExplorerDocument::loadingChanged, this, [this](bool loading) {
    loading_ = loading;
    updateStatus();
  });
  connect(document_, &ExplorerDocument::runsChanged, this, [this] {
    updateTitle();
    updateStatus();
  });
  connect(document_, &ExplorerDocument::currentRunChanged, this, &MainWindow::updateTitle);
  connect(document_, &ExplorerDocument::simulationStarted, this, &MainWindow::updateStatus);
  connect(document_, &ExplorerDocument::simulationFinished, this, &MainWindow::updateStatus);
  connect(document_, &ExplorerDocument::simulationProgress, this, [this](int done, int total) {
    state_label_->setText(tr("SimGrid: %1 of %2 patterns").arg(done).arg(total));
  });
  connect(document_, &ExplorerDocument::simulationFailed, this, [this](const QString& message) {
    statusBar()->showMessage(tr("SimGrid replay failed: %1").arg(message), 10000);
  });
  connect(document_, &ExplorerDocument::waitingForFirstEpoch, this, [this](const QString& path) {
    const QString name = QFileInfo(path).fileName();
    statusBar()->showMessage(
        QFileInfo::exists(path)
            ? tr("%1 is being written and has no finished epoch yet: it opens when the first one lands").arg(name)
            : tr("Waiting for %1 to appear: nothing is there yet; it opens when a run writes its first epoch")
                  .arg(name),
        15000);
    updateStatus();
  });
  connect(document_, &ExplorerDocument::liveRunUpdated, this, [this](int index) {
    const auto run = document_->run(index);
    if (!run) return;
    const RunSummary& s = run->summary;
    statusBar()->showMessage(
        tr("%1 updated: epoch %2 of %3%4")
            .arg(QString::fromStdString(s.name))
            .arg(s.epochs)
            .arg(s.epochs_planned)
            .arg(run->live() ? tr(", still running") : tr(", %1").arg(QString::fromStdString(s.status))),
        8000);
  });

  resize(1500, 950);
  restoreSettings();
  updateTitle();
  updateStatus();
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks() {
  auto* runs = runs_dock_ = new QDockWidget(tr("Runs"), this);
  runs->setObjectName("runsDock");
  runs->setWidget(run_list_);
  runs->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                    QDockWidget::DockWidgetClosable);
  addDockWidget(Qt::TopDockWidgetArea, runs);

  auto* scroll = new QScrollArea(this);
  scroll->setWidget(controls_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setMinimumWidth(controls_->sizeHint().width() + 20);
  auto* schedule = new QDockWidget(tr("Schedule"), this);
  schedule->setObjectName("scheduleDock");
  schedule->setWidget(scroll);
  addDockWidget(Qt::LeftDockWidgetArea, schedule);
  // The top dock spans the full width: the run table has many columns.
  setCorner(Qt::TopLeftCorner, Qt::TopDockWidgetArea);
  setCorner(Qt::TopRightCorner, Qt::TopDockWidgetArea);
  resizeDocks({runs}, {kRunsDockTall + run_list_->filterRowHeight()}, Qt::Vertical);
  resizeDocks({schedule}, {290}, Qt::Horizontal);
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::openWithDialog);
  open->setShortcut(QKeySequence::Open);
  QAction* open_folder = file->addAction(tr("Open &folder…"), this, &MainWindow::openFolderWithDialog);
  open_folder->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
  open_folder->setStatusTip(tr("Every trace under a folder, and each new one written there"));
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  rebuildRecentMenu();
  QAction* close = file->addAction(tr("&Close run"), this, &MainWindow::closeCurrentRun);
  close->setShortcut(QKeySequence::Close);
  file->addSeparator();
  QMenu* export_menu = file->addMenu(tr("&Export current figure"));
  export_menu->addAction(tr("As &PNG…"), this, [this] { exportFigureWithDialog("png"); });
  export_menu->addAction(tr("As P&DF…"), this, [this] { exportFigureWithDialog("pdf"); });
  export_menu->addAction(tr("Data as &CSV…"), this, [this] { exportFigureWithDialog("csv"); });
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* copy = edit->addAction(tr("&Copy figure"), this, &MainWindow::copyFigure);
  copy->setShortcut(QKeySequence::Copy);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());
  view->addSeparator();
  QAction* follow = view->addAction(tr("&Follow live runs"));
  follow->setCheckable(true);
  follow->setChecked(document_->followLive());
  follow->setToolTip(tr("Re-read traces still being written when they grow"));
  connect(follow, &QAction::toggled, document_, &ExplorerDocument::setFollowLive);
  for (int i = 0; i < tabs_->count(); ++i) {
    QAction* tab = view->addAction(tabs_->tabText(i), this, [this, i] { tabs_->setCurrentIndex(i); });
    // Alt+1 to Alt+9: a tenth tab has its menu entry only.
    if (i < 9) tab->setShortcut(QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_1 + i)));
  }

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About accordion-gui"), this, &MainWindow::about)->setMenuRole(QAction::AboutRole);
  help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt)->setMenuRole(QAction::AboutQtRole);
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  const QStringList files = RecentFiles::load();
  for (int i = 0; i < files.size(); ++i) {
    const QString& path = files[i];
    // &1..&9, 1&0: keyboard access without clashing with file names.
    const QString label = i < 9 ? QStringLiteral("&%1  %2").arg(i + 1).arg(QFileInfo(path).fileName())
                                : QStringLiteral("1&0  %1").arg(QFileInfo(path).fileName());
    QAction* action = recent_menu_->addAction(label, this, [this, path] { openFiles({path}); });
    action->setToolTip(path);
    action->setStatusTip(path);
  }
  if (!files.isEmpty()) {
    recent_menu_->addSeparator();
    recent_menu_->addAction(tr("Clear list"), this, [this] {
      RecentFiles::clear();
      rebuildRecentMenu();
    });
  }
  recent_menu_->setEnabled(!files.isEmpty());
}

void MainWindow::openFiles(const QStringList& paths) {
  if (paths.isEmpty()) return;
  QStringList absolute;
  for (const QString& path : paths) {
    if (QFileInfo(path).isDir()) {
      openFolder(path);
      continue;
    }
    absolute << QFileInfo(path).absoluteFilePath();
    if (QFileInfo(path).isFile()) RecentFiles::add(path);
  }
  rebuildRecentMenu();
  if (!absolute.isEmpty()) document_->open(absolute);
}

void MainWindow::openFolder(const QString& dir) {
  const QString root = QFileInfo(dir).absoluteFilePath();
  if (watchedFolders().contains(root)) return;
  auto* folder = new TraceFolder(root, this);
  folders_.append(folder);
  connect(folder, &TraceFolder::tracesFound, this, [this, root](const QStringList& paths, bool initial) {
    const QString name = QDir::toNativeSeparators(root);
    if (paths.isEmpty()) {
      statusBar()->showMessage(tr("No trace in %1 yet: traces written there open as they appear").arg(name), 15000);
      return;
    }
    // The first scan's first trace becomes current unless a run already
    // is; later ones join the list without taking the view.
    document_->open(paths, initial && document_->currentIndex() < 0);
    if (!initial) {
      statusBar()->showMessage(
          tr("New in %1: %2").arg(name, QFileInfo(paths.first()).fileName()) +
              (paths.size() > 1 ? tr(" and %n more", "", static_cast<int>(paths.size()) - 1) : QString()),
          8000);
    }
  });
  run_list_->setWatchedFolders(watchedFolders());
  updateStatus();
}

QStringList MainWindow::watchedFolders() const {
  QStringList roots;
  for (const TraceFolder* folder : folders_) roots << folder->root();
  return roots;
}

void MainWindow::openFolderWithDialog() {
  QSettings settings;
  const QString dir =
      QFileDialog::getExistingDirectory(this, tr("Open a folder of traces"), settings.value(kOpenDirKey).toString());
  if (dir.isEmpty()) return;
  settings.setValue(kOpenDirKey, dir);
  openFiles({dir});
}

void MainWindow::openWithDialog() {
  QSettings settings;
  const QStringList paths =
      QFileDialog::getOpenFileNames(this, tr("Open traces"), settings.value(kOpenDirKey).toString(), tr(kTraceFilter));
  if (paths.isEmpty()) return;
  settings.setValue(kOpenDirKey, QFileInfo(paths.first()).absolutePath());
  openFiles(paths);
}

void MainWindow::closeCurrentRun() {
  if (document_->currentIndex() >= 0) document_->closeRun(document_->currentIndex());
}

PlotWidget* MainWindow::currentFigure() const {
  QWidget* tab = tabs_->currentWidget();
  if (!tab) return nullptr;
  if (last_figure_ && tab->isAncestorOf(last_figure_)) return last_figure_;
  const auto plots = tab->findChildren<PlotWidget*>();
  return plots.isEmpty() ? nullptr : plots.first();
}

bool MainWindow::exportCurrentFigure(const QString& path, QString* error) {
  PlotWidget* plot = currentFigure();
  if (!plot) {
    *error = tr("no figure in this tab");
    return false;
  }
  return plot->exportTo(path, error);
}

void MainWindow::copyFigure() {
  if (PlotWidget* plot = currentFigure()) {
    plot->copyToClipboard();
    statusBar()->showMessage(tr("Copied %1 to the clipboard").arg(plot->figureName()), 3000);
  }
}

void MainWindow::exportFigureWithDialog(const QString& suffix) {
  if (PlotWidget* plot = currentFigure()) plot->exportWithDialog(suffix);
}

void MainWindow::about() {
  QMessageBox::about(this, tr("About accordion-gui"),
                     tr("<h3>accordion-gui %1</h3>"
                        "<p>Explore data-parallel training traces recorded by the Accordion Toolkit: the critical "
                        "regimes Accordion finds from the change of each layer's gradient norm, the schedule it "
                        "derives under any setting, the communication it saves and what that is worth on another "
                        "cluster (α–β estimate or SimGrid replay).</p>"
                        "<p>Accordion: Agarwal, Wang, Lee, Venkataraman, Papailiopoulos, <i>Adaptive Gradient "
                        "Communication via Critical Learning Regime Identification</i>, MLSys 2021.</p>")
                         .arg(kVersion));
}

void MainWindow::reportError(const QString& title, const QString& text) {
  last_error_ = text;
  errors_.append(text);
  ++error_count_;
  // The whole message on one line: its first line alone ("Cannot open X:")
  // left out the reason.
  statusBar()->showMessage(QString(text).replace('\n', ' '), 10000);
  if (!error_dialogs_) return;
  // Several bad files at once: one dialog listing them, not a stack.
  if (error_box_ && error_box_->isVisible()) {
    error_box_->setText(error_box_->text() + "\n\n" + text);
    return;
  }
  auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
  box->setObjectName("errorDialog");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_box_ = box;
  // open(), not exec(): no nested event loop, the document keeps working.
  box->open();
}

void MainWindow::updateTitle() {
  const auto run = document_->currentRun();
  setWindowTitle(run ? tr("%1 — Accordion explorer").arg(QString::fromStdString(run->summary.name))
                     : tr("Accordion explorer"));
}

void MainWindow::updateStatus() {
  QStringList parts;
  if (loading_) parts << tr("Loading traces…");
  if (document_->simulationRunning()) parts << tr("SimGrid replay running…");
  if (parts.isEmpty()) {
    int live = 0;
    for (int i = 0; i < document_->runCount(); ++i) live += document_->run(i) && document_->run(i)->live();
    parts << tr("%n run(s) open", "", document_->runCount());
    if (live > 0) parts << tr("%n live", "", live);
    if (!folders_.isEmpty()) parts << tr("watching %n folder(s)", "", static_cast<int>(folders_.size()));
    // Until it lands, a waited-for trace is in no list: say so here.
    for (const QString& path : document_->waitingPaths()) parts << tr("waiting for %1").arg(QFileInfo(path).fileName());
  }
  state_label_->setText(parts.join(QStringLiteral(" · ")));
}

bool MainWindow::saveTabScreenshots(const QString& dir, QString* error) {
  if (!QDir().mkpath(dir)) {
    *error = tr("cannot create %1").arg(dir);
    return false;
  }
  const QStringList keys = tabKeys();
  for (int i = 0; i < tabs_->count() && i < keys.size(); ++i) {
    tabs_->setCurrentIndex(i);
    // A tab may start work when shown (the Sweep tab's sweep): let it land.
    document_->waitForIdle();
    // Let layouts settle and queued replots paint before grabbing.
    for (int round = 0; round < 5; ++round) QApplication::processEvents();
    const QString path = dir + "/" + keys[i] + ".png";
    const ExportClaim claim(path, error);
    if (!claim.ok()) return false;
    if (!grab().save(path)) {
      *error = tr("cannot write %1").arg(path);
      return false;
    }
  }
  tabs_->setCurrentIndex(0);
  return true;
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  // On a laptop's height the run list shows three rows, not five: the
  // figures below need the pixels more. Only when the window crosses the
  // line, so a height the person dragged the dock to stays.
  const bool short_window = height() < kShortWindow;
  if (short_window != short_window_) {
    short_window_ = short_window;
    resizeDocks({runs_dock_}, {(short_window ? kRunsDockShort : kRunsDockTall) + run_list_->filterRowHeight()},
                Qt::Vertical);
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveSettings();
  QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  for (const QUrl& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) {
      event->acceptProposedAction();
      return;
    }
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList paths;
  for (const QUrl& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) paths << url.toLocalFile();
  }
  if (paths.isEmpty()) return;
  event->acceptProposedAction();
  openFiles(paths);
}

void MainWindow::restoreSettings() {
  QSettings settings;
  restoreGeometry(settings.value(kGeometryKey).toByteArray());
  restoreState(settings.value(kStateKey).toByteArray());
}

void MainWindow::saveSettings() const {
  QSettings settings;
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState());
}

}  // namespace accordion::gui
