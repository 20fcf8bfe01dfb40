// ampkit::Error — the one exception type of the library (core layer).
// Every public entry point validates its arguments and throws Error with a message that names
// the function, the argument, what was expected and what was given.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ampkit {

/// Thrown by every public entry point on bad input or an unavailable feature.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

namespace detail {

/// Concatenates the streamable arguments into one string.
template <typename... Args>
std::string concat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

}  // namespace detail

/// Throws Error("<function>: <message parts...>").
template <typename... Args>
[[noreturn]] void fail(const char* function, Args&&... parts) {
  throw Error(detail::concat(function, ": ", std::forward<Args>(parts)...));
}

}  // namespace ampkit
