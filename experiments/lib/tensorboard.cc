#include "experiments/lib/tensorboard.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "datasets/proto/tensorboard.pb.h"
#include "datasets/util/errors.h"
#include "experiments/lib/crc32c.h"

namespace placerl::run {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  std::string h = buf;
  for (char& c : h) {
    if (c == '/') c = '_';
  }
  return h;
}

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

std::string FrameTfRecord(const std::string& data) {
  std::string out;
  out.reserve(data.size() + 16);
  PutLe(&out, data.size(), 8);
  PutLe(&out, MaskCrc32c(Crc32c(out.data(), 8)), 4);
  out += data;
  PutLe(&out, MaskCrc32c(Crc32c(data.data(), data.size())), 4);
  return out;
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir) {
  const long long seconds = static_cast<long long>(NowSeconds());
  const std::string base = dir + "/events.out.tfevents." + std::to_string(seconds) + "." + HostName();
  for (int attempt = 0; fd_ < 0; ++attempt) {
    path_ = base;
    if (attempt >= 1) path_ += "." + std::to_string(::getpid());
    if (attempt >= 2) path_ += "." + std::to_string(attempt - 1);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0 && (errno != EEXIST || attempt > 100)) {
      throw IoError(path_ + ": cannot create (" + std::strerror(errno) + ")");
    }
  }
  tensorboard::Event e;
  e.set_wall_time(NowSeconds());
  e.set_file_version("brain.Event:2");
  WriteRecord(e.SerializeAsString());
}

TensorBoardWriter::~TensorBoardWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TensorBoardWriter::AddScalars(int64_t step, const Scalars& scalars, double wall_time) {
  tensorboard::Event e;
  e.set_wall_time(wall_time > 0 ? wall_time : NowSeconds());
  e.set_step(step);
  tensorboard::Summary* s = e.mutable_summary();
  for (const auto& [tag, value] : scalars) {
    tensorboard::Summary::Value* v = s->add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
  }
  WriteRecord(e.SerializeAsString());
}

void TensorBoardWriter::AddSessionStart(int64_t step) {
  tensorboard::Event e;
  e.set_wall_time(NowSeconds());
  e.set_step(step);
  e.mutable_session_log()->set_status(tensorboard::SessionLog::START);
  WriteRecord(e.SerializeAsString());
}

void TensorBoardWriter::WriteRecord(const std::string& data) {
  const std::string rec = FrameTfRecord(data);
  size_t done = 0;
  while (done < rec.size()) {
    const ssize_t n = ::write(fd_, rec.data() + done, rec.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw IoError(path_ + ": write failed (" + std::strerror(errno) + ")");
    done += static_cast<size_t>(n);
  }
}

TensorBoardFile ReadTensorBoardFile(const std::string& path) {
  // Raw bytes (not ReadFile: a record length of 0x8b1f would look like gzip's magic).
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot open (" + std::strerror(errno) + ")");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw IoError(path + ": read error");
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  TensorBoardFile out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    auto fail = [&](const std::string& what) {
      throw ParseError(path, 0, "record " + std::to_string(out.records) + " at byte " + std::to_string(pos) + ": " + what);
    };
    if (bytes.size() - pos < 12) fail("truncated record header");
    const uint64_t len = GetLe(p + pos, 8);
    const uint32_t len_crc = static_cast<uint32_t>(GetLe(p + pos + 8, 4));
    if (UnmaskCrc32c(len_crc) != Crc32c(p + pos, 8)) fail("length CRC mismatch");
    if (len > bytes.size() - pos - 12 || bytes.size() - pos - 12 - len < 4) fail("truncated record data");
    const unsigned char* data = p + pos + 12;
    const uint32_t data_crc = static_cast<uint32_t>(GetLe(data + len, 4));
    if (UnmaskCrc32c(data_crc) != Crc32c(data, len)) fail("data CRC mismatch");
    tensorboard::Event e;
    if (!e.ParseFromArray(data, static_cast<int>(len))) fail("not an Event");
    if (out.records == 0) out.file_version = e.file_version();
    if (e.has_session_log() && e.session_log().status() == tensorboard::SessionLog::START) {
      out.session_starts.push_back(e.step());
    }
    if (e.has_summary()) {
      for (const auto& v : e.summary().value()) {
        out.scalars.push_back({e.step(), e.wall_time(), v.tag(), v.simple_value()});
      }
    }
    ++out.records;
    pos += 12 + len + 4;
  }
  return out;
}

}  // namespace placerl::run
