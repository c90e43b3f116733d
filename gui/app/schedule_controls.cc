#include "gui/app/schedule_controls.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <cmath>

#include "analysis/schedule_report.h"
#include "common/number_format.h"
#include "gui/app/run_list_view.h"
#include "gui/figures/figure_style.h"
#include "gui/model/explorer_document.h"
#include "traces/scheme_description.h"

namespace accordion::gui {

namespace {

// The slider moves in the η spin box's steps.
constexpr double kEtaStep = 0.05;

QString LevelText(Scheme scheme, double level) { return QString::fromStdString(LevelName(scheme, level)); }

// "1.44× fewer floats than", "as many floats as".
QString Comparison(double base, double accordion) {
  if (!(accordion > 0) || !(base > 0)) return QStringLiteral("–");
  const double r = base / accordion;
  if (std::fabs(r - 1) < 0.005) return QStringLiteral("as many floats as");
  if (r > 1) return QStringLiteral("%1× fewer floats than").arg(r, 0, 'f', 2);
  return QStringLiteral("%1× more floats than").arg(1 / r, 0, 'f', 2);
}

}  // namespace

ScheduleControls::ScheduleControls(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      eta_slider_(new QSlider(Qt::Horizontal, this)),
      eta_spin_(new QDoubleSpinBox(this)),
      interval_spin_(new QSpinBox(this)),
      scheme_combo_(new QComboBox(this)),
      low_spin_(new QDoubleSpinBox(this)),
      high_spin_(new QDoubleSpinBox(this)),
      resolved_(new QLabel(this)),
      readout_(new QLabel(this)),
      state_(new QLabel(this)),
      reset_(new QPushButton(tr("Reset to recorded"), this)) {
  setUpWidgets();
  layOut();
  connectWidgets();
  connect(document_, &ExplorerDocument::scheduleSettingsChanged, this, &ScheduleControls::showSettings);
  connect(document_, &ExplorerDocument::scheduleSettingsChanged, this, &ScheduleControls::showState);
  connect(document_, &ExplorerDocument::currentRunChanged, this, &ScheduleControls::showState);
  connect(document_, &ExplorerDocument::regimesChanged, this, &ScheduleControls::showAnalysis);
  connect(document_, &ExplorerDocument::currentRunChanged, this, &ScheduleControls::showAnalysis);
  showSettings();
  showAnalysis();
  showState();
}

void ScheduleControls::setUpWidgets() {
  eta_slider_->setObjectName("etaSlider");
  eta_slider_->setRange(1, static_cast<int>(std::lround(1.0 / kEtaStep)));
  eta_slider_->setPageStep(2);
  eta_slider_->setToolTip(
      tr("η: a check finds a layer critical when its gradient norm changed by at "
         "least this fraction since the previous check"));
  eta_spin_->setObjectName("etaSpin");
  eta_spin_->setRange(kEtaStep, 1.0);
  eta_spin_->setSingleStep(kEtaStep);
  eta_spin_->setDecimals(2);
  eta_spin_->setToolTip(eta_slider_->toolTip());
  interval_spin_->setObjectName("intervalSpin");
  interval_spin_->setRange(1, 200);
  interval_spin_->setSuffix(tr(" epochs"));
  interval_spin_->setToolTip(tr("Accordion checks the gradient norms every this many epochs"));
  scheme_combo_->setObjectName("schemeCombo");
  scheme_combo_->addItem(tr("as recorded"));
  for (const SchemeDescription& d : AllSchemes()) {
    if (d.has_levels())
      scheme_combo_->addItem(QCoreApplication::translate("Scheme", d.title), static_cast<int>(d.scheme));
  }
  scheme_combo_->setToolTip(tr("Explore the run as if it had used another scheme (a dense run has none)"));
  for (QDoubleSpinBox* spin : {low_spin_, high_spin_}) {
    spin->setMinimum(0);  // 0 is the "auto" special value
    spin->setMaximum(1e7);
    spin->setSpecialValueText(tr("auto"));
    spin->setKeyboardTracking(false);
  }
  low_spin_->setObjectName("lowLevelSpin");
  high_spin_->setObjectName("highLevelSpin");
  low_spin_->setToolTip(
      tr("Level inside critical regimes (little compression). "
         "auto: the run's own pair, else the paper's defaults"));
  high_spin_->setToolTip(
      tr("Level outside critical regimes (heavy compression). "
         "auto: the run's own pair, else the paper's defaults"));
  resolved_->setObjectName("resolvedLabel");
  resolved_->setWordWrap(true);
  readout_->setObjectName("floatsReadout");
  readout_->setWordWrap(true);
  readout_->setTextFormat(Qt::RichText);
  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  state_->setObjectName("settingsStateLabel");
  state_->setWordWrap(true);
  state_->setTextFormat(Qt::RichText);
  reset_->setObjectName("resetToRecordedButton");
  reset_->setToolTip(tr("The scheme, levels, η and interval this run was recorded with"));
  connect(reset_, &QPushButton::clicked, document_, &ExplorerDocument::resetToRecorded);
}

void ScheduleControls::layOut() {
  auto* eta_row = new QHBoxLayout;
  eta_row->addWidget(eta_slider_, 1);
  eta_row->addWidget(eta_spin_);
  auto* state_row = new QHBoxLayout;
  state_row->addWidget(state_, 1);
  state_row->addWidget(reset_);
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow(state_row);
  form->addRow(tr("η (threshold)"), eta_row);
  form->addRow(tr("Check interval"), interval_spin_);
  form->addRow(tr("Scheme"), scheme_combo_);
  form->addRow(tr("Low level (critical)"), low_spin_);
  form->addRow(tr("High level (otherwise)"), high_spin_);
  auto* box = new QGroupBox(tr("Accordion schedule"), this);
  box->setLayout(form);
  auto* out_box = new QGroupBox(tr("Communication, per worker"), this);
  auto* out_layout = new QVBoxLayout(out_box);
  out_layout->addWidget(resolved_);
  out_layout->addWidget(readout_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(box);
  layout->addWidget(out_box);
  layout->addStretch(1);
}

void ScheduleControls::connectWidgets() {
  connect(eta_slider_, &QSlider::valueChanged, this, [this](int v) {
    if (!updating_) eta_spin_->setValue(v * kEtaStep);
  });
  connect(eta_spin_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    if (updating_) return;
    updating_ = true;
    eta_slider_->setValue(static_cast<int>(std::lround(v / kEtaStep)));
    updating_ = false;
    apply();
  });
  connect(interval_spin_, &QSpinBox::valueChanged, this, [this] {
    if (!updating_) apply();
  });
  connect(scheme_combo_, &QComboBox::currentIndexChanged, this, [this] {
    if (updating_) return;
    // The old pair means nothing under another scheme.
    updating_ = true;
    low_spin_->setValue(0);
    high_spin_->setValue(0);
    updating_ = false;
    apply();
  });
  connect(low_spin_, &QDoubleSpinBox::valueChanged, this, [this] {
    if (!updating_) apply();
  });
  connect(high_spin_, &QDoubleSpinBox::valueChanged, this, [this] {
    if (!updating_) apply();
  });
}

void ScheduleControls::showState() {
  const bool run = document_->currentRun() != nullptr;
  const bool recorded = document_->settingsAsRecorded();
  const ScheduleSettings r = document_->recordedSettings();
  // Short, to share a line with the button; the tooltip has the values.
  const QString what = tr("scheme and levels as the trace has them, η %1, %2")
                           .arg(r.eta)
                           .arg(QString::fromStdString(EveryEpochs(r.interval)));
  state_->setText(!run       ? QString()
                  : recorded ? tr("<span style='color:#555'>As recorded</span>")
                             : tr("<b style='color:#b36b00'>Explored</b>"));
  state_->setToolTip(
      recorded ? tr("The settings this run was trained with: %1").arg(what)
               : tr("Changed from the settings this run was trained with (%1); each run keeps its own").arg(what));
  reset_->setEnabled(run && !recorded);
}

void ScheduleControls::apply() {
  ScheduleSettings s = document_->scheduleSettings();
  s.eta = eta_spin_->value();
  s.interval = interval_spin_->value();
  const QVariant scheme = scheme_combo_->currentData();
  s.scheme = scheme.isValid() ? std::optional<Scheme>(static_cast<Scheme>(scheme.toInt())) : std::nullopt;
  s.level_low = low_spin_->value() > 0 ? std::optional<double>(low_spin_->value()) : std::nullopt;
  s.level_high = high_spin_->value() > 0 ? std::optional<double>(high_spin_->value()) : std::nullopt;
  if (s != document_->scheduleSettings()) document_->setScheduleSettings(s);
}

void ScheduleControls::showSettings() {
  const ScheduleSettings& s = document_->scheduleSettings();
  updating_ = true;
  eta_spin_->setValue(s.eta);
  eta_slider_->setValue(static_cast<int>(std::lround(s.eta / kEtaStep)));
  interval_spin_->setValue(s.interval);
  scheme_combo_->setCurrentIndex(s.scheme ? scheme_combo_->findData(static_cast<int>(*s.scheme)) : 0);
  adaptLevelSpins();
  low_spin_->setValue(s.level_low.value_or(0));
  high_spin_->setValue(s.level_high.value_or(0));
  updating_ = false;
}

void ScheduleControls::adaptLevelSpins() {
  const auto analysis = document_->regimes();
  // With no run open any shape does; the first scheme of the menu's.
  Scheme scheme = Scheme::kPowerSgd;
  if (analysis)
    scheme = analysis->resolved.scheme;
  else if (auto run = document_->currentRun())
    scheme = run->view().run.scheme;
  const bool was_updating = updating_;
  updating_ = true;
  for (QDoubleSpinBox* spin : {low_spin_, high_spin_}) {
    const double value = spin->value();
    switch (DescriptionOf(scheme).level_kind) {
      case LevelKind::kFraction:
        spin->setDecimals(3);
        spin->setMaximum(1);
        spin->setSingleStep(0.01);
        spin->setStepType(QAbstractSpinBox::DefaultStepType);
        spin->setPrefix(QString());
        break;
      case LevelKind::kGlobalBatch:
        spin->setDecimals(0);
        spin->setMaximum(1e7);
        spin->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
        spin->setPrefix(QString());
        break;
      case LevelKind::kRank:
      case LevelKind::kNone:
        spin->setDecimals(0);
        spin->setMaximum(4096);
        spin->setSingleStep(1);
        spin->setStepType(QAbstractSpinBox::DefaultStepType);
        spin->setPrefix(QString());
        break;
    }
    spin->setValue(value);
  }
  low_spin_->setEnabled(DescriptionOf(scheme).has_levels());
  high_spin_->setEnabled(DescriptionOf(scheme).has_levels());
  updating_ = was_updating;
}

void ScheduleControls::showAnalysis() {
  adaptLevelSpins();
  const auto run = document_->currentRun();
  const auto analysis = document_->regimes();
  if (!run || !analysis) {
    low_spin_->setSpecialValueText(tr("auto"));
    high_spin_->setSpecialValueText(tr("auto"));
    resolved_->setText(tr("Open a trace to derive its schedule."));
    readout_->clear();
    return;
  }
  const ResolvedSchedule& r = analysis->resolved;
  low_spin_->setSpecialValueText(tr("auto (%1)").arg(LevelText(r.scheme, r.level_low)));
  high_spin_->setSpecialValueText(tr("auto (%1)").arg(LevelText(r.scheme, r.level_high)));
  if (!analysis->schedulable) {
    resolved_->setText(tr("<b>No schedule:</b> %1").arg(QString::fromStdString(analysis->problem).toHtmlEscaped()));
    readout_->clear();
    return;
  }
  // The batch only grows (AccordionController's whole-model mode): a
  // critical regime after the switch keeps the large batch.
  const bool grows = DescriptionOf(r.scheme).level_kind == LevelKind::kGlobalBatch;
  resolved_->setText((grows ? tr("%1 until the first critical regime ends, then %2 for good")
                            : tr("%1 inside critical regimes, %2 outside"))
                         .arg(LevelText(r.scheme, r.level_low), LevelText(r.scheme, r.level_high)));
  const double acc = analysis->accordion_floats();
  const double low = analysis->low_floats();
  const double high = analysis->high_floats();
  readout_->setText(tr("<table cellspacing='3'>"
                       "<tr><td></td><td align='right'><i>floats</i></td><td align='right'><i>÷ Accordion</i></td></tr>"
                       "<tr><td><b>Accordion</b></td><td align='right'><b>%1</b></td><td></td></tr>"
                       "<tr><td>static low (%2)</td><td align='right'>%3</td><td align='right'>%4</td></tr>"
                       "<tr><td>static high (%5)</td><td align='right'>%6</td><td align='right'>%7</td></tr>"
                       "</table>"
                       "<p>Accordion sends <b>%8</b> static low and %9 static high.</p>")
                        .arg(FormatFloats(acc), LevelText(r.scheme, r.level_low), FormatFloats(low),
                             style::Times(low / acc), LevelText(r.scheme, r.level_high), FormatFloats(high),
                             style::Times(high / acc), Comparison(low, acc), Comparison(high, acc)));
}

}  // namespace accordion::gui
