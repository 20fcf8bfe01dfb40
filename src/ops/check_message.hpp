// The non-throwing *_check form of a front end whose validation throws (ops layer, internal):
// the call is decoded exactly as the op decodes it, and the Error it would throw becomes the
// message. Used by the front ends in src/ops/<op>/.
#pragma once

#include <string>

#include "ampkit/core/error.hpp"

namespace ampkit::ops {

/// "" when `validate()` returns, otherwise the message of the Error it throws. Never throws.
template <class Validate>
std::string check_message(const char* fn, Validate&& validate) noexcept {
  try {
    validate();
    return {};
  } catch (const Error& e) {
    return e.what();
  } catch (...) {
    return std::string(fn) + ": out of memory while validating the arguments";
  }
}

}  // namespace ampkit::ops
