// accordion-gui: the desktop explorer. Follows the toolkit's command-line
// contract: --help and --version, bad flags give one line on stderr and
// exit 2.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QPalette>
#include <QSize>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleHints>
#include <QStringList>
#include <QTabWidget>
#include <QTimer>
#include <cstdio>

#include "common/version.h"
#include "gui/app/explorer_views.h"
#include "gui/app/main_window.h"
#include "gui/model/explorer_document.h"

namespace {

constexpr char kTool[] = "accordion-gui";

// QApplication takes these itself; they are declared so the parse that
// runs before it (to answer --help without a display) does not refuse them.
void AddQtOptions(QCommandLineParser& parser) {
  for (const char* name :
       {"platform", "platformpluginpath", "platformtheme", "plugin", "qwindowgeometry", "qwindowicon", "qwindowtitle",
        "style", "stylesheet", "display", "geometry", "session", "name", "title"}) {
    QCommandLineOption option(QString::fromLatin1(name), QString(), QStringLiteral("value"));
    option.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(option);
  }
  for (const char* name : {"reverse", "widgetcount", "nograb", "dograb", "sync"}) {
    QCommandLineOption option(QString::fromLatin1(name));
    option.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(option);
  }
}

// A dark palette for Qt's Fusion style: what --theme dark shows, and what
// --theme system shows where the desktop asks for dark colours (Qt 6.5's
// colour scheme) but its style gives a light palette.
QPalette DarkPalette() {
  QPalette p;
  const QColor window(0x2B, 0x2B, 0x2B), base(0x1E, 0x1E, 0x1E), text(0xE6, 0xE6, 0xE6);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, QColor(0x8A, 0x8A, 0x8A));
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::red);
  p.setColor(QPalette::Link, QColor(0x56, 0xB4, 0xE9));
  p.setColor(QPalette::Highlight, QColor(0x2A, 0x82, 0xDA));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Light, QColor(0x50, 0x50, 0x50));
  p.setColor(QPalette::Midlight, QColor(0x40, 0x40, 0x40));
  p.setColor(QPalette::Mid, QColor(0x30, 0x30, 0x30));
  p.setColor(QPalette::Dark, QColor(0x19, 0x19, 0x19));
  p.setColor(QPalette::Shadow, Qt::black);
  for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
    p.setColor(QPalette::Disabled, role, QColor(0x80, 0x80, 0x80));
  }
  return p;
}

// The figures follow the application palette (PlotWidget); "system" leaves
// it to the desktop.
void ApplyTheme(QApplication* app, const QString& theme) {
  bool dark = theme == QLatin1String("dark");
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
  if (theme == QLatin1String("system")) {
    dark = QGuiApplication::styleHints()->colorScheme() == Qt::ColorScheme::Dark &&
           QApplication::palette().color(QPalette::Window).lightness() >= 128;
  }
#endif
  if (dark) {
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    app->setPalette(DarkPalette());
  } else if (theme == QLatin1String("light")) {
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    app->setPalette(QApplication::style()->standardPalette());
  }
}

