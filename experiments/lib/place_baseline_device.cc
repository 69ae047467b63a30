#include "experiments/lib/place_baseline_device.h"

#include <CLI/CLI.hpp>
#include <cairo-svg.h>
#include <cairo.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <cstring>
#include <map>
#include <random>

#include "cost_models/tpu/placed_graph_sim.h"
#include "datasets/graphs/expert_placement.h"
#include "datasets/graphs/fusion.h"
#include "datasets/graphs/graph_spec.h"
#include "datasets/proto/device_placement.pb.h"
#include "datasets/util/config_text.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "experiments/lib/config_help.h"
#include "experiments/lib/cli.h"
#include "experiments/lib/plot.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/run_dir.h"
#include "datasets/util/stop_signal.h"
#include "search/device/baselines.h"

namespace placerl::device_baseline {
namespace {

using nlohmann::json;

struct Options {
  std::string env = "device", method, graph, machine;
  int64_t seed = -1, samples = -1;
  double minutes = 0;
  bool memory_aware = false, json = false, verbose = false;
  run::RunDirFlags dir;
};

const Placer& FindPlacer(const std::string& name) {
  std::string names;
  for (const Placer& p : Placers()) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw ConfigError("method '" + name + "' is not a device placer (" + names + ")");
}

config::DevicePlaceBaselineConfig ResolveConfig(const Options& o) {
  config::DevicePlaceBaselineConfig c = DefaultDevicePlaceBaselineConfig();
  if (!o.dir.config.empty()) run::MergeConfigFile(o.dir.config, &c);
  if (!o.method.empty()) c.set_method(o.method);
  if (!o.graph.empty()) c.set_graph(o.graph);
  if (!o.machine.empty()) c.set_machine(o.machine);
  if (o.seed >= 0) c.set_seed(static_cast<uint64_t>(o.seed));
  if (o.samples > 0) c.set_samples(o.samples);
  if (o.minutes > 0) c.set_minutes(o.minutes);
  if (o.memory_aware) c.set_memory_aware(true);
  run::ApplyOverrides(o.dir.sets, &c);
  FindPlacer(c.method());
  if (c.samples() < 1 || c.samples() > cli::kMaxCount) throw ConfigError("samples must be in [1, " + std::to_string(cli::kMaxCount) + "]");
  if (!(c.minutes() > 0) || c.minutes() > cli::kMaxSeconds / 60) throw ConfigError("minutes must be positive and finite");
  if (!(c.oom_factor() >= 0) || !std::isfinite(c.oom_factor())) throw ConfigError("oom_factor must be >= 0");
  if (c.graph().empty()) throw ConfigError("graph is empty");
  if (c.machine().empty()) throw ConfigError("machine is empty");
  if (c.devices() != "accelerators" && c.devices() != "all")
    throw ConfigError("devices must be accelerators or all, not '" + c.devices() + "'");
  if (c.memory_accounting() != "static" && c.memory_accounting() != "schedule")
    throw ConfigError("memory_accounting must be static or schedule, not '" + c.memory_accounting() + "'");
  if (!(c.sct_threshold() >= 0 && c.sct_threshold() <= 1)) throw ConfigError("sct_threshold must be in [0, 1]");
  if (c.sct_lp_window_ops() < 0) throw ConfigError("sct_lp_window_ops must be >= 0");
  if (!(c.partition_imbalance() > 0 && c.partition_imbalance() <= 1))
    throw ConfigError("partition_imbalance must be in (0, 1]");
  if (c.fuse_target_groups() < 0) throw ConfigError("fuse_target_groups must be >= 0");
  env::CheckFuseMaxGroupFraction(c.fuse_max_group_fraction());
  return c;
}

// ------------------------------------------------------------------ picture

struct Rgb {
  double r, g, b;
};
const Rgb kPalette[] = {{0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
                        {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50},
                        {0.74, 0.74, 0.13}, {0.09, 0.75, 0.81}};

cairo_status_t Append(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

std::string Si(double v, const char* unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T"};
  int k = 0;
  while (std::fabs(v) >= 1000 && k < 4) {
    v /= 1000;
    ++k;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[k], unit);
  return buf;
}

std::string TimeLabel(double s) {
  char buf[48];
  if (s == 0) return "0";
  if (s >= 1) {
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  } else if (s >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  }
  return buf;
}

// Memory of device d over time, sampled at `samples` times (plus its peak), from the last Run.
void MemoryCurve(const perf::Simulator& sim, const perf::SimResult& r, int d, int samples, std::vector<double>* t,
                 std::vector<double>* bytes) {
  std::vector<double> times;
  for (int k = 0; k <= samples; ++k) times.push_back(r.makespan * k / samples);
  times.push_back(r.peak_time[d]);
  std::sort(times.begin(), times.end());
  for (double x : times) {
    double b = 0;
    for (const auto& live : sim.LiveAt(d, x)) b += live.bytes;
    t->push_back(x);
    bytes->push_back(b);
  }
}

// Per-device timeline (one bar per op, coloured by kind) above per-device memory over time.
void DrawTimeline(const std::string& path, const std::string& title, const graphs::ComputeGraph& g,
                  const perf::Machine& m, const std::vector<int>& placement, const perf::Simulator& sim,
                  const perf::SimResult& r) {
  const std::string lower = [&] {
    std::string s = path;
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }();
  const bool png = lower.size() > 4 && lower.compare(lower.size() - 4, 4, ".png") == 0;
  const int nd = m.num_devices();
  const int width = 1000, left = 90, right = 20, top = 50, row = 28, gap = 50, mem_h = 220, bottom = 60;
  const int gantt_h = row * nd;
  const int height = top + gantt_h + gap + mem_h + bottom;
  const double span = r.makespan > 0 ? r.makespan : 1;
  const double plot_w = width - left - right;
  auto X = [&](double t) { return left + plot_w * t / span; };

  std::string bytes;
  cairo_surface_t* surface = png ? cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height)
                                 : cairo_svg_surface_create_for_stream(Append, &bytes, width, height);
  if (!png) cairo_svg_surface_set_document_unit(surface, CAIRO_SVG_UNIT_PX);
  cairo_t* cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 13);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_move_to(cr, left, 22);
  cairo_show_text(cr, title.c_str());
  cairo_set_font_size(cr, 11);

  // Kinds → colours, in order of first appearance.
  std::map<std::string, int> kind_colour;
  std::vector<std::string> kinds;
  for (int i = 0; i < g.num_ops(); ++i)
    if (kind_colour.emplace(g.kinds[i], static_cast<int>(kind_colour.size()) % 10).second) kinds.push_back(g.kinds[i]);

  for (int d = 0; d < nd; ++d) {
    const double y = top + row * d;
    cairo_set_source_rgb(cr, 0.95, 0.95, 0.95);
    cairo_rectangle(cr, left, y + 3, plot_w, row - 6);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, 8, y + row / 2.0 + 4);
    cairo_show_text(cr, m.device_names[d].c_str());
  }
  for (int i = 0; i < g.num_ops(); ++i) {
    const int d = placement[i];
    const Rgb c = kPalette[kind_colour[g.kinds[i]]];
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    const double x0 = X(r.op_start[i]), x1 = X(r.op_end[i]);
    cairo_rectangle(cr, x0, top + row * d + 4, std::max(0.6, x1 - x0 - 0.5), row - 8);  // a gap between ops
    cairo_fill(cr);
  }
  // Legend of kinds under the title.
  double lx = left;
  for (const std::string& k : kinds) {
    const Rgb c = kPalette[kind_colour[k]];
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_rectangle(cr, lx, 30, 10, 10);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, lx + 14, 39);
    cairo_show_text(cr, k.c_str());
    cairo_text_extents_t ext;
    cairo_text_extents(cr, k.c_str(), &ext);
    lx += 24 + ext.x_advance;
    if (lx > width - 80) break;
  }

