// LevelMapView: the Level map tab - which level Accordion picks for every
// layer in every epoch, with a tooltip naming the cell under the mouse.
#ifndef ACCORDION_GUI_APP_LEVEL_MAP_VIEW_H_
#define ACCORDION_GUI_APP_LEVEL_MAP_VIEW_H_

#include <QString>
#include <QWidget>

class QCheckBox;
class QLabel;

namespace accordion::gui {

class ExplorerDocument;
class PlotWidget;

class LevelMapView : public QWidget {
  Q_OBJECT

 public:
  explicit LevelMapView(ExplorerDocument* document, QWidget* parent = nullptr);

  PlotWidget* plot() const { return plot_; }
  // The document's group-by-block setting, here too: one row per block.
  QCheckBox* groupCheck() const { return group_; }
  // The tooltip for the cell under widget position `pos` ("" when none).
  QString tooltipAt(const QPoint& pos) const;

 public slots:
  void redraw();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  // On a settings change while the window shows another tab: redraws when
  // this tab is shown again instead of now (moving the eta slider on the
  // Regimes tab need not draw a map nobody sees).
  void redrawWhenSeen();

  bool stale_ = false;
  ExplorerDocument* document_;
  QLabel* caption_;
  QCheckBox* group_;
  PlotWidget* plot_;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_LEVEL_MAP_VIEW_H_
