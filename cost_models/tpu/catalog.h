// Hardware catalogue of the TPU performance model: loading the protobuf-text catalogue
// (default embedded in the binary, or a file), looking chips up, dtype sizes, and the one
// text-format reader every perf-model input uses (errors as `file:line:col: reason`).
#pragma once

#include <string>
#include <vector>

#include "datasets/proto/hardware.pb.h"
#include "datasets/proto/perf_model.pb.h"

namespace google::protobuf {
class Message;
}

namespace placerl::perf {

// The default catalogue text (identical to cost_models/tpu/catalog/hardware.pbtxt).
const std::string& DefaultCatalogText();
const Catalog& DefaultCatalog();

// Parses protobuf text into `msg`; throws ParseError on any syntax error, unknown field,
// non-repeated field given twice or enum number with no value, with what() = `file:line:col: reason`
// (1-based; the line and column of the bad token: run::ParseTextFormat, the reader of every .pbtxt). `keys` (optional) receives
// the names of the top-level fields the text writes (also those written as 0 / false) and
// `key_lines` (optional) the 1-based line of each.
void ParseTextProto(const std::string& text, const std::string& filename,
                    google::protobuf::Message* msg, std::vector<std::string>* keys = nullptr,
                    std::vector<int>* key_lines = nullptr);

// Parses and validates a catalogue (every chip has a name, a BF16 peak, HBM, ...).
Catalog ParseCatalog(const std::string& text, const std::string& filename);
// "" → the default catalogue; otherwise the file at `path`.
Catalog LoadCatalog(const std::string& path);

// Throws ConfigError listing the known chip names when `name` is not in the catalogue.
const Chip& FindChip(const Catalog& catalog, const std::string& name);

// The catalogue's global efficiency parameters with the chip's non-zero overrides applied.
Efficiency EffectiveEfficiency(const Catalog& catalog, const Chip& chip);

// `catalog` with the shape-dependent matmul efficiency (Efficiency.shape_model) switched on or
// off: swaps `efficiency` and `shape_efficiency` (globally and per chip) when it changes, so off
// after on gives the catalogue back. The `perf-model` binary switches it on; the library default
// (DefaultCatalog) keeps it off; graph runs and the placed-graph simulator always use it off.
Catalog WithShapeModel(const Catalog& catalog, bool on);

// Dense peak FLOP/s of one chip in `dtype`; throws ConfigError when the chip has none.
double PeakFlops(const Chip& chip, DType dtype);

// Bytes per element (fractional below 8 bits).
double BytesPerElement(DType dtype);

}  // namespace placerl::perf