  // Memory over time.
  const double my = top + gantt_h + gap;
  std::vector<std::vector<double>> mt(nd), mb(nd);
  double peak = 0;
  for (int d = 0; d < nd; ++d) {
    MemoryCurve(sim, r, d, 200, &mt[d], &mb[d]);
    for (double b : mb[d]) peak = std::max(peak, b);
  }
  double cap_shown = 0;  // capacities drawn when within 2× of the peak
  for (int d = 0; d < nd; ++d) {
    const double cap = m.sim.devices[d].memory_capacity;
    if (std::isfinite(cap) && cap <= 2 * std::max(peak, 1.0)) cap_shown = std::max(cap_shown, cap);
  }
  const double ymax = std::max({peak, cap_shown, 1.0}) * 1.05;
  auto Y = [&](double b) { return my + mem_h - mem_h * b / ymax; };
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, left, my, plot_w, mem_h);
  cairo_stroke(cr);
  for (int k = 0; k <= 4; ++k) {
    const double b = ymax * k / 4;
    cairo_move_to(cr, 8, Y(b) + 4);
    cairo_show_text(cr, Si(b, "B").c_str());
  }
  for (int k = 0; k <= 5; ++k) {
    const double t = span * k / 5;
    const std::string s = TimeLabel(t);
    cairo_move_to(cr, X(t) - 15, my + mem_h + 16);
    cairo_show_text(cr, s.c_str());
  }
  cairo_move_to(cr, left + plot_w / 2 - 60, my + mem_h + 34);
  cairo_show_text(cr, "time; memory per device");
  for (int d = 0; d < nd; ++d) {
    const Rgb c = kPalette[d % 10];
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_set_line_width(cr, 1.5);
    for (size_t k = 0; k < mt[d].size(); ++k) {
      if (k == 0) {
        cairo_move_to(cr, X(mt[d][k]), Y(mb[d][k]));
      } else {
        cairo_line_to(cr, X(mt[d][k]), Y(mb[d][k - 1]));  // steps
        cairo_line_to(cr, X(mt[d][k]), Y(mb[d][k]));
      }
    }
    cairo_stroke(cr);
    const double cap = m.sim.devices[d].memory_capacity;
    if (std::isfinite(cap) && cap <= ymax) {
      const double dash[] = {5, 4};
      cairo_set_dash(cr, dash, 2, 0);
      cairo_move_to(cr, left, Y(cap));
      cairo_line_to(cr, left + plot_w, Y(cap));
      cairo_stroke(cr);
      cairo_set_dash(cr, nullptr, 0, 0);
    }
    cairo_move_to(cr, left + 10 + 90 * d, my + mem_h + 52);
    cairo_show_text(cr, (m.device_names[d] + (r.oom && r.peak_memory[d] > cap ? " OOM" : "")).c_str());
  }
  cairo_destroy(cr);
  cairo_status_t status = CAIRO_STATUS_SUCCESS;
  if (png) {
    cairo_surface_flush(surface);
    status = cairo_surface_write_to_png_stream(surface, Append, &bytes);
  } else {
    cairo_surface_finish(surface);
    status = cairo_surface_status(surface);
  }
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) throw IoError(path + ": cairo cannot draw (" + cairo_status_to_string(status) + ")");
  WriteFileAtomic(path, bytes);
}