int Fail(const QString& message) {
  std::fprintf(stderr, "%s: error: %s (see --help)\n", kTool, qPrintable(message));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication::setOrganizationName("Accordion Toolkit");
  QCoreApplication::setApplicationName(kTool);
  QCoreApplication::setApplicationVersion(accordion::kVersion);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Explore Accordion training traces: critical regimes, the schedule under any setting, the "
      "communication it saves and projected time to train on other clusters.");
  parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
  const QCommandLineOption help({"h", "help"}, "Show this help and exit.");
  const QCommandLineOption version({"v", "version"}, "Show the version and exit.");
  QCommandLineOption screenshot("screenshot", "Load, settle, save every tab to DIR/<tab>.png and exit.", "DIR");
  screenshot.setFlags(QCommandLineOption::HiddenFromHelp);
  QCommandLineOption window_size("window-size", "The window's size, as WIDTHxHEIGHT (screenshots at a laptop's).",
                                 "WxH");
  window_size.setFlags(QCommandLineOption::HiddenFromHelp);
  QCommandLineOption simulate("simulate", "Start the SimGrid replay of the first run at once.");
  simulate.setFlags(QCommandLineOption::HiddenFromHelp);
  QCommandLineOption tab("tab", "Show this tab first: " + accordion::gui::ExplorerViewKeyList() + ".", "TAB");
  parser.addOption(help);
  parser.addOption(version);
  parser.addOption(screenshot);
  parser.addOption(simulate);
  parser.addOption(window_size);
  parser.addOption(tab);
  QCommandLineOption theme("theme", "Colours: system (the desktop's, the default), dark or light.", "THEME", "system");
  parser.addOption(theme);
  parser.addPositionalArgument("TRACE",
                               "Traces to open (.trace, .db, .sqlite), or folders: every trace under one and each "
                               "new one written there, as TensorBoard opens a log folder.",
                               "[TRACE|DIR...]");
  AddQtOptions(parser);

  QStringList args;
  for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
  if (!parser.parse(args)) return Fail(parser.errorText());
  if (parser.isSet(help)) {
    // Without a QCoreApplication yet, Qt cannot name the program itself.
    QString text = parser.helpText();
    text.replace(QStringLiteral("<executable_name>"), QString::fromLatin1(kTool));
    std::fputs(qPrintable(text), stdout);
    return 0;
  }
  if (parser.isSet(version)) {
    std::printf("%s %s\n", kTool, accordion::kVersion);
    return 0;
  }
  const QStringList tabs = accordion::gui::MainWindow::tabKeys();
  if (parser.isSet(tab) && !tabs.contains(parser.value(tab))) {
    return Fail(QStringLiteral("--tab: unknown tab '%1' (one of %2)").arg(parser.value(tab), tabs.join(", ")));
  }

  QSize size;
  if (parser.isSet(window_size)) {
    const QStringList wh = parser.value(window_size).split('x');
    bool w_ok = false, h_ok = false;
    if (wh.size() == 2) size = QSize(wh[0].toInt(&w_ok), wh[1].toInt(&h_ok));
    if (!w_ok || !h_ok || size.width() < 320 || size.height() < 240 || size.width() > 10000 || size.height() > 10000) {
      return Fail(QStringLiteral("--window-size: '%1' is not WIDTHxHEIGHT between 320x240 and 10000x10000")
                      .arg(parser.value(window_size)));
    }
  }

  if (!QStringList({"system", "dark", "light"}).contains(parser.value(theme))) {
    return Fail(QStringLiteral("--theme: unknown theme '%1' (one of system, dark, light)").arg(parser.value(theme)));
  }

  QApplication app(argc, argv);
  ApplyTheme(&app, parser.value(theme));
  accordion::gui::MainWindow window;
  const bool screenshots = parser.isSet(screenshot);
  if (screenshots) window.setErrorDialogsEnabled(false);
  if (parser.isSet(tab)) window.tabs()->setCurrentIndex(static_cast<int>(tabs.indexOf(parser.value(tab))));
  if (size.isValid()) window.resize(size);
  window.show();
  window.openFiles(parser.positionalArguments());
  if (parser.isSet(simulate)) {
    auto* document = window.document();
    // The replay is of the first run: start it once every run named is loaded.
    QObject::connect(document, &accordion::gui::ExplorerDocument::loadingChanged, &window, [document](bool loading) {
      static bool started = false;
      if (!started && !loading && document->currentRun() && document->projectionProblem().isEmpty()) {
        started = true;
        document->startSimulation();
      }
    });
  }
  if (screenshots) {
    QTimer::singleShot(0, &window, [&window, &parser, &screenshot] {
      window.document()->waitForLoads();
      window.document()->waitForIdle();
      // One line per trace that failed to open, every one of them.
      for (const QString& e : window.errors()) {
        std::fprintf(stderr, "%s: %s\n", kTool, qPrintable(QString(e).replace('\n', ' ')));
      }
      if (window.document()->runCount() == 0) {
        // Screenshots of empty tabs are no answer to "show me this trace".
        std::fprintf(stderr, "%s: error: --screenshot: no trace is open\n", kTool);
        QCoreApplication::exit(2);
        return;
      }
      QString error;
      const int rc = window.saveTabScreenshots(parser.value(screenshot), &error) ? 0 : 1;
      if (rc != 0) std::fprintf(stderr, "%s: error: %s\n", kTool, qPrintable(error));
      QCoreApplication::exit(rc);
    });
  }
  return app.exec();
}
