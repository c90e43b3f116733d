#include "common/input_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/errors.h"

namespace accordion {

namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

}  // namespace

std::string InputFileProblem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? std::string("no such file") : std::string("cannot be read (") + std::strerror(errno) + ")";
  }
  if (S_ISREG(st.st_mode)) return "";
  return std::string("not a regular file (") + KindOf(st.st_mode) + ")";
}

void CheckInputFile(const std::string& path) {
  const std::string problem = InputFileProblem(path);
  if (!problem.empty()) throw InputError(path + ": " + problem);
}

bool IsSqliteDatabase(const std::string& path) {
  if (!InputFileProblem(path).empty()) return false;
  std::ifstream in(path, std::ios::binary);
  char head[sizeof kSqliteHeader] = {};
  in.read(head, sizeof head);
  return in.gcount() == sizeof head && std::equal(head, head + sizeof head, kSqliteHeader);
}

}  // namespace accordion