// ------------------------------------------------------------------ the run

// What every run's document starts with, feasible or not.
json RunHeader(const config::DevicePlaceBaselineConfig& cfg, const graphs::ComputeGraph& g, const perf::Machine& machine,
               const env::DeviceEnv& env) {
  json j;
  j["env"] = "device";
  j["method"] = cfg.method();
  j["graph"] = cfg.graph();
  j["machine"] = machine.spec;
  j["ops"] = g.num_ops();
  j["groups"] = env.episode_length();
  j["seed"] = cfg.seed();
  j["memory_aware"] = cfg.memory_aware();
  return j;
}

// The method could not place within memory (InfeasibleAction): the run's document with null
// results, "feasible": false and the reason, exit 2 (cli.h ReportInfeasible).
int ReportInfeasiblePlacer(const Options& o, const config::DevicePlaceBaselineConfig& cfg, const graphs::ComputeGraph& g,
                           const perf::Machine& machine, const env::DeviceEnv& env, run::RunDirectory& dir,
                           const std::string& reason, double placing_s, double elapsed, int64_t evaluations,
                           const std::vector<std::string>& notes) {
  json j = RunHeader(cfg, g, machine, env);
  j["single_device_time_s"] = env.instance().single_device_time;
  j["placement_wall_s"] = placing_s;
  j["seconds"] = elapsed;
  j["evaluations"] = evaluations;
  j["notes"] = notes;
  j["stopped_by_signal"] = run::StopRequested();
  InfeasibleRun bad;
  bad.reason = reason;
  bad.document = j;
  bad.null_costs = {"/best/step_time_s", "/best/effective_time_s", "/best/oom", "/best/oom_device", "/speedup_vs_single"};
  bad.out = dir.path();
  return placerl::ReportInfeasible("place-baseline", bad, o.json, [&](const std::string& text) { dir.WriteFile("result.json", text); });
}

