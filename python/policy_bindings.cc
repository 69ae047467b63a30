// placerl._policy: a trained policy (encoders/policy.h — a place-train / device-train
// checkpoint) acting on an environment of placerl._core. The package's only LibTorch part, in
// its own extension module so that `import placerl` does not load LibTorch (≈ 1.2 s): it is
// imported by placerl.Policy.load. The Environment type is placerl._core's (pybind11 shares
// registered types between modules); placerl's errors become placerl._core's exceptions.
// Bindings only: loading, the layout check and the forward pass are the library's.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "datasets/util/errors.h"
#include "encoders/policy.h"
#include "agents/checkpoint_extras.h"
#include "agents/learner.h"
#include "env/environment.h"
#include "python/errors.h"

namespace py = pybind11;

namespace placerl {
namespace {

class PyPolicy {
 public:
  // `path`: a checkpoint file (already resolved from a run directory by placerl/__init__.py).
  // Its layout is read now, so that a file that is not a checkpoint fails here.
  explicit PyPolicy(std::string path) : path_(std::move(path)), layout_(encoders::Policy::ReadLayout(path_)) {}

  int32_t Act(const env::Environment& e, bool greedy, py::object seed) {
    if (!seed.is_none()) {
      const long long s = seed.cast<long long>();
      if (s < 0) throw ConfigError("Policy.act: the seed must be >= 0 (got " + std::to_string(s) + ")");
      rng_.seed(static_cast<uint64_t>(s));
    }
    Ensure(e);
    const encoders::PolicyStep step = policy_->Act(e, &rng_, greedy);
    last_log_prob_ = step.log_prob;
    last_value_ = step.value;
    return step.action;
  }

  py::tuple Evaluate(const env::Environment& e) {
    Ensure(e);
    float value = 0;
    const std::vector<float> logits = policy_->Logits(e, &value);
    return py::make_tuple(py::array_t<float>(static_cast<py::ssize_t>(logits.size()), logits.data()), value);
  }

  // Loads the policy for e, checking its layout (ConfigError when it does not fit), as place does
  // right after building its environment.
  void Check(const env::Environment& e) { Ensure(e); }
  std::vector<std::string> ActionFeatureNames() const { return layout_.action_feature_names; }
  // The training run's config text the checkpoint carries (None for one written before).
  py::object RunConfig() const {
    const agents::Learner::Extras extras = agents::Learner::ReadExtras(path_);
    const auto it = extras.find(agents::kRunConfigExtra);
    return it == extras.end() ? py::object(py::none()) : py::object(py::str(it->second));
  }
  std::string Kind() const { return env::ActionKindName(layout_.kind); }
  const std::string& path() const { return path_; }
  float last_log_prob_ = 0, last_value_ = 0;

 private:
  void Ensure(const env::Environment& e) {
    if (!policy_) policy_ = encoders::Policy::Load(path_, e);  // checks the layout against e
  }
  std::string path_;
  encoders::FeatureLayout layout_;
  std::unique_ptr<encoders::Policy> policy_;
  std::mt19937_64 rng_{1};
};

void BindPolicy(py::module_& m) {

  py::class_<PyPolicy>(m, "Policy", "a trained policy from a checkpoint (encoders/policy.h)")
      .def(py::init<std::string>(), py::arg("checkpoint_file"))
      .def("act", &PyPolicy::Act, py::arg("env"), py::arg("greedy") = true, py::arg("seed") = py::none(),
           "the action for env's current state: the most likely legal one (greedy) or a sample (the policy's "
           "RNG, reseeded when seed is given)")
      .def("check", &PyPolicy::Check, py::arg("env"), "loads the policy for env: ConfigError if its layout does not fit")
      .def("evaluate", &PyPolicy::Evaluate, py::arg("env"), "(masked logits, value) of env's current state")
      .def_property_readonly("action_feature_names", &PyPolicy::ActionFeatureNames)
      .def_property_readonly("action_kind", &PyPolicy::Kind)
      .def_property_readonly("run_config", &PyPolicy::RunConfig,
                             "the training run's config text the checkpoint carries (None: written before it did)")
      .def_property_readonly("path", &PyPolicy::path)
      .def_readonly("last_log_prob", &PyPolicy::last_log_prob_)
      .def_readonly("last_value", &PyPolicy::last_value_);
}

}  // namespace
}  // namespace placerl

PYBIND11_MODULE(_policy, m) {
  using namespace placerl;
  m.doc() = "placerl's trained policies (LibTorch)";
  py::module_ core = py::module_::import("placerl._core");  // the Environment type and the exceptions
  python::RegisterErrorTranslator(core);
  BindPolicy(m);
}
