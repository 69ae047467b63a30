#include "experiments/lib/torch/enas_rank.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/util/budget_clock.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/json_number.h"
#include "datasets/util/stats.h"
#include "datasets/util/stop_signal.h"
#include "experiments/lib/cli.h"
#include "search/nas/enas_search.h"

namespace placerl::enas_rank {

namespace {

using stats::Mean;
double Sd(const std::vector<double>& v) { return stats::SampleSd(v); }

void Add(std::vector<Cell>* cells, Cell c) {
  for (Cell& e : *cells)
    if (e.arch == c.arch) {
      e.label += "/" + c.label;
      if (std::isnan(e.known)) e.known = c.known;
      return;
    }
  cells->push_back(std::move(c));
}

void AddResult(const nas::SearchSpace& space, const std::string& path, bool candidates, std::vector<Cell>* cells) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ReadFile(path));
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(path + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object() || j.value("space", "") != "enas_micro" || j.value("dataset", "") != "fashion-mnist")
    throw ConfigError(path + ": not the result.json of a nas-search enas_micro / fashion-mnist run");
  auto one = [&](const nlohmann::json& c, const std::string& prefix) {
    try {
      Cell cell;
      cell.label = prefix + c.at("label").get<std::string>();
      cell.arch = enas::ParseDescribedArchitecture(space, c.at("architecture").get<std::string>());
      if (c.contains("test_accuracy")) cell.known = c.at("test_accuracy").get<double>();
      Add(cells, std::move(cell));
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(path + ": a cell without label / architecture (" + e.what() + ")");
    } catch (const ConfigError& e) {
      throw ConfigError(path + ": " + e.what());
    }
  };
  if (j.contains("enas")) one(j["enas"], "");
  for (const char* list : {"finalists", "random"})
    if (j.contains(list))
      for (const auto& c : j[list]) one(c, "");
  if (j.contains("hand_designed")) one(j["hand_designed"], "");
  // Trained cells (nas-search --method evolution | reinforce | ppo | random --train-steps): the
  // best cell and the hand-designed one after the final training (not those a stop skipped).
  if (j.contains("enas_training") && j["enas_training"].is_object())
    for (const char* key : {"best", "hand"})
      if (j["enas_training"].contains(key) && j["enas_training"][key].contains("label")) one(j["enas_training"][key], "");
  if (candidates && j.contains("candidates"))
    for (const auto& c : j["candidates"]) one(c, "");
}

void AddCellsFile(const nas::SearchSpace& space, const std::string& path, std::vector<Cell>* cells) {
  std::istringstream in(ReadFile(path));
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    Cell c;
    std::string acc;
    if (!(words >> c.label)) continue;  // blank
    auto fail = [&](const std::string& what) {
      throw ConfigError(path + ":" + std::to_string(lineno) + ": " + what);
    };
    if (!(words >> acc)) fail("expected LABEL ACCURACY|- decision=choice …");
    if (acc != "-") {
      char* end = nullptr;
      c.known = std::strtod(acc.c_str(), &end);
      if (end == acc.c_str() || *end != '\0' || !(c.known >= 0 && c.known <= 1))
        fail("accuracy '" + acc + "' is not a number in [0, 1] or '-'");
    }
    std::string rest;
    std::getline(words, rest);
    try {
      c.arch = enas::ParseDescribedArchitecture(space, rest);
    } catch (const ConfigError& e) {
      fail(e.what());
    }
    Add(cells, std::move(c));
  }
}

