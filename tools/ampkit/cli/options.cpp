// The typed option parser of the `ampkit` subcommands (tools layer, cli/): conversion of each
// value, the errors (UsageError, one line each) and the generated --help. See options.hpp.
#include "tools/ampkit/cli/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "tools/ampkit/cli/dispatch.hpp"

namespace ampkit::tools::cli {
namespace {

// Levenshtein distance (insertions, deletions, substitutions; an adjacent swap counts 2).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string nearest_option(std::string_view given, const std::vector<std::string>& names) {
  // The closest name within 2 edits (a typo: --stpes, --chekpoint), or the only name the given
  // text begins (--check for --checkpoint when no other option starts so); "" when none or a tie.
  std::string best;
  std::size_t best_distance = 3;
  bool tie = false;
  for (const std::string& n : names) {
    const std::size_t d = edit_distance(given, n);
    if (d < best_distance)
      best = n, best_distance = d, tie = false;
    else if (d == best_distance)
      tie = true;
  }
  if (!best.empty() && !tie) return best;
  std::string prefixed;
  for (const std::string& n : names)
    if (given.size() >= 4 && n.starts_with(given)) {
      if (!prefixed.empty()) return "";
      prefixed = n;
    }
  return prefixed;
}

double parse_number(std::string_view text, std::string_view option, double lo, double hi) {
  double v = 0.0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v) || v < lo ||
      v > hi)
    usage_fail(option, " expects a number in [", lo, ", ", hi, "], but got '", text, "'");
  return v;
}

OptionParser::OptionParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

OptionParser& OptionParser::add(Option option) {
  for (const Option& o : options_)
    if (o.name == option.name) throw std::logic_error("OptionParser: option " + option.name + " added twice");
  options_.push_back(std::move(option));
  return *this;
}

OptionParser& OptionParser::flag(std::string_view name, bool* out, std::string_view help) {
  *out = false;
  return add({std::string(name), "", std::string(help), false, [out](std::string_view) { *out = true; }});
}

OptionParser& OptionParser::text(std::string_view name, std::string_view metavar, std::optional<std::string>* out,
                                 std::string_view help) {
  return add({std::string(name), std::string(metavar), std::string(help), true,
              [out](std::string_view v) { *out = std::string(v); }});
}

OptionParser& OptionParser::choice(std::string_view name, std::initializer_list<std::string_view> choices,
                                   std::optional<std::string>* out, std::string_view help) {
  std::string list;
  for (std::string_view c : choices) list.append(list.empty() ? "" : "|").append(c);
  std::vector<std::string> allowed(choices.begin(), choices.end());
  const std::string option(name);
  return add({option, list, std::string(help), true, [out, allowed, list, option](std::string_view v) {
                for (const std::string& c : allowed)
                  if (c == v) {
                    *out = c;
                    return;
                  }
                usage_fail(option, " expects one of ", list, ", but got '", v, "'");
              }});
}

OptionParser& OptionParser::integer(std::string_view name, std::string_view metavar, std::int64_t lo, std::int64_t hi,
                                    std::optional<std::int64_t>* out, std::string_view help) {
  const std::string option(name);
  return add({option, std::string(metavar), std::string(help), true,
              [out, option, lo, hi](std::string_view v) { *out = parse_int(v, option, lo, hi); }});
}

OptionParser& OptionParser::positive_number(std::string_view name, std::string_view metavar, std::optional<double>* out,
                                            std::string_view help) {
  const std::string option(name);
  return add({option, std::string(metavar), std::string(help), true, [out, option](std::string_view v) {
                const std::string text(v);
                char* end = nullptr;
                const double value = std::strtod(text.c_str(), &end);
                if (end == text.c_str() || *end != '\0' || !(value > 0.0) || !std::isfinite(value))
                  usage_fail(option, " expects a positive finite number, but got '", v, "'");
                *out = value;
              }});
}

OptionParser& OptionParser::integer_list(std::string_view name, std::string_view metavar, std::int64_t lo,
                                         std::int64_t hi, std::vector<int>* out, std::string_view help) {
  const std::string option(name);
  return add({option, std::string(metavar), std::string(help), true, [out, option, lo, hi](std::string_view v) {
                out->clear();
                for (const std::string& item : split_list(v))
                  out->push_back(static_cast<int>(parse_int(item, option, lo, hi)));
                if (out->empty()) usage_fail(option, " expects a list like 1,2, but got '", v, "'");
              }});
}

