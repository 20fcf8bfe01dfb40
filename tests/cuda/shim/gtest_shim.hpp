// A small GoogleTest-compatible shim for the CUDA tests (tests layer): only what tests/cuda/ uses
// (TEST, EXPECT_TRUE, EXPECT_EQ, ASSERT_TRUE, ADD_FAILURE, GTEST_SKIP, each streaming a message).
// The GPU machine has no GoogleTest; ampkit_cuda_selftest builds the same test files on this and
// prints PASS / FAIL / SKIP per case (standalone_main.cpp). Not a general test framework.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace shim {

struct Case {
  const char* suite;
  const char* name;
  void (*body)();
};

std::vector<Case>& registry();

struct Registrar {
  Registrar(const char* suite, const char* name, void (*body)()) { registry().push_back({suite, name, body}); }
};

/// The outcome of the running case.
struct Outcome {
  int failures = 0;
  bool skipped = false;
  std::string skip_reason;
};
Outcome& outcome();

/// Collects the streamed message; records a failure (or a skip) when destroyed.
class Report {
 public:
  Report(const char* file, int line, const char* what, bool skip)
      : file_(file), line_(line), what_(what), skip_(skip) {}
  Report(const Report&) = delete;
  template <class T>
  Report& operator<<(const T& value) {
    message_ << value;
    return *this;
  }
  ~Report();

 private:
  const char* file_;
  int line_;
  const char* what_;
  bool skip_;
  std::ostringstream message_;
};

/// Lets `return Stop() = Report(...) << ...;` end a void test body after the message.
struct Stop {
  void operator=(const Report&) const {}
};

}  // namespace shim

#define TEST(suite, name)                                                                          \
  static void suite##_##name##_body();                                                             \
  static const ::shim::Registrar suite##_##name##_registrar(#suite, #name, suite##_##name##_body); \
  static void suite##_##name##_body()

#define EXPECT_TRUE(cond) \
  if (cond) {             \
  } else                  \
    ::shim::Report(__FILE__, __LINE__, "expected: " #cond, false)
#define EXPECT_EQ(a, b) \
  if ((a) == (b)) {     \
  } else                \
    ::shim::Report(__FILE__, __LINE__, "expected: " #a " == " #b, false)
#define ASSERT_TRUE(cond) \
  if (cond) {             \
  } else                  \
    return ::shim::Stop() = ::shim::Report(__FILE__, __LINE__, "required: " #cond, false)
#define ADD_FAILURE() ::shim::Report(__FILE__, __LINE__, "failure", false)
#define GTEST_SKIP() return ::shim::Stop() = ::shim::Report(__FILE__, __LINE__, "skipped", true)