// A placer's placement checked: one device of the machine per op, each able to run its op,
// co-location groups whole. Error (a bug of the placer) otherwise.
void CheckPlacement(const Placer& placer, const graphs::ComputeGraph& g, const perf::Machine& machine,
                    const std::vector<int>& p) {
  if (static_cast<int>(p.size()) != g.num_ops())
    throw Error("method " + placer.name + " returned " + std::to_string(p.size()) + " devices for " +
                std::to_string(g.num_ops()) + " ops");
  for (int i = 0; i < g.num_ops(); ++i) {
    if (p[i] < 0 || p[i] >= machine.num_devices())
      throw Error("method " + placer.name + " put op '" + g.names[i] + "' on device " + std::to_string(p[i]));
    if (!machine.CanRun(p[i], g.kinds[i]))
      throw Error("method " + placer.name + " put CPU-only op '" + g.names[i] + "' on " + machine.device_names[p[i]]);
  }
  const std::string split = graphs::ColocationViolation(g, p);
  if (!split.empty()) throw Error("method " + placer.name + " split a group: " + split);
}

// best.placement: the text perf-model simulate --placement reads (device indices of this machine).
std::string PlacementFileText(const config::DevicePlaceBaselineConfig& cfg, const graphs::ComputeGraph& g,
                              const perf::Machine& machine, const std::vector<int>& best) {
  std::string devices;
  for (int d = 0; d < machine.num_devices(); ++d)
    devices += (d ? ", " : "") + std::to_string(d) + "=" + machine.device_names[d];
  return "# place-baseline --env device --method " + cfg.method() + "\n# graph " + cfg.graph() + "\n# machine " +
         machine.spec + " (" + std::to_string(machine.num_devices()) + " devices: " + devices + ")\n" +
         graphs::PlacementToText(g, best);
}

// Per device: ops, busy time, utilisation, peak memory against capacity, and the environment's
// memory-mask estimates of the best placement replayed in decision order (env/device/
// device_env.h memory_estimate); *mask_check: per estimate, the first group each would refuse.
json DevicesJson(const env::DeviceEnvOptions& eo, const graphs::ComputeGraph& g, const perf::Machine& machine,
                 const std::vector<int>& best, const perf::SimResult& r, const std::vector<int>& ops_on,
                 json* mask_check) {
  std::vector<std::vector<double>> estimate;
  *mask_check = json::object();
  for (const char* est : {"all_outputs", "lifetime"}) {
    env::DeviceEnvOptions eo2 = eo;
    eo2.memory_mask = false;
    eo2.memory_estimate = est;
    eo2.graph_data = std::make_shared<const graphs::ComputeGraph>(g);
    const env::DeviceEnv e2(eo2);
    int32_t refused = -1;
    estimate.push_back(e2.ReplayMemoryEstimate(e2.NodePlacement(best), &refused));
    (*mask_check)[est] = {{"admitted", refused < 0},
                          {"first_refused_group", refused < 0 ? json(nullptr) : json(e2.static_graph()->node_names[refused])}};
  }
  json devices = json::array();
  for (int d = 0; d < machine.num_devices(); ++d) {
    const double cap = machine.sim.devices[d].memory_capacity;
    devices.push_back({{"name", machine.device_names[d]},
                       {"mask_estimate_all_outputs_bytes", estimate[0][d]},
                       {"mask_estimate_lifetime_bytes", estimate[1][d]},
                       {"type", machine.device_types[d]},
                       {"ops", ops_on[d]},
                       {"busy_s", r.busy[d]},
                       {"utilisation", r.utilisation[d]},
                       {"peak_memory_bytes", r.peak_memory[d]},
                       {"capacity_bytes", std::isfinite(cap) ? json(cap) : json(nullptr)},
                       {"oom", r.peak_memory[d] > cap}});
  }
  return devices;
}

