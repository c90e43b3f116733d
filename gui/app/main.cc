// accordion-gui: the desktop explorer. Follows the toolkit's command-line
// contract: --help and --version, bad flags give one line on stderr and
// exit 2.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QStringList>
#include <QTabWidget>
#include <QTimer>
#include <cstdio>

#include "common/version.h"
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
  QCommandLineOption simulate("simulate", "Start the SimGrid replay of the first run at once.");
  simulate.setFlags(QCommandLineOption::HiddenFromHelp);
  QCommandLineOption tab("tab", "Show this tab first: regimes, level-map, what-if, compare or timeline.", "TAB");
  parser.addOption(help);
  parser.addOption(version);
  parser.addOption(screenshot);
  parser.addOption(simulate);
  parser.addOption(tab);
  parser.addPositionalArgument("TRACE", "Traces to open (.trace, .db, .sqlite).", "[TRACE...]");
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

  QApplication app(argc, argv);
  accordion::gui::MainWindow window;
  const bool screenshots = parser.isSet(screenshot);
  if (screenshots) window.setErrorDialogsEnabled(false);
  if (parser.isSet(tab)) window.tabs()->setCurrentIndex(static_cast<int>(tabs.indexOf(parser.value(tab))));
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
      QString error;
      const int rc = window.saveTabScreenshots(parser.value(screenshot), &error) ? 0 : 1;
      if (rc != 0) std::fprintf(stderr, "%s: error: %s\n", kTool, qPrintable(error));
      if (!window.lastError().isEmpty()) std::fprintf(stderr, "%s: %s\n", kTool, qPrintable(window.lastError()));
      QCoreApplication::exit(rc);
    });
  }
  return app.exec();
}
