// enas-rank: how well ENAS's shared weights rank cells (issue 16; docs/nas.md "ENAS weight
// sharing on Fashion-MNIST"). Scores a list of enas_micro cells with the shared weights of a
// `nas-search --method enas --dataset fashion-mnist` search checkpoint, exactly as the derive step
// does (search/nas/enas_search.h SharedWeightAccuracies: the same super-network, the same
// validation split), and, for the cells whose accuracy after training from scratch is known,
// the rank correlation between the two (Kendall's tau-b, Spearman's rho).
//   enas-rank [--checkpoint runs/enas] [--result runs/enas/result.json]... [--cells cells.txt]...
//             [--pbtxt best.pbtxt]... [--candidates] [--images 2000] [--retrain-seeds "2 3"]
//             [--final-epochs 1] [--max-images N] [--fashion-mnist-dir D] [--json]
// --result: every cell of a nas-search fashion-mnist result.json that was trained from scratch
//   (enas, finalists, random, hand_designed; enas_training's best and hand) with its test accuracy; --candidates adds the
//   derive step's candidates (no from-scratch accuracy).
// --cells: a text file, one cell a line: `LABEL ACCURACY|- decision=choice decision=choice …`
//   (the "architecture" text of result.json); `#` starts a comment.
// --pbtxt: an ArchitectureDef (best.pbtxt); its quality, when > 0, is taken as the known accuracy.
// The same architecture given twice is scored once (labels joined with '/').
// --retrain-seeds "S1 S2 …" [--final-epochs E]: also train every cell from scratch once per seed
//   (nas-search's final training: same network, recipe and E; a seed sets initialisation and data
//   order, the same for every cell) and report mean ± sd of test and validation accuracy; the
//   mean test accuracy is then the "from scratch" accuracy the correlation uses (the given ones
//   are shown beside it). Without --checkpoint only the retraining is done.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/util/budget_clock.h"
#include "datasets/nas/search_space.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/stats.h"
#include "experiments/lib/cli.h"
#include "datasets/util/json_number.h"
#include "datasets/util/stop_signal.h"
#include "search/nas/enas_search.h"

using namespace placerl;

namespace {

struct Cell {
  std::string label;
  nas::Architecture arch;
  double known = NAN;  // accuracy after training from scratch, NaN if unknown
  double shared = NAN;
  double given = NAN;  // the known accuracy from the input when --retrain-seeds replaces it
  std::vector<double> test, val;  // --retrain-seeds: one per seed
  int64_t params = 0, macs = 0;
};

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
  nas::ParseNasText(ReadFile(path), path, &def);  // ParseError file:line
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

}  // namespace

