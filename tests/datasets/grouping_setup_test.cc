// What group-netlist does around the grouper (datasets/chip/grouping_setup.h): the canvas and
// grid of a grouping and where each came from (asked > .plc header > Bookshelf rows > CT's
// defaults), the warning for standard cells piled up in one spot, the group file's text.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "datasets/chip/grouping.h"
#include "datasets/chip/grouping_setup.h"
#include "datasets/chip/netlist.h"
#include "datasets/chip/plc.h"
#include "datasets/util/warnings.h"

namespace placerl::chip {
namespace {

const std::string kToy = "../shared/datasets/chip/circuit_training/toy_macro_stdcell/netlist.pb.txt";

// The grid CT's selection gives on a canvas (10 × 10 when none fits), as ChooseGroupingCanvas must.
void ExpectSelectedGrid(const Netlist& flat, const GroupingCanvas& cg) {
  const auto choice = SelectGrid(flat, cg.canvas_width, cg.canvas_height);
  if (choice) {
    EXPECT_EQ(cg.grid_source, GroupingGridSource::kSelection);
    EXPECT_EQ(cg.cols, choice->cols);
    EXPECT_EQ(cg.rows, choice->rows);
    EXPECT_EQ(cg.candidates, choice->candidates);
  } else {
    EXPECT_EQ(cg.grid_source, GroupingGridSource::kDefault);
    EXPECT_EQ(cg.cols, 10);
    EXPECT_EQ(cg.rows, 10);
  }
}

TEST(GroupingSetup, CanvasAndGridComeFromTheRequestThePlcOrCtsDefaults) {
  PlacementSettings bookshelf;
  const Netlist flat = ReadFlatNetlist(kToy, "", &bookshelf);
  EXPECT_FALSE(bookshelf.has_canvas());  // a CT netlist has no rows

  // Nothing asked: CT's square at 60 % use, CT's grid selection on it.
  const GroupingCanvas d = ChooseGroupingCanvas(flat, {});
  EXPECT_DOUBLE_EQ(d.canvas_width, std::max(1e-3, std::sqrt(flat.TotalArea() / 0.6)));
  EXPECT_EQ(d.canvas_height, d.canvas_width);
  ExpectSelectedGrid(flat, d);

  // A .plc header: its canvas and grid.
  PlcFile plc;
  plc.settings.canvas_width = 300;
  plc.settings.canvas_height = 200;
  plc.settings.cols = 12;
  plc.settings.rows = 11;
  GroupingCanvasRequest r;
  r.plc = &plc;
  GroupingCanvas h = ChooseGroupingCanvas(flat, r);
  EXPECT_EQ(h.grid_source, GroupingGridSource::kPlcHeader);
  EXPECT_EQ(h.canvas_width, 300);
  EXPECT_EQ(h.canvas_height, 200);
  EXPECT_EQ(h.cols, 12);
  EXPECT_EQ(h.rows, 11);

  // What is asked wins over the header.
  r.canvas_width = 400;
  r.canvas_height = 250;
  r.cols = 20;
  r.rows = 10;
  const GroupingCanvas a = ChooseGroupingCanvas(flat, r);
  EXPECT_EQ(a.grid_source, GroupingGridSource::kAsked);
  EXPECT_EQ(a.canvas_width, 400);
  EXPECT_EQ(a.canvas_height, 250);
  EXPECT_EQ(a.cols, 20);
  EXPECT_EQ(a.rows, 10);

  // A header without a grid: CT's selection on the header's canvas.
  plc.settings.cols = plc.settings.rows = 0;
  GroupingCanvasRequest no_grid;
  no_grid.plc = &plc;
  const GroupingCanvas s = ChooseGroupingCanvas(flat, no_grid);
  EXPECT_EQ(s.canvas_width, 300);
  EXPECT_EQ(s.canvas_height, 200);
  ExpectSelectedGrid(flat, s);

  // A Bookshelf design's rows give the canvas when nothing else does.
  GroupingCanvasRequest rows;
  rows.bookshelf.canvas_width = 500;
  rows.bookshelf.canvas_height = 400;
  const GroupingCanvas b = ChooseGroupingCanvas(flat, rows);
  EXPECT_EQ(b.canvas_width, 500);
  EXPECT_EQ(b.canvas_height, 400);
  ExpectSelectedGrid(flat, b);
}

TEST(GroupingSetup, StandardCellsPiledUpInOneSpotAreWarnedAbout) {
  PlacementSettings bookshelf;
  Netlist flat = ReadFlatNetlist(kToy, "", &bookshelf);
  ASSERT_GT(flat.stdcells.size(), 1u);
  for (size_t i = 0; i < flat.stdcells.size(); ++i) {  // spread over the canvas
    flat.x[flat.stdcells[i]] = 10.0 * static_cast<double>(i);
    flat.y[flat.stdcells[i]] = 5.0 * static_cast<double>(i);
  }
  {
    ScopedWarningCapture w;
    EXPECT_FALSE(WarnIfUnplacedCells(flat, 100, 100));
    EXPECT_TRUE(w.warnings().empty());
  }
  for (int32_t c : flat.stdcells) flat.x[c] = flat.y[c] = 7;  // all in one spot
  ScopedWarningCapture w;
  EXPECT_TRUE(WarnIfUnplacedCells(flat, 100, 100));
  ASSERT_EQ(w.ids(), std::vector<std::string>{warning_id::kGroupUnplacedCells});
  EXPECT_NE(w.warnings()[0].message.find("all " + std::to_string(flat.stdcells.size()) + " standard cells"),
            std::string::npos)
      << w.warnings()[0].message;
}

TEST(GroupingSetup, GroupFileTextReadsBack) {
  const std::vector<int32_t> groups = {0, -1, 2, 2, 7};
  EXPECT_EQ(GroupFileText(groups), "0\n-1\n2\n2\n7\n");
  EXPECT_EQ(ParseGroupText(GroupFileText(groups), "groups.final", 5), groups);
}

}  // namespace
}  // namespace placerl::chip
