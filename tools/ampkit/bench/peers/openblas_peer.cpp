// Spawns the OpenBLAS peer process (openblas_peer_main.cpp) and reads its JSON lines (tools
// layer, bench/peers/). Why a process of its own: OpenBLAS's threads would fight ampkit's OpenMP
// threads for the two cores, and OPENBLAS_CORETYPE=Haswell / OPENBLAS_L2_SIZE (set on this
// machine) halve its fp32 speed; the child gets them removed from its environment only. Called
// by bench/gemm_peer_phases.cpp.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/ampkit/bench/peers/openblas_peer.hpp"

extern char** environ;

namespace ampkit::tools::bench {
namespace {

std::string executable_dir() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  path[n] = '\0';
  std::string p(path);
  const std::size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

// The number after "key": in a JSON line, NaN when absent.
double json_number_field(const std::string& line, const char* key) {
  const std::string pattern = std::string("\"") + key + "\":";
  const std::size_t at = line.find(pattern);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(line.c_str() + at + pattern.size(), nullptr);
}

std::string json_string_field(const std::string& line, const char* key) {
  const std::string pattern = std::string("\"") + key + "\":\"";
  const std::size_t at = line.find(pattern);
  if (at == std::string::npos) return "";
  const std::size_t end = line.find('"', at + pattern.size());
  return line.substr(at + pattern.size(), end - at - pattern.size());
}

}  // namespace

std::vector<PeerPoint> run_openblas_peer(const std::vector<PeerShape>& shapes, int threads,
                                         int reps, double min_ms, std::string& note) {
  std::vector<PeerPoint> points;
#if !AMPKIT_HAVE_OPENBLAS
  (void)shapes, (void)threads, (void)reps, (void)min_ms;
  note = "OpenBLAS peer not built (install libopenblas-dev and re-run cmake)";
  return points;
#else
  if (shapes.empty()) return points;
  const std::string program = executable_dir() + "/ampkit_openblas_peer";
  if (access(program.c_str(), X_OK) != 0) {
    note = "OpenBLAS peer " + program + " not found (build target ampkit_openblas_peer)";
    return points;
  }
  // One child per op pair: the peer takes one --op for all its shapes.
  std::vector<std::string> pairs;
  for (const PeerShape& s : shapes) {
    const std::string p = op_pair_name(s.op_a, s.op_b);
    bool seen = false;
    for (const std::string& q : pairs) seen = seen || q == p;
    if (!seen) pairs.push_back(p);
  }
  // The child's environment: ours without the OpenBLAS tuning variables, with its thread count.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string_view v(*e);
    if (v.starts_with("OPENBLAS_CORETYPE=") || v.starts_with("OPENBLAS_L2_SIZE=") ||
        v.starts_with("OPENBLAS_NUM_THREADS="))
      continue;
    env_strings.emplace_back(v);
  }
  env_strings.push_back("OPENBLAS_NUM_THREADS=" + std::to_string(threads));
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  for (const std::string& pair : pairs) {
    std::string shape_list;
    for (const PeerShape& s : shapes) {
      if (op_pair_name(s.op_a, s.op_b) != pair) continue;
      if (!shape_list.empty()) shape_list += ",";
      shape_list += std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    }
    std::vector<std::string> arg_strings = {program, "--shapes", shape_list, "--threads",
                                            std::to_string(threads), "--op", pair, "--reps",
                                            std::to_string(reps > 0 ? reps : 5), "--min-ms",
                                            std::to_string(static_cast<long>(min_ms > 1 ? min_ms : 1))};
    std::vector<char*> argv;
    for (std::string& s : arg_strings) argv.push_back(s.data());
    argv.push_back(nullptr);

    int fds[2];
    if (pipe(fds) != 0) {
      note = std::string("OpenBLAS peer: pipe failed: ") + std::strerror(errno);
      return {};
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      note = "OpenBLAS peer: spawn failed: " + std::string(std::strerror(rc));
      return {};
    }
    std::string out;
    char buffer[4096];
    for (;;) {
      const ssize_t n = read(fds[0], buffer, sizeof(buffer));
      if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      note = "OpenBLAS peer exited with status " + std::to_string(status);
      return {};
    }
    std::size_t start = 0;
    while (start < out.size()) {
      std::size_t end = out.find('\n', start);
      if (end == std::string::npos) end = out.size();
      const std::string line = out.substr(start, end - start);
      start = end + 1;
      if (line.find("\"gflops\"") == std::string::npos) continue;
      PeerPoint p;
      p.shape.m = static_cast<std::int64_t>(json_number_field(line, "m"));
      p.shape.n = static_cast<std::int64_t>(json_number_field(line, "n"));
      p.shape.k = static_cast<std::int64_t>(json_number_field(line, "k"));
      p.shape.op_a = pair[0] == 't' ? Op::T : Op::N;
      p.shape.op_b = pair[1] == 't' ? Op::T : Op::N;
      p.threads = threads;
      p.ms = json_number_field(line, "ms");
      p.gflops = json_number_field(line, "gflops");
      points.push_back(p);
      note = "OpenBLAS core " + json_string_field(line, "openblas_core") +
             ", OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset for the peer";
    }
  }
  return points;
#endif
}

}  // namespace ampkit::tools::bench
