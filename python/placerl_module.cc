// placerl._core: the C++ side of the Python module `placerl` (python/placerl/__init__.py adds
// Gymnasium's API on top). Bindings only — every behaviour is the library's:
// - Environment (env/environment.h) from the registry (env/registry.h), its observation as NumPy
//   arrays: the static graph's arrays are read-only views of the instance's memory (kept alive by
//   the array), the dynamic state's are views of the environment's buffers (valid until its next
//   step or reset: copy them to keep them);
// - VectorEnv (env/vector_env.h): B copies stepped together, auto-reset;
// - PlacementCost (cost_models/chip/plc_client.h) under Circuit Training's method names.
// Errors: placerl's exceptions become placerl.Error (RuntimeError) and its subclasses
// ConfigError / ParseError / InfeasibleAction (also ValueError) with the same one-line message
// the binaries print (python/errors.h, shared with placerl._policy).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <time.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cost_models/chip/plc_client.h"
#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"
#include "env/chip/chip_env_config.h"
#include "env/chip/trained_env.h"
#include "env/environment.h"
#include "env/registry.h"
#include "env/vector_env.h"
#include "python/errors.h"
#include "search/device/placers.h"

namespace py = pybind11;

namespace placerl {
namespace {

// A NumPy view of `data` (shape `shape`) that keeps `owner` alive; read-only unless `writable`.
template <typename T>
py::array View(const T* data, std::vector<py::ssize_t> shape, py::object owner, bool writable = false) {
  py::array a(py::dtype::of<T>(), shape, data, owner);
  if (!writable) py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

// CPU seconds of the calling thread (the step-overhead benchmark's clock).
double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The static graph, kept alive by a capsule that owns a shared_ptr to it.
py::object KeepAlive(std::shared_ptr<const env::StaticGraph> g) {
  auto* holder = new std::shared_ptr<const env::StaticGraph>(std::move(g));
  return py::capsule(holder, [](void* p) { delete static_cast<std::shared_ptr<const env::StaticGraph>*>(p); });
}

py::dict StaticGraphArrays(const env::Environment& e) {
  std::shared_ptr<const env::StaticGraph> g = e.static_graph();
  py::object owner = KeepAlive(g);
  py::dict d;
  d["node_features"] = View(g->node_features.data(), {g->num_nodes, g->node_feature_dim}, owner);
  d["edge_src"] = View(g->edge_src.data(), {g->num_edges()}, owner);
  d["edge_dst"] = View(g->edge_dst.data(), {g->num_edges()}, owner);
  d["edge_weight"] = View(g->edge_weight.data(), {static_cast<py::ssize_t>(g->edge_weight.size())}, owner);
  d["edge_features"] = View(g->edge_features.data(), {g->num_edges(), g->edge_feature_dim}, owner);
  d["metadata"] = View(g->metadata.data(), {g->metadata_dim()}, owner);
  d["directed"] = g->directed;
  d["node_feature_names"] = g->node_feature_names;
  d["metadata_names"] = g->metadata_names;
  d["node_names"] = g->node_names;
  return d;
}

// Views of the environment's dynamic buffers (their sizes never change for an environment).
py::dict DynamicArrays(py::object self) {
  const env::Environment& e = self.cast<const env::Environment&>();
  const env::DynamicState& s = e.state();
  const py::ssize_t n = e.static_graph()->num_nodes, a = e.num_actions();
  py::dict d;
  d["current_node"] = s.current_node;
  d["step"] = s.step;
  d["node_dynamic"] = View(s.node_dynamic.data(), {n, s.node_dynamic_dim}, self);
  d["action_mask"] = View(s.action_mask.data(), {a}, self);
  d["action_features"] = View(s.action_features.data(), {s.action_feature_dim, a}, self);
  return d;
}

py::dict Info(const env::Environment& e) {
  py::dict d;
  const auto& names = e.info_names();
  const auto& values = e.info();
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) d[py::str(names[i])] = values[i];
  return d;
}

py::dict SpecDict(const env::ActionSpec& s) {
  py::dict d;
  d["kind"] = env::ActionKindName(s.kind);
  d["n"] = s.n;
  d["cols"] = s.cols;
  d["rows"] = s.rows;
  return d;
}

// Gymnasium's reset/step in one call each (placerl/__init__.py's Env): the observation dict is
// built from views made once and made again only if a buffer moved (a pointer compare per step),
// the info dict from interned keys — what keeps stepping from Python within ~1 µs of the C++ step.
class GymStepper {
 public:
  explicit GymStepper(py::object env) : env_obj_(std::move(env)), e_(&env_obj_.cast<env::Environment&>()) {
    static_ = StaticGraphArrays(*e_)["node_features"];
    int32_ = py::module_::import("numpy").attr("int32");
    for (const std::string& n : e_->info_names()) info_keys_.push_back(py::str(n));
    k_infeasible_ = py::str("infeasible");
    k_current_node_ = py::str("current_node");
    k_node_dynamic_ = py::str("node_dynamic");
    k_action_mask_ = py::str("action_mask");
    k_action_features_ = py::str("action_features");
    k_node_features_ = py::str("node_features");
  }

