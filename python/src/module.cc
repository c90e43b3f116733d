// accordion._core: the C++ core under the accordion Python package. The
// hook's state machine (DdpHookCore) and the accounting the tests compare
// against are bound here; python/accordion/ddp.py is the glue DDP calls.
#include <pybind11/stl.h>
#include <torch/extension.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "analysis/communication_accounting.h"
#include "analysis/run_settings.h"
#include "analysis/schedule.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/version.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"
#include "traces/trace_error.h"
#include "trainer/ddp_hook_core.h"
#include "trainer/process_group_communicator.h"

namespace accordion::python {

namespace py = pybind11;

void BindTrainerParts(py::module_& m);  // trainer_bindings.cc

namespace {

CommunicationScheme SchemeOf(const std::string& name, bool topk_dense_vectors, bool topk_error_feedback) {
  const std::optional<Scheme> scheme = ParseScheme(name);
  if (!scheme) {
    throw InputError("unknown scheme '" + name + "' (schemes: " + JoinSchemeNames(SchemeSet::kAll, ", ", ", ") + ")");
  }
  return CommunicationScheme(*scheme).topk_dense_vectors(topk_dense_vectors).topk_error_feedback(topk_error_feedback);
}

// The default process group torch.distributed's script initialised, for
// the C++ exchange: its collectives then run in C++ on C++ tensors, which
// Gloo's threads can free without the GIL (a Python-owned tensor freed
// there needs it, and deadlocks against a thread tearing the group down).
std::unique_ptr<Communicator> DefaultGroup() {
  py::object dist = py::module_::import("torch.distributed");
  if (!dist.attr("is_initialized")().cast<bool>()) {
    throw InputError("torch.distributed is not initialised: call dist.init_process_group first");
  }
  auto group =
      dist.attr("distributed_c10d").attr("_get_default_group")().cast<c10::intrusive_ptr<c10d::ProcessGroup>>();
  const std::string backend = py::str(dist.attr("get_backend")()).cast<std::string>();
  auto comm = std::make_unique<ProcessGroupCommunicator>(std::move(group), dist.attr("get_rank")().cast<int>(),
                                                         dist.attr("get_world_size")().cast<int>(), backend);
  // NCCL carries device tensors only ("No backend type associated with
  // device type cpu"): the core's host messages go through this rank's GPU.
  if (backend == "nccl") {
    const auto device = py::module_::import("torch.cuda").attr("current_device")().cast<int>();
    comm->StageHostTensorsOn(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device)));
  }
  return comm;
}

// The hook's core with the communicator it runs over. Methods that wait
// for collectives run without the GIL.
class Core {
 public:
  Core(const std::vector<torch::Tensor>& parameters, const std::vector<std::string>& names,
       const DdpHookOptions& options, const std::string& problem)
      : comm_(DefaultGroup()) {
    py::gil_scoped_release no_gil;
    core_ = std::make_unique<DdpHookCore>(parameters, names, *comm_, options, problem);
  }
  ~Core() {
    py::gil_scoped_release no_gil;
    core_.reset();
    comm_.reset();
  }
  DdpHookCore& core() { return *core_; }

 private:
  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<DdpHookCore> core_;
};

// A keyword's Python value as JSON, the form run_settings.h's table takes:
// bool before int (a bool is an int to Python); an int beyond 64 bits and
// anything else by its repr, which the kind check then names.
nlohmann::json JsonOfPython(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    try {
      return value.cast<int64_t>();
    } catch (const py::cast_error&) {
      return nlohmann::json::array({py::repr(value).cast<std::string>()});
    }
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  return nlohmann::json::array({py::repr(value).cast<std::string>()});
}

py::object PythonOfJson(const nlohmann::json& value) {
  if (value.is_boolean()) return py::bool_(value.get<bool>());
  if (value.is_number_integer()) return py::int_(value.get<int64_t>());
  if (value.is_number()) return py::float_(value.get<double>());
  return py::str(value.get<std::string>());
}

