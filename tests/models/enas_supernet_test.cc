// The ENAS micro super-network (models/enas_supernet.h): output shapes for several
// children, gradients reach only the chosen operations' weights, a FixedNet with the
// super-network's weights computes the same logits, the parameter count of a FixedNet equals
// ChildCostOf's, decoding checks its input, and a few hundred real Fashion-MNIST images × a few
// SGD steps lower the loss.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <random>
#include <set>

#include "datasets/nas/idx.h"
#include "datasets/nas/search_space.h"
#include "datasets/util/errors.h"
#include "models/enas_supernet.h"
#include "search/nas/nas_search.h"

namespace placerl::enas {
namespace {

class EnasSupernetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(1);
    torch::manual_seed(3);
  }
};

EnasNetOptions Small() {
  EnasNetOptions o;
  o.channels = 4;
  o.cells_per_stage = 1;
  return o;
}

ChildArch Random(uint64_t seed) {
  static const nas::SearchSpace space = nas::LoadSearchSpace("enas_micro");
  std::mt19937_64 rng(seed);
  return DecodeEnasMicro(search::RandomArchitecture(space, rng));
}

TEST_F(EnasSupernetTest, DecodeEncodeRoundTripAndBadInput) {
  const nas::SearchSpace space = nas::LoadSearchSpace("enas_micro");
  std::mt19937_64 rng(1);
  for (int k = 0; k < 20; ++k) {
    const nas::Architecture a = search::RandomArchitecture(space, rng);
    EXPECT_EQ(EncodeEnasMicro(DecodeEnasMicro(a)), a);
  }
  EXPECT_THROW(DecodeEnasMicro(nas::Architecture(39, 0)), ConfigError);
  nas::Architecture bad(40, 0);
  bad[0] = 2;  // node 0 can read only the two cell inputs
  EXPECT_THROW(DecodeEnasMicro(bad), ConfigError);
  bad[0] = 0;
  bad[1] = 5;  // no sixth operation
  EXPECT_THROW(DecodeEnasMicro(bad), ConfigError);
  // The space's choice names are the operations'.
  EXPECT_EQ(space.decisions()[1].choices[0], OpName(0));
  EXPECT_EQ(space.decisions()[1].choices[4], OpName(4));
}

TEST_F(EnasSupernetTest, OutputShapesForSeveralChildren) {
  EnasNet net(Small());
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const torch::Tensor y = net->Forward(torch::randn({3, 1, 28, 28}), Random(seed));
    ASSERT_EQ(y.dim(), 2);
    EXPECT_EQ(y.size(0), 3);
    EXPECT_EQ(y.size(1), 10);
    EXPECT_TRUE(torch::isfinite(y).all().item<bool>());
  }
  EXPECT_THROW(net->Forward(torch::randn({3, 1, 32, 32}), Random(1)), ConfigError);
  EXPECT_THROW(net->forward(torch::randn({3, 1, 28, 28})), ConfigError);  // needs an architecture
}

TEST_F(EnasSupernetTest, GradientsReachOnlyTheChosenOperations) {
  EnasNet net(Small());
  for (uint64_t seed = 5; seed <= 7; ++seed) {
    const ChildArch child = Random(seed);
    net->zero_grad();
    torch::nn::functional::cross_entropy(net->Forward(torch::randn({4, 1, 28, 28}), child),
                                         torch::tensor({0, 1, 2, 3}, torch::kLong))
        .backward();
    const std::vector<std::string> used = net->ChildParameterNames(child);
    const std::set<std::string> chosen(used.begin(), used.end());
    int with_grad = 0;
    for (const auto& p : net->named_parameters()) {
      const bool has = p.value().grad().defined() && p.value().grad().abs().sum().item<double>() > 0;
      EXPECT_EQ(has, chosen.count(p.key()) > 0) << p.key();
      with_grad += has;
    }
    EXPECT_EQ(with_grad, static_cast<int>(chosen.size()));
    EXPECT_LT(chosen.size(), net->named_parameters().size());  // weight sharing: most are not used
  }
}

TEST_F(EnasSupernetTest, FixedNetAgreesWithTheSupernetGivenTheSameWeights) {
  EnasNet super(Small());
  for (uint64_t seed = 8; seed <= 10; ++seed) {
    const ChildArch child = Random(seed);
    EnasNet fixed(Small(), child);
    CopySharedWeights(super, fixed);
    const torch::Tensor x = torch::randn({5, 1, 28, 28});
    torch::NoGradGuard no_grad;
    const torch::Tensor a = super->Forward(x, child), b = fixed->forward(x);
    EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-5)) << (a - b).abs().max().item<double>();
    // A FixedNet has exactly the child's parameters, and ChildCostOf counts them.
    EXPECT_EQ(fixed->named_parameters().size(), super->ChildParameterNames(child).size());
    EXPECT_EQ(CountParameters(*fixed), ChildCostOf(Small(), child).params);
    EXPECT_THROW(fixed->Forward(x, Random(seed + 100)), ConfigError);
  }
}

TEST_F(EnasSupernetTest, CostGrowsWithConvolutions) {
  ChildArch pools = Random(1), convs = Random(1);
  for (int i = 0; i < kNodes; ++i)
    for (int s = 0; s < 2; ++s) {
      pools.normal.op[i][s] = pools.reduce.op[i][s] = static_cast<int32_t>(Op::kMaxPool3);
      convs.normal.op[i][s] = convs.reduce.op[i][s] = static_cast<int32_t>(Op::kSepConv5);
    }
  const ChildCost a = ChildCostOf(Small(), pools), b = ChildCostOf(Small(), convs);
  EXPECT_GT(b.params, a.params);
  EXPECT_GT(b.macs, a.macs);
  EXPECT_GT(a.macs, 0);
  EnasNetOptions bad = Small();
  bad.image_size = 30;
  EXPECT_THROW(EnasNet{bad}, ConfigError);
}

TEST_F(EnasSupernetTest, AFewStepsOnRealImagesLowerTheLoss) {
  const nas::ImageSet set = nas::LoadFashionMnist(nas::kFashionMnistDir, "test");
  const int n = 128;
  torch::Tensor x = torch::from_blob(const_cast<uint8_t*>(set.pixels.data()), {n, 1, 28, 28}, torch::kUInt8)
                        .to(torch::kFloat32)
                        .div(255.0);
  torch::Tensor y = torch::from_blob(const_cast<uint8_t*>(set.labels.data()), {n}, torch::kUInt8).to(torch::kLong);
  EnasNet net(Small());
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  const ChildArch child = Random(11);
  auto loss_of = [&] {
    torch::NoGradGuard no_grad;
    return torch::nn::functional::cross_entropy(net->Forward(x, child), y).item<double>();
  };
  const double before = loss_of();
  for (int step = 0; step < 10; ++step) {
    sgd.zero_grad();
    torch::nn::functional::cross_entropy(net->Forward(x, child), y).backward();
    sgd.step();
  }
  EXPECT_LT(loss_of(), 0.8 * before);
}

}  // namespace
}  // namespace placerl::enas
