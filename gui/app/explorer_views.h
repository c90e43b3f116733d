// ExplorerViews: the explorer's tabs as one table. The tab widget, the View
// menu and its Alt+N shortcuts, --tab's choices and help, --screenshot's
// file names and the tests' list of tabs are all read from it, so a new view
// is its own files and one row (docs/ARCHITECTURE.md, "How to add a GUI
// view").
#ifndef ACCORDION_GUI_APP_EXPLORER_VIEWS_H_
#define ACCORDION_GUI_APP_EXPLORER_VIEWS_H_

#include <QString>
#include <QStringList>
#include <vector>

class QWidget;

namespace accordion::gui {

class ExplorerDocument;

struct ExplorerView {
  // The name on the command line and in screenshot files: "level-map".
  const char* key;
  // Tab text and View menu entry, and the tab's tooltip; translated in
  // MainWindow's context, as the tab texts always were.
  const char* title;
  const char* tool_tip;
  QWidget* (*make)(ExplorerDocument* document, QWidget* parent);
};

// In tab order; Alt+1 shows the first.
const std::vector<ExplorerView>& ExplorerViews();

// The keys in tab order, and as a sentence ("a, b or c") for --help.
QStringList ExplorerViewKeys();
QString ExplorerViewKeyList();

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_EXPLORER_VIEWS_H_
