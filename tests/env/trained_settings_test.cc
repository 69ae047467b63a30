// `place` on a checkpoint (env/trained_settings.h): every environment setting that differs from
// the training run's is a warning (CKPT-0001) naming both values, and a difference in result.json.
#include "env/trained_settings.h"

#include <gtest/gtest.h>

#include "datasets/proto/device_placement.pb.h"
#include "datasets/util/warnings.h"

namespace placerl::run {
namespace {

// Issue 29 item 1: `place` warns for every environment setting that differs from the
// checkpoint's training run, naming both values.
TEST(ReportTrainedSettingChanges, WarnsOncePerDifferenceAndSkipsTheGivenFields) {
  config::DevicePlaceConfig trained, used;
  trained.set_memory_mask(true);
  trained.set_graph("rnnlm");
  used = trained;
  used.set_memory_mask(false);
  used.set_graph("nmt");
  used.set_oom_factor(3);
  ScopedWarningCapture capture;
  const nlohmann::json changed = ReportTrainedSettingChanges(trained, used, {"graph"}, "run/checkpoints/latest.ckpt");
  ASSERT_EQ(capture.warnings().size(), 2u);
  EXPECT_EQ(capture.warnings()[0].id, kTrainedSettingChanged);
  EXPECT_EQ(capture.warnings()[0].message,
            "using memory_mask false as asked; run/checkpoints/latest.ckpt was trained with true");
  EXPECT_EQ(changed["memory_mask"]["trained"], "true");
  EXPECT_EQ(changed["oom_factor"]["used"], "3");
  EXPECT_FALSE(changed.contains("graph"));
  EXPECT_TRUE(ReportTrainedSettingChanges(trained, trained, {}, "x").empty());
}

}  // namespace
}  // namespace placerl::run
