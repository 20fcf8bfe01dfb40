// Option parsing of the `ampkit` subcommands (tools layer, cli/): one parser with typed options,
// generated --help, and UsageError for anything wrong on the command line (exit 2, one line on
// stderr; see cli/dispatch.hpp). Every subcommand builds one OptionParser; tests/tools tests it.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ampkit/core/error.hpp"

namespace ampkit::tools {

/// The arguments after the (sub)command name.
using Args = std::vector<std::string>;

namespace cli {

/// Something wrong on the command line: an unknown option, a missing or bad value, a limit of
/// the command exceeded. Distinct from ampkit::Error (which the library throws); exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws UsageError with the concatenated parts.
template <typename... Parts>
[[noreturn]] void usage_fail(Parts&&... parts) {
  throw UsageError(ampkit::detail::concat(std::forward<Parts>(parts)...));
}

/// The "did you mean" of an unknown option: the one name of `names` within two edits of `given`
/// (the nearest; none on a tie), else the one name that `given` (4+ characters) begins; "" if none.
std::string nearest_option(std::string_view given, const std::vector<std::string>& names);

/// The option value `text` as a finite number in [lo, hi] (bounds inclusive); throws
/// UsageError naming `option` otherwise.
double parse_number(std::string_view text, std::string_view option, double lo, double hi);

/// The options of one subcommand, each bound to a typed destination, parsed once.
/// Accepts "--name value", "--name=value", and -h / --help; an option may be given once.
class OptionParser {
 public:
  /// `command`: "bench gemm"; `summary`: one line under the usage line of --help.
  OptionParser(std::string command, std::string summary);

  /// A flag without a value.
  OptionParser& flag(std::string_view name, bool* out, std::string_view help);
  /// Any non-empty text (a list the command parses itself, a name).
  OptionParser& text(std::string_view name, std::string_view metavar, std::optional<std::string>* out,
                     std::string_view help);
  /// One of `choices`.
  OptionParser& choice(std::string_view name, std::initializer_list<std::string_view> choices,
                       std::optional<std::string>* out, std::string_view help);
  /// A whole decimal integer in [lo, hi].
  OptionParser& integer(std::string_view name, std::string_view metavar, std::int64_t lo, std::int64_t hi,
                        std::optional<std::int64_t>* out, std::string_view help);
  /// A positive finite number.
  OptionParser& positive_number(std::string_view name, std::string_view metavar, std::optional<double>* out,
                                std::string_view help);
  /// A comma list of integers, each in [lo, hi] ("1,2").
  OptionParser& integer_list(std::string_view name, std::string_view metavar, std::int64_t lo, std::int64_t hi,
                             std::vector<int>* out, std::string_view help);
  /// Thread counts: a comma list, each in [1, kMaxThreads], or "all" (1 and every core of the
  /// machine).
  OptionParser& thread_list(std::string_view name, std::vector<int>* out, std::string_view help);
  /// Text printed after the option list of --help (conventions, units).
  OptionParser& footer(std::string_view text);

  /// Parses `args` into the destinations. Returns false when -h / --help was given (then the
  /// help is printed to stdout and nothing else is parsed). Throws UsageError.
  bool parse(const Args& args);
  /// The --help text.
  std::string help() const;
  const std::string& command() const { return command_; }

 private:
  struct Option {
    std::string name, metavar, help;
    bool takes_value = true;
    std::function<void(std::string_view)> set;  // converts and stores; throws UsageError
  };
  OptionParser& add(Option option);

  std::string command_, summary_, footer_;
  std::vector<Option> options_;
};

/// "a,b,,c" -> {"a","b","c"}; surrounding spaces trimmed, empty items dropped.
std::vector<std::string> split_list(std::string_view text, char separator = ',');
/// A whole decimal integer in [lo, hi]; throws UsageError "<what> expects an integer in
/// [lo, hi], but got '<text>'".
std::int64_t parse_int(std::string_view text, std::string_view what, std::int64_t lo, std::int64_t hi);

}  // namespace cli
}  // namespace ampkit::tools