// The summary lines: the best placement's step time, per device its ops, utilisation and peak
// memory, the placer's notes.
void PrintSummary(const config::DevicePlaceBaselineConfig& cfg, const env::DeviceEnv& env, const perf::SimResult& r,
                  const std::vector<int>& ops_on, double placing_s, int64_t evaluations,
                  const std::vector<std::string>& notes) {
  const env::DeviceInstance& inst = env.instance();
  const graphs::ComputeGraph& g = inst.graph;
  const perf::Machine& machine = inst.machine;
  std::printf("%s on %s (%d ops, %d groups), %s: step time %s%s, %.3gx single device (%s); placing %.3g s, %lld "
              "placement(s)\n",
              cfg.method().c_str(), cfg.graph().c_str(), g.num_ops(), env.episode_length(), machine.spec.c_str(),
              TimeLabel(r.makespan).c_str(), r.oom ? " OUT OF MEMORY" : "",
              r.makespan > 0 ? inst.single_device_time / r.makespan : 0.0, TimeLabel(inst.single_device_time).c_str(),
              placing_s, static_cast<long long>(evaluations));
  for (int d = 0; d < machine.num_devices(); ++d)
    std::printf("  %-10s %6d ops  utilisation %5.1f %%  peak %s%s\n", machine.device_names[d].c_str(), ops_on[d],
                100 * r.utilisation[d], Si(r.peak_memory[d], "B").c_str(),
                r.peak_memory[d] > machine.sim.devices[d].memory_capacity ? " > capacity" : "");
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
}

