// MainWindow: accordion-gui's window - the run list, the schedule controls
// and the tabs of ExplorerViews() around one ExplorerDocument, with the
// menus, drag and drop, recent files and the status bar a desktop app is
// expected to have.
#ifndef ACCORDION_GUI_APP_MAIN_WINDOW_H_
#define ACCORDION_GUI_APP_MAIN_WINDOW_H_

#include <QMainWindow>
#include <QPointer>
#include <QStringList>
#include <QTabWidget>

class QDockWidget;
class QLabel;
class QMenu;
class QMessageBox;

namespace accordion::gui {

class CompareView;
class ExplorerDocument;
class LevelMapView;
class PlotWidget;
class PoliciesView;
class RegimesView;
class RunListView;
class ScheduleControls;
class SweepView;
class TimelineView;
class TraceFolder;
class WhatIfView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  ExplorerDocument* document() const { return document_; }
  RunListView* runList() const { return run_list_; }
  ScheduleControls* controls() const { return controls_; }
  // The tab of type View (one of ExplorerViews()), or null.
  template <class View>
  View* view() const {
    for (int i = 0; i < tabs_->count(); ++i) {
      if (auto* v = qobject_cast<View*>(tabs_->widget(i))) return v;
    }
    return nullptr;
  }
  RegimesView* regimesView() const;
  LevelMapView* levelMapView() const;
  WhatIfView* whatIfView() const;
  CompareView* compareView() const;
  TimelineView* timelineView() const;
  SweepView* sweepView() const;
  PoliciesView* policiesView() const;
  QTabWidget* tabs() const { return tabs_; }
  // Folders opened (File > Open folder…, or a directory on the command
  // line), watched for new traces.
  QStringList watchedFolders() const;

  // The figure File > Export and Edit > Copy act on: the plot last pointed
  // at in the shown tab, else the tab's first.
  PlotWidget* currentFigure() const;
  bool exportCurrentFigure(const QString& path, QString* error);

  // The last error shown to the user and how many there were (tests); the
  // dialog itself is a QMessageBox named "errorDialog".
  QString lastError() const { return last_error_; }
  // Every error reported since the window opened, in order (several bad
  // traces in a folder: one each).
  const QStringList& errors() const { return errors_; }
  int errorCount() const { return error_count_; }
  // Off: errors go to the status bar only (the --screenshot mode).
  void setErrorDialogsEnabled(bool on) { error_dialogs_ = on; }

  // Each tab's window grabbed to `dir`/<tab>.png; false with `error` set.
  bool saveTabScreenshots(const QString& dir, QString* error);
  // Tab names as --tab and the screenshots use them: ExplorerViewKeys().
  static QStringList tabKeys();

 public slots:
  // Traces, and folders: a folder opens every trace under it and each one
  // written there later (TraceFolder).
  void openFiles(const QStringList& paths);
  void openWithDialog();
  void openFolderWithDialog();
  void closeCurrentRun();
  void copyFigure();
  void exportFigureWithDialog(const QString& suffix);
  void about();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void createMenus();
  void createDocks();
  void rebuildRecentMenu();
  void openFolder(const QString& dir);
  void reportError(const QString& title, const QString& text);
  void updateTitle();
  void updateStatus();
  void restoreSettings();
  void saveSettings() const;

  ExplorerDocument* document_;
  RunListView* run_list_;
  ScheduleControls* controls_;
  QTabWidget* tabs_;
  QDockWidget* runs_dock_ = nullptr;
  bool short_window_ = false;  // below kShortWindow: a smaller run list
  QMenu* recent_menu_ = nullptr;
  QList<TraceFolder*> folders_;
  QLabel* state_label_ = nullptr;
  QPointer<PlotWidget> last_figure_;
  QPointer<QMessageBox> error_box_;
  QString last_error_;
  QStringList errors_;
  int error_count_ = 0;
  bool error_dialogs_ = true;
  bool loading_ = false;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_MAIN_WINDOW_H_
