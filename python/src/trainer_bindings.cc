// Bindings of accordion-train's data path (sampler order, dataset reading)
// and of its built-in models' initial weights, for scripts that must see
// exactly the batches and weights accordion-train sees. Everything here is
// the trainer's own C++ (datasets.h, distributed_sampler.h, models.h,
// trainer.h); Python only calls it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/extension.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "trainer/datasets.h"
#include "trainer/distributed_sampler.h"
#include "trainer/models.h"
#include "trainer/train_options.h"
#include "trainer/trainer.h"

namespace accordion::python {

namespace py = pybind11;

namespace {

py::dict ShapeDict(const InputShape& s) {
  py::dict d;
  d["channels"] = s.channels;
  d["height"] = s.height;
  d["width"] = s.width;
  d["classes"] = s.classes;
  return d;
}

py::tuple BatchTuple(const Batch& b) { return py::make_tuple(b.inputs, b.targets); }

// The trainer's TrainingData for one rank, as TrainingData::Load builds it
// from accordion-train's flags of the same names.
class Data {
 public:
  Data(const std::string& dataset, const std::string& data_dir, int64_t limit_samples, int64_t seed, int world_size,
       int rank, bool augment, int64_t batch_size, const std::string& data_file, const std::string& valid_file,
       double valid_fraction, int bptt) {
    if (world_size < 1 || rank < 0 || rank >= world_size) {
      throw InputError("need 0 <= rank < world_size, not rank " + std::to_string(rank) + " of " +
                       std::to_string(world_size));
    }
    TrainOptions o;
    o.dataset = dataset;
    o.data_dir = data_dir;
    o.limit_samples = limit_samples;
    o.seed = seed;
    o.augment = augment;
    o.batch_size = batch_size;
    o.data_file = data_file;
    o.valid_file = valid_file;
    o.valid_fraction = valid_fraction;
    o.bptt = bptt;
    data_ = TrainingData::Load(o, world_size, rank);
  }

  TrainingData& data() { return *data_; }
  void StartEpoch(int epoch, int64_t global_batch) {
    data_->StartEpoch(epoch, global_batch);
    started_ = true;
  }
  void CheckStarted() const {
    if (!started_) throw InputError("call start_epoch(epoch, global_batch) first");
  }