  py::tuple Reset(uint64_t seed) {
    if (closed_) throw Error("the environment is closed");
    e_->Reset(seed);
    return py::make_tuple(Obs(), Info());
  }

  // `action`: a Python or NumPy integer, or an integral float; anything else is an error.
  py::tuple Step(py::handle action) {
    if (closed_) throw Error("the environment is closed");
    const int32_t a = Action(action);
    env::StepResult r;
    if (timing_) {  // the benchmark: CPU time inside the C++ step, to subtract from the call's
      const double t0 = ThreadCpuSeconds();
      r = e_->Step(a);
      inner_seconds_ += ThreadCpuSeconds() - t0;
    } else {
      r = e_->Step(a);
    }
    py::dict info = Info();
    info[k_infeasible_] = py::bool_(r.infeasible);
    return py::make_tuple(Obs(), py::float_(r.reward), py::bool_(r.done), py::bool_(false), std::move(info));
  }

  void Close() { closed_ = true; }
  bool timing_ = false;
  double inner_seconds_ = 0;

  // A copy of the last info dict (the same keys: a flat copy) with the values that changed
  // replaced; an unchanged value keeps its float object.
  py::dict Info() {
    const std::vector<double>& values = e_->info();
    const size_t k = std::min(info_keys_.size(), values.size());
    if (!info_template_) {
      info_template_ = py::dict();
      last_info_.assign(k, std::numeric_limits<double>::quiet_NaN());
      for (size_t i = 0; i < k; ++i) info_template_[info_keys_[i]] = py::none();
    }
    for (size_t i = 0; i < k; ++i) {
      if (values[i] == last_info_[i]) continue;
      PyObject* v = PyFloat_FromDouble(values[i]);
      if (v == nullptr || PyDict_SetItem(info_template_.ptr(), info_keys_[i].ptr(), v) != 0) {
        Py_XDECREF(v);
        info_template_ = py::object();  // rebuilt next time
        throw py::error_already_set();
      }
      Py_DECREF(v);
      last_info_[i] = values[i];
    }
    return py::reinterpret_steal<py::dict>(PyDict_Copy(info_template_.ptr()));
  }

  py::dict Obs() {
    const env::DynamicState& s = e_->state();
    const py::ssize_t n = e_->static_graph()->num_nodes, a = e_->num_actions();
    if (s.node_dynamic.data() != dyn_ptr_ || s.action_mask.data() != mask_ptr_ ||
        s.action_features.data() != feat_ptr_ || s.node_dynamic_dim != dyn_dim_ ||
        s.action_feature_dim != feat_dim_) {
      dyn_ptr_ = s.node_dynamic.data();
      mask_ptr_ = s.action_mask.data();
      feat_ptr_ = s.action_features.data();
      dyn_dim_ = s.node_dynamic_dim;
      feat_dim_ = s.action_feature_dim;
      node_dynamic_ = View(s.node_dynamic.data(), {n, s.node_dynamic_dim}, env_obj_);
      action_mask_ = View(s.action_mask.data(), {a}, env_obj_);
      action_features_ = View(s.action_features.data(), {s.action_feature_dim, a}, env_obj_);
      obs_template_ = py::dict();
      obs_template_[k_current_node_] = py::none();
      obs_template_[k_node_dynamic_] = node_dynamic_;
      obs_template_[k_action_mask_] = action_mask_;
      obs_template_[k_action_features_] = action_features_;
      obs_template_[k_node_features_] = static_;
    }
    py::dict d = py::reinterpret_steal<py::dict>(PyDict_Copy(obs_template_.ptr()));
    if (!d) throw py::error_already_set();
    d[k_current_node_] = CurrentNode(s.current_node);
    return d;
  }

 private:
  static int32_t Action(py::handle a) {
    long long v = 0;
    if (PyLong_CheckExact(a.ptr()) || PyIndex_Check(a.ptr())) {
      int overflow = 0;
      py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(a.ptr()));
      if (!i) throw py::error_already_set();
      v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
      if (overflow != 0) v = std::numeric_limits<long long>::max();
    } else if (PyNumber_Check(a.ptr()) && !PyComplex_Check(a.ptr())) {
      const double d = PyFloat_AsDouble(a.ptr());
      if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
      if (!(std::floor(d) == d) || std::fabs(d) > 1e15)
        throw ConfigError("step: the action must be an integer (got " + py::repr(a).cast<std::string>() + ")");
      v = static_cast<long long>(d);
    } else {
      throw py::type_error("step: the action must be an integer (got " + py::repr(a).cast<std::string>() + ")");
    }
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      throw InfeasibleAction("step: action " + std::to_string(v) + " is out of range");
    return static_cast<int32_t>(v);
  }

