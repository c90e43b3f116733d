// accordion-bench-collectives: the toolkit's nccl-tests. Times real c10d
// all-reduce, all-gather and broadcast over a range of sizes through the
// trainer's own Communicator (Gloo, or NCCL where built), prints nccl-tests'
// table and writes every sample as JSON for accordion-sim calibrate.
// Started plainly it launches --nproc local workers, as accordion-train does;
// with WORLD_SIZE in the environment (torchrun, Slurm, our launcher) it is a
// worker.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/cli.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/output_file.h"
#include "trainer/collective_bench.h"
#include "trainer/collective_timing.h"
#include "trainer/communicator.h"
#include "trainer/gloo_communicator.h"
#include "trainer/worker_connection.h"
#include "trainer/worker_exit.h"
#include "trainer/launcher.h"
#include "trainer/run_outputs.h"
#include "trainer/torch_pch.h"
#include "trainer/train_options.h"
#ifdef ACCORDION_BENCH_CALIBRATES
#include "simulator/calibrator.h"
#endif

namespace accordion {
namespace {

constexpr const char* kTool = "accordion-bench-collectives";

std::vector<std::string> NamesOf(const std::vector<CollectiveOp>& ops) {
  std::vector<std::string> names;
  for (const CollectiveOp op : ops) names.emplace_back(ToString(op));
  return names;
}

// The defaults, and so the help's, are the options classes'. The ops and
// sizes are text here (names, "64M"), CollectiveBenchOptions' defaults
// written as a user would type them.
struct BenchFlags {
  int nproc = LauncherOptions().nproc();
  std::vector<std::string> ops = NamesOf(CollectiveBenchOptions().ops());
  std::string min_bytes = ByteSizeText(CollectiveBenchOptions().min_bytes());
  std::string max_bytes = ByteSizeText(CollectiveBenchOptions().max_bytes());
  int factor = CollectiveBenchOptions().factor();
  int warmup = CollectiveBenchOptions().warmup();
  int iters = CollectiveBenchOptions().iters();
  std::string backend = CollectiveBenchOptions().backend();
  std::string out;
  bool overwrite = false;
  std::string bind_addr = GlooOptions().bind_addr();
  double timeout_s = CollectiveBenchOptions().timeout_s();

  CollectiveBenchOptions Options() const {
    std::vector<CollectiveOp> parsed;
    for (const std::string& op : ops) {
      const std::optional<CollectiveOp> o = ParseCollectiveOp(op);
      if (!o) throw InputError("--ops: unknown op '" + op + "' (allreduce, allgather, broadcast)");
      if (std::find(parsed.begin(), parsed.end(), *o) == parsed.end()) parsed.push_back(*o);
    }
    CollectiveBenchOptions o = CollectiveBenchOptions()
                                   .ops(parsed)
                                   .min_bytes(ParseByteSize(min_bytes))
                                   .max_bytes(ParseByteSize(max_bytes))
                                   .factor(factor)
                                   .warmup(warmup)
                                   .iters(iters)
                                   .backend(backend)
                                   .timeout_s(timeout_s);
    o.Validate();
    if (backend == "nccl" && !NcclAvailable()) {
      throw InputError(
          "--backend nccl: this build has no NCCL communicator (a CUDA LibTorch is needed, see docs/gpu.md)");
    }
    if (nproc < 1) throw InputError("--nproc must be at least 1");
    if (!(timeout_s > 0)) throw InputError("--timeout-s must be positive");
    return o;
  }

