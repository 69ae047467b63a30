// Tests of the placement renderer: SVG and PNG of a real Circuit Training netlist, the
// structure of the SVG, and the refusal of unknown output extensions.
#include "experiments/lib/render.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "cost_models/chip/proxy_cost.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/chip/synthetic.h"
#include "datasets/util/errors.h"

namespace placerl::viz {
namespace {

const char* kDir = "../shared/datasets/chip/circuit_training/sample_clustered/";

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string TempDir() {
  char t[] = "/tmp/placerl_render_XXXXXX";
  const char* d = mkdtemp(t);
  EXPECT_NE(d, nullptr);
  return d ? d : "/tmp";
}

TEST(Render, SampleClusteredSvgAndPng) {
  chip::Netlist nl = chip::ReadNetlist(std::string(kDir) + "netlist.pb.txt");
  const chip::PlcFile plc = chip::ReadPlc(std::string(kDir) + "initial.plc");
  chip::ApplyPlc(plc, &nl, "initial.plc");
  const chip::PlacementSettings s = chip::ResolveDefaults(plc.settings, nl);
  chip::ProxyCost cost(nl, s);
  const std::string dir = TempDir();
  RenderOptions opt;
  opt.title = "sample_clustered";
  opt.nets = true;
  RenderPlacement(cost, opt, dir + "/p.svg");
  opt.map = HeatMap::kDensity;
  RenderPlacement(cost, opt, dir + "/p.png");

  const std::string svg = Slurp(dir + "/p.svg");
  ASSERT_FALSE(svg.empty());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_GE(Count(svg, "<rect"), nl.macros.size());
  EXPECT_NE(svg.find("HPWL"), std::string::npos);
  EXPECT_NE(svg.find("congestion"), std::string::npos);
  const std::string png = Slurp(dir + "/p.png");
  ASSERT_GE(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // No temporary file is left behind.
  EXPECT_EQ(access((dir + "/p.png.tmp." + std::to_string(getpid()) + ".png").c_str(), F_OK), -1);
}

TEST(Render, SyntheticSvgHasOneRectPerMacro) {
  const chip::SyntheticDesign d = chip::GenerateSyntheticNetlist();
  chip::ProxyCost cost(d.netlist, d.settings);
  const std::string dir = TempDir();
  RenderOptions opt;
  opt.map = HeatMap::kNone;
  RenderPlacement(cost, opt, dir + "/s.SVG");
  const std::string svg = Slurp(dir + "/s.SVG");
  EXPECT_GE(Count(svg, "<rect"), d.netlist.macros.size());
  EXPECT_EQ(Count(svg, "<polygon"), d.netlist.ports.size() + d.netlist.hard_macros.size() + 2);
}

TEST(Render, BadExtensionAndMap) {
  const chip::SyntheticDesign d = chip::GenerateSyntheticNetlist();
  chip::ProxyCost cost(d.netlist, d.settings);
  const std::string dir = TempDir();
  EXPECT_THROW(RenderPlacement(cost, RenderOptions{}, dir + "/p.jpg"), ConfigError);
  EXPECT_THROW(RenderPlacement(cost, RenderOptions{}, dir + "/noext"), ConfigError);
  EXPECT_EQ(access((dir + "/p.jpg").c_str(), F_OK), -1);
  EXPECT_THROW(ParseHeatMap("heat"), ConfigError);
  EXPECT_EQ(ParseHeatMap("density"), HeatMap::kDensity);
}

}  // namespace
}  // namespace placerl::viz