  // NumPy int32 scalars, made once per value.
  py::object CurrentNode(int32_t v) {
    const size_t k = static_cast<size_t>(static_cast<int64_t>(v) + 1);
    if (v < -1 || k > (1u << 24)) return int32_(v);
    if (k >= node_scalars_.size()) node_scalars_.resize(k + 1);
    if (!node_scalars_[k]) node_scalars_[k] = int32_(v);
    return node_scalars_[k];
  }

  py::object env_obj_;
  env::Environment* e_;
  bool closed_ = false;
  std::vector<py::object> node_scalars_;
  py::object static_, int32_, node_dynamic_, action_mask_, action_features_;
  py::dict obs_template_;
  py::object info_template_;  // null until the first Info()
  std::vector<double> last_info_;
  const void *dyn_ptr_ = nullptr, *mask_ptr_ = nullptr, *feat_ptr_ = nullptr;
  int32_t dyn_dim_ = -1, feat_dim_ = -1;
  std::vector<py::str> info_keys_;
  py::str k_infeasible_, k_current_node_, k_node_dynamic_, k_action_mask_, k_action_features_, k_node_features_;
};

std::unique_ptr<env::Environment> Make(const std::string& spec) { return env::MakeEnvironment(spec); }

// The chip environment `place --checkpoint CKPT [--netlist N] [--plc P]` builds (place_program.cc)
// from what placerl._policy reads in the checkpoint (its training config text, None for a
// checkpoint written before it carried one, and its policy's action feature names): the
// training settings on the design asked for (TrainedChipEnvOf), reconciled as place does
// (ReconcileTrainedChipEnv), made by MakeChipEnv. Returns (environment, the differences place
// writes to result.json's trained_settings.changed, as JSON text, whether the checkpoint recorded
// its settings, the warnings raised as (id, message) pairs).
py::tuple MakeTrainedChipEnv(const std::string& checkpoint, py::object run_config,
                             const std::vector<std::string>& action_feature_names, const std::string& netlist,
                             const std::string& plc) {
  ScopedWarningCapture warnings;
  const std::string text = run_config.is_none() ? std::string() : run_config.cast<std::string>();
  const TrainedChipEnv trained = TrainedChipEnvOf(checkpoint, run_config.is_none() ? nullptr : &text,
                                                  action_feature_names, DefaultChipEnvConfig());
  config::ChipEnvConfig used = trained.chip;
  if (!netlist.empty()) used.set_netlist(netlist);
  if (!plc.empty()) used.set_plc(plc);
  const nlohmann::json changed = ReconcileTrainedChipEnv(trained, checkpoint, &used);
  std::unique_ptr<env::Environment> e = MakeChipEnv(used, trained.maps);
  py::list raised;
  for (const Warning& w : warnings.warnings()) raised.append(py::make_tuple(w.id, w.message));
  return py::make_tuple(std::move(e), changed.dump(), trained.recorded, raised);
}

void BindEnvironment(py::module_& m) {
  py::class_<env::Environment>(m, "Environment",
                               "A registry environment (env/environment.h): deterministic per seed, cloneable")
      .def_property_readonly("name", &env::Environment::name)
      .def_property_readonly("action_spec", [](const env::Environment& e) { return SpecDict(e.action_spec()); })
      .def_property_readonly("num_actions", &env::Environment::num_actions)
      .def_property_readonly("episode_length", &env::Environment::episode_length)
      .def_property_readonly("done", &env::Environment::done)
      .def("reset", &env::Environment::Reset, py::arg("seed"), "starts an episode (deterministic per seed)")
      .def(
          "step",
          [](env::Environment& e, int32_t action) {
            const env::StepResult r = e.Step(action);
            return py::make_tuple(r.reward, r.done, r.infeasible);
          },
          py::arg("action"), "(reward, done, infeasible); InfeasibleAction for a masked action or after the end")
      .def("static_arrays", &StaticGraphArrays, "the instance's static graph as read-only NumPy views")
      .def("dynamic_arrays", &DynamicArrays,
           "the current state as read-only NumPy views of the environment's buffers (valid until the next step/reset)")
      .def("info", &Info, "every cost component of the current state, by name")
      .def("clone", &env::Environment::Clone, "an independent copy in the same state");
  py::class_<GymStepper>(m, "GymStepper", "reset/step of an Environment with Gymnasium's return values")
      .def(py::init<py::object>(), py::arg("env"))
      .def("reset", &GymStepper::Reset, py::arg("seed"), "(obs, info)")
      .def("step", &GymStepper::Step, py::arg("action"), "(obs, reward, terminated, truncated, info)")
      .def("obs", &GymStepper::Obs, "the current observation dict (views)")
      .def("info", &GymStepper::Info, "the current info dict")
      .def("close", &GymStepper::Close, "later calls raise placerl.Error")
      .def_readwrite("_timing", &GymStepper::timing_, "benchmark: time the C++ step inside each step call")
      .def_readwrite("_inner_seconds", &GymStepper::inner_seconds_, "benchmark: CPU seconds inside the C++ steps");
  m.def("make_environment", &Make, py::arg("spec"), "an environment from a registry string, e.g. 'chip(seed=1)'");
  m.def("make_trained_chip_env", &MakeTrainedChipEnv, py::arg("checkpoint_file"), py::arg("run_config"),
        py::arg("action_feature_names"), py::arg("netlist") = "", py::arg("plc") = "",
        "(environment, changed settings as JSON, recorded, warnings): the chip environment place builds for a "
        "checkpoint on this design (placerl.Policy.make_env)");
}

// Batched stepping: the buffers as NumPy views (valid until the next step/reset).
struct PyVectorEnv {
  PyVectorEnv(const std::string& spec, int32_t n, uint64_t seed) {
    if (n < 1 || n > 4096) throw ConfigError("make_vec: n must be in [1, 4096] (got " + std::to_string(n) + ")");
    std::unique_ptr<env::Environment> proto = Make(spec);
    venv = std::make_unique<env::VectorEnv>(env::VectorEnv::Replicate(*proto, n, seed));
  }
  std::unique_ptr<env::VectorEnv> venv;
  env::BatchBuffers out;
  bool timing = false;  // the benchmark: CPU seconds inside VectorEnv::Step
  double inner_seconds = 0;
  // Gymnasium's return values (placerl/__init__.py's VecEnv), made once per reset: the buffers
  // do not move between resets.
  py::dict obs_template, info_template;
  py::object reward, done, truncated;

