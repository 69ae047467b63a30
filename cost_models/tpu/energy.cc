#include "cost_models/tpu/energy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cost_models/tpu/catalog.h"
#include "datasets/util/errors.h"
#include "datasets/util/files.h"
#include "datasets/util/stats.h"

namespace placerl::perf {

namespace {

void CheckRange(const char* what, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "energy: %s must be in [%g, %g], got %g", what, lo, hi, v);
    throw ConfigError(buf);
  }
}

EnergyTable ParseEnergyTable(const std::string& text, const std::string& name) {
  EnergyTable t;
  ParseTextProto(text, name, &t);
  for (const ChipPower& p : t.power()) {
    if (p.chip().empty()) throw ParseError(name, 1, "power entry without chip");
    if (p.system_w() < 0 || p.system_w() > 1e4 || !std::isfinite(p.system_w()))
      throw ParseError(name, 1, "power of " + p.chip() + ": system_w out of [0, 10000] W");
    if (!(p.mean_utilisation() >= 0 && p.mean_utilisation() <= 1))
      throw ParseError(name, 1, "power of " + p.chip() + ": mean_utilisation out of [0, 1]");
  }
  const double b = t.power_utilisation_slope();
  if (!(b >= 0 && b <= 10)) throw ParseError(name, 1, "power_utilisation_slope out of [0, 10]");
  for (const ChipPower& p : t.power())
    if (p.mean_utilisation() > 0 && !(1 - b * p.mean_utilisation() > 0))
      throw ParseError(name, 1, "power of " + p.chip() + ": idle power system_w·(1 − slope·mean_utilisation) must be > 0");
  for (const EnergyRun& r : t.run())
    if (!(r.tflops_per_chip() >= 0 && r.peak_tflops_per_chip() >= 0 && r.peak_tflops_per_chip() <= 1e7) ||
        (r.peak_tflops_per_chip() > 0 && r.tflops_per_chip() > r.peak_tflops_per_chip()))
      throw ParseError(name, 1, "run " + r.id() + ": tflops_per_chip must be in [0, peak_tflops_per_chip]");
  return t;
}

double Rel(double predicted, double measured) { return (predicted - measured) / measured; }

}  // namespace

const EnergyTable& DefaultEnergyTable() {
  static const EnergyTable table = ParseEnergyTable(DefaultEnergyText(), "<embedded energy.pbtxt>");
  return table;
}

EnergyTable LoadEnergyTable(const std::string& path) {
  if (path.empty()) return DefaultEnergyTable();
  return ParseEnergyTable(ReadFile(path), path);
}

EnergyResult EnergyOfRun(const EnergyQuery& q) {
  CheckRange("chips", q.chips, 1, 1e8);
  CheckRange("hours", q.hours, 1e-9, 1e6);
  CheckRange("power per accelerator (W)", q.power_w, 1e-3, 1e4);
  CheckRange("PUE", q.pue, 1, 3);
  CheckRange("grid intensity (kgCO2e/kWh)", q.grid_kg_per_kwh, 0, 2);
  if (q.net_grid_kg_per_kwh >= 0) CheckRange("net grid intensity (kgCO2e/kWh)", q.net_grid_kg_per_kwh, 0, 2);
  EnergyResult r;
  r.accelerator_hours = q.chips * q.hours;
  r.it_mwh = r.accelerator_hours * q.power_w / 1e6;
  r.facility_mwh = r.it_mwh * q.pue;
  // MWh × kg/kWh = t.
  r.gross_tco2e = r.facility_mwh * q.grid_kg_per_kwh;
  r.net_tco2e = r.facility_mwh * (q.net_grid_kg_per_kwh >= 0 ? q.net_grid_kg_per_kwh : q.grid_kg_per_kwh);
  return r;
}

double PowerAt(const ChipPower& p, double slope, double u) {
  if (u < 0 || !(p.mean_utilisation() > 0) || slope == 0) return p.system_w();
  u = std::min(1.0, u);
  return p.system_w() * (1 + slope * (u - p.mean_utilisation()));
}

double RunUtilisation(const EnergyRun& run) {
  if (!(run.tflops_per_chip() > 0 && run.peak_tflops_per_chip() > 0)) return -1;
  return run.tflops_per_chip() / run.peak_tflops_per_chip();
}

double FitPowerSlope(const EnergyTable& table, const std::string& skip_id) {
  double num = 0, den = 0;
  for (const EnergyRun& run : table.run()) {
    if (run.id() == skip_id || !(run.run_power_w() > 0)) continue;
    const double u = RunUtilisation(run);
    if (u < 0) continue;
    for (const ChipPower& p : table.power()) {
      if (p.chip() != run.chip() || !(p.mean_utilisation() > 0) || !(p.system_w() > 0)) continue;
      const double du = u - p.mean_utilisation(), rel = run.run_power_w() / p.system_w() - 1;
      num += du * rel;
      den += du * du;
    }
  }
  return den > 0 ? std::max(0.0, num / den) : 0.0;
}

