// Child processes for the benchmark peers (tools layer, bench/peers/): posix_spawn with stdout
// and stderr on one pipe, read to the end, waited for. See child_process.hpp.
#include "tools/ampkit/bench/peers/child_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

extern char** environ;

namespace ampkit::tools::bench {

std::string executable_dir() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  path[n] = '\0';
  std::string p(path);
  const std::size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

std::optional<std::string> run_child(const std::vector<std::string>& argv_strings,
                                     const std::vector<std::string>& env_strings, bool search_path,
                                     const std::string& what, std::string& why) {
  std::vector<std::string> args = argv_strings, env = env_strings;
  std::vector<char*> argv, envp;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (std::string& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  int fds[2];
  if (args.empty() || pipe(fds) != 0) {
    why = what + ": pipe failed: " + std::strerror(errno);
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  // stderr into the same pipe: a failing peer's last line says why (the JSON readers skip
  // lines that are not JSON objects).
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  char** child_env = env.empty() ? environ : envp.data();
  const int rc = search_path ? posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), child_env)
                             : posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), child_env);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    why = what + ": spawn failed: " + std::strerror(rc);
    return std::nullopt;
  }
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n > 0)
      out.append(buffer, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    why = what + " exited with status " +
          std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    const std::size_t end = out.find_last_not_of("\n\r\t ");
    if (end != std::string::npos) {
      const std::size_t begin = out.find_last_of('\n', end);
      why += ": " + out.substr(begin == std::string::npos ? 0 : begin + 1,
                               end - (begin == std::string::npos ? 0 : begin + 1) + 1);
    }
    return std::nullopt;
  }
  return out;
}

namespace {

// The member `key` of the first line of `text` that is a JSON object holding it (nlohmann-json,
// no exceptions: a line that is not JSON, e.g. a peer's plain-text note, is skipped), or null.
const nlohmann::json* json_field(const std::string& text, const char* key, nlohmann::json& storage) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    storage = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(begin),
                                    text.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
    if (storage.is_object() && storage.contains(key)) return &storage[key];
    begin = end + 1;
  }
  return nullptr;
}

}  // namespace

double json_number_field(const std::string& line, const char* key) {
  nlohmann::json storage;
  const nlohmann::json* v = json_field(line, key, storage);
  return v && v->is_number() ? v->get<double>() : std::nan("");
}

std::string json_string_field(const std::string& line, const char* key) {
  nlohmann::json storage;
  const nlohmann::json* v = json_field(line, key, storage);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

}  // namespace ampkit::tools::bench
