// ScheduleControls: the panel that edits how Accordion's schedule is
// re-derived (η, check interval, scheme, level pair) and reads out what the
// derived schedule sends against the two static baselines. It only edits
// the document's ScheduleSettings; the schedule itself comes from the document.
// It says whether they are the current run's recorded settings or explored
// ones, with a button back to the recorded.
#ifndef ACCORDION_GUI_APP_SCHEDULE_CONTROLS_H_
#define ACCORDION_GUI_APP_SCHEDULE_CONTROLS_H_

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace accordion::gui {

class ExplorerDocument;

class ScheduleControls : public QWidget {
  Q_OBJECT

 public:
  explicit ScheduleControls(ExplorerDocument* document, QWidget* parent = nullptr);

  QSlider* etaSlider() const { return eta_slider_; }
  QDoubleSpinBox* etaSpin() const { return eta_spin_; }
  QSpinBox* intervalSpin() const { return interval_spin_; }
  QComboBox* schemeCombo() const { return scheme_combo_; }
  QDoubleSpinBox* lowSpin() const { return low_spin_; }
  QDoubleSpinBox* highSpin() const { return high_spin_; }
  QLabel* readout() const { return readout_; }
  // "as recorded" or "explored", and the button back to the recorded ones.
  QLabel* stateLabel() const { return state_; }
  QPushButton* resetButton() const { return reset_; }

 private:
  // The constructor's parts: names, ranges and tooltips; the form; the
  // widgets' signals, which write to the document through apply().
  void setUpWidgets();
  void layOut();
  void connectWidgets();
  void apply();            // widgets -> document
  void showSettings();     // document -> widgets
  void showAnalysis();     // read-outs and the levels' "auto (...)" texts
  void adaptLevelSpins();  // decimals and steps of the resolved scheme
  void showState();        // as recorded or explored

  ExplorerDocument* document_;
  QSlider* eta_slider_;
  QDoubleSpinBox* eta_spin_;
  QSpinBox* interval_spin_;
  QComboBox* scheme_combo_;
  QDoubleSpinBox* low_spin_;
  QDoubleSpinBox* high_spin_;
  QLabel* resolved_;
  QLabel* readout_;
  QLabel* state_;
  QPushButton* reset_;
  bool updating_ = false;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_SCHEDULE_CONTROLS_H_