 private:
  std::unique_ptr<TrainingData> data_;
  bool started_ = false;
};

// The named parameters `name` starts with in accordion-train --seed `seed`
// on inputs of `shape` (before the trainer reseeds each rank). The global
// CPU generator is left as it was.
std::vector<std::pair<std::string, torch::Tensor>> InitialParameters(const std::string& name, int64_t seed,
                                                                     const InputShape& shape,
                                                                     const ModelOptions& options) {
  at::Generator generator = at::globalContext().defaultGenerator(torch::kCPU);
  const torch::Tensor saved = generator.get_state();
  std::vector<std::pair<std::string, torch::Tensor>> out;
  try {
    torch::manual_seed(static_cast<uint64_t>(seed));  // as Trainer::State::BuildModel
    const std::shared_ptr<Model> model = MakeModel(name, shape, options);
    for (const auto& item : model->named_parameters(/*recurse=*/true)) {
      out.emplace_back(item.key(), item.value().detach().clone());
    }
  } catch (...) {
    generator.set_state(saved);
    throw;
  }
  generator.set_state(saved);
  return out;
}

}  // namespace

void BindTrainerParts(py::module_& m) {
  py::class_<DistributedSampler>(m, "DistributedSampler",
                                 "accordion-train's sampler: which training samples each rank uses at each step. "
                                 "Every epoch shuffles the ids from (seed, epoch) alone; step k hands out the k-th "
                                 "slice of the global order, cut in world_size contiguous pieces.")
      .def(py::init<int64_t, int64_t, int, int, uint64_t>(), py::arg("num_samples"), py::arg("global_batch"),
           py::arg("world_size"), py::arg("rank"), py::arg("seed"))
      .def("set_epoch", &DistributedSampler::SetEpoch, py::arg("epoch"), "Reshuffles for `epoch`.")
      .def_property_readonly("steps_per_epoch", &DistributedSampler::steps_per_epoch)
      .def("batch", &DistributedSampler::Batch, py::arg("step"),
           "This rank's sample ids at `step` of the current epoch (the last step may be shorter).")
      .def(
          "epoch_batches",
          [](DistributedSampler& s, int epoch) {
            s.SetEpoch(epoch);
            std::vector<std::vector<int64_t>> out;
            for (int64_t step = 0; step < s.steps_per_epoch(); ++step) out.push_back(s.Batch(step));
            return out;
          },
          py::arg("epoch"), "Reshuffles for `epoch` and returns every step's ids, in step order.");

  py::class_<Data>(m, "TrainingData",
                   "accordion-train's data for one rank (TrainingData::Load): the same files, normalisation, "
                   "sample limit, shuffling and split over ranks as `accordion-train` with the same flags.")
      .def(py::init<const std::string&, const std::string&, int64_t, int64_t, int, int, bool, int64_t,
                    const std::string&, const std::string&, double, int>(),
           py::arg("dataset") = "fashion-mnist", py::arg("data_dir") = "", py::arg("limit_samples") = 0,
           py::arg("seed") = 1, py::arg("world_size") = 1, py::arg("rank") = 0, py::arg("augment") = false,
           py::arg("batch_size") = 128, py::arg("data_file") = "", py::arg("valid_file") = "",
           py::arg("valid_fraction") = 0.1, py::arg("bptt") = 35,
           "Arguments as accordion-train's flags (data_dir '' = /usr/share/datasets/<dataset>; batch_size, "
           "data_file, valid_file, valid_fraction and bptt matter to dataset 'tokens' only). Raises ValueError.")
      .def_property_readonly("shape", [](Data& d) { return ShapeDict(d.data().shape()); })
      .def_property_readonly("train_samples", [](Data& d) { return d.data().train_samples(); })
      .def("start_epoch", &Data::StartEpoch, py::arg("epoch"), py::arg("global_batch"),
           "Reshuffles for `epoch`, whose steps carry `global_batch` samples over all ranks.")
      .def_property_readonly("steps",
                             [](Data& d) {
                               d.CheckStarted();
                               return d.data().steps();
                             })
      .def(
          "train_batch",
          [](Data& d, int64_t step) {
            d.CheckStarted();
            if (step < 0 || step >= d.data().steps()) throw InputError("step out of range");
            return BatchTuple(d.data().TrainBatch(step));
          },
          py::arg("step"), "(inputs, targets) of this rank at `step` of the epoch: float32 normalised, int64.")
      .def(
          "test_batches",
          [](Data& d) {
            py::list out;
            d.data().ForEachTestBatch([&](const Batch& b) { out.append(BatchTuple(b)); });
            return out;
          },
          "This rank's share of the test split as a list of (inputs, targets), in order.")
      .def(
          "hessian_batch", [](Data& d, int64_t size) { return BatchTuple(d.data().HessianBatch(size)); },
          py::arg("size"), "This rank's share of the fixed batch of `size` samples the Hessian estimate uses.");

  m.def(
      "initial_parameters",
      [](const std::string& model, int64_t seed, const py::dict& shape, int64_t lstm_size, double dropout,
         bool tie_weights) {
        InputShape s;
        if (shape.contains("channels")) s.channels = shape["channels"].cast<int64_t>();
        if (shape.contains("height")) s.height = shape["height"].cast<int64_t>();
        if (shape.contains("width")) s.width = shape["width"].cast<int64_t>();
        if (shape.contains("classes")) s.classes = shape["classes"].cast<int64_t>();
        return InitialParameters(model, seed, s,
                                 ModelOptions().lstm_size(lstm_size).dropout(dropout).tie_weights(tie_weights));
      },
      py::arg("model"), py::arg("seed"), py::arg("shape") = py::dict(), py::arg("lstm_size") = 650,
      py::arg("dropout") = 0.4, py::arg("tie_weights") = false,
      "The (name, tensor) parameters accordion-train's built-in `model` starts with under --seed `seed`, on inputs "
      "of `shape` (a TrainingData.shape dict; default 1x28x28, 10 classes). The global generator is left as it was.");
  m.def("worker_seed", &WorkerSeed, py::arg("seed"), py::arg("rank"),
        "The seed accordion-train gives `rank`'s default generator once the initial weights are shared.");
}

}  // namespace accordion::python