// One device placer on one graph and machine (every draw of a stochastic one within the
// budget): environment → run directory → placements simulated, the best kept → best.placement,
// timeline, result.json, the summary.
int Run(const Options& o, int argc, char** argv) {
  const config::DevicePlaceBaselineConfig cfg = ResolveConfig(o);
  if (!o.dir.resume.empty()) throw ConfigError("place-baseline runs cannot be resumed; start a new one with --out");
  if (o.verbose) std::fprintf(stderr, "%s", run::ResolvedConfigText(cfg).c_str());
  const Placer& placer = FindPlacer(cfg.method());
  // The environment (graph, machine, groups) before the directory: bad input leaves nothing.
  env::DeviceEnvOptions eo;
  eo.graph = cfg.graph();
  eo.machine = cfg.machine();
  eo.memory_mask = cfg.memory_aware();
  eo.oom = "relative";
  eo.oom_factor = cfg.oom_factor();
  env::DeviceEnv env(eo);
  const env::DeviceInstance& inst = env.instance();
  const graphs::ComputeGraph& g = inst.graph;
  const perf::Machine& machine = inst.machine;

  run::RunDirectory dir(run::ResolveRunDirFlags(o.dir));
  dir.WriteConfig(cfg, run::CommandLineText(argc, argv));
  run::InstallStopOnSignal();
  run::ProgressOptions po;
  po.label = cfg.method();
  po.unit = "placements";
  const int64_t draws = placer.stochastic ? cfg.samples() : 1;
  po.total = static_cast<double>(draws);
  po.budget_seconds = placer.stochastic ? cfg.minutes() * 60 : 0;
  run::Progress progress(po);

  perf::Simulator sim(g, machine.sim);
  std::vector<int> best;
  double best_eff = 0, best_time = 0, placing_s = 0, simulating_s = 0;
  bool best_oom = true;
  int64_t evaluations = 0;
  std::vector<std::string> notes;
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point a) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
  };
  for (int64_t k = 0; k < draws; ++k) {
    if (k > 0 && (run::StopRequested() || since(t0) > cfg.minutes() * 60)) break;
    const auto tp = std::chrono::steady_clock::now();
    std::vector<int> p;
    try {
      p = placer.place({g, machine, cfg.seed() + static_cast<uint64_t>(k), &env, cfg, &notes});
    } catch (const InfeasibleAction& e) {
      placing_s += since(tp);
      if (k > 0 && !best.empty()) break;  // a stochastic method keeps what it found
      progress.Finish("infeasible");
      return ReportInfeasiblePlacer(o, cfg, g, machine, env, dir, e.what(), placing_s, since(t0), evaluations, notes);
    }
    placing_s += since(tp);
    CheckPlacement(placer, g, machine, p);
    const auto ts = std::chrono::steady_clock::now();
    const perf::SimResult& r = sim.Run(p);
    simulating_s += since(ts);
    const double eff = env.EffectiveTime(r);
    ++evaluations;
    // Feasible before OOM, then the effective time, then (equal OOM penalties) the step time.
    if (best.empty() || (best_oom && !r.oom) ||
        (best_oom == r.oom && (eff < best_eff || (eff == best_eff && r.makespan < best_time)))) {
      best = p;
      best_eff = eff;
      best_time = r.makespan;
      best_oom = r.oom;
    }
    dir.Log(k, {{"charts/step_time_s", r.makespan},
                {"charts/placement_wall_s", placing_s},
                {"charts/effective_time_s", eff},
                {"charts/oom", r.oom ? 1.0 : 0.0},
                {"charts/best_effective_time_s", best_eff},
                {"charts/elapsed_s", since(t0)}});
    progress.Update(static_cast<double>(k + 1), {{"best", best_eff}});
  }
  const double elapsed = since(t0);

  const perf::SimResult r = sim.Run(best);  // a copy: DrawTimeline reads sim's last run too
  char summary[160];
  std::snprintf(summary, sizeof summary, "best step time %s%s", TimeLabel(r.makespan).c_str(), r.oom ? " (OOM)" : "");
  progress.Finish(summary);

  // best.placement: the text perf-model simulate --placement reads (device indices of this machine).
  dir.WriteFile("best.placement", PlacementFileText(cfg, g, machine, best));
  const std::string title = cfg.method() + " on " + cfg.graph() + ", " + machine.spec + ": step " +
                            TimeLabel(r.makespan) + (r.oom ? " (OOM)" : "");
  const std::string picture = dir.PicturePath("best");
  DrawTimeline(picture, title, g, machine, best, sim, r);
  if (placer.stochastic && evaluations > 1) {
    viz::PlotOptions plot;
    plot.title = "best effective step time, " + cfg.method();
    plot.x_label = "placements";
    plot.y_label = "step time (s)";
    dir.PlotMetrics("curve", "step", {"charts/best_effective_time_s", "charts/effective_time_s"}, plot,
                    {"best", "drawn"});
  }

  std::vector<int> ops_on(machine.num_devices(), 0);
  for (int d : best) ++ops_on[d];
  json mask_check;
  const json devices = DevicesJson(eo, g, machine, best, r, ops_on, &mask_check);
  json j = RunHeader(cfg, g, machine, env);
  j["best"] = {{"step_time_s", r.makespan},
               {"effective_time_s", best_eff},
               {"oom", r.oom},
               {"oom_device", r.oom ? json(machine.device_names[r.oom_device]) : json(nullptr)},
               {"bytes_transferred", r.bytes_transferred},
               {"transfers", r.num_transfers},
               {"reward", -std::sqrt(best_eff)},
               {"devices", devices},
               {"memory_mask_check", mask_check}};
  j["single_device_time_s"] = inst.single_device_time;
  j["speedup_vs_single"] = r.makespan > 0 ? inst.single_device_time / r.makespan : 0.0;
  j["placement_wall_s"] = placing_s;
  j["simulation_wall_s"] = simulating_s;
  j["seconds"] = elapsed;
  j["evaluations"] = evaluations;
  j["notes"] = notes;
  j["samples_requested"] = draws;
  j["budget_seconds"] = placer.stochastic ? cfg.minutes() * 60 : 0.0;
  j["stopped_by_signal"] = run::StopRequested();
  j["out"] = dir.path();
  j["wrote"] = {"config.pbtxt", "metrics.csv", "best.placement", "best." + o.dir.pictures, "result.json"};
  // Out of memory on a device: the placement is written but infeasible (exit 2, cli.h
  // ReportInfeasible; its step time stays, as the simulator measured it).
  InfeasibleRun oom;
  if (r.oom) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "out of memory on %s (peak %s > capacity %s)", machine.device_names[r.oom_device].c_str(),
                  Si(r.peak_memory[r.oom_device], "B").c_str(),
                  Si(machine.sim.devices[r.oom_device].memory_capacity, "B").c_str());
    oom.reason = buf;
    oom.document = j;
    oom.out = dir.path();
    if (o.json)
      return placerl::ReportInfeasible("place-baseline", oom, true, [&](const std::string& t) { dir.WriteFile("result.json", t); });
  } else {
    MarkFeasible(&j);
    dir.WriteFile("result.json", j.dump(2) + "\n");
  }
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    PrintSummary(cfg, env, r, ops_on, placing_s, evaluations, notes);
    if (r.oom)
      return placerl::ReportInfeasible("place-baseline", oom, false, [&](const std::string& t) { dir.WriteFile("result.json", t); });
    std::printf("wrote %s (best.placement, best.%s, metrics.csv, TensorBoard events, config.pbtxt, result.json)\n",
                dir.path().c_str(), o.dir.pictures.c_str());
  }
  return kExitOk;
}

}  // namespace