  void Step(py::handle actions) {
    if (out.batch == 0) throw ConfigError("VectorEnv.step before reset");
    const int32_t n = venv->size();
    using Int32Array = py::array_t<int32_t, py::array::c_style | py::array::forcecast>;
    Int32Array a;
    if (py::isinstance<py::array_t<int32_t>>(actions) &&
        (py::reinterpret_borrow<py::array>(actions).flags() & py::array::c_style)) {
      a = py::reinterpret_borrow<Int32Array>(actions);  // the fast path: no conversion
    } else {
      // Anything else must hold integers that fit int32: no silent truncation of 1.5 or 2**40.
      py::array raw = py::array::ensure(actions);
      if (!raw || raw.dtype().kind() == 'O' || raw.dtype().kind() == 'U' || raw.dtype().kind() == 'S') {
        PyErr_Clear();
        throw py::type_error("VectorEnv.step: the actions must be an array of " + std::to_string(n) + " integers");
      }
      const char kind = raw.dtype().kind();
      if (kind != 'i' && kind != 'u' && kind != 'b')
        throw ConfigError("VectorEnv.step: the actions must be integers (got dtype " +
                          py::str(raw.dtype()).cast<std::string>() + ")");
      auto wide = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(raw);
      if (!wide) throw py::error_already_set();
      for (py::ssize_t i = 0; i < wide.size(); ++i) {
        const int64_t v = wide.data()[i];
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
          throw InfeasibleAction("VectorEnv.step: action " + std::to_string(v) + " is out of range");
      }
      a = Int32Array::ensure(wide);
      if (!a) throw py::error_already_set();
    }
    if (a.ndim() != 1 || a.shape(0) != n)
      throw ConfigError("VectorEnv.step: expected " + std::to_string(n) + " actions");
    if (timing) {
      const double t0 = ThreadCpuSeconds();
      venv->Step(a.data(), &out);
      inner_seconds += ThreadCpuSeconds() - t0;
    } else {
      venv->Step(a.data(), &out);
    }
  }
};

py::dict BatchArrays(py::object self) {
  PyVectorEnv& v = self.cast<PyVectorEnv&>();
  const env::BatchBuffers& b = v.out;
  const py::ssize_t n = b.batch;
  py::dict d;
  d["reward"] = View(b.reward.data(), {n}, self);
  d["done"] = View(b.done.data(), {n}, self);
  d["infeasible"] = View(b.infeasible.data(), {n}, self);
  d["episode_return"] = View(b.episode_return.data(), {n}, self);
  d["final_info"] = View(b.final_info.data(), {n, b.info_stride}, self);
  d["current_node"] = View(b.current_node.data(), {n}, self);
  d["action_mask"] = View(b.mask.data(), {n, b.mask_stride}, self);
  d["node_dynamic"] = View(b.node_dynamic.data(), {n, b.dynamic_stride}, self);
  return d;
}

void BindVectorEnv(py::module_& m) {
  py::class_<PyVectorEnv>(m, "VectorEnv", "B copies of one environment stepped together (env/vector_env.h), auto-reset")
      .def(py::init<const std::string&, int32_t, uint64_t>(), py::arg("spec"), py::arg("n"), py::arg("seed") = 0)
      .def_property_readonly("size", [](const PyVectorEnv& v) { return v.venv->size(); })
      .def(
          "env", [](PyVectorEnv& v, int32_t i) -> env::Environment& {
            if (i < 0 || i >= v.venv->size()) throw ConfigError("VectorEnv.env: index out of range");
            return v.venv->env(i);
          },
          py::return_value_policy::reference_internal)
      .def("reset", [](PyVectorEnv& v) { v.venv->Reset(&v.out); })
      .def("step", &PyVectorEnv::Step, py::arg("actions"))
      .def(
          "gym_reset",
          [](py::object self, py::list info_names) {
            PyVectorEnv& v = self.cast<PyVectorEnv&>();
            v.venv->Reset(&v.out);
            py::dict a = BatchArrays(self);
            py::object as_bool = py::module_::import("numpy").attr("bool_");
            v.reward = a["reward"];
            v.done = a["done"].attr("view")(as_bool);
            py::array_t<bool> truncated(v.out.batch);
            std::fill(truncated.mutable_data(), truncated.mutable_data() + v.out.batch, false);
            truncated.attr("flags").attr("writeable") = false;
            v.truncated = truncated;
            v.obs_template = py::dict();
            v.obs_template["current_node"] = a["current_node"];
            v.obs_template["action_mask"] = a["action_mask"];
            v.obs_template["node_dynamic"] = a["node_dynamic"];
            v.info_template = py::dict();
            v.info_template["infeasible"] = a["infeasible"].attr("view")(as_bool);
            v.info_template["episode_return"] = a["episode_return"];
            v.info_template["final_info"] = a["final_info"];
            v.info_template["info_names"] = info_names;
            return py::make_tuple(v.obs_template.attr("copy")(), py::dict());
          },
          py::arg("info_names"), "reset() with Gymnasium's return value (obs, info)")
      .def(
          "gym_step",
          [](PyVectorEnv& v, py::handle actions) {
            v.Step(actions);
            return py::make_tuple(py::reinterpret_steal<py::dict>(PyDict_Copy(v.obs_template.ptr())), v.reward, v.done,
                                  v.truncated, py::reinterpret_steal<py::dict>(PyDict_Copy(v.info_template.ptr())));
          },
          py::arg("actions"), "(obs, reward, terminated, truncated, info) as views of the batch buffers")
      .def_readwrite("_timing", &PyVectorEnv::timing)
      .def_readwrite("_inner_seconds", &PyVectorEnv::inner_seconds)
      .def("arrays", &BatchArrays, "the batch buffers as read-only NumPy views (valid until the next step/reset)");
}

// --- step-overhead benchmark (python/examples/bench_step.py): the same replayed steps in C++ ---

volatile double g_bench_sink = 0;

int32_t FirstLegal(const std::vector<uint8_t>& mask, size_t begin, size_t end) {
  for (size_t a = begin; a < end; ++a)
    if (mask[a]) return static_cast<int32_t>(a - begin);
  return -1;
}

// One episode from Reset(seed), always the first legal action: its actions.
std::vector<int32_t> RecordFirstLegal(env::Environment& e, uint64_t seed) {
  std::vector<int32_t> actions;
  e.Reset(seed);
  while (!e.done()) {
    const std::vector<uint8_t>& mask = e.state().action_mask;
    const int32_t a = FirstLegal(mask, 0, mask.size());
    if (a < 0) break;
    actions.push_back(a);
    e.Step(a);
  }
  return actions;
}

// CPU seconds (this thread) of `repeats` × the actions from Reset(seed), the C++ side of the
// benchmark. Only the steps before the last are timed (the reset and the final step — soft-macro
// FD, the simulator — are milliseconds whose noise would hide microseconds); the info vector is
// read after every step as the Python side does.
double ReplaySteps(env::Environment& e, uint64_t seed, const std::vector<int32_t>& actions, int32_t repeats) {
  if (repeats < 1) throw ConfigError("_bench_replay: repeats must be >= 1");
  if (actions.size() < 2) throw ConfigError("_bench_replay: needs an episode of at least 2 steps");
  double sink = 0, total = 0;
  for (int32_t r = 0; r < repeats; ++r) {
    e.Reset(seed);
    const double t0 = ThreadCpuSeconds();
    for (size_t i = 0; i + 1 < actions.size(); ++i) {
      sink += e.Step(actions[i]).reward;
      sink += e.info().empty() ? 0.0 : e.info()[0];
    }
    total += ThreadCpuSeconds() - t0;
    e.Step(actions.back());
  }
  g_bench_sink = sink;  // keeps the loop's reads
  return total;
}

void BindBench(py::module_& m) {
  m.def("_thread_time", &ThreadCpuSeconds, "CPU seconds of the calling thread");
  m.def(
      "_clock_cost",
      [](int32_t n) {
        if (n < 2) throw ConfigError("_clock_cost: n must be >= 2");
        const double t0 = ThreadCpuSeconds();
        for (int32_t i = 0; i < n - 2; ++i) ThreadCpuSeconds();
        return (ThreadCpuSeconds() - t0) / (n - 1);
      },
      py::arg("n") = 100000, "CPU seconds of one reading of the thread clock");
  m.def("_bench_record", &RecordFirstLegal, py::arg("env"), py::arg("seed"),
        "the actions of one episode from reset(seed) taking the first legal action each step");
  m.def("_bench_replay", &ReplaySteps, py::arg("env"), py::arg("seed"), py::arg("actions"), py::arg("repeats"),
        "CPU seconds of repeats x (reset(seed) + the actions) stepped in C++");
  m.def(
      "_bench_vec_record",
      [](PyVectorEnv& v, int32_t episodes) {
        if (episodes < 1) throw ConfigError("_bench_vec_record: episodes must be >= 1");
        const int32_t length = v.venv->env(0).episode_length(), steps = episodes * length;
        v.venv->Reset(&v.out);
        const int32_t n = v.venv->size();
        std::vector<int32_t> actions(static_cast<size_t>(steps) * n);
        for (int32_t t = 0; t < steps; ++t) {
          for (int32_t i = 0; i < n; ++i) {
            const size_t begin = static_cast<size_t>(i) * v.out.mask_stride;
            const int32_t a = FirstLegal(v.out.mask, begin, begin + v.out.mask_stride);
            actions[static_cast<size_t>(t) * n + i] = a < 0 ? 0 : a;
          }
          v.venv->Step(actions.data() + static_cast<size_t>(t) * n, &v.out);
          for (int32_t i = 0; i < n; ++i)
            if ((v.out.done[i] != 0) != (t % length == length - 1))
              throw ConfigError("_bench_vec_record: the episodes do not all last episode_length steps");
        }
        return py::array_t<int32_t>({static_cast<py::ssize_t>(steps), static_cast<py::ssize_t>(n)}, actions.data());
      },
      py::arg("venv"), py::arg("episodes"),
      "the first-legal actions [episodes * episode_length, n] of the batch from reset()");
  m.def(
      "_bench_vec_replay",
      [](PyVectorEnv& v, py::array_t<int32_t, py::array::c_style | py::array::forcecast> actions) {
        const int32_t n = v.venv->size();
        if (actions.ndim() != 2 || actions.shape(1) != n)
          throw ConfigError("_bench_vec_replay: expected actions [steps, " + std::to_string(n) + "]");
        const py::ssize_t length = v.venv->env(0).episode_length();
        if (length < 2 || actions.shape(0) % length != 0)
          throw ConfigError("_bench_vec_replay: expected whole episodes of at least 2 steps");
        v.venv->Reset(&v.out);
        double total = 0;
        for (py::ssize_t e = 0; e < actions.shape(0); e += length) {
          const double t0 = ThreadCpuSeconds();
          for (py::ssize_t t = e; t < e + length - 1; ++t) v.venv->Step(actions.data(t, 0), &v.out);
          total += ThreadCpuSeconds() - t0;
          v.venv->Step(actions.data(e + length - 1, 0), &v.out);  // the episodes end (auto-reset): not timed
        }
        return total;
      },
      py::arg("venv"), py::arg("actions"),
      "CPU seconds of the batched steps in C++ after reset(), each episode's last step not timed");
}

py::array_t<double> Grid(const std::vector<double>& values) {
  return py::array_t<double>(static_cast<py::ssize_t>(values.size()), values.data());
}

void BindPlacementCost(py::module_& m) {
  using chip::Blockage;
  using chip::PlcClient;
  py::class_<PlcClient>(m, "PlacementCost",
                        "Circuit Training's plc_client.PlacementCost over placerl's exact proxy cost "
                        "(cost_models/chip/plc_client.h; docs/python.md lists the methods)")
      .def(py::init<const std::string&>(), py::arg("netlist_file"))
      // TILOS's plc_client_os.py returns True from these two setters and None from every other
      // setter and mutator (the return values of CT's API as TILOS implements it).
      .def(
          "set_canvas_size",
          [](PlcClient& p, double width, double height) {
            p.SetCanvasSize(width, height);
            return true;
          },
          py::arg("width"), py::arg("height"), "sets the canvas (µm); True, as TILOS's")
      .def(
          "set_placement_grid",
          [](PlcClient& p, int32_t grid_col, int32_t grid_row) {
            p.SetPlacementGrid(grid_col, grid_row);
            return true;
          },
          py::arg("grid_col"), py::arg("grid_row"), "sets the grid (columns, rows); True, as TILOS's")
      .def("set_routes_per_micron", &PlcClient::SetRoutesPerMicron)
      .def("set_macro_routing_allocation", &PlcClient::SetMacroRoutingAllocation)
      .def("set_congestion_smooth_range", &PlcClient::SetCongestionSmoothRange)
      .def("set_overlap_threshold", &PlcClient::SetOverlapThreshold)
      .def("get_canvas_width_height", &PlcClient::CanvasWidthHeight)
      .def("get_grid_num_columns_rows", &PlcClient::GridColumnsRows)
      .def("get_routes_per_micron", &PlcClient::RoutesPerMicron)
      .def("get_macro_routing_allocation", &PlcClient::MacroRoutingAllocation)
      .def("get_congestion_smooth_range", &PlcClient::CongestionSmoothRange)
      .def("get_overlap_threshold", &PlcClient::OverlapThreshold)
      .def("restore_placement", &PlcClient::RestorePlacement, py::arg("plc_file"))
      .def("save_placement", &PlcClient::SavePlacement, py::arg("filename"), py::arg("info") = "")
      .def("get_cost", &PlcClient::WirelengthCost, "the wirelength cost (CT's name)")
      .def("get_wirelength", &PlcClient::Wirelength)
      .def("get_density_cost", &PlcClient::DensityCost)
      .def("get_congestion_cost", &PlcClient::CongestionCost)
      .def("num_nodes", &PlcClient::NumNodes)
      .def("get_macro_indices", &PlcClient::MacroIndices)
      .def("get_node_index", &PlcClient::NodeIndex)
      .def("get_node_name", &PlcClient::NodeName)
      .def("get_node_type", &PlcClient::NodeType)
      .def("is_node_soft_macro", &PlcClient::IsNodeSoftMacro)
      .def("is_node_hard_macro", &PlcClient::IsNodeHardMacro)
      .def("get_node_location", &PlcClient::NodeLocation)
      .def("get_node_width_height", &PlcClient::NodeWidthHeight)
      .def("update_node_coords", &PlcClient::UpdateNodeCoords)
      .def("get_macro_orientation", &PlcClient::MacroOrientation)
      .def("update_macro_orientation", &PlcClient::UpdateMacroOrientation)
      .def("is_node_fixed", &PlcClient::IsNodeFixed)
      .def("fix_node_coord", &PlcClient::FixNodeCoord)
      .def("unfix_node_coord", &PlcClient::UnfixNodeCoord)
      .def("place_node", &PlcClient::PlaceNode)
      .def("get_grid_cell_centre", &PlcClient::CellCentre)
      .def("get_grid_cells_density", [](PlcClient& p) { return Grid(p.GridCellsDensity()); })
      .def("get_horizontal_routing_congestion",
           [](PlcClient& p) { return Grid(p.HorizontalRoutingCongestion()); })
      .def("get_vertical_routing_congestion", [](PlcClient& p) { return Grid(p.VerticalRoutingCongestion()); })
      .def("is_node_placed", &PlcClient::IsNodePlaced)
      .def("unplace_node", &PlcClient::UnplaceNode)
      .def("unplace_all_nodes", &PlcClient::UnplaceAllNodes)
      .def(
          "get_node_mask",
          [](const PlcClient& p, int32_t node) {
            const std::vector<int32_t> m = p.NodeMask(node);
            return py::array_t<int32_t>(static_cast<py::ssize_t>(m.size()), m.data());
          },
          py::arg("node_idx"), "1 per grid cell (row-major) where the node fits without overlapping a placed macro")
      .def("get_grid_cell_of_node", &PlcClient::GridCellOfNode)
      .def("get_fan_outs_of_node", &PlcClient::FanOutsOfNode)
      .def(
          "get_macro_adjacency",
          [](const PlcClient& p) {
            const std::vector<double> a = p.MacroAdjacency();
            return py::array_t<double>(static_cast<py::ssize_t>(a.size()), a.data());
          },
          "M x M (hard + soft macros, ascending index), flattened row-major")
      .def(
          "get_macro_and_clustered_port_adjacency",
          [](const PlcClient& p) {
            const auto [adj, cells] = p.MacroAndClusteredPortAdjacency();
            return py::make_tuple(py::array_t<double>(static_cast<py::ssize_t>(adj.size()), adj.data()), cells);
          },
          "(K x K flattened over the macros then the port clusters, the clusters' grid cells ascending)")
      .def(
          "get_fake_nets", [](const PlcClient&) { return py::list(); },
          "[] — placerl has no fake nets (CT's add_fake_net is not supported); what CT's observation extractor reads")
      .def(
          "has_area_constraint", [](const PlcClient&) { return false; },
          "False — placerl has no area constraints (power-domain regions); what CT's environment asks")
      .def("get_blockages",
           [](const PlcClient& p) {
             py::list out;
             for (const Blockage& b : p.Blockages()) out.append(py::make_tuple(b.minx, b.miny, b.maxx, b.maxy, b.rate));
             return out;
           })
      .def("create_blockage", &PlcClient::CreateBlockage, py::arg("minx"), py::arg("miny"), py::arg("maxx"),
           py::arg("maxy"), py::arg("blockage_rate"))
      .def(
          "optimize_stdcells",
          [](PlcClient& p, bool use_current_loc, bool move_stdcells, bool move_macros, bool log_scale_conns,
             bool /*use_sizes*/, double io_factor, std::vector<int> num_steps, std::vector<double> max_move_distance,
             std::vector<double> attract_factor, std::vector<double> repel_factor) {
            if (!move_stdcells) throw ConfigError("optimize_stdcells: move_stdcells=False leaves nothing to move");
            if (move_macros) throw ConfigError("optimize_stdcells: move_macros=True is not supported (hard macros do not move)");
            if (log_scale_conns) throw ConfigError("optimize_stdcells: log_scale_conns=True is not supported");
            if (num_steps.size() != max_move_distance.size())
              throw ConfigError("optimize_stdcells: num_steps and max_move_distance must have the same length");
            chip::ForceDirectedOptions o;
            const auto [w, h] = p.CanvasWidthHeight();
            o.num_steps = num_steps;
            o.move_distance_factors.clear();
            for (size_t i = 0; i < num_steps.size(); ++i) {
              if (num_steps[i] < 1 || !(max_move_distance[i] > 0) || !std::isfinite(max_move_distance[i]))
                throw ConfigError("optimize_stdcells: num_steps must be >= 1 and max_move_distance > 0");
              // fd_placer.h: max move = factor · max(W, H) / num_steps
              o.move_distance_factors.push_back(max_move_distance[i] * num_steps[i] / std::max(w, h));
            }
            o.attract_factor = attract_factor;
            o.repel_factor = repel_factor;
            o.io_factor = io_factor;
            o.use_current_loc = use_current_loc;
            p.OptimizeStdcells(o);
          },
          py::arg("use_current_loc"), py::arg("move_stdcells"), py::arg("move_macros"), py::arg("log_scale_conns"),
          py::arg("use_sizes"), py::arg("io_factor"), py::arg("num_steps"), py::arg("max_move_distance"),
          py::arg("attract_factor"), py::arg("repel_factor"),
          "force-directed placement of the soft macros (cost_models/chip/fd_placer.h; docs/python.md)")
      .def("get_proxy_cost", [](PlcClient& p) { return p.Costs().proxy_cost; },
           "wirelength + 0.5 density + 0.5 congestion (CT's default weights)");
}

}  // namespace
void BindPerfModel(py::module_& m);  // perf_model_bindings.cc
}  // namespace placerl

PYBIND11_MODULE(_core, m) {
  using namespace placerl;
  m.doc() = "placerl's C++ core (environments, batched stepping, the proxy cost)";
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  // The subclasses are also ValueErrors: bad input from the caller.
  py::object bases = py::make_tuple(error, py::handle(PyExc_ValueError));
  auto sub = [&](const char* name) {
    py::object cls = py::reinterpret_steal<py::object>(
        PyErr_NewException((std::string("placerl._core.") + name).c_str(), bases.ptr(), nullptr));
    m.attr(name) = cls;
    return cls;
  };
  sub("ConfigError");
  sub("ParseError");
  sub("InfeasibleAction");
  python::RegisterErrorTranslator(m);
  // device(…, start=heft|m_sct|…): the list-scheduler starts, as the binaries register them.
  device_baseline::RegisterDeviceStartPlacers();
  BindEnvironment(m);
  BindVectorEnv(m);
  BindPlacementCost(m);
  BindBench(m);
  BindPerfModel(m);
}