int main(int argc, char** argv) {
  return RunMain("enas-rank", [&] {
    CLI::App app{"Scores enas_micro cells with the shared weights of an ENAS search checkpoint (as nas-search's derive "
                 "step does) and compares that ranking with the cells' accuracies after training from scratch "
                 "(Kendall tau-b, Spearman rho)."};
    std::string checkpoint, data_dir;
    std::vector<std::string> results, cells_files, pbtxts;
    std::vector<uint64_t> retrain_seeds;
    double final_epochs = 0;
    bool candidates = false, json = false;
    int32_t images = 2000, max_images = 0;
    app.add_option("--checkpoint", checkpoint,
                   "a nas-search enas run directory (its checkpoints/latest.ckpt) or a .ckpt (needed unless --retrain-seeds)")
        ->check(cli::NonEmpty());
    app.add_option("--retrain-seeds", retrain_seeds,
                   "train every cell from scratch once per seed (nas-search's final training) and use the mean test "
                   "accuracy as its from-scratch accuracy")
        ->delimiter(' ')
        ->check(cli::IntRange(0, INT32_MAX));
    app.add_option("--final-epochs", final_epochs, "epochs of each --retrain-seeds training (default 1, nas-search's)")
        ->check(cli::FiniteRange(1e-6, 10000));
    app.add_option("--result", results, "result.json of a nas-search enas_micro / fashion-mnist run (repeatable)");
    app.add_option("--cells", cells_files, "text file: LABEL ACCURACY|- decision=choice … per line (repeatable)");
    app.add_option("--pbtxt", pbtxts, "an ArchitectureDef (best.pbtxt; quality = known accuracy) (repeatable)");
    app.add_flag("--candidates", candidates, "also the derive candidates of each --result");
    app.add_option("--images", images, "validation images per cell (default 2000, at most the 5000 of the split)")
        ->check(cli::IntRange(1, 60000));
    app.add_option("--max-images", max_images, "at most N images of each split (tests)")->check(cli::IntRange(1, 60000));
    app.add_option("--fashion-mnist-dir", data_dir, "the IDX files (default /usr/share/datasets/fashion-mnist)")
        ->check(cli::NonEmpty());
    app.add_flag("--json", json, "print one JSON document");
    cli::Parse(app, argc, argv);

    const nas::SearchSpace space = nas::LoadSearchSpace("enas_micro");
    std::vector<Cell> cells;
    for (const std::string& r : results) AddResult(space, r, candidates, &cells);
    for (const std::string& f : cells_files) AddCellsFile(space, f, &cells);
    for (const std::string& p : pbtxts) AddPbtxt(space, p, &cells);
    if (cells.empty()) ThrowNoCells(results, cells_files, pbtxts, candidates);
    if (checkpoint.empty() && retrain_seeds.empty())
      throw ConfigError("nothing to do: give --checkpoint (shared-weight scores) and/or --retrain-seeds");
    if (final_epochs > 0 && retrain_seeds.empty()) throw ConfigError("--final-epochs applies to --retrain-seeds");

    const std::string ckpt_path = checkpoint.empty()                           ? std::string()
                                  : std::filesystem::is_directory(checkpoint) ? checkpoint + "/checkpoints/latest.ckpt"
                                                                               : checkpoint;
    const std::string bytes = ckpt_path.empty() ? std::string() : ReadFile(ckpt_path);
    enas::EnasSearchOptions o;
    if (final_epochs > 0) o.final_epochs = final_epochs;
    if (!data_dir.empty()) o.data_dir = data_dir;
    if (max_images > 0) {
      o.max_train_images = o.max_test_images = max_images;
      o.validation_images = std::min(o.validation_images, max_images);
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
        shared = enas::SharedWeightAccuracies(bytes, archs, o, images);
      } catch (const ConfigError& e) {
        throw ConfigError(ckpt_path + ": " + e.what());
      }
    }
    const double cpu = ProcessCpuSeconds() - cpu_start;
    double retrain_cpu = 0;
    if (!retrain_seeds.empty()) {
      std::fprintf(stderr, "enas-rank: retraining %zu cell(s) x %zu seed(s), %g epoch(s) each (Ctrl-C stops it and "
                   "reports what was done)\n", cells.size(), retrain_seeds.size(), o.final_epochs);
      const double t0 = ProcessCpuSeconds();
      const auto trained = enas::TrainCellsFromScratch(archs, o, retrain_seeds, [] { return run::StopRequested(); },
                                                       [&](size_t c, size_t s) {
        if (!json)
          std::fprintf(stderr, "enas-rank: trained %s with seed %llu (%zu of %zu)\n", cells[c].label.c_str(),
                       static_cast<unsigned long long>(retrain_seeds[s]), c * retrain_seeds.size() + s + 1,
                       cells.size() * retrain_seeds.size());
      });
      retrain_cpu = ProcessCpuSeconds() - t0;
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
    std::vector<double> xs, ys;
    for (size_t k = 0; k < cells.size(); ++k) {
      cells[k].shared = shared[k];
      if (!std::isnan(cells[k].known) && !std::isnan(shared[k])) xs.push_back(shared[k]), ys.push_back(cells[k].known);
    }
    const double tau = enas::KendallTau(xs, ys), rho = enas::SpearmanRho(xs, ys);
    const int64_t used = std::min<int64_t>(images, o.validation_images);

    if (json) {
      nlohmann::json j;
      j["checkpoint"] = ckpt_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(ckpt_path);
      j["images"] = used;
      j["cpu_seconds"] = cpu;
      nlohmann::json cj = nlohmann::json::array();
      for (const Cell& c : cells) {
        cj.push_back(CellJson(space, c, !retrain_seeds.empty()));
      }
      if (!retrain_seeds.empty())
        j["retrain"] = {{"seeds", retrain_seeds}, {"final_epochs", o.final_epochs}, {"cpu_seconds", retrain_cpu}};
      j["cells"] = cj;
      j["known"] = xs.size();
      j["kendall_tau"] = FiniteOrNull(tau);
      j["spearman_rho"] = FiniteOrNull(rho);
      j["stopped_by_signal"] = run::StopRequested();
      std::printf("%s\n", j.dump().c_str());
    } else {
      auto pct = [](double x) {
        char b[32] = "-";
        if (!std::isnan(x)) std::snprintf(b, sizeof(b), "%.2f %%", 100 * x);
        return std::string(b);
      };
      if (retrain_seeds.empty()) {
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
        std::printf("retrained every cell with %zu seed(s), %g epoch(s) each: %.1f s CPU\n", retrain_seeds.size(),
                    o.final_epochs, retrain_cpu);
      }
      if (run::StopRequested()) std::printf("stopped by signal: the cells not scored or not retrained show '-' or nan\n");
      if (!bytes.empty())
        std::printf("%zu cells with a from-scratch accuracy: Kendall tau-b %.3f, Spearman rho %.3f "
                    "(shared weights on %lld validation images, %.1f s CPU)\n",
                    xs.size(), tau, rho, static_cast<long long>(used), cpu);
    }
    return kExitOk;
  });
}