void AddPbtxt(const nas::SearchSpace& space, const std::string& path, std::vector<Cell>* cells) {
  nas::ArchitectureDef def;
  nas::ParseNasText(ReadFile(path), path, &def);  // ParseError file:line:col
  Cell c;
  c.label = std::filesystem::path(path).parent_path().filename().string() + "/" +
            std::filesystem::path(path).filename().string();
  try {
    c.arch = space.FromDef(def);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
  if (def.quality() > 0) c.known = def.quality();
  Add(cells, std::move(c));
}

// No cell to score: ConfigError saying why (the inputs given hold none, or none was given).
[[noreturn]] void ThrowNoCells(const std::vector<std::string>& results, const std::vector<std::string>& cells_files,
                               const std::vector<std::string>& pbtxts, bool candidates) {
  if (cells_files.empty() && pbtxts.empty() && !results.empty())
    throw ConfigError("no cells to score: " + std::string(results.size() == 1 ? "the --result file " + results[0] + " holds"
                                                                               : "the --result files hold") +
                      " no cell trained from scratch (enas, finalists, random, hand_designed, enas_training)" +
                      (candidates ? " and no derive candidates" : "; --candidates adds its derive candidates") +
                      "; or give --cells or --pbtxt");
  if (results.empty() && cells_files.empty() && pbtxts.empty())
    throw ConfigError("no cells to score: give --result, --cells or --pbtxt");
  throw ConfigError("no cells to score: the --result / --cells / --pbtxt inputs given hold no cell");
}

// A cell in the JSON document (with its retrainings when `retrained`).
nlohmann::json CellJson(const nas::SearchSpace& space, const Cell& c, bool retrained) {
  nlohmann::json e = {{"label", c.label}, {"architecture", space.Describe(c.arch)}, {"known_accuracy", FiniteOrNull(c.known)},
                      {"shared_accuracy", FiniteOrNull(c.shared)}};
  if (retrained)
    e["retrained"] = {{"test_accuracies", c.test},     {"val_accuracies", c.val},
                      {"mean_test_accuracy", FiniteOrNull(Mean(c.test))}, {"sd_test_accuracy", FiniteOrNull(Sd(c.test))},
                      {"mean_val_accuracy", FiniteOrNull(Mean(c.val))},   {"sd_val_accuracy", FiniteOrNull(Sd(c.val))},
                      {"given_accuracy", FiniteOrNull(c.given)},          {"params", c.params},
                      {"macs", c.macs}};
  return e;
}

// What the scoring measured besides the cells' accuracies.
struct Ranking {
  std::string checkpoint;  // the .ckpt read ("" = none)
  bool scored = false;     // shared-weight accuracies were computed
  int64_t images = 0;      // validation images per cell
  double cpu = 0, retrain_cpu = 0, final_epochs = 0;
  std::vector<double> xs, ys;  // shared-weight and from-scratch accuracies of the cells with both
  double tau = NAN, rho = NAN;
};

// The shared-weight accuracies (with a checkpoint), the trainings from scratch (with
// --retrain-seeds; Ctrl-C ends them within a step) and the correlation, into *cells.
Ranking Score(const Options& flags, std::vector<Cell>* cells_ptr) {
  std::vector<Cell>& cells = *cells_ptr;
  Ranking r;
  r.checkpoint = flags.checkpoint.empty()                           ? std::string()
                : std::filesystem::is_directory(flags.checkpoint) ? flags.checkpoint + "/checkpoints/latest.ckpt"
                                                                  : flags.checkpoint;
  const std::string bytes = r.checkpoint.empty() ? std::string() : ReadFile(r.checkpoint);
  r.scored = !bytes.empty();
  enas::EnasSearchOptions o;
  if (flags.final_epochs > 0) o.final_epochs = flags.final_epochs;
  if (!flags.data_dir.empty()) o.data_dir = flags.data_dir;
  if (flags.max_images > 0) {
    o.max_train_images = o.max_test_images = flags.max_images;
    o.validation_images = std::min(o.validation_images, flags.max_images);
  }
  std::vector<nas::Architecture> archs;
  for (const Cell& c : cells) archs.push_back(c.arch);
  // Ctrl-C / SIGTERM: the scoring and the retraining end within a step; what was done is reported
  // ("stopped_by_signal": true; cells not scored are null, retrainings not done are missing).
  run::InstallStopOnSignal();
  const double cpu_start = ProcessCpuSeconds();
  std::vector<double> shared(cells.size(), NAN);
  if (!bytes.empty()) {
    try {
      shared = enas::SharedWeightAccuracies(bytes, archs, o, flags.images);
    } catch (const ConfigError& e) {
      throw ConfigError(r.checkpoint + ": " + e.what());
    }
  }
  r.cpu = ProcessCpuSeconds() - cpu_start;
  if (!flags.retrain_seeds.empty()) {
    std::fprintf(stderr, "enas-rank: retraining %zu cell(s) x %zu seed(s), %g epoch(s) each (Ctrl-C stops it and "
                 "reports what was done)\n", cells.size(), flags.retrain_seeds.size(), o.final_epochs);
    const double t0 = ProcessCpuSeconds();
    const auto trained = enas::TrainCellsFromScratch(archs, o, flags.retrain_seeds, [] { return run::StopRequested(); },
                                                     [&](size_t c, size_t s) {
      if (!flags.json)
        std::fprintf(stderr, "enas-rank: trained %s with seed %llu (%zu of %zu)\n", cells[c].label.c_str(),
                     static_cast<unsigned long long>(flags.retrain_seeds[s]), c * flags.retrain_seeds.size() + s + 1,
                     cells.size() * flags.retrain_seeds.size());
    });
    r.retrain_cpu = ProcessCpuSeconds() - t0;
    for (size_t k = 0; k < cells.size(); ++k) {
      for (const enas::TrainedChild& t : trained[k]) {
        cells[k].test.push_back(t.test_accuracy);
        cells[k].val.push_back(t.val_accuracy);
        cells[k].params = t.params;
        cells[k].macs = t.macs;
      }
      cells[k].given = cells[k].known;
      cells[k].known = Mean(cells[k].test);
    }
  }
  for (size_t k = 0; k < cells.size(); ++k) {
    cells[k].shared = shared[k];
    if (!std::isnan(cells[k].known) && !std::isnan(shared[k])) r.xs.push_back(shared[k]), r.ys.push_back(cells[k].known);
  }
  r.final_epochs = o.final_epochs;
  r.tau = enas::KendallTau(r.xs, r.ys), r.rho = enas::SpearmanRho(r.xs, r.ys);
  r.images = std::min<int64_t>(flags.images, o.validation_images);
  return r;
}

void PrintJson(const nas::SearchSpace& space, const std::vector<Cell>& cells, const Options& o, const Ranking& r) {
  nlohmann::json j;
  j["checkpoint"] = r.checkpoint.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.checkpoint);
  j["images"] = r.images;
  j["cpu_seconds"] = r.cpu;
  nlohmann::json cj = nlohmann::json::array();
  for (const Cell& c : cells) {
    cj.push_back(CellJson(space, c, !o.retrain_seeds.empty()));
  }
  if (!o.retrain_seeds.empty())
    j["retrain"] = {{"seeds", o.retrain_seeds}, {"final_epochs", r.final_epochs}, {"cpu_seconds", r.retrain_cpu}};
  j["cells"] = cj;
  j["known"] = r.xs.size();
  j["kendall_tau"] = FiniteOrNull(r.tau);
  j["spearman_rho"] = FiniteOrNull(r.rho);
  j["stopped_by_signal"] = run::StopRequested();
  std::printf("%s\n", j.dump().c_str());
}

