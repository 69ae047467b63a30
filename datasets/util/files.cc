#include "datasets/util/files.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "datasets/util/errors.h"

namespace placerl {
namespace {

std::string Gunzip(const std::string& path, const std::string& in, size_t max_bytes) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw IoError(path + ": cannot initialise zlib");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[1 << 16];
  int ret = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    ret = inflate(&zs, Z_NO_FLUSH);
    if (ret != Z_OK && ret != Z_STREAM_END) {
      inflateEnd(&zs);
      throw ParseError(path, 0, std::string("corrupt gzip data (") + (zs.msg ? zs.msg : "zlib error") + ")");
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&zs);
      throw ParseError(path, 0, "decompressed size exceeds " + std::to_string(max_bytes) + " bytes");
    }
    if (ret == Z_STREAM_END) {
      // Concatenated gzip members (as `cat a.gz b.gz` makes) are valid gzip.
      if (zs.avail_in > 0) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      throw ParseError(path, 0, "truncated gzip data");
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

std::string ReadFile(const std::string& path, size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw IoError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw IoError(path + ": read error");
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
      static_cast<unsigned char>(raw[1]) == 0x8b) {
    return Gunzip(path, raw, max_bytes);
  }
  if (raw.size() > max_bytes) throw ParseError(path, 0, "file larger than " + std::to_string(max_bytes) + " bytes");
  return raw;
}

void WriteFileAtomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw IoError(path + ": cannot write (" + std::strerror(errno) + ")");
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw IoError(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    throw IoError(path + ": cannot rename temporary file (" + err + ")");
  }
}

std::vector<std::string> SplitCommaList(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace placerl
