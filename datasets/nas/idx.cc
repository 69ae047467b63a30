#include "datasets/nas/idx.h"

#include <sys/stat.h>

#include "datasets/util/errors.h"
#include "datasets/util/files.h"

namespace placerl::nas {

namespace {

uint32_t BigEndian32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 8) | static_cast<uint32_t>(static_cast<uint8_t>(s[at + 3]));
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

IdxArray ReadIdx(const std::string& path) {
  const std::string bytes = ReadFile(path, size_t(1) << 30);
  if (bytes.size() < 4) throw ParseError(path, 0, "too short for an IDX header (" + std::to_string(bytes.size()) + " bytes)");
  if (bytes[0] != 0 || bytes[1] != 0) throw ParseError(path, 0, "not an IDX file (the magic does not start with two zero bytes)");
  const uint8_t type = static_cast<uint8_t>(bytes[2]);
  if (type != 0x08)
    throw ParseError(path, 0, "IDX data type 0x" + std::to_string(type) + " is not unsigned byte (0x08), the only one read");
  const int32_t ndims = static_cast<uint8_t>(bytes[3]);
  if (ndims < 1 || ndims > 8) throw ParseError(path, 0, "IDX with " + std::to_string(ndims) + " dimensions (1 to 8 read)");
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  if (bytes.size() < header) throw ParseError(path, 0, "the IDX header is cut short");
  IdxArray a;
  uint64_t total = 1;
  for (int32_t d = 0; d < ndims; ++d) {
    const uint32_t n = BigEndian32(bytes, 4 + 4 * d);
    if (n == 0 || n > 0x7fffffffu) throw ParseError(path, 0, "dimension " + std::to_string(d) + " has size " + std::to_string(n));
    a.dims.push_back(static_cast<int32_t>(n));
    total *= n;
    if (total > (uint64_t(1) << 32)) throw ParseError(path, 0, "the IDX sizes multiply to more than 2^32 elements");
  }
  if (bytes.size() - header != total)
    throw ParseError(path, 0, "the sizes say " + std::to_string(total) + " bytes of data, the file has " +
                                  std::to_string(bytes.size() - header));
  a.data.assign(bytes.begin() + header, bytes.end());
  return a;
}

ImageSet LoadFashionMnist(const std::string& dir, const std::string& split) {
  std::string prefix;
  if (split == "train") prefix = "train";
  else if (split == "test") prefix = "t10k";
  else throw ConfigError("unknown Fashion-MNIST split '" + split + "' (train or test)");
  auto find = [&](const std::string& stem) {
    const std::string base = dir + "/" + prefix + "-" + stem;
    if (Exists(base + ".gz")) return base + ".gz";
    if (Exists(base)) return base;
    throw IoError("no " + base + "[.gz]: install Debian's dataset-fashion-mnist (scripts/install_deps.sh) or give "
                  "the folder holding the IDX files");
  };
  const std::string images_path = find("images-idx3-ubyte"), labels_path = find("labels-idx1-ubyte");
  IdxArray images = ReadIdx(images_path), labels = ReadIdx(labels_path);
  if (images.dims.size() != 3) throw ParseError(images_path, 0, "images need 3 dimensions (count, rows, cols)");
  if (labels.dims.size() != 1) throw ParseError(labels_path, 0, "labels need 1 dimension (count)");
  if (images.dims[0] != labels.dims[0])
    throw ParseError(labels_path, 0, std::to_string(labels.dims[0]) + " labels for " + std::to_string(images.dims[0]) + " images");
  ImageSet s;
  s.count = images.dims[0];
  s.rows = images.dims[1];
  s.cols = images.dims[2];
  for (size_t i = 0; i < labels.data.size(); ++i)
    if (labels.data[i] >= s.num_classes)
      throw ParseError(labels_path, 0, "label " + std::to_string(labels.data[i]) + " of item " + std::to_string(i) + " is not in 0-9");
  s.pixels = std::move(images.data);
  s.labels = std::move(labels.data);
  return s;
}

}  // namespace placerl::nas