const ChipPower& PowerOf(const EnergyTable& table, const std::string& chip) {
  std::string known;
  for (const ChipPower& p : table.power()) {
    if (p.chip() == chip) {
      if (p.system_w() > 0) return p;
      throw ConfigError("energy: no measured system power for " + chip + " (" + p.source() + ")");
    }
    if (p.system_w() > 0) known += (known.empty() ? "" : ", ") + p.chip();
  }
  throw ConfigError("energy: no measured system power for '" + chip + "' (known: " + known +
                    "); give --power-w");
}

EnergyReport ValidateEnergy(const EnergyTable& table) {
  EnergyReport rep;
  rep.slope = table.power_utilisation_slope();
  std::vector<double> mwh, tco2e, loo;
  for (const EnergyRun& run : table.run()) {
    EnergyRow row;
    row.id = run.id();
    row.paper = run.paper();
    row.chip = run.chip();
    row.note = run.note();
    row.run_power_w = run.run_power_w();
    row.measured_mwh = run.measured_mwh();
    row.measured_tco2e = run.measured_tco2e();
    row.measured_net_tco2e = run.measured_net_tco2e();
    try {
      EnergyQuery q;
      q.chips = double(run.chips());
      q.hours = run.days() * 24;
      const ChipPower& cp = PowerOf(table, run.chip());
      row.utilisation = RunUtilisation(run);
      q.power_w = PowerAt(cp, table.power_utilisation_slope(), row.utilisation);
      q.pue = run.pue();
      q.grid_kg_per_kwh = run.grid_kg_per_kwh();
      q.net_grid_kg_per_kwh = run.net_grid_kg_per_kwh() > 0 ? run.net_grid_kg_per_kwh() : -1;
      const EnergyResult r = EnergyOfRun(q);
      row.power_w = q.power_w;
      row.predicted_mwh = r.facility_mwh;
      row.predicted_tco2e = r.gross_tco2e;
      row.predicted_net_tco2e = r.net_tco2e;
      if (row.measured_mwh > 0) {
        // β refitted without this run (only when the table's β is the fit's kind: > 0).
        EnergyQuery lq = q;
        if (table.power_utilisation_slope() > 0)
          lq.power_w = PowerAt(cp, FitPowerSlope(table, run.id()), row.utilisation);
        row.loo_mwh_error = Rel(EnergyOfRun(lq).facility_mwh, row.measured_mwh);
        loo.push_back(std::fabs(row.loo_mwh_error));
        row.mwh_error = Rel(row.predicted_mwh, row.measured_mwh);
        mwh.push_back(std::fabs(row.mwh_error));
        if (std::fabs(row.mwh_error) > rep.worst_abs_mwh_error) {
          rep.worst_abs_mwh_error = std::fabs(row.mwh_error);
          rep.worst_mwh_id = row.id;
        }
      }
      if (row.measured_tco2e > 0) {
        row.tco2e_error = Rel(row.predicted_tco2e, row.measured_tco2e);
        tco2e.push_back(std::fabs(row.tco2e_error));
      }
      if (row.measured_net_tco2e > 0) {
        row.net_tco2e_error = Rel(row.predicted_net_tco2e, row.measured_net_tco2e);
        tco2e.push_back(std::fabs(row.net_tco2e_error));
      }
    } catch (const Error& e) {
      row.error = e.what();
    }
    rep.rows.push_back(row);
  }
  rep.evaluated = int(mwh.size());
  rep.median_abs_loo_mwh_error = stats::Median(loo, 0);
  rep.worst_abs_loo_mwh_error = loo.empty() ? 0 : *std::max_element(loo.begin(), loo.end());
  rep.median_abs_mwh_error = stats::Median(mwh, 0);
  rep.median_abs_tco2e_error = stats::Median(tco2e, 0);
  rep.worst_abs_tco2e_error = tco2e.empty() ? 0 : *std::max_element(tco2e.begin(), tco2e.end());
  return rep;
}