void PrintTable(const std::vector<Cell>& cells, const Options& o, const Ranking& r) {
  auto pct = [](double x) {
    char b[32] = "-";
    if (!std::isnan(x)) std::snprintf(b, sizeof(b), "%.2f %%", 100 * x);
    return std::string(b);
  };
  if (o.retrain_seeds.empty()) {
    std::printf("%-32s %12s %14s\n", "cell", "from scratch", "shared weights");
    for (const Cell& c : cells) std::printf("%-32s %12s %14s\n", c.label.c_str(), pct(c.known).c_str(), pct(c.shared).c_str());
  } else {
    std::printf("%-32s %22s %22s %10s %8s %12s %14s\n", "cell", "test (mean ± sd)", "val (mean ± sd)", "MMACs", "params",
                "given", "shared weights");
    for (const Cell& c : cells) {
      char test[48], val[48];
      std::snprintf(test, sizeof(test), "%.2f ± %.2f %%", 100 * Mean(c.test), 100 * Sd(c.test));
      std::snprintf(val, sizeof(val), "%.2f ± %.2f %%", 100 * Mean(c.val), 100 * Sd(c.val));
      std::printf("%-32s %22s %22s %10.2f %8lld %12s %14s\n", c.label.c_str(), test, val, c.macs / 1e6,
                  static_cast<long long>(c.params), pct(c.given).c_str(), pct(c.shared).c_str());
    }
    std::printf("retrained every cell with %zu seed(s), %g epoch(s) each: %.1f s CPU\n", o.retrain_seeds.size(),
                r.final_epochs, r.retrain_cpu);
  }
  if (run::StopRequested()) std::printf("stopped by signal: the cells not scored or not retrained show '-' or nan\n");
  if (r.scored)
    std::printf("%zu cells with a from-scratch accuracy: Kendall tau-b %.3f, Spearman rho %.3f "
                "(shared weights on %lld validation images, %.1f s CPU)\n",
                r.xs.size(), r.tau, r.rho, static_cast<long long>(r.images), r.cpu);
}

}  // namespace

std::vector<Cell> ReadCells(const nas::SearchSpace& space, const Options& o) {
  std::vector<Cell> cells;
  for (const std::string& r : o.results) AddResult(space, r, o.candidates, &cells);
  for (const std::string& f : o.cells_files) AddCellsFile(space, f, &cells);
  for (const std::string& p : o.pbtxts) AddPbtxt(space, p, &cells);
  if (cells.empty()) ThrowNoCells(o.results, o.cells_files, o.pbtxts, o.candidates);
  return cells;
}

int Run(const Options& o) {
  const nas::SearchSpace space = nas::LoadSearchSpace("enas_micro");
  std::vector<Cell> cells = ReadCells(space, o);
  if (o.checkpoint.empty() && o.retrain_seeds.empty())
    throw ConfigError("nothing to do: give --checkpoint (shared-weight scores) and/or --retrain-seeds");
  if (o.final_epochs > 0 && o.retrain_seeds.empty()) throw ConfigError("--final-epochs applies to --retrain-seeds");

  const Ranking r = Score(o, &cells);
  if (o.json) {
    PrintJson(space, cells, o, r);
  } else {
    PrintTable(cells, o, r);
  }
  return kExitOk;
}

}  // namespace placerl::enas_rank