OptionParser& OptionParser::thread_list(std::string_view name, std::vector<int>* out, std::string_view help) {
  const std::string option(name);
  return add({option, "1,2|all", std::string(help), true, [out, option](std::string_view v) {
                out->clear();
                if (v == "all") {
                  const int cores = static_cast<int>(std::thread::hardware_concurrency());
                  out->push_back(1);
                  if (cores > 1) out->push_back(std::min(cores, kMaxThreads));
                  return;
                }
                for (const std::string& item : split_list(v))
                  out->push_back(static_cast<int>(parse_int(item, option, 1, kMaxThreads)));
                if (out->empty()) usage_fail(option, " expects a list like 1,2 or 'all', but got '", v, "'");
              }});
}

OptionParser& OptionParser::footer(std::string_view text) {
  footer_ = text;
  return *this;
}

bool OptionParser::parse(const Args& args) {
  for (const std::string& a : args)
    if (a == "-h" || a == "--help") {
      std::fputs(help().c_str(), stdout);
      return false;
    }
  std::vector<std::string> given;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string value;
    bool inline_value = false;
    if (const std::size_t eq = name.find('='); name.starts_with("--") && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      inline_value = true;
    }
    const Option* option = nullptr;
    for (const Option& o : options_)
      if (o.name == name) option = &o;
    if (option == nullptr) {
      if (!name.starts_with("-")) usage_fail("unexpected argument '", args[i], "' (options start with --)");
      std::vector<std::string> names;
      for (const Option& o : options_) names.push_back(o.name);
      const std::string near = nearest_option(name, names);
      if (!near.empty())
        usage_fail("unknown option '", name, "' (did you mean ", near, "? ampkit ", command_,
                   " --help lists the options)");
      usage_fail("unknown option '", name, "' (ampkit ", command_, " --help lists the options)");
    }
    for (const std::string& g : given)
      if (g == name) usage_fail("option ", name, " given twice");
    given.push_back(name);
    if (!option->takes_value) {
      if (inline_value) usage_fail("option ", name, " takes no value, but got '", value, "'");
      option->set("");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) usage_fail("option ", name, " expects a value (", option->metavar, "), but got none");
      value = args[++i];
    }
    if (value.empty()) usage_fail("option ", name, " expects a value (", option->metavar, "), but got an empty string");
    option->set(value);
  }
  return true;
}

std::string OptionParser::help() const {
  std::string out = "usage: ampkit " + command_ + (options_.empty() ? "" : " [options]") + "\n" + summary_ + "\n";
  if (!options_.empty()) out += "options:\n";
  auto add_row = [&out](const std::string& label, const std::string& help) {
    std::string line = "  " + label;
    line.resize(std::max<std::size_t>(line.size() + 2, 24), ' ');
    // Continuation lines of a multi-line help start under the first.
    std::size_t start = 0;
    for (;;) {
      const std::size_t nl = help.find('\n', start);
      out += line + help.substr(start, nl == std::string::npos ? std::string::npos : nl - start) + "\n";
      if (nl == std::string::npos) break;
      line.assign(std::max<std::size_t>(label.size() + 4, 24), ' ');
      start = nl + 1;
    }
  };
  for (const Option& o : options_) add_row(o.takes_value ? o.name + " " + o.metavar : o.name, o.help);
  add_row("-h, --help", "this text");
  if (!footer_.empty()) out += footer_ + (footer_.ends_with('\n') ? "" : "\n");
  return out;
}

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) items.emplace_back(item);
    start = end + 1;
  }
  return items;
}

std::int64_t parse_int(std::string_view text, std::string_view what, std::int64_t lo, std::int64_t hi) {
  std::int64_t value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || result.ec != std::errc() || result.ptr != text.data() + text.size())
    usage_fail(what, " expects an integer in [", lo, ", ", hi, "], but got '", text, "'");
  if (value < lo || value > hi) usage_fail(what, " expects an integer in [", lo, ", ", hi, "], but got ", value);
  return value;
}

}  // namespace ampkit::tools::cli
