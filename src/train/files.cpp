// Reading inputs and writing outputs atomically for `ampkit train` (train layer).
// POSIX calls (open/fsync/rename) so that the flush to disk and the rename are explicit.
#include "ampkit/train/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "ampkit/core/error.hpp"
#include "train/gzip.hpp"

namespace ampkit::train {
namespace {

std::string quoted(const std::string& path) { return "'" + path + "'"; }

[[noreturn]] void fail_errno(std::string_view role, const std::string& path, const char* doing, int err) {
  throw Error(detail::concat(role, " ", quoted(path), ": cannot ", doing, ": ", std::strerror(err)));
}

// Closes a descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void write_all(int fd, std::string_view bytes, std::string_view role, const std::string& path) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(role, path, "write", errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string parent_folder(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string read_data_file(const std::string& path, std::string_view role, std::uint64_t max_bytes) {
  std::string bytes = read_file(path, role, max_bytes);
  if (!is_gzip(bytes)) return bytes;
  return gunzip(bytes, max_bytes, detail::concat(role, " ", quoted(path)));
}

std::string read_file(const std::string& path, std::string_view role, std::uint64_t max_bytes) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) fail_errno(role, path, "open it", errno);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail_errno(role, path, "read its size", errno);
  if (S_ISDIR(st.st_mode)) throw Error(detail::concat(role, " ", quoted(path), ": is a folder, not a file"));
  if (!S_ISREG(st.st_mode)) throw Error(detail::concat(role, " ", quoted(path), ": is not a regular file"));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    throw Error(detail::concat(role, " ", quoted(path), ": is ", size, " bytes; at most ", max_bytes, " are accepted"));
  std::string bytes(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(f.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(role, path, "read it", errno);
    }
    if (n == 0) break;  // shrank while read: keep what is there
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view role) {
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  {
    Fd f;
    f.fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f.fd < 0) fail_errno(role, path, ("create " + quoted(temp)).c_str(), errno);
    try {
      write_all(f.fd, bytes, role, path);
      if (::fsync(f.fd) != 0) fail_errno(role, path, "flush it to disk", errno);
    } catch (...) {
      ::unlink(temp.c_str());
      throw;
    }
    const int fd = f.fd;
    f.fd = -1;
    if (::close(fd) != 0) {
      const int err = errno;
      ::unlink(temp.c_str());
      fail_errno(role, path, "close it", err);
    }
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail_errno(role, path, ("rename " + quoted(temp) + " to it").c_str(), err);
  }
  // The rename itself is durable once the folder is flushed (best effort: some file systems
  // refuse fsync on a folder).
  Fd dir;
  dir.fd = ::open(parent_folder(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir.fd >= 0) (void)::fsync(dir.fd);
}

void check_output_path(const std::string& path, std::string_view option) {
  const std::string folder = parent_folder(path);
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0)
    throw Error(detail::concat(option, " ", quoted(path), ": the folder ", quoted(folder), " ",
                               errno == ENOENT ? "does not exist" : std::strerror(errno)));
  if (!S_ISDIR(st.st_mode))
    throw Error(detail::concat(option, " ", quoted(path), ": ", quoted(folder), " is not a folder"));
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(detail::concat(option, " ", quoted(path), ": is a folder; expected a file name"));
  const std::string probe = path + ".probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(detail::concat(option, " ", quoted(path), ": cannot create a file in ", quoted(folder), ": ",
                               std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace ampkit::train