  // Refused before any worker starts, so a long run cannot end unwritable.
  // `claim`: the process that writes it (rank 0) claims it from here on
  // (output_file.h); the launcher only checks.
  void CheckOut(bool claim) const {
    if (out.empty()) return;
    const std::filesystem::path p(out);
    if (std::filesystem::exists(p) && !overwrite) {
      throw InputError(out + " exists; give --overwrite to replace it");
    }
    const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
    if (!std::filesystem::is_directory(dir)) throw InputError("--out: directory " + dir.string() + " does not exist");
    // The rules every tool's outputs follow: never a live trace, a live run's
    // directory, a directory or a leftover .partial.
    CheckOutput(out, OutputOptions().overwrite(overwrite).claim(claim));
    if (out != "-") CheckOutputRoom("--out " + out, out);  // a read-only or full disk, before any worker
  }
};

void AddFlags(CLI::App& app, BenchFlags& f) {
  app.add_option("--nproc", f.nproc,
                 "Local worker processes to start (" + LocalWorkerLimitText() + "; leave out under torchrun / Slurm)")
      ->capture_default_str();
  app.add_option("--ops", f.ops, "Collectives to time: allreduce, allgather, broadcast")
      ->delimiter(',')
      ->check(CLI::IsMember({"allreduce", "allgather", "broadcast"}))
      ->capture_default_str();
  app.add_option("--min-bytes", f.min_bytes, "Smallest size (K, M, G suffixes; all-gather: the whole output)")
      ->capture_default_str();
  app.add_option("--max-bytes", f.max_bytes, "Largest size")->capture_default_str();
  app.add_option("--factor", f.factor, "Each size is the previous times this")->capture_default_str();
  app.add_option("--warmup", f.warmup, "Untimed iterations per size")->capture_default_str();
  app.add_option("--iters", f.iters, "Timed iterations per size")->capture_default_str();
  app.add_option("--backend", f.backend, "gloo (CPU) or nccl (CUDA, one GPU per worker: LOCAL_RANK's)")
      ->check(CLI::IsMember({"gloo", "nccl"}))
      ->capture_default_str();
  app.add_option("--out", f.out, "Write every sample and the fit as JSON (accordion-sim calibrate reads it)");
  app.add_flag("--overwrite", f.overwrite,
               "Replace an existing --out file (never one another process is writing, such as a live trace)");
  app.add_option("--bind-addr", f.bind_addr, "Address this node's Gloo sockets bind to (multi-node: its own)")
      ->capture_default_str();
  app.add_option("--timeout-s", f.timeout_s, "A collective that takes longer fails the run")->capture_default_str();
}

void WriteResults(const BenchFlags& f, const CollectiveBenchOptions& o, int world,
                  const std::vector<BenchResult>& results) {
  nlohmann::json j = BenchJson(o, world, results);
#ifdef ACCORDION_BENCH_CALIBRATES
  // The same fit accordion-sim calibrate makes of this file alone.
  try {
    sim::Calibrator calibrator;
    calibrator.AddBenchmark(j, f.out.empty() ? "this run" : f.out);
    const sim::Calibration cal = calibrator.Fit();
    std::printf("# fit (accordion-sim calibrate): o = %.1f us per collective", cal.collective_overhead_s * 1e6);
    for (const sim::CalibrationSegment& s : cal.segments) {
      std::printf("; messages from %.0f B: alpha %.1f us, B %.3f Gb/s", s.min_message_bytes, s.latency_s * 1e6,
                  GbpsFromBytesPerSecond(s.bandwidth_Bps));
    }
    std::printf("; rms %.1f %%\n", cal.rms_relative_error * 100);
    for (const std::string& note : cal.notes) std::printf("# fit note: %s\n", note.c_str());
    j["calibration"] = cal.PlatformJson(f.out.empty() ? "accordion-bench-collectives" : f.out);
  } catch (const InputError& e) {
    std::printf("# no fit: %s\n", e.what());
    j["calibration_note"] = e.what();
  }
#else
  j["calibration_note"] = "built without the simulator: fit this file with accordion-sim calibrate";
#endif
  std::fflush(stdout);
  if (!f.out.empty()) WriteOutput(f.out, [&](std::ostream& out) { out << j.dump(1) << '\n'; });
}

int Bench(const BenchFlags& f, const WorkerEnvironment& env) {
  const CollectiveBenchOptions o = f.Options();
  if (!env.launched && f.nproc != 1) {
    throw InputError("--nproc starts local workers; under torchrun or Slurm (WORLD_SIZE is set) leave it out");
  }
  if (env.rank == 0) f.CheckOut(/*claim=*/true);
  torch::Device device = torch::kCPU;
  if (f.backend == "nccl") {
    if (!torch::cuda::is_available()) throw InputError("--backend nccl: this LibTorch sees no CUDA device");
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
  }
  // The reductions run on Gloo's threads; LibTorch's own pool would only
  // compete with them for the cores.
  torch::set_num_threads(1);
  torch::NoGradGuard no_grad;
  std::unique_ptr<Communicator> comm = ConnectWorker(f.backend, env, f.bind_addr, o.timeout_s());
  const int world = comm->world_size();

  int64_t in_elements = 1, out_elements = 1;
  for (const CollectiveOp op : o.ops()) {
    for (const int64_t size : o.Sizes()) {
      const BenchShape s = ShapeOf(op, size, world);
      in_elements = std::max(in_elements, s.elements_per_rank);
      if (op == CollectiveOp::kAllGather) out_elements = std::max(out_elements, s.elements_per_rank * world);
    }
  }
  // Zeros: sums stay finite however many iterations add them up.
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  const torch::Tensor in = torch::zeros({in_elements}, options);
  const torch::Tensor out = torch::zeros({out_elements}, options);

  if (comm->rank() == 0) {
    std::fputs(BenchTableHeader(o, world).c_str(), stdout);
    std::fflush(stdout);
  }
  std::vector<BenchResult> results;
  for (const CollectiveOp op : o.ops()) {
    for (const int64_t size : o.Sizes()) {
      const BenchShape s = ShapeOf(op, size, world);
      const std::vector<std::vector<double>> times =
          GatherTimes(*comm, TimeShape(*comm, s, o.warmup(), o.iters(), in, out));
      if (comm->rank() != 0) continue;
      results.push_back(Summarise(s, times));
      std::fputs(BenchTableRow(results.back()).c_str(), stdout);
      std::fflush(stdout);
    }
  }
  if (comm->rank() == 0) WriteResults(f, o, world, results);
  comm->Barrier();  // nobody leaves while rank 0 may still need the group
  return kExitOk;
}

int RunWorker(const BenchFlags& f, const WorkerEnvironment& env) {
  return RunWorkerBody(kTool, env.rank, [&] { return Bench(f, env); });
}

}  // namespace
}  // namespace accordion

