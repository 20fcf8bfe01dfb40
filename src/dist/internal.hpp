// What the communicators of src/dist/ share (dist layer, internal): the abort message and the
// timeout setting read from the environment.
#pragma once

#include <string_view>

namespace ampkit::dist::detail {

/// Prints "ampkit: rank R of N: <message>" as one line on stderr (flushed).
void print_rank_message(int rank, int size, std::string_view message) noexcept;

/// The seconds of MpiOptions::timeout_s: `given` when > 0, else AMPKIT_DIST_TIMEOUT_S, else 300.
/// Throws Error naming the variable on a value that is not a positive number.
double collective_timeout_s(double given);

}  // namespace ampkit::dist::detail
