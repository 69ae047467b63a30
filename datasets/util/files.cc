// Input files (regular files only, bounded size, gzip) and safe output files (temporary +
// rename, refusals, signal-time cleanup, all-or-nothing groups). See files.h.
#include "datasets/util/files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "datasets/util/errors.h"

namespace placerl {
namespace {

std::string ErrnoText(int e) { return std::strerror(e); }

const char* KindOf(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

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
      throw ParseError(path, 0, "decompressed size exceeds the limit of " + std::to_string(max_bytes) + " bytes");
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

// ---- Temporary files removed at SIGINT/SIGTERM/SIGHUP -------------------------------------
// A fixed table (no allocation, no locks in the handler): a slot is 0 free, 1 being filled,
// 2 holding a path the handler unlinks.
constexpr int kSlots = 64;
constexpr size_t kMaxTempPath = 4096;
struct TempSlot {
  std::atomic<int> state{0};
  char path[kMaxTempPath];
};
TempSlot g_slots[kSlots];

extern "C" void RemoveTempsAndReraise(int sig) {
  for (TempSlot& s : g_slots) {
    if (s.state.load() == 2) ::unlink(s.path);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void InstallHandlersOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old;
      if (::sigaction(sig, nullptr, &old) != 0) continue;
      // Leave alone a signal the program ignores or handles itself.
      if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof(sa));
        sa.sa_handler = RemoveTempsAndReraise;
        sigemptyset(&sa.sa_mask);
        ::sigaction(sig, &sa, nullptr);
      }
    }
  });
}

int RegisterTemp(const std::string& path) {
  if (path.size() + 1 > kMaxTempPath) throw IoError(path + ": path too long");
  InstallHandlersOnce();
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(2);
      return i;
    }
  }
  return -1;  // table full: the file is still cleaned on every normal path
}

void UnregisterTemp(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0);
}

std::string ParentOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// mkdir -p `dir`; returns the folders it created, outermost first.
std::vector<std::string> MakeDirs(const std::string& dir) {
  std::vector<std::string> created;
  if (dir.empty()) return created;
  std::vector<std::string> missing;
  std::string d = dir;
  while (!d.empty() && d != "/" && d != ".") {
    struct stat st;
    if (::stat(d.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) throw IoError("cannot create folder " + dir + ": " + d + " is not a directory");
      break;
    }
    missing.push_back(d);
    d = ParentOf(d);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) {
      const std::string err = ErrnoText(errno);
      for (auto c = created.rbegin(); c != created.rend(); ++c) ::rmdir(c->c_str());
      throw IoError("cannot create folder " + *it + " (" + err + ")");
    }
    created.push_back(*it);
  }
  return created;
}

}  // namespace

void CheckRegularInputFile(const std::string& path) {
  if (path.empty()) throw IoError("empty file name");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw IoError(path + ": cannot open (" + ErrnoText(errno) + ")");
  if (!S_ISREG(st.st_mode)) {
    throw IoError(path + ": is " + KindOf(st.st_mode) + "; a regular file is expected");
  }
}

int UnterminatedLastLine(std::string_view text, std::string_view* last) {
  if (text.empty() || text.back() == '\n') return 0;
  const size_t nl = text.rfind('\n');
  const std::string_view line = nl == std::string_view::npos ? text : text.substr(nl + 1);
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return 0;
  if (last) *last = line;
  int lines = 1;
  for (const char* p = text.data(), *end = text.data() + text.size();
       (p = static_cast<const char*>(std::memchr(p, '\n', end - p))) != nullptr; ++p) {
    ++lines;
  }
  return lines;
}

void RefuseTruncatedLastLine(std::string_view text, const std::string& file,
                             const std::function<bool(std::string_view)>& complete) {
  std::string_view last;
  const int line = UnterminatedLastLine(text, &last);
  if (line == 0 || (complete && complete(last))) return;
  // Control bytes: binary data, not a cut text row; the reader says so itself.
  for (unsigned char c : last) {
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\v' && c != '\f') || c == 0x7f) return;
  }
  std::string shown(last.substr(0, 60));
  if (last.size() > 60) shown += "...";
  throw ParseError(file, line,
                   "no newline at end of file: the last line ('" + shown +
                       "') may be truncated, and a cut row reads as other numbers; end the file with a newline "
                       "if the line is complete");
}

std::string ReadFile(const std::string& path, size_t max_bytes) {
  CheckRegularInputFile(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path + ": cannot open (" + ErrnoText(errno) + ")");
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError(path + ": a regular file is expected");
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    ::close(fd);
    throw ParseError(path, 0, "file is " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                                  std::to_string(max_bytes) + " bytes");
  }
  std::string raw;
  raw.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = ErrnoText(errno);
      ::close(fd);
      throw IoError(path + ": read error (" + err + ")");
    }
    if (n == 0) break;
    raw.append(buf, static_cast<size_t>(n));
    if (raw.size() > max_bytes) {  // the file grew while we read it
      ::close(fd);
      throw ParseError(path, 0, "file larger than the limit of " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
      static_cast<unsigned char>(raw[1]) == 0x8b) {
    return Gunzip(path, raw, max_bytes);
  }
  return raw;
}