std::string EnergyMarkdown(const EnergyReport& rep, const EnergyTable& table, const EnergyReport* constant) {
  std::ostringstream out;
  char buf[512];
  out << "# Energy and CO2e validation\n\n"
      << "Generated by `perf-model energy --validate --out docs/perf_energy.md` (do not edit by hand).\n"
      << "Published training runs with their energy (`../shared/reference/perf_model_notes_2.md` §7a,\n"
      << "all [V]; data in `cost_models/tpu/validation/energy.pbtxt`). Each run is predicted from its\n"
      << "accelerators, days, PUE and grid intensity with the power table below (facility MWh =\n"
      << "days · 24 h · accelerators · P̄ · PUE; tCO2e = MWh · kgCO2e/kWh), never with the run's own\n"
      << "measured power (column `run W`, shown for comparison). Power depends on the run's hardware\n"
      << "utilisation u (its published TFLOP/s per chip ÷ peak, [V] numbers): P(u) = P̄·(1 + β·(u − ū)) =\n"
      << "idle + (peak − idle)·u, ū the mean utilisation of the runs P̄ was measured on [D], β one global\n";
  std::snprintf(buf, sizeof buf,
                "slope (%.4g, fitted on the runs' measured power [D]; column `LOO` = β refitted without the run).\n",
                table.power_utilisation_slope());
  out << buf
      << "The notes publish no idle or peak system power: idle and peak below are this fit's [D], not\n"
      << "measurements. A chip without ū (V100: Table 3's V100 runs have no published rate besides\n"
      << "GPT-3's) keeps P̄. Caveat: Table 3's means are averages over the same paper's runs (v3: T5,\n"
      << "Meena, GShard, Switch), so these rows are not held out from the power table.\n\n"
      << "| chip | P̄ per accelerator (W) | ū | idle / peak (W) [D] | TDP (W) | source |\n|---|---:|---:|---:|---:|---|\n";
  for (const ChipPower& p : table.power()) {
    std::string up = "—", ip = "—";
    if (p.mean_utilisation() > 0 && p.system_w() > 0) {
      std::snprintf(buf, sizeof buf, "%.3f", p.mean_utilisation());
      up = buf;
      std::snprintf(buf, sizeof buf, "%.0f / %.0f", PowerAt(p, table.power_utilisation_slope(), 0),
                    PowerAt(p, table.power_utilisation_slope(), 1));
      ip = buf;
    }
    std::snprintf(buf, sizeof buf, "| %s | %s | %s | %s | %.0f | %s |\n", p.chip().c_str(),
                  p.system_w() > 0 ? std::to_string(int(std::lround(p.system_w()))).c_str() : "—", up.c_str(),
                  ip.c_str(), p.tdp_w(), p.source().c_str());
    out << buf;
  }
  out << "\n| id | run | chip | u | P(u) W | run W | MWh measured | MWh predicted | error | LOO | tCO2e gross meas. / pred. | error | "
         "tCO2e net meas. / pred. | error |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const EnergyRow& r : rep.rows) {
    if (!r.error.empty()) {
      out << "| " << r.id << " | " << r.note << " | " << r.chip << " | — | — | — | — | — | — | — | — | — | — | not evaluated: "
          << r.error << " |\n";
      continue;
    }
    std::snprintf(buf, sizeof buf,
                  "| %s | %s | %s | %s | %.0f | %.0f | %.4g | %.4g | %+.1f %% | %+.1f %% | %.4g / %.4g | %+.1f %% | %.4g / %.4g | %+.1f %% |\n",
                  r.id.c_str(), r.note.c_str(), r.chip.c_str(),
                  r.utilisation >= 0 ? (std::to_string(int(std::lround(100 * r.utilisation))) + " %").c_str() : "—",
                  r.power_w, r.run_power_w, r.measured_mwh,
                  r.predicted_mwh, 100 * r.mwh_error, 100 * r.loo_mwh_error, r.measured_tco2e, r.predicted_tco2e, 100 * r.tco2e_error,
                  r.measured_net_tco2e, r.predicted_net_tco2e, 100 * r.net_tco2e_error);
    out << buf;
  }
  std::snprintf(buf, sizeof buf,
                "\nRuns evaluated: %d. MWh: median |error| %.1f %%, worst %.1f %% (%s). "
                "tCO2e (gross and net): median |error| %.1f %%, worst %.1f %%.\n",
                rep.evaluated, 100 * rep.median_abs_mwh_error, 100 * rep.worst_abs_mwh_error,
                rep.worst_mwh_id.c_str(), 100 * rep.median_abs_tco2e_error, 100 * rep.worst_abs_tco2e_error);
  out << buf;
  std::snprintf(buf, sizeof buf, "β refitted without each run (LOO): MWh median |error| %.1f %%, worst %.1f %%.\n",
                100 * rep.median_abs_loo_mwh_error, 100 * rep.worst_abs_loo_mwh_error);
  out << buf;
  if (constant) {
    std::snprintf(buf, sizeof buf,
                  "Before (power independent of utilisation, P̄ for every run): MWh median |error| %.1f %%, "
                  "worst %.1f %% (%s); tCO2e median %.1f %%, worst %.1f %%.\n",
                  100 * constant->median_abs_mwh_error, 100 * constant->worst_abs_mwh_error,
                  constant->worst_mwh_id.c_str(), 100 * constant->median_abs_tco2e_error,
                  100 * constant->worst_abs_tco2e_error);
    out << buf;
  }
  return out.str();
}

}  // namespace placerl::perf
