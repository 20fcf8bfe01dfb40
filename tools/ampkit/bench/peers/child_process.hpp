// Runs a peer program as a child process and captures its stdout (tools layer, bench/peers/).
// Peers run in processes of their own so that their threads never share the process with
// ampkit's OpenMP threads, and so that their environment can differ (openblas_peer.cpp). Used by
// the OpenBLAS peer and the PyTorch training-step peer.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ampkit::tools::bench {

/// The directory of the running executable ("." when unknown).
std::string executable_dir();

/// Runs argv[0] (a path, or a name looked up on PATH when `search_path`) with `argv` and the
/// environment `env` ("NAME=value" strings; this process's environment when empty), waits, and
/// returns its stdout and stderr, interleaved as written (the callers read JSON lines and skip the
/// rest). On a spawn failure or a non-zero exit, returns nothing and sets `why` ("<what>: spawn
/// failed: ...", "<what> exited with status 1: <its last line of output>").
std::optional<std::string> run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                     bool search_path, const std::string& what, std::string& why);

/// The number `key` of the first line of `text` that is a JSON object holding it (nlohmann-json);
/// NaN when no line has it or it is not a number.
double json_number_field(const std::string& text, const char* key);
/// The string `key` likewise (unescaped); empty when no line has it or it is not a string.
std::string json_string_field(const std::string& text, const char* key);

}  // namespace ampkit::tools::bench