namespace {

// Throws unless `target` may be replaced; returns whether it exists.
bool CheckTarget(const std::string& target) {
  if (target.empty()) throw IoError("empty output file name");
  if (target.back() == '/') throw IoError(target + ": names a folder; an output file is expected");
  struct stat st;
  if (::lstat(target.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      throw IoError("refusing to replace " + target + ": it is " + KindOf(st.st_mode) + ", not a regular file");
    }
    return true;
  }
  if (errno != ENOENT && errno != ENOTDIR) throw IoError("cannot write " + target + " (" + ErrnoText(errno) + ")");
  return false;
}

}  // namespace

void CheckOutputPath(const std::string& path, const WriteOptions& options) {
  CheckTarget(path);
  // The nearest existing ancestor must be a folder we may write in (the temporary file, or the
  // folders to create, go there: a read-only file system or folder is refused now, not after
  // the work); without create_parent_dirs, the parent itself.
  std::string d = ParentOf(path);
  while (!d.empty() && d != "/") {
    struct stat st;
    if (::stat(d.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) throw IoError("cannot write " + path + ": " + d + " is not a directory");
      break;
    }
    if (!options.create_parent_dirs) {
      throw IoError("cannot write " + path + " (folder " + d + ": " + ErrnoText(errno) + ")");
    }
    d = ParentOf(d);
  }
  const std::string folder = d.empty() ? "." : d;
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throw IoError("cannot write " + path + " (folder " + folder + ": " + ErrnoText(errno) + ")");
  }
}

PendingOutput::PendingOutput(const std::string& target, const std::string& suffix, const WriteOptions& options)
    : target_(target) {
  target_existed_ = CheckTarget(target);
  temp_ = target + ".tmp." + std::to_string(::getpid()) + suffix;
  slot_ = RegisterTemp(temp_);
  if (options.create_parent_dirs) {
    try {
      created_dirs_ = MakeDirs(ParentOf(target));
    } catch (...) {
      UnregisterTemp(slot_);
      throw;
    }
  }
}

PendingOutput::~PendingOutput() {
  if (!committed_) Abort();
}

void PendingOutput::Write(const std::string& content) {
  const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) throw IoError("cannot write " + target_ + " (" + ErrnoText(errno) + ")");
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = ErrnoText(errno);
      ::close(fd);
      ::unlink(temp_.c_str());
      throw IoError("cannot write " + target_ + " (" + err + ")");
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    const std::string err = ErrnoText(errno);
    ::unlink(temp_.c_str());
    throw IoError("cannot write " + target_ + " (" + err + ")");
  }
}

void PendingOutput::Commit() {
  if (committed_) return;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const std::string err = ErrnoText(errno);
    throw IoError("cannot write " + target_ + ": renaming the temporary file failed (" + err + ")");
  }
  UnregisterTemp(slot_);
  slot_ = -1;
  committed_ = true;
}

void PendingOutput::Abort() {
  if (!committed_ && slot_ != -2) {
    ::unlink(temp_.c_str());
    UnregisterTemp(slot_);
    slot_ = -2;  // aborted
  }
  // rmdir removes only empty folders: one holding a committed file stays.
  for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) ::rmdir(it->c_str());
  created_dirs_.clear();
}

void WriteFileAtomic(const std::string& path, const std::string& content, const WriteOptions& options) {
  WriteFilesAtomic({FileToWrite{path, content}}, options);
}

void WriteFilesAtomic(const std::vector<FileToWrite>& files, const WriteOptions& options) {
  std::vector<std::unique_ptr<PendingOutput>> outs;
  auto abort_all = [&] {  // innermost first, so that created folders are empty when removed
    for (auto it = outs.rbegin(); it != outs.rend(); ++it) (*it)->Abort();
  };
  try {
    for (const FileToWrite& f : files) {
      for (const auto& o : outs) {
        if (o->target() == f.path) throw IoError(f.path + ": written twice in one output");
      }
      outs.push_back(std::make_unique<PendingOutput>(f.path, "", options));
      outs.back()->Write(f.content);
    }
  } catch (...) {
    abort_all();
    throw;
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    try {
      outs[i]->Commit();
    } catch (...) {
      for (size_t j = 0; j < i; ++j) {
        if (!outs[j]->target_existed()) ::unlink(outs[j]->target().c_str());
      }
      abort_all();
      throw;
    }
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
