#include "tests/trainer/train_support.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "traces/trace_reader.h"

namespace accordion::test_support {

CommandResult Train(const std::string& args) { return RunCommand(kTrain + " " + args); }

BackgroundRun::BackgroundRun(const std::string& args, const std::string& dir)
    : out_path_(dir + "/out"), err_path_(dir + "/err") {
  const std::string command = "exec " + kTrain + " " + args + " >" + out_path_ + " 2>" + err_path_ + " </dev/null";
  pid_ = ::fork();
  if (pid_ == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
}

BackgroundRun::~BackgroundRun() {
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool BackgroundRun::WaitForOutput(const std::string& text, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (out().find(text) != std::string::npos) return true;
    if (!exited_ && ::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      exited_ = true;
      return out().find(text) != std::string::npos;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

int BackgroundRun::WaitForExit(std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

std::vector<pid_t> BackgroundRun::Workers() const {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces.
    const std::string stat = ReadFile(entry.path().string() + "/stat");
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 1));
    std::string state;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == pid_) children.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

std::string BackgroundRun::out() const { return ReadFile(out_path_); }
std::string BackgroundRun::err() const { return ReadFile(err_path_); }

TraceContent ReadTrace(const std::string& path) {
  auto reader = TraceReader::Open(path);
  TraceContent t;
  t.run = reader->run();
  t.layers = reader->layers();
  t.epochs = reader->Epochs();
  t.layer_rows.assign(t.epochs.size(), std::vector<EpochLayerRecord>(t.layers.size()));
  for (const EpochLayerRecord& r : reader->EpochLayers()) {
    t.layer_rows[static_cast<size_t>(r.epoch)][static_cast<size_t>(r.layer_id)] = r;
  }
  return t;
}

}  // namespace accordion::test_support
