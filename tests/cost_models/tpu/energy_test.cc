// Energy and CO2e of training runs (cost_models/tpu/energy.h): the accounting by hand, the
// published runs (Patterson et al. 2021 Tables 1 and 4) within 20 % from the power table
// alone, and bad inputs as errors.
#include "cost_models/tpu/energy.h"

#include <gtest/gtest.h>

#include <cmath>

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
    EXPECT_DOUBLE_EQ(r.power_w, PowerOf(table, r.chip).system_w());
    differs_from_run_power |= r.power_w != r.run_power_w;
  }
  EXPECT_TRUE(differs_from_run_power);
  EXPECT_LE(rep.median_abs_mwh_error, rep.worst_abs_mwh_error);
  const std::string md = EnergyMarkdown(rep, table);
  EXPECT_NE(md.find("| E2 | T5 11B, Taiwan | tpu_v3 | 283 | 310 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Runs evaluated: 11."), std::string::npos) << md;
}

}  // namespace
}  // namespace placerl::perf