// One ACCORDION_ARG option of DdpHookOptions as a Python property.
template <typename T>
void Option(py::class_<DdpHookOptions>& c, const char* name, T const& (DdpHookOptions::*get)() const noexcept,
            DdpHookOptions& (DdpHookOptions::*set)(T const&)) {
  c.def_property(
      name, [get](const DdpHookOptions& o) { return (o.*get)(); },
      [set](DdpHookOptions& o, const T& value) { (o.*set)(value); });
}

// DdpHookOptions as accordion.HookOptions: every run setting a property
// named by its keyword, made from the one table (analysis/run_settings.h)
// with its C++ default, kind and bounds, so that Python restates none of
// them; then what only the trace's writer needs.
void BindHookOptions(py::module_& m) {
  using O = DdpHookOptions;
  py::class_<O> c(m, "HookOptions",
                  "The options of accordion.ddp.attach, with the C++ core's defaults (DdpHookOptions).");
  c.def(py::init<>());
  for (const RunSettingField& f : RunSettingFields()) {
    const std::string keyword = f.keyword;
    c.def_property(
        f.keyword, [keyword](const O& o) { return PythonOfJson(KeywordValue(o.settings(), keyword)); },
        [keyword](O& o, const py::object& value) {
          RunSettings settings = o.settings();
          SetKeyword(settings, keyword, JsonOfPython(value));
          o.settings(settings);
        },
        f.help.c_str());
  }
  Option<std::string>(c, "trace", &O::trace, &O::trace);
  Option<bool>(c, "overwrite", &O::overwrite, &O::overwrite);
  Option<std::string>(c, "model", &O::model, &O::model);
  Option<std::string>(c, "dataset", &O::dataset, &O::dataset);
  Option<int64_t>(c, "train_samples", &O::train_samples, &O::train_samples);
  Option<std::string>(c, "config_json", &O::config_json, &O::config_json);
  Option<int>(c, "ranks_per_node", &O::ranks_per_node, &O::ranks_per_node);
}

// The table itself, for the Python package's names and docs.
py::list RunSettingRows() {
  py::list rows;
  const RunSettings defaults;
  for (const RunSettingField& f : RunSettingFields()) {
    py::dict row;
    row["keyword"] = f.keyword;
    row["key"] = f.key;
    row["flag"] = f.flag;
    row["unit"] = f.unit;
    row["help"] = f.help;
    row["choices"] = f.choices;
    row["same_on_every_rank"] = f.sharing == SettingSharing::kSame;
    row["default"] = PythonOfJson(KeywordValue(defaults, f.keyword));
    rows.append(row);
  }
  return rows;
}

py::list SchemeRows() {
  py::list rows;
  for (const SchemeDescription& d : AllSchemes()) {
    py::dict row;
    row["name"] = d.name;
    row["title"] = d.title;
    row["has_levels"] = d.has_levels();
    row["batch_levels"] = InSet(d, SchemeSet::kBatchLevels);
    rows.append(row);
  }
  return rows;
}

py::list PolicyRows() {
  py::list rows;
  for (const PolicyDescription& p : AllPolicies()) {
    py::dict row;
    row["name"] = p.name;
    row["title"] = p.title;
    row["one_level"] = p.one_level();
    row["reads_moments"] = p.reads_moments();
    std::vector<std::string> fits;
    for (const SchemeDescription& d : AllSchemes()) {
      if (PolicyFitProblem(p.policy, d.scheme).empty()) fits.emplace_back(d.name);
    }
    row["fits"] = fits;
    rows.append(row);
  }
  return rows;
}

