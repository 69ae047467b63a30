// IDX files (the MNIST / Fashion-MNIST format: big-endian magic 0x0000 <type> <ndims>, ndims
// big-endian int32 sizes, then the data), raw or gzipped, and the Fashion-MNIST set that
// Debian's `dataset-fashion-mnist` installs under /usr/share/datasets/fashion-mnist/
// (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-…). Only unsigned-byte
// data (type 0x08) is read: it is what the image sets use. Errors are ParseError `file:0: what`
// (a binary file has no lines).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace placerl::nas {

struct IdxArray {
  std::vector<int32_t> dims;
  std::vector<uint8_t> data;  // row-major, product(dims) bytes
};

// Throws IoError (cannot read) or ParseError (bad magic, a type other than unsigned byte, a
// zero or negative size, data shorter or longer than the sizes say).
IdxArray ReadIdx(const std::string& path);

struct ImageSet {
  int32_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // [count, rows, cols]
  std::vector<uint8_t> labels;  // [count], each < num_classes
  int32_t num_classes = 10;
};

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// `split` = "train" (60,000) or "test" (10,000, files t10k-*); each file with or without
// ".gz". Throws ConfigError for another split, IoError when the files are missing (naming the
// Debian package), ParseError when images and labels disagree or a label is ≥ 10.
ImageSet LoadFashionMnist(const std::string& dir, const std::string& split);

}  // namespace placerl::nas
