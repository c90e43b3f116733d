// TorchScript files for the tests of accordion-train --model FILE, exported
// the way a user does it - torch.jit.script(model).save(path) - by the Python
// whose torch the trainer's LibTorch comes from (ACCORDION_TEST_PYTHON: the
// project's .venv, or Debian's /usr/bin/python3 beside libtorch-dev). Without
// torch in that Python the tests skip. Python takes seconds to
// import torch and ctest runs every test in a process of its own, so the
// files are exported once per build tree (and version of the script below).
#ifndef ACCORDION_TESTS_TRAINER_TORCHSCRIPT_FILES_H_
#define ACCORDION_TESTS_TRAINER_TORCHSCRIPT_FILES_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <system_error>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir_test.h"

namespace accordion::test_support {

#ifndef ACCORDION_TEST_PYTHON
#define ACCORDION_TEST_PYTHON "/usr/bin/python3"
#endif
inline const std::string kPython = ACCORDION_TEST_PYTHON;

// Whether kPython imports torch (asked once).
inline bool PythonHasTorch() {
  static const bool has = RunCommand(kPython + " -c 'import torch' 2>/dev/null").exit_code == 0;
  return has;
}

// The directory holding these files, for 1x28x28 images in 10 classes:
//   net.pt        conv1 (1->4, 3x3) + bn1 + dropout + fc (784->10): trains
//   tied.pt       proj, a, b (b.weight is a.weight), head; a frozen `scale`
//   noparams.pt   no parameters at all
//   broken.pt     a Linear(100, 10) on the 784 flattened pixels: forward fails
//   classes5.pt   5 logits per image
//   unused.pt     a Linear the forward never uses
//   tuple.pt      forward returns a tuple
//   state_dict.pt torch.save of net's state dict: not TorchScript
//   net_ones.txt  net.pt's eval() logits on torch.ones(2, 1, 28, 28), one per line
// ACCORDION_BIN_DIR/../test-data/torchscript-<hash of the script>, exported
// on first use; "" with `error` set to what Python printed when that failed.
// Written to a fresh directory and renamed into place: tests running side by
// side see the whole set or export their own.
inline std::string TorchScriptModelsDir(std::string* error) {
  static const std::string kScript = R"PY(import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

out = sys.argv[1]
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(4 * 14 * 14, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((1,), 0.5), requires_grad=False)
        self.proj = nn.Linear(784, 16)
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 16)
        self.b.weight = self.a.weight
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        x = F.relu(self.proj(x.flatten(1) * self.scale))
        return self.head(F.relu(self.b(F.relu(self.a(x)))))


class NoParams(nn.Module):
    def forward(self, x):
        return x.flatten(1)[:, :10]


class Broken(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(100, 10)

    def forward(self, x):
        return self.fc(x.flatten(1))


class Linear(nn.Module):
    def __init__(self, classes: int):
        super().__init__()
        self.fc = nn.Linear(784, classes)

    def forward(self, x):
        return self.fc(x.flatten(1))


class Unused(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
        self.spare = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x.flatten(1))


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        y = self.fc(x.flatten(1))
        return y, y


net = Net()
torch.jit.script(net).save(out + "/net.pt")
with open(out + "/net_ones.txt", "w") as f:
    for v in net.eval()(torch.ones(2, 1, 28, 28)).flatten().tolist():
        f.write(repr(v) + "\n")
torch.save(net.state_dict(), out + "/state_dict.pt")
torch.jit.script(Tied()).save(out + "/tied.pt")
torch.jit.script(NoParams()).save(out + "/noparams.pt")
torch.jit.script(Broken()).save(out + "/broken.pt")
torch.jit.script(Linear(5)).save(out + "/classes5.pt")
torch.jit.script(Unused()).save(out + "/unused.pt")
torch.jit.script(Pair()).save(out + "/tuple.pt")
)PY";
  namespace fs = std::filesystem;
  const fs::path root = fs::path(ACCORDION_BIN_DIR).parent_path() / "test-data";
  const fs::path final_dir = root / ("torchscript-" + std::to_string(std::hash<std::string>()(kScript)));
  if (fs::exists(final_dir / "tuple.pt")) return final_dir.string();
  std::error_code ec;
  fs::create_directories(root, ec);
  std::string work = (root / "torchscript-XXXXXX").string();
  if (mkdtemp(work.data()) == nullptr) {
    *error = "cannot create a directory in " + root.string();
    return "";
  }
  std::ofstream(work + "/export_models.py") << kScript;
  const CommandResult r = RunCommand(kPython + " " + work + "/export_models.py " + work);
  if (r.exit_code != 0) {
    *error = r.out + r.err;
    fs::remove_all(work, ec);
    return "";
  }
  fs::rename(work, final_dir, ec);  // fails when another test got there first: theirs is as good
  if (ec) fs::remove_all(work, ec);
  return final_dir.string();
}

// A test of the exported files, in a temporary directory of its own; it
// skips where kPython has no torch.
class TorchScriptFilesTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!PythonHasTorch()) GTEST_SKIP() << kPython << " has no torch (scripts/install-deps.sh)";
    std::string error;
    models_ = TorchScriptModelsDir(&error);
    ASSERT_FALSE(models_.empty()) << "exporting the TorchScript files failed: " << error;
  }
  // An exported file, e.g. "net.pt".
  std::string Model(const std::string& name) const { return models_ + "/" + name; }

 private:
  std::string models_;
};

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_TRAINER_TORCHSCRIPT_FILES_H_
