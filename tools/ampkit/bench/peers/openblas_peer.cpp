// Spawns the OpenBLAS peer process (openblas_peer_main.cpp) and reads its JSON lines (tools
// layer, bench/peers/). Why a process of its own: OpenBLAS's threads would fight ampkit's OpenMP
// threads for the two cores, and OPENBLAS_CORETYPE=Haswell / OPENBLAS_L2_SIZE (set on this
// machine) halve its fp32 speed; the child gets them removed from its environment only. Called
// by bench/gemm_peer_phases.cpp.
#include "tools/ampkit/bench/peers/openblas_peer.hpp"

#include <unistd.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/ampkit/bench/peers/child_process.hpp"

extern char** environ;

namespace ampkit::tools::bench {

std::vector<PeerPoint> run_openblas_peer(const std::vector<PeerShape>& shapes, int threads, int reps, double min_ms,
                                         std::string& note) {
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
  for (const std::string& pair : pairs) {
    std::string shape_list;
    for (const PeerShape& s : shapes) {
      if (op_pair_name(s.op_a, s.op_b) != pair) continue;
      if (!shape_list.empty()) shape_list += ",";
      shape_list += std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    }
    std::vector<std::string> arg_strings = {program,
                                            "--shapes",
                                            shape_list,
                                            "--threads",
                                            std::to_string(threads),
                                            "--op",
                                            pair,
                                            "--reps",
                                            std::to_string(reps > 0 ? reps : 5),
                                            "--min-ms",
                                            std::to_string(static_cast<long>(min_ms > 1 ? min_ms : 1))};
    const std::optional<std::string> child = run_child(arg_strings, env_strings, false, "OpenBLAS peer", note);
    if (!child) return {};
    const std::string& out = *child;
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
