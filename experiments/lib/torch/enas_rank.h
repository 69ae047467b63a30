// The `enas-rank` program (docs/nas.md "ENAS weight sharing on Fashion-MNIST"), called by
// experiments/torch/enas_rank_main.cc once its flags are parsed: the cells to score (from
// nas-search result.json files, cell lists, ArchitectureDef files; the same architecture once),
// their accuracy with the shared weights of an ENAS checkpoint (search/nas/enas_search.h
// SharedWeightAccuracies, as the derive step scores them), optionally their training from scratch
// once per seed (TrainCellsFromScratch), and the rank correlation of the two (Kendall's tau-b,
// Spearman's rho) as a table or one JSON document. Torch-free header.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/nas/search_space.h"

namespace placerl::enas_rank {

// The flags (0 / "" = not given).
struct Options {
  std::string checkpoint, data_dir;
  std::vector<std::string> results, cells_files, pbtxts;
  std::vector<uint64_t> retrain_seeds;
  double final_epochs = 0;
  bool candidates = false, json = false;
  int32_t images = 2000, max_images = 0;
};

// One cell to score: its label(s), architecture and accuracies.
struct Cell {
  std::string label;
  nas::Architecture arch;
  double known = NAN;  // accuracy after training from scratch, NaN if unknown
  double shared = NAN;
  double given = NAN;  // the known accuracy from the input when --retrain-seeds replaces it
  std::vector<double> test, val;  // --retrain-seeds: one per seed
  int64_t params = 0, macs = 0;
};

// The cells of the --result, --cells and --pbtxt inputs, in that order; an architecture given
// twice is one cell (labels joined with '/'). ConfigError naming the file for a bad input, and
// saying why when there is no cell at all.
std::vector<Cell> ReadCells(const nas::SearchSpace& space, const Options& o);

// Runs what the flags ask for and prints the result. Returns the exit code; throws ConfigError /
// IoError for bad input (RunMain prints them).
int Run(const Options& o);

}  // namespace placerl::enas_rank
