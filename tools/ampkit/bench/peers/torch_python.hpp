// Finds the Python interpreter that runs the PyTorch peers (tools layer, bench/peers/): the first
// of AMPKIT_PYTHON (when set), python3 on PATH and Debian's /usr/bin/python3 that imports torch
// (python3-torch installs into the system Python; a python3 on PATH may be another one).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ampkit::tools::bench {

/// The interpreter, or nothing with `why` set ("PyTorch not importable by python3 ...").
std::optional<std::string> torch_python(std::string& why);

/// `file` under bench/ of the source tree this binary was built from, or `env_override`'s value
/// when that environment variable is set.
std::string bench_script_path(const char* file, const char* env_override);

/// Runs bench/`file` (or `env_override`'s path) with that interpreter and `args`, and returns the
/// lines of its stdout that hold a JSON object; nothing, with `why` set, when PyTorch or the
/// script is missing or the script fails.
std::optional<std::vector<std::string>> run_torch_script(const char* file, const char* env_override,
                                                         const std::vector<std::string>& args, std::string& why);

}  // namespace ampkit::tools::bench
