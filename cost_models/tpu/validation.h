// Validation of the training-run evaluator against published measurements (the "Y" rows of
// perf_model_notes.md §3, in validation/measurements.pbtxt, embedded), and the one global
// fit of the catalogue's efficiency parameters over all of them (no per-row factors).
#pragma once

#include <string>
#include <vector>

#include "datasets/proto/hardware.pb.h"
#include "datasets/proto/perf_model.pb.h"

namespace placerl::perf {

const std::string& DefaultMeasurementsText();
MeasurementSet DefaultMeasurements();
MeasurementSet LoadMeasurements(const std::string& path);  // "" → embedded

struct ValidationRow {
  std::string id, chip, metric, note;
  std::string paper;  // Measurement.paper, or its source when unset
  double measured = 0, predicted = 0, rel_error = 0;  // (predicted - measured) / measured
  bool oom = false;
  bool partial = false;  // not counted in median / worst, not fitted
  bool extra = false;    // out-of-sample row (not in the notes): its own table, not fitted
  bool counted() const { return !partial && !extra; }
  std::string error;  // non-empty when the row could not be evaluated
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  double median_abs_error = 0, worst_abs_error = 0;
  std::string worst_id;
  int evaluated = 0;  // full-configuration rows evaluated (partial rows not counted)
  // The same over the time / throughput rows only (memory rows left out).
  double time_median_abs_error = 0, time_worst_abs_error = 0;
  int time_evaluated = 0;
  // Leave-one-paper-out: what a held-out paper's chip took (one sentence for the page).
  std::string held_out_chip_prior;
  // Hold-out folds (leave-one-paper-out): per held-out group, the constants its prediction
  // rests on — the fold's fitted efficiencies and, per chip without rows in the fold, where its
  // matmul came from. In the order the groups were first met.
  struct Fold {
    std::string held_out;   // the group (paper) held out
    std::string constants;  // FittedConstantsText of the fold's fit
    std::string priors;     // "tpu_v5e 0.7 = median of tpu_v4 0.65, a100 0.75 (2022)" ...; "" when none
  };
  std::vector<Fold> folds;
};

// HBM_* metrics: memory rows (they do not depend on the efficiency parameters, so the fit
// does not use them).
bool IsMemoryMetric(Metric m);

ValidationReport Validate(const MeasurementSet& rows, const Catalog& catalog);
// The fit's objective: mean absolute relative error over the counted rows (rows that cannot be
// evaluated count as 100 %).
double MeanAbsError(const ValidationReport& r);
std::string ReportTable(const ValidationReport& report);  // markdown table + summary
// Markdown page: parameters, the table, and (if given) the leave-one-out and the
// leave-one-paper-out tables.
std::string ReportMarkdown(const ValidationReport& report, const Catalog& catalog,
                           const ValidationReport* held_out = nullptr,
                           const ValidationReport* paper_out = nullptr);

// The row's paper key: Measurement.paper, or its source when the paper is not given.
std::string PaperOf(const Measurement& m);

// The efficiency parameters in one line (global ones, then per-chip matmul overrides).
std::string EfficiencyText(const Catalog& catalog);
// What FitEfficiency fits, in one line: memory, collective_bw, dcn_bw, and tp_overlap (kept from
// the catalogue, not fitted; see FitEfficiency) (+ matmul_fill under the shape model); then each
// chip's matmul override and the global matmul.
std::string FittedConstantsText(const Catalog& catalog);

// Fits memory, collective_bw, dcn_bw (global; + matmul_fill under the shape model) and one
// matmul efficiency per chip that has rows, by coordinate descent over grids minimising the mean
// absolute relative error; the global matmul (chips without rows) becomes the median of the
// per-chip ones. tp_overlap is not fitted (session 51: no counted row moves it on [0.25, 1]); the
// fit and every held-out refit keep the catalogue's.
// Returns the fitted catalogue; `log` gets one line.
Catalog FitEfficiency(const MeasurementSet& rows, const Catalog& catalog, std::string* log);

// Leave-one-out: every row predicted with the parameters fitted (as above, from `catalog`)
// on all the OTHER rows. Its median/worst say how the model does on a row it was not fitted
// to — the honest error for "other published measurements".
ValidationReport CrossValidate(const MeasurementSet& rows, const Catalog& catalog);

// Leave-one-paper-out: the rows of each paper predicted together with the parameters fitted
// on the rows of all OTHER papers, so a paper's rows never pin their own prediction. A chip
// whose only rows are the held-out paper's has no fitted matmul efficiency in that fold and
// uses the global one (the median of the fitted chips'), as a chip without rows does.
// `prior` (session 17): what a chip without rows in the fold takes — kGlobalMedian (the global
// matmul, the median of all fitted chips') or kVendorMedian (the median of the fitted chips of
// its vendor: TPUs = names starting with "tpu_", GPUs = the others; the global one when the fold
// has none of its vendor) or kEraMedian (the median of the fitted chips measured by the papers
// closest in publication year — the first 4-digit year 19xx/20xx in the paper's name — to the
// held-out paper's: a software-stack generation; the global one when no year is known).
enum class HeldOutChipPrior { kGlobalMedian, kVendorMedian, kEraMedian };
// The default (session 17) is kEraMedian.
ValidationReport CrossValidatePapers(const MeasurementSet& rows, const Catalog& catalog,
                                     HeldOutChipPrior prior = HeldOutChipPrior::kEraMedian);

}  // namespace placerl::perf
