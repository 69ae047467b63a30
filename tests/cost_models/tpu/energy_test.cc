// Energy and CO2e of training runs (cost_models/tpu/energy.h): the accounting by hand, the
// published runs (Patterson et al. 2021 Tables 1 and 4) within 20 % from the power table
// alone, and bad inputs as errors.
#include "cost_models/tpu/energy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "datasets/util/errors.h"

namespace placerl::perf {
namespace {

TEST(Energy, AccountingByHand) {
  EnergyQuery q;
  q.chips = 512;
  q.hours = 20 * 24;
  q.power_w = 310;
  q.pue = 1.12;
  q.grid_kg_per_kwh = 0.545;
  const EnergyResult r = EnergyOfRun(q);
  // 512 · 480 h · 310 W = 76.19 MWh IT; × 1.12 = 85.33 MWh (paper: 85.7); × 0.545 = 46.5 t (46.7).
  EXPECT_NEAR(r.it_mwh, 512 * 480 * 310 / 1e6, 1e-9);
  EXPECT_NEAR(r.facility_mwh, 512 * 480 * 310 * 1.12 / 1e6, 1e-9);
  EXPECT_NEAR(r.gross_tco2e, r.facility_mwh * 0.545, 1e-9);
  EXPECT_DOUBLE_EQ(r.net_tco2e, r.gross_tco2e);  // no net intensity given
  q.net_grid_kg_per_kwh = 0.08;
  EXPECT_NEAR(EnergyOfRun(q).net_tco2e, r.facility_mwh * 0.08, 1e-9);
  EXPECT_NEAR(r.accelerator_hours, 512 * 480, 1e-9);
}

TEST(Energy, BadInputsAreErrors) {
  EnergyQuery ok;
  ok.chips = 8;
  ok.hours = 1;
  ok.power_w = 300;
  ok.pue = 1.1;
  ok.grid_kg_per_kwh = 0.4;
  EXPECT_NO_THROW(EnergyOfRun(ok));
  for (int i = 0; i < 6; ++i) {
    EnergyQuery q = ok;
    if (i == 0) q.chips = 0;
    if (i == 1) q.hours = NAN;
    if (i == 2) q.power_w = -1;
    if (i == 3) q.pue = 0.9;
    if (i == 4) q.grid_kg_per_kwh = INFINITY;
    if (i == 5) q.net_grid_kg_per_kwh = 5;
    EXPECT_THROW(EnergyOfRun(q), ConfigError) << i;
  }
  // A chip without a measured system power names the chips that have one.
  try {
    PowerOf(DefaultEnergyTable(), "tpu_v5p");
    ADD_FAILURE() << "no throw";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("tpu_v3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PowerOf(DefaultEnergyTable(), "a100"), ConfigError);  // TDP only
}

// Every published run with enough detail (all [V]) within 20 % of its MWh and tCO2e (gross
// and net), predicted with the table's power per chip, not the run's own.
TEST(Energy, PublishedRunsWithinTwentyPercent) {
  const EnergyTable& table = DefaultEnergyTable();
  const EnergyReport rep = ValidateEnergy(table);
  ASSERT_GE(rep.rows.size(), 11u);
  EXPECT_EQ(rep.evaluated, int(rep.rows.size()));
  bool differs_from_run_power = false;
  for (const EnergyRow& r : rep.rows) {
    ASSERT_TRUE(r.error.empty()) << r.id << ": " << r.error;
    EXPECT_LE(std::fabs(r.mwh_error), 0.20) << r.id;
    EXPECT_LE(std::fabs(r.tco2e_error), 0.20) << r.id;
    EXPECT_LE(std::fabs(r.net_tco2e_error), 0.20) << r.id;
    EXPECT_NEAR(r.mwh_error, (r.predicted_mwh - r.measured_mwh) / r.measured_mwh, 1e-12);
    EXPECT_DOUBLE_EQ(r.power_w, PowerAt(PowerOf(table, r.chip), table.power_utilisation_slope(), r.utilisation));
    differs_from_run_power |= r.power_w != r.run_power_w;
  }
  EXPECT_TRUE(differs_from_run_power);
  EXPECT_LE(rep.median_abs_mwh_error, rep.worst_abs_mwh_error);
  const std::string md = EnergyMarkdown(rep, table);
  EXPECT_NE(md.find("| E2 | T5 11B, Taiwan | tpu_v3 | 37 % | 291 | 310 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Runs evaluated: 11."), std::string::npos) << md;
}

// P(u) = P̄·(1 + β·(u − ū)): P̄ at ū, rising with u, idle < P̄ < peak, u clamped to 1; unknown u,
// a chip without ū or β = 0 give P̄.
TEST(Energy, PowerRisesWithUtilisation) {
  const EnergyTable& table = DefaultEnergyTable();
  const double beta = table.power_utilisation_slope();
  ASSERT_GT(beta, 0);
  const ChipPower& v3 = PowerOf(table, "tpu_v3");
  ASSERT_GT(v3.mean_utilisation(), 0);
  EXPECT_NEAR(PowerAt(v3, beta, v3.mean_utilisation()), v3.system_w(), 1e-9);
  EXPECT_NEAR(PowerAt(v3, beta, 0), v3.system_w() * (1 - beta * v3.mean_utilisation()), 1e-9);
  EXPECT_LT(PowerAt(v3, beta, 0), PowerAt(v3, beta, 0.2));
  EXPECT_LT(PowerAt(v3, beta, 0.2), PowerAt(v3, beta, 0.6));
  EXPECT_GT(PowerAt(v3, beta, 0), 0);
  EXPECT_DOUBLE_EQ(PowerAt(v3, beta, 1.7), PowerAt(v3, beta, 1));
  EXPECT_DOUBLE_EQ(PowerAt(v3, beta, -1), v3.system_w());
  EXPECT_DOUBLE_EQ(PowerAt(v3, 0, 0.9), v3.system_w());
  const ChipPower& v100 = PowerOf(table, "v100");  // no ū
  EXPECT_DOUBLE_EQ(PowerAt(v100, beta, 0.9), v100.system_w());
}

// The committed β is the least-squares fit; each chip's ū is the mean utilisation of the runs
// its Table-3 power was averaged over (v3: E2-E5; v2: E1, E10, E11; P100: E7 (= E8's run), E9).
TEST(Energy, CommittedSlopeAndMeanUtilisationsAreTheData) {
  const EnergyTable& table = DefaultEnergyTable();
  EXPECT_NEAR(FitPowerSlope(table), table.power_utilisation_slope(), 0.005);
  std::map<std::string, double> u;
  for (const EnergyRun& r : table.run()) u[r.id()] = RunUtilisation(r);
  EXPECT_NEAR(PowerOf(table, "tpu_v3").mean_utilisation(), (u["E2"] + u["E3"] + u["E4"] + u["E5"]) / 4, 1e-4);
  EXPECT_NEAR(PowerOf(table, "tpu_v2").mean_utilisation(), (u["E1"] + u["E10"] + u["E11"]) / 3, 1e-4);
  EXPECT_NEAR(PowerOf(table, "p100").mean_utilisation(), (u["E7"] + u["E9"]) / 2, 1e-4);
  // Leaving a run out moves β little: every LOO fit within 25 % of the full one.
  for (const EnergyRun& r : table.run())
    EXPECT_NEAR(FitPowerSlope(table, r.id()), FitPowerSlope(table), 0.25 * FitPowerSlope(table)) << r.id();
  // With the utilisation model the worst run is better than with one power per chip.
  EnergyTable flat = table;
  flat.set_power_utilisation_slope(0);
  EXPECT_LT(ValidateEnergy(table).worst_abs_mwh_error, ValidateEnergy(flat).worst_abs_mwh_error);
}

TEST(Energy, BadPowerModelValuesAreParseErrors) {
  const std::string dir = ::testing::TempDir();
  auto load = [&](const std::string& text) {
    const std::string path = dir + "/energy_bad.pbtxt";
    std::ofstream(path) << text;
    return LoadEnergyTable(path);
  };
  EXPECT_NO_THROW(load("power { chip: \"x\" system_w: 200 mean_utilisation: 0.4 } power_utilisation_slope: 1"));
  EXPECT_THROW(load("power_utilisation_slope: -1"), ParseError);
  EXPECT_THROW(load("power { chip: \"x\" system_w: 200 mean_utilisation: 1.5 }"), ParseError);
  // Idle power would be ≤ 0: 1 − 3·0.5 < 0.
  EXPECT_THROW(load("power { chip: \"x\" system_w: 200 mean_utilisation: 0.5 } power_utilisation_slope: 3"), ParseError);
  EXPECT_THROW(load("run { id: \"R\" tflops_per_chip: 50 peak_tflops_per_chip: 40 }"), ParseError);
}

}  // namespace
}  // namespace placerl::perf
