#include "common/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "common/errors.h"
#include "common/version.h"

namespace accordion {

namespace {

void AddVersionFlagRecursive(CLI::App* app, const std::string& text) {
  app->set_version_flag("--version", text);
  for (CLI::App* sub : app->get_subcommands({})) AddVersionFlagRecursive(sub, text);
}

// CLI11 messages can span lines; the contract is one line.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// CLI11 answers a misspelt command with "A subcommand is required"; name it.
std::string ParseErrorText(CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  const auto subs = app.get_subcommands({});
  if (!subs.empty() && argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : subs) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) return "unknown command '" + std::string(argv[1]) + "' (commands: " + names + ")";
  }
  return OneLine(e.what());
}

// Results go to standard output, and a write there can fail (a full disk,
// /dev/full, a closed descriptor) without any tool noticing: the stream only
// remembers it. Checked once, at exit, so that such a run does not end 0
// with its output lost. Returns the exit code to use.
int CheckStandardOutput(const std::string& tool_name, int code) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (flushed && !std::ferror(stdout) && !std::cout.fail()) return code;
  if (code != kExitOk) return code;  // the tool has said what went wrong first
  // The failed write was earlier and its errno is gone; a pipe tells why.
  struct stat st {};
  const bool pipe = ::fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
  const char* why = error != 0 ? std::strerror(error)
                    : pipe     ? "the pipe's reader went away"
                               : "a write failed; a full disk?";
  std::cerr << tool_name << ": error: cannot write standard output (" << why << "); the output is incomplete\n";
  return kExitIoFailure;
}

int ParseAndRun(CLI::App& app, const std::string& tool_name, int argc, char** argv, const std::function<int()>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << tool_name << ": error: " << ParseErrorText(app, argc, argv, e) << " (see --help)\n";
    return kExitBadInput;
  }
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << tool_name << ": error: " << OneLine(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << tool_name << ": internal error: " << OneLine(e.what()) << "\n";
    return kExitFailure;
  }
}

}  // namespace

void AddVersionFlags(CLI::App& app, const std::string& tool_name, const std::string& details) {
  AddVersionFlagRecursive(&app, tool_name + " " + kVersion + (details.empty() ? "" : " (" + details + ")"));
}

int RunCli(CLI::App& app, const std::string& tool_name, int argc, char** argv, const std::function<int()>& body) {
  return CheckStandardOutput(tool_name, ParseAndRun(app, tool_name, argc, argv, body));
}

const CLI::Validator& AboveZero() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "must be a number, not '" + text + "'";
        if (!(v > 0) || !std::isfinite(v)) return "must be above 0, not " + text;
        return std::string();
      },
      "POSITIVE");
  return validator;
}

}  // namespace accordion