// DdpEpochSummary as accordion.EpochSummary: typed attributes; item access
// by name too, for scripts written when end_epoch returned a dict.
void BindEpochSummary(py::module_& m) {
  using S = DdpEpochSummary;
  py::class_<S>(m, "EpochSummary", "What AccordionHook.end_epoch concluded on this rank.")
      .def_readonly("epoch", &S::epoch, "The epoch that ended, from 0.")
      .def_readonly("grad_norms", &S::grad_norms, "Per layer, the epoch's accumulated raw gradient's norm.")
      .def_readonly("next_levels", &S::next_levels, "Per layer, the next epoch's level.")
      .def_readonly("next_critical", &S::next_critical, "Per layer, whether the next epoch is critical.")
      .def_readonly("floats_sent", &S::floats_sent, "Floats one worker sent in the epoch.")
      .def_readonly("next_batch_size", &S::next_batch_size, "The next epoch's global batch.")
      .def_readonly("skipped_steps", &S::skipped_steps, "Steps whose gradients were not finite (GradScaler's skips).")
      .def("__getitem__",
           [](const py::object& self, const std::string& name) {
             if (name.empty() || name[0] == '_' || !py::hasattr(self, name.c_str())) throw py::key_error(name);
             return self.attr(name.c_str());
           })
      .def(
          "to_dict",
          [](const S& s) {
            py::dict d;
            d["epoch"] = s.epoch;
            d["grad_norms"] = s.grad_norms;
            d["next_levels"] = s.next_levels;
            d["next_critical"] = s.next_critical;
            d["floats_sent"] = s.floats_sent;
            d["next_batch_size"] = s.next_batch_size;
            d["skipped_steps"] = s.skipped_steps;
            return d;
          },
          "The fields as a dict (JSON-serialisable).")
      .def("__repr__", [](const S& s) {
        return "EpochSummary(epoch=" + std::to_string(s.epoch) + ", floats_sent=" + FormatNumber(s.floats_sent) +
               ", next_batch_size=" + std::to_string(s.next_batch_size) +
               ", skipped_steps=" + std::to_string(s.skipped_steps) + ")";
      });
}

