// ampkit::Error — the one exception type of the library (core layer), with a category.
// Every public entry point validates its arguments and throws Error with a message that names
// the function, the argument, what was expected and what was given (docs/DESIGN.md section 7).
// The category lets the command line map errors to exit codes and bindings to their exceptions.
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace ampkit {

/// What kind of failure an Error reports.
enum class ErrorKind : std::uint8_t {
  invalid_argument,  // the caller passed something the function does not accept
  unsupported,       // valid, but this build, machine or backend cannot do it
  out_of_memory,     // an allocation the call needed failed
  internal,          // a bug in ampkit (an invariant did not hold)
};

/// "invalid argument", "unsupported", "out of memory" or "internal".
constexpr std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_argument: return "invalid argument";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::out_of_memory: return "out of memory";
    case ErrorKind::internal: return "internal";
  }
  return "?";
}

/// Thrown by every public entry point on bad input, an unavailable feature, a failed allocation
/// or a broken invariant; kind() says which.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorKind kind = ErrorKind::invalid_argument)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
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

/// Throws Error("<function>: <message parts...>") of kind invalid_argument.
template <typename... Args>
[[noreturn]] void fail(const char* function, Args&&... parts) {
  throw Error(detail::concat(function, ": ", std::forward<Args>(parts)...));
}

/// Throws Error("<function>: <message parts...>") of the given kind.
template <typename... Args>
[[noreturn]] void fail_with(ErrorKind kind, const char* function, Args&&... parts) {
  throw Error(detail::concat(function, ": ", std::forward<Args>(parts)...), kind);
}

}  // namespace ampkit