void WriteTimelinePicture(const std::string& path, const std::string& title, const graphs::ComputeGraph& g,
                          const perf::Machine& m, const std::vector<int>& placement, const perf::Simulator& sim,
                          const perf::SimResult& r) {
  DrawTimeline(path, title, g, m, placement, sim, r);
}

std::string StepTimeLabel(double seconds) { return TimeLabel(seconds); }

bool SelectsDeviceEnv(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--env=device") == 0) return true;
    if (std::strcmp(argv[i], "--env") == 0 && i + 1 < argc && std::strcmp(argv[i + 1], "device") == 0) return true;
  }
  return false;
}

int PlaceBaselineDeviceMain(int argc, char** argv) {
  return RunMain("place-baseline", [&] {
    std::string methods;
    for (const Placer& p : Placers()) methods += "\n  " + p.name + ": " + p.description;
    CLI::App app{"Places the ops of a computation graph onto a machine's devices with a classic placer, scores the "
                 "placement with the placed-graph simulator and writes a run directory (best.placement, best.png "
                 "timeline + memory, metrics.csv, TensorBoard events, result.json)."};
    Options o;
    app.add_option("--env", o.env, "device (this help) | chip (the chip macro baselines)")
        ->check(CLI::IsMember({"device"}));
    app.add_option("--method", o.method, "placer (default round_robin):" + methods);
    app.add_option("--graph", o.graph,
                   "graph: layered(ops=,width=,fan_in=,seed=) | chain(ops=) | resnet(depth=,batch=,...) | a "
                   "compute-graph file (default layered(ops=1000))")
        ->check(cli::NonEmpty());
    app.add_option("--machine", o.machine,
                   "machine: k80(gpus=4,cpu=1,memory_fraction=1) | baechi(gpus=4,memory_fraction=1) | "
                   "tpu(type=v4,chips=4) | gpu(type=a100,gpus=8) | a machine .pbtxt (default k80(gpus=4))")
        ->check(cli::NonEmpty());
    app.add_option("--seed", o.seed, "random seed (default 1)")->check(cli::IntRange(0, INT64_MAX));
    app.add_option("--samples", o.samples, "random: placements drawn (default 100)")->check(cli::IntRange(1, cli::kMaxCount));
    app.add_option("--minutes", o.minutes, "random: time budget; heft_ls: CPU time budget, HEFT's included (default 1)")
        ->check(cli::FiniteRange(1e-4, cli::kMaxSeconds / 60));
    app.add_flag("--memory-aware", o.memory_aware, "random: draw only devices where the group's memory estimate fits");
    app.add_flag("--json", o.json, "print one JSON document with the result");
    app.add_flag("--verbose", o.verbose, "print the resolved config on stderr");
    run::AddRunDirFlags(app, &o.dir);
    run::AddHelpConfig(app, "place-baseline --env device", [] { return DefaultDevicePlaceBaselineConfig(); });
    cli::Parse(app, argc, argv);
    return Run(o, argc, argv);
  });
}

}  // namespace placerl::device_baseline
