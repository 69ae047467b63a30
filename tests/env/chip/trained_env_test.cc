// The chip environment from its config (env/chip/chip_env_config.h) and from what a checkpoint
// carries (env/chip/trained_env.h), at the library layer where `place` and the Python module's
// Policy.make_env both find them: the training run's settings on the design asked for (its
// config text read with the deprecated-alias layer), the cost map a policy's features name, the
// warnings of a setting changed, the damaged config's one-line error.
#include "env/chip/trained_env.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "datasets/util/errors.h"
#include "datasets/util/warnings.h"
#include "env/chip/chip_env_config.h"
#include "env/trained_settings.h"

namespace placerl {
namespace {

config::ChipEnvConfig Base() {
  config::ChipEnvConfig c = DefaultChipEnvConfig();
  c.set_netlist("asked/netlist.pb.txt");
  c.set_plc("asked/initial.plc");
  c.set_synthetic_seed(7);
  return c;
}

TEST(TrainedChipEnv, TheRecordedSettingsOnTheDesignAsked) {
  // `seed` is a deprecated alias (of run.seed): a checkpoint written before the key moved reads.
  const std::string text =
      "netlists: \"trained/a.pb.txt\"\nplcs: \"trained/a.plc\"\nseed: 3\nmaps: false\n"
      "chip { density_weight: 0.25 cost_map: \"proxy\" netlist: \"trained/a.pb.txt\" synthetic_seed: 2 }\n";
  const TrainedChipEnv t = TrainedChipEnvOf("run/latest.ckpt", &text, {}, Base());
  EXPECT_TRUE(t.recorded);
  EXPECT_FALSE(t.maps);
  EXPECT_DOUBLE_EQ(t.chip.density_weight(), 0.25);
  EXPECT_EQ(t.chip.cost_map(), "proxy");
  EXPECT_EQ(t.chip.netlist(), "asked/netlist.pb.txt");  // the design is the one asked for
  EXPECT_EQ(t.chip.plc(), "asked/initial.plc");
  EXPECT_EQ(t.chip.synthetic_seed(), 7u);
  ASSERT_EQ(t.designs.size(), 1u);
  EXPECT_EQ(t.designs[0].first, "trained/a.pb.txt");
  EXPECT_EQ(t.designs[0].second, "trained/a.plc");
}

TEST(TrainedChipEnv, ADamagedConfigIsOneLineNamingTheCheckpoint) {
  const std::string text = "chip { no_such_key: 1 }\n";
  try {
    TrainedChipEnvOf("run/latest.ckpt", &text, {}, Base());
    FAIL() << "a config with an unknown key was read";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("run/latest.ckpt: not a chip placement checkpoint, or a damaged one (run/latest.ckpt (its "
                      "training config):1:",
                      0),
              0u)
        << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(TrainedChipEnv, WithoutARecordedConfigTheCostMapComesFromThePolicysFeatures) {
  const std::vector<std::string> proxy = {"a", "b", "c", "d", "proxy_cost_change"};
  const std::vector<std::string> split = {"a", "b", "c", "d", "wirelength_change", "density_change", "congestion_change"};
  const TrainedChipEnv p = TrainedChipEnvOf("old.ckpt", nullptr, proxy, Base());
  EXPECT_FALSE(p.recorded);
  EXPECT_EQ(p.chip.cost_map(), "proxy");
  EXPECT_EQ(p.chip.netlist(), "asked/netlist.pb.txt");
  EXPECT_EQ(TrainedChipEnvOf("old.ckpt", nullptr, split, Base()).chip.cost_map(), "split");
  EXPECT_EQ(TrainedChipEnvOf("old.ckpt", nullptr, {}, Base()).chip.cost_map(), "wirelength");  // the default's
}

TEST(TrainedChipEnv, ReconcileWarnsOncePerChangedSettingAndKeepsTheTrainedCostMap) {
  const std::string text = "chip { density_weight: 0.25 cost_map: \"proxy\" }\n";
  const TrainedChipEnv t = TrainedChipEnvOf("run/latest.ckpt", &text, {}, Base());
  config::ChipEnvConfig used = t.chip;
  used.set_density_weight(0.5);
  used.set_cost_map("wirelength");
  ScopedWarningCapture capture;
  const nlohmann::json changed = ReconcileTrainedChipEnv(t, "run/latest.ckpt", &used);
  EXPECT_EQ(used.cost_map(), "proxy");
  ASSERT_EQ(capture.warnings().size(), 2u);
  EXPECT_EQ(capture.ids(), (std::vector<std::string>{run::kTrainedSettingChanged, run::kTrainedSettingChanged}));
  EXPECT_EQ(capture.warnings()[0].message,
            "chip.cost_map wirelength ignored: the policy's inputs are the proxy maps of run/latest.ckpt");
  EXPECT_EQ(capture.warnings()[1].message, "using chip.density_weight 0.5 as asked; run/latest.ckpt was trained with 0.25");
  ASSERT_TRUE(changed.contains("chip.density_weight"));
  EXPECT_EQ(changed["chip.density_weight"]["trained"], "0.25");
  EXPECT_EQ(changed.size(), 1u);
}

TEST(ChipEnvConfig, ChecksAndMakesTheEnvironment) {
  config::ChipEnvConfig c = DefaultChipEnvConfig();  // the built-in synthetic chip
  const auto env = MakeChipEnv(c, /*maps=*/false);
  ASSERT_NE(env, nullptr);
  EXPECT_GT(env->num_actions(), 0);
  c.set_reward("x");
  try {
    CheckChipEnvConfig(c);
    FAIL() << "reward x accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "chip.reward must be sparse or dense (got 'x')");
  }
  c = DefaultChipEnvConfig();
  c.set_density_weight(-1);
  EXPECT_THROW(MakeChipEnv(c, false), ConfigError);
}

}  // namespace
}  // namespace placerl