int main(int argc, char** argv) {
  using namespace accordion;
  CLI::App app{
      "accordion-bench-collectives: time real c10d all-reduce, all-gather and broadcast over a range "
      "of sizes (nccl-tests' table), and write the samples for accordion-sim calibrate.\n"
      "Local: accordion-bench-collectives --nproc N ...; multi-node: set RANK, WORLD_SIZE, LOCAL_RANK, "
      "MASTER_ADDR, MASTER_PORT per worker (torchrun / Slurm style)."};
  BenchFlags flags;
  AddFlags(app, flags);
  AddVersionFlags(app, kTool);
  return RunCli(app, kTool, argc, argv, [&]() -> int {
    if (const std::optional<WorkerEnvironment> env = WorkerEnvironmentFromEnv()) return RunWorker(flags, *env);
    flags.Options();  // every flag checked before a worker starts
    CheckLocalWorkers(flags.nproc, "--nproc");
    CheckBindAddress(flags.bind_addr, "--bind-addr");  // here: workers check their flags with their peers running
    flags.CheckOut(/*claim=*/false);
    const char* addr = std::getenv("MASTER_ADDR");
    const char* port = std::getenv("MASTER_PORT");
    Launcher launcher(LauncherOptions()
                          .nproc(flags.nproc)
                          .master_addr(addr != nullptr && *addr != '\0' ? addr : "127.0.0.1")
                          .master_port(port != nullptr ? std::atoi(port) : 0)
                          .tool_name(kTool));
    return launcher.Run(argv, nullptr);
  });
}
