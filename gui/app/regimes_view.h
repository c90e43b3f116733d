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
  // Mirrors the document's group-by-block setting: checked, the layer list,
  // the norms and the ratios list blocks instead of layers.
  QCheckBox* groupCheck() const { return group_; }
  // How many times the plots were drawn (tests see redraws).
  int drawCount() const { return draw_count_; }
  // The layers drawn: checked and matching the filter (grouped or not, the
  // choice is kept per layer; a block's box checks all its layers the filter
  // shows).
  std::vector<int> shownLayers() const;

 public slots:
  void redraw();

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void rebuildLayerList();
  void applyFilter();
  void setVisibleChecked(bool checked);
  // The list's boxes from checked_: partly checked for a block some of
  // whose layers the filter shows are checked.
  void showChecks();
  std::vector<int> itemLayers(int row) const;
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
  std::string layers_of_;       // path whose layers the list shows
  bool list_grouped_ = false;   // whether it lists blocks
  std::vector<bool> checked_;   // [layer]
  std::vector<bool> matching_;  // [layer]: the filter shows it
  int draw_count_ = 0;
  int legend_layers_ = 0;  // RegimeLegendLayers at the last draw
  bool updating_ = false;
  bool aligning_ = false;
  QMetaObject::Connection link_a_, link_b_;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_REGIMES_VIEW_H_
