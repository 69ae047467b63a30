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
// the binaries print.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "cost_models/chip/plc_client.h"
#include "datasets/util/errors.h"
#include "env/environment.h"
#include "env/registry.h"
#include "env/vector_env.h"

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

std::unique_ptr<env::Environment> Make(const std::string& spec) { return env::MakeEnvironment(spec); }

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
  m.def("make_environment", &Make, py::arg("spec"), "an environment from a registry string, e.g. 'chip(seed=1)'");
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
      .def("step",
           [](PyVectorEnv& v, py::array_t<int32_t, py::array::c_style | py::array::forcecast> actions) {
             if (v.out.batch == 0) throw ConfigError("VectorEnv.step before reset");
             if (actions.ndim() != 1 || actions.shape(0) != v.venv->size())
               throw ConfigError("VectorEnv.step: expected " + std::to_string(v.venv->size()) + " actions");
             v.venv->Step(actions.data(), &v.out);
           })
      .def("arrays", &BatchArrays, "the batch buffers as read-only NumPy views (valid until the next step/reset)");
}

py::array_t<double> Grid(const std::vector<double>& values) {
  return py::array_t<double>(static_cast<py::ssize_t>(values.size()), values.data());
}

void BindPlacementCost(py::module_& m) {
  using chip::PlcClient;
  py::class_<PlcClient>(m, "PlacementCost",
                        "Circuit Training's plc_client.PlacementCost over placerl's exact proxy cost "
                        "(cost_models/chip/plc_client.h; docs/python.md lists the methods)")
      .def(py::init<const std::string&>(), py::arg("netlist_file"))
      .def("set_canvas_size", &PlcClient::SetCanvasSize)
      .def("set_placement_grid", &PlcClient::SetPlacementGrid)
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
  static py::object config_error = sub("ConfigError");
  static py::object parse_error = sub("ParseError");
  static py::object infeasible_action = sub("InfeasibleAction");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InfeasibleAction& e) {
      PyErr_SetString(infeasible_action.ptr(), e.what());
    } catch (const ConfigError& e) {
      PyErr_SetString(config_error.ptr(), e.what());
    } catch (const ParseError& e) {
      PyErr_SetString(parse_error.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  BindEnvironment(m);
  BindVectorEnv(m);
  BindPlacementCost(m);
  BindPerfModel(m);
}