py::dict LayerDict(const LayerInfo& l) {
  py::dict d;
  d["layer_id"] = l.layer_id;
  d["name"] = l.name;
  d["shape"] = l.shape;
  d["numel"] = l.numel;
  d["compressible"] = l.compressible;
  d["floats_dense"] = l.floats_dense;
  d["floats_low"] = l.floats_low;
  d["floats_high"] = l.floats_high;
  return d;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "The Accordion Toolkit's C++ core: the DDP hook's state machine and the communication accounting.";
  m.attr("__version__") = kVersion;
  // Bad input is a ValueError (one line); a failed write (a full disk) an
  // OSError; a failed peer or transport a RuntimeError, as
  // torch.distributed raises; a diverged training a FloatingPointError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(e.exit_code() == kExitIoFailure ? PyExc_OSError : PyExc_ValueError, e.what());
    } catch (const CommunicationError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const TrainingDiverged& e) {
      PyErr_SetString(PyExc_FloatingPointError, e.what());
    }
  });

  BindHookOptions(m);
  BindEpochSummary(m);
  m.def("run_settings", &RunSettingRows,
        "The run settings' table: keyword, config key, accordion-train flag, unit, help, choices, whether every "
        "rank must give the same value, default.");
  m.def("schemes", &SchemeRows,
        "Every scheme as the core describes it (traces/scheme_description.h): name, title, has_levels, "
        "batch_levels (its level is the global batch).");
  m.def("policies", &PolicyRows,
        "Every policy as the core describes it (traces/policy_description.h): name, title, one_level, "
        "reads_moments, fits (the schemes it may choose levels of).");
  py::class_<Core>(m, "Core", "The hook's C++ state: exchange, compressors, controllers, trace recorder.")
      .def(py::init<const std::vector<torch::Tensor>&, const std::vector<std::string>&, const DdpHookOptions&,
                    const std::string&>(),
           py::arg("parameters"), py::arg("names"), py::arg("options"), py::arg("problem") = "",
           "Collective: the ranks compare their options (`problem`: this rank's own complaint, raised on every "
           "rank), then rank 0 creates the trace.")
      .def(
          "begin_step", [](Core& c) { c.core().BeginStep(); }, py::call_guard<py::gil_scoped_release>())
      // Every call that may issue or wait for a collective runs without the
      // GIL, as torch.distributed's own calls do: a Gloo thread that frees a
      // finished work of the script's (Lightning's broadcast, say) needs the
      // GIL for its tensors while it holds the group's queue lock, and our
      // next collective waits for that lock - with the GIL held, a deadlock
      // (the Lightning example hung in CI on 2026-11-28).
      .def(
          "end_forward", [](Core& c) { c.core().EndForward(); }, py::call_guard<py::gil_scoped_release>())
      .def(
          "gradient_ready", [](Core& c, int layer, const torch::Tensor& grad) { c.core().GradientReady(layer, grad); },
          py::arg("layer"), py::arg("grad"), py::call_guard<py::gil_scoped_release>())
      .def(
          "finish_step", [](Core& c) { c.core().FinishStep(); }, py::call_guard<py::gil_scoped_release>())
      .def(
          "copy_average_into",
          [](Core& c, const std::vector<int>& layers, torch::Tensor buffer) {
            // DDP's flat bucket holds its parameters' gradients one after another.
            int64_t offset = 0;
            for (int layer : layers) {
              const torch::Tensor average = c.core().Gradient(layer);
              if (offset + average.numel() > buffer.numel()) throw InputError("the bucket is smaller than its layers");
              buffer.narrow(0, offset, average.numel()).copy_(average.reshape(-1));
              offset += average.numel();
            }
          },
          py::arg("layers"), py::arg("buffer"),
          "Writes the step's averaged gradients of `layers` into DDP's flat `buffer`, in order.",
          py::call_guard<py::gil_scoped_release>())
      .def(
          "end_epoch",
          [](Core& c, double lr, double next_lr, double train_loss, double train_acc, double test_loss, double test_acc,
             int64_t optimizer_steps) {
            DdpEpochSummary s;
            {
              py::gil_scoped_release no_gil;
              s = c.core().EndEpoch(lr, next_lr, train_loss, train_acc, test_loss, test_acc, optimizer_steps);
            }
            return s;
          },
          py::arg("lr"), py::arg("next_lr"), py::arg("train_loss"), py::arg("train_acc"), py::arg("test_loss"),
          py::arg("test_acc"), py::arg("optimizer_steps") = -1)
      .def(
          "set_gradient_scale", [](Core& c, double scale) { c.core().SetGradientScale(scale); }, py::arg("scale"),
          "The loss scale of the coming step's gradients (GradScaler's), between steps.")
      .def(
          "finish",
          [](Core& c, bool complete) { c.core().Finish(complete ? RunStatus::kComplete : RunStatus::kInterrupted); },
          py::arg("complete"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("levels", [](Core& c) { return c.core().levels(); })
      .def_property_readonly("epoch", [](Core& c) { return c.core().epoch(); })
      .def_property_readonly("step", [](Core& c) { return c.core().step(); })
      .def_property_readonly("in_step", [](Core& c) { return c.core().in_step(); })
      .def_property_readonly("recording", [](Core& c) { return c.core().recording(); })
      .def_property_readonly("layers", [](Core& c) {
        py::list out;
        for (const LayerInfo& l : c.core().layers()) out.append(LayerDict(l));
        return out;
      });

  m.def(
      "floats_per_step",
      [](const std::string& scheme, const std::vector<int64_t>& shape, double level, bool topk_dense_vectors) {
        return FloatsPerStep(SchemeOf(scheme, topk_dense_vectors, true), shape, level);
      },
      py::arg("scheme"), py::arg("shape"), py::arg("level"), py::arg("topk_dense_vectors") = false,
      "Floats one worker sends per step for a tensor of `shape` at `level` (the trainer's accounting).");
  m.def(
      "default_levels",
      [](const std::string& scheme, int64_t batch_size) {
        return DefaultLevels(SchemeOf(scheme, false, true).scheme(), batch_size);
      },
      py::arg("scheme"), py::arg("batch_size") = 0, "The paper's (low, high) levels for `scheme`.");
  BindTrainerParts(m);
}

}  // namespace accordion::python
