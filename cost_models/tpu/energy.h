// Energy and CO2e of a training run (Patterson et al. 2021 §2.5): an accounting layer on top
// of the time model. E_IT = hours · accelerators · P̄ (mean measured *system* power per
// accelerator: chip + HBM + host share + network, not TDP), E = E_IT · PUE,
// CO2e = E · grid intensity (gross; net after carbon-free-energy purchases).
// Data (power table + validation runs) in validation/energy.pbtxt, embedded by the build.
#pragma once

#include <string>
#include <vector>

#include "datasets/proto/perf_energy.pb.h"

namespace placerl::perf {

const std::string& DefaultEnergyText();
const EnergyTable& DefaultEnergyTable();
EnergyTable LoadEnergyTable(const std::string& path);  // "" → embedded; file:line errors

// What one run needs: accelerators, hours, power per accelerator, data centre.
struct EnergyQuery {
  double chips = 0;
  double hours = 0;
  double power_w = 0;       // mean system power per accelerator
  double pue = 1;
  double grid_kg_per_kwh = 0;
  double net_grid_kg_per_kwh = -1;  // < 0: same as gross
};
struct EnergyResult {
  double it_mwh = 0;        // accelerators + their hosts and network
  double facility_mwh = 0;  // × PUE
  double gross_tco2e = 0, net_tco2e = 0;
  double accelerator_hours = 0;
};
// Throws ConfigError on a non-finite or out-of-range input (chips ≥ 1, hours > 0,
// power in (0, 10 kW], PUE in [1, 3], intensities in [0, 2] kg/kWh).
EnergyResult EnergyOfRun(const EnergyQuery& q);

// The table's mean measured system power of `chip`; throws ConfigError (naming the chips
// that have one) when the table has none for it.
const ChipPower& PowerOf(const EnergyTable& table, const std::string& chip);

// Utilisation-dependent system power (session 17): P(u) = system_w · (1 + β·(u − ū)) with ū the
// chip's mean_utilisation and β the table's power_utilisation_slope, i.e. idle + (peak − idle)·u
// with idle = P(0), peak = P(1). u is clamped to [0, 1]; u < 0 (unknown), a chip without ū or
// β = 0 give system_w.
double PowerAt(const ChipPower& p, double slope, double utilisation);
// A run's hardware utilisation: tflops_per_chip / peak_tflops_per_chip, −1 when not published.
double RunUtilisation(const EnergyRun& run);
// β by least squares on the runs with a utilisation, a measured run power and a chip with ū:
// minimises Σ (run_power/system_w − 1 − β·(u − ū))². `skip_id`: leave that run out. 0 when no
// run qualifies.
double FitPowerSlope(const EnergyTable& table, const std::string& skip_id = "");

struct EnergyRow {
  std::string id, paper, chip, note;
  double measured_mwh = 0, predicted_mwh = 0, mwh_error = 0;
  double measured_tco2e = 0, predicted_tco2e = 0, tco2e_error = 0;  // gross
  double measured_net_tco2e = 0, predicted_net_tco2e = 0, net_tco2e_error = 0;
  double power_w = 0, run_power_w = 0;
  double utilisation = -1;  // the run's (−1: not published)
  double loo_mwh_error = 0;  // MWh error with β fitted without this run
  std::string error;  // non-empty when the row could not be evaluated
};
struct EnergyReport {
  std::vector<EnergyRow> rows;
  double median_abs_mwh_error = 0, worst_abs_mwh_error = 0;
  double median_abs_tco2e_error = 0, worst_abs_tco2e_error = 0;  // gross and net together
  std::string worst_mwh_id;
  int evaluated = 0;
  double slope = 0;  // β used
  double median_abs_loo_mwh_error = 0, worst_abs_loo_mwh_error = 0;
};
// Every run predicted from its chips, days, PUE and grid with the TABLE's power per chip at the
// run's utilisation (PowerAt; never the run's own measured power), and again with β fitted
// without the run (loo_mwh_error).
EnergyReport ValidateEnergy(const EnergyTable& table);
// `constant`: the same runs with power independent of utilisation (β = 0), for the before/after
// line (nullptr: none).
std::string EnergyMarkdown(const EnergyReport& report, const EnergyTable& table,
                           const EnergyReport* constant = nullptr);

}  // namespace placerl::perf
