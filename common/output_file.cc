#include "common/output_file.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "common/errors.h"

namespace accordion {

void WriteOutput(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path.empty() || path == "-") {
    write(std::cout);
    std::cout.flush();
    return;
  }
  const std::string partial = path + ".partial";
  {
    std::ofstream file(partial);
    if (!file) throw InputError(path + ": cannot write");
    try {
      write(file);
    } catch (...) {
      file.close();
      std::remove(partial.c_str());
      throw;
    }
    if (!file.flush()) {
      std::remove(partial.c_str());
      throw InputError(path + ": write failed");
    }
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    std::remove(partial.c_str());
    throw InputError(path + ": cannot rename " + partial + " over it");
  }
}

}  // namespace accordion
