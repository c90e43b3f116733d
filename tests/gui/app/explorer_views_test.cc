// The explorer's tabs are the rows of ExplorerViews(), in order, and
// nothing else: the tab widget, the View menu's Alt+N entries, --tab's
// choices and the docs' screenshots all follow the table, and a view made
// outside it fails here.
#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <memory>

#include "gui/app/explorer_views.h"
#include "gui/app/main_window.h"
#include "gui/app/run_list_view.h"
#include "gui/model/explorer_document.h"

using namespace accordion::gui;

namespace {

QString Title(const char* text) { return QCoreApplication::translate("MainWindow", text); }

QMenu* ViewMenu(const MainWindow& window) {
  for (QAction* action : window.menuBar()->actions()) {
    if (action->menu() && action->text() == MainWindow::tr("&View")) return action->menu();
  }
  return nullptr;
}

}  // namespace

class ExplorerViewsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("Accordion Toolkit");
    // Its own settings: gui_app_test, run beside it, keeps recent files in
    // "accordion-gui-test"'s.
    QCoreApplication::setApplicationName("accordion-gui-views-test");
    QSettings().clear();
  }

  void cleanupTestCase() { QSettings().clear(); }

  void everyRowIsATabInOrder() {
    MainWindow window;
    const auto& views = ExplorerViews();
    QTabWidget* tabs = window.tabs();
    QCOMPARE(tabs->count(), static_cast<int>(views.size()));
    QCOMPARE(MainWindow::tabKeys(), ExplorerViewKeys());
    ExplorerDocument document;
    for (int i = 0; i < tabs->count(); ++i) {
      const ExplorerView& row = views[static_cast<size_t>(i)];
      QCOMPARE(tabs->tabText(i), Title(row.title));
      QCOMPARE(tabs->tabToolTip(i), Title(row.tool_tip));
      // The page is what the row's factory makes.
      const std::unique_ptr<QWidget> made(row.make(&document, nullptr));
      QCOMPARE(QString(tabs->widget(i)->metaObject()->className()), QString(made->metaObject()->className()));
    }
    QCOMPARE(ExplorerViewKeys().removeDuplicates(), 0);
  }

  void theViewMenuShowsEachTabWithItsShortcut() {
    MainWindow window;
    QMenu* menu = ViewMenu(window);
    QVERIFY(menu);
    const auto& views = ExplorerViews();
    for (int i = 0; i < static_cast<int>(views.size()); ++i) {
      QAction* entry = nullptr;
      for (QAction* action : menu->actions()) {
        if (action->text() == Title(views[static_cast<size_t>(i)].title)) entry = action;
      }
      QVERIFY2(entry, views[static_cast<size_t>(i)].key);
      if (i < 9) QCOMPARE(entry->shortcut(), QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_1 + i)));
      window.tabs()->setCurrentIndex(i == 0 ? 1 : 0);
      entry->trigger();
      QCOMPARE(window.tabs()->currentIndex(), i);
    }
  }

  // A view constructed outside the table would be a widget named *View that
  // no row made: only the run list (a dock, not a tab) may be one.
  void noViewIsMadeOutsideTheTable() {
    MainWindow window;
    QTabWidget* tabs = window.tabs();
    int views = 0;
    for (QWidget* widget : window.findChildren<QWidget*>()) {
      const QString name = widget->metaObject()->className();
      const bool ours = name.startsWith("accordion::gui::") && name.endsWith("View");
      if (!ours || qobject_cast<RunListView*>(widget)) continue;
      ++views;
      QVERIFY2(tabs->indexOf(widget) >= 0, qPrintable(name + " is not a tab of ExplorerViews()"));
    }
    QCOMPARE(views, tabs->count());
  }

  // Each tab has its screenshot in the explorer's docs.
  void theDocsShowEveryTab() {
    QFile page(QStringLiteral(ACCORDION_SOURCE_DIR "/docs/gui.md"));
    QVERIFY(page.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(page.readAll());
    for (const QString& key : ExplorerViewKeys()) {
      const QString image = QString("images/gui-%1.png").arg(key);
      QVERIFY2(text.contains(image), qPrintable("docs/gui.md does not show " + image));
      QVERIFY2(QFileInfo::exists(QStringLiteral(ACCORDION_SOURCE_DIR "/docs/") + image), qPrintable(image));
    }
  }

  // ACCORDION_SCREENSHOT_DIR=DIR: the window with each tab shown, to look at.
  void screenshotsOfEveryTab() {
    const QString dir = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR");
    if (dir.isEmpty()) QSKIP("ACCORDION_SCREENSHOT_DIR not set");
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (int i = 0; i < window.tabs()->count(); ++i) {
      window.tabs()->setCurrentIndex(i);
      QCoreApplication::processEvents();
      QVERIFY(window.grab().save(QString("%1/views-%2.png").arg(dir, ExplorerViewKeys()[i])));
    }
  }
};

QTEST_MAIN(ExplorerViewsTest)
#include "explorer_views_test.moc"
