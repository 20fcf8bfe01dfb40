// Helpers of the CUDA tests (tests/cuda/): GoogleTest or, in ampkit_cuda_selftest, the shim;
// the skip on a machine without a usable GPU (with the reason); device buffers through the public
// ampkit::cuda_* calls; host operands of any dtype with fresh random values (the seed is in every
// failure message; AMPKIT_TEST_SEED replays it). Header-only so both test binaries share it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#if defined(AMPKIT_CUDA_TEST_SHIM)
#include "cuda/shim/gtest_shim.hpp"
#else
#include <gtest/gtest.h>
#endif

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "core/element.hpp"

/// Skips the test, saying why, when no CUDA device can run ampkit's kernels here.
#define AMPKIT_REQUIRE_GPU()               \
  if (::ampkit::cuda_device_count() > 0) { \
  } else                                   \
    GTEST_SKIP() << "no usable CUDA device: " << ::ampkit::cuda_unavailable_reason()

namespace ampkit::cuda_test {

inline std::uint64_t test_seed() {
  if (const char* s = std::getenv("AMPKIT_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

/// Host memory of `count` elements of `t`, with dtype-aware element access.
struct HostArray {
  DType t = DType::f32;
  std::vector<unsigned char> bytes;
  HostArray() = default;
  HostArray(DType dtype, std::int64_t count)
      : t(dtype), bytes(static_cast<std::size_t>(count > 0 ? count : 0) * dtype_size(dtype)) {}
  std::int64_t size() const { return static_cast<std::int64_t>(bytes.size() / dtype_size(t)); }
  float get(std::int64_t i) const { return cpu::load_element(bytes.data(), t, i); }
  void set(std::int64_t i, float v) { cpu::store_element(bytes.data(), t, i, v); }
  void* data() { return bytes.empty() ? nullptr : bytes.data(); }
  const void* data() const { return bytes.empty() ? nullptr : bytes.data(); }
};

/// Uniform values in [lo, hi] rounded to the array's dtype; with `subnormals`, about 1 in 16
/// f16 elements is an f16 subnormal (the fp16 modes' inputs).
inline void fill_random(HostArray& a, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f,
                        bool subnormals = false) {
  std::uniform_real_distribution<float> u(lo, hi);
  for (std::int64_t i = 0; i < a.size(); ++i) {
    float v = u(rng);
    if (subnormals && a.t == DType::f16 && rng() % 16 == 0) v = std::ldexp(v, -15);
    a.set(i, v);
  }
}

/// Device memory holding a copy of a host array (or `bytes` of poison when given no array).
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(const HostArray& host) : bytes_(host.bytes.size()) {
    ptr_ = cuda_malloc(bytes_);
    cuda_copy_to_device(ptr_, host.data(), bytes_);
  }
  DeviceArray(std::size_t bytes, int poison_byte) : bytes_(bytes) {
    ptr_ = cuda_malloc(bytes_);
    cuda_fill_bytes(ptr_, poison_byte, bytes_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceArray() { cuda_free(ptr_); }
  void* get() const { return ptr_; }
  /// The device bytes copied back into a host array of dtype t.
  HostArray to_host(DType t) const {
    HostArray h(t, static_cast<std::int64_t>(bytes_ / dtype_size(t)));
    cuda_synchronize();
    cuda_copy_to_host(h.data(), ptr_, bytes_);
    return h;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Every list's reference entry while in scope (when `on`): on the host the CPU's double
// reference (the oracle of error_bounds.hpp), on the GPU the CUDA list's reference entry, which
// runs that CPU reference on host copies of the operands (src/cuda/common/cuda_reference.hpp).
struct ReferenceOnly {
  explicit ReferenceOnly(bool on = true) : on_(on) {
    if (on_) set_reference_kernels(true);
  }
  ~ReferenceOnly() {
    if (on_) set_reference_kernels(false);
  }
  ReferenceOnly(const ReferenceOnly&) = delete;
  ReferenceOnly& operator=(const ReferenceOnly&) = delete;

 private:
  bool on_;
};

// Each GPU call runs three times: twice on the list's first entry (the same bits both times),
// then (run kCudaReference) on the CUDA reference entry, whose bits must be the CPU reference's:
// so the fast entry's comparison with the CPU reference is its comparison with the CUDA one.
inline constexpr int kRuns = 3;
inline constexpr int kCudaReference = 2;

/// The unit roundoff of a dtype (2^-24, 2^-8, 2^-11).
inline double unit_roundoff(DType t) { return t == DType::f32 ? 0x1p-24 : t == DType::bf16 ? 0x1p-8 : 0x1p-11; }

// The message of the Error `call` throws ("" when it throws none), and its kind.
template <class F>
std::string error_of(F call, ErrorKind* kind = nullptr) {
  try {
    call();
  } catch (const Error& e) {
    if (kind != nullptr) *kind = e.kind();
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace ampkit::cuda_test
