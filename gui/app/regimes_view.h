// RegimesView: the Regimes tab - per-layer gradient norms above the check
// ratios against η, with the critical regimes shaded, for the layers a
// person picks (filter, check list, grouped by block). The two plots share
// their x axis: zoomed together, and an epoch at the same x in both.
#ifndef ACCORDION_GUI_APP_REGIMES_VIEW_H_
#define ACCORDION_GUI_APP_REGIMES_VIEW_H_

#include <QMetaObject>
#include <QWidget>
#include <vector>

class QCheckBox;
class QLabel;
class QLineEdit;
class QListWidget;

namespace accordion::gui {

class ExplorerDocument;
class PlotWidget;

class RegimesView : public QWidget {
  Q_OBJECT

 public:
  explicit RegimesView(ExplorerDocument* document, QWidget* parent = nullptr);

  PlotWidget* normsPlot() const { return norms_; }
  PlotWidget* ratiosPlot() const { return ratios_; }
  QLineEdit* filterEdit() const { return filter_; }
  QListWidget* layerList() const { return layers_; }
  QCheckBox* groupCheck() const { return group_; }
  // How many times the plots were drawn (tests see redraws).
  int drawCount() const { return draw_count_; }
  // The layers drawn: checked and matching the filter.
  std::vector<int> shownLayers() const;

 public slots:
  void redraw();

 private:
  void rebuildLayerList();
  void applyFilter();
  void setVisibleChecked(bool checked);
  void linkXAxes();
  // Puts the two plots' axis rects at the same left and right edges, so an
  // epoch lies at the same x in both (their y labels and legends differ).
  void alignXAxes();

  ExplorerDocument* document_;
  QLineEdit* filter_;
  QListWidget* layers_;
  QCheckBox* group_;
  QLabel* caption_;
  PlotWidget* norms_;
  PlotWidget* ratios_;
  std::string layers_of_;  // path whose layers the list shows
  int draw_count_ = 0;
  bool updating_ = false;
  bool aligning_ = false;
  QMetaObject::Connection link_a_, link_b_;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_REGIMES_VIEW_H_
