// Shared test helpers: fresh random inputs (seed printed on failure), poisoned outputs,
// dtype rounding, and the list of ISAs this machine can run.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/float16.hpp"
#include "ampkit/device/cpu.hpp"

namespace ampkit::testing {

/// A fresh seed per call (from std::random_device), recorded as a test property and in
/// SCOPED_TRACE by the caller so a failure can be replayed with AMPKIT_TEST_SEED.
std::uint64_t fresh_seed();

/// Allocates on 64-byte boundaries (a cache line, an AVX-512 vector), so that kernels with
/// aligned fast paths (the norms' streaming stores) take them in tests as they do on the
/// benchmark's buffers; tests that want misaligned data offset into a buffer.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};
using Bytes = std::vector<unsigned char, CacheLineAllocator<unsigned char>>;

/// A buffer of `n` elements of dtype `t`, stored as raw bytes, 64-byte aligned.
struct Buffer {
  DType dtype = DType::f32;
  Bytes bytes;
  Buffer() = default;
  Buffer(DType t, std::int64_t n) : dtype(t), bytes(static_cast<std::size_t>(n) * dtype_size(t)) {}
  std::int64_t size() const { return static_cast<std::int64_t>(bytes.size() / dtype_size(dtype)); }
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  /// Element i widened to double.
  double get(std::int64_t i) const;
  /// Stores v rounded (nearest even) to the dtype.
  void set(std::int64_t i, double v);
  /// Fills with NaN bit patterns so an element the kernel forgot to write shows up.
  void poison();
  /// Fills with values drawn from N(mean, stddev), rounded to the dtype.
  void fill_normal(std::mt19937_64& rng, double mean, double stddev);
};

/// The tanh-form GELU and its derivative in double: the plain references tests compare with.
double gelu_tanh(double x);
double gelu_tanh_derivative(double x);

/// Unit roundoff of a dtype: 2^-24 (f32), 2^-8 (bf16), 2^-11 (f16).
double unit_roundoff(DType t);

/// ISAs this machine can run (ref always), best last. Tests loop over them with IsaScope.
std::vector<Isa> available_isas();

/// Sets the ISA cap for the scope and restores the previous one after.
class IsaScope {
 public:
  explicit IsaScope(Isa isa);
  ~IsaScope();
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  Isa previous_;
};

/// Sets the thread count for the scope and restores the previous one after.
class ThreadsScope {
 public:
  explicit ThreadsScope(int n);
  ~ThreadsScope();
  ThreadsScope(const ThreadsScope&) = delete;
  ThreadsScope& operator=(const ThreadsScope&) = delete;

 private:
  int previous_;
};

}  // namespace ampkit::testing
