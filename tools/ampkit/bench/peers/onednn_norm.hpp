// oneDNN's layer normalization as the peer of `ampkit bench norm` (tools layer, bench/peers/;
// benchmarks only, never part of the library). Compiled to something only when
// AMPKIT_HAVE_ONEDNN is set (CMake finds libdnnl); bench/norm.cpp guards its use the same way. oneDNN 2.6 has no
// RMSNorm.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ampkit/core/dtype.hpp"

namespace ampkit::tools {

#if AMPKIT_HAVE_ONEDNN

/// The buffers of one layer-norm case, shared with the ampkit measurement where the layouts
/// agree (x, y, dy, dx, gamma, beta, dgamma, dbeta: [rows, n] row-major / [n]). oneDNN keeps
/// mean and *variance* (not rstd), so it gets statistics buffers of its own.
struct OnednnNormBuffers {
  const void* x = nullptr;
  void* y = nullptr;
  const void* dy = nullptr;
  void* dx = nullptr;
  const float* gamma = nullptr;  // f32 only: oneDNN 2.6 takes scale/shift in f32
  const float* beta = nullptr;
  float* dgamma = nullptr;
  float* dbeta = nullptr;
  float* mean = nullptr;      // [rows]
  float* variance = nullptr;  // [rows]
};

/// oneDNN layer normalization (training forward with scale and shift, saving mean and
/// variance; backward computing dx, dscale, dshift) for one shape and dtype mix. Construction
/// never throws for an unsupported case: available() is false and reason() says why.
class OnednnLayerNorm {
 public:
  OnednnLayerNorm(std::int64_t rows, std::int64_t n, DType x_dtype, DType param_dtype, float eps,
                  const OnednnNormBuffers& buffers);
  ~OnednnLayerNorm();
  OnednnLayerNorm(const OnednnLayerNorm&) = delete;
  OnednnLayerNorm& operator=(const OnednnLayerNorm&) = delete;

  bool available() const { return reason_.empty(); }
  const std::string& reason() const { return reason_; }
  /// oneDNN's implementation names (e.g. "jit:uni"), for the forward and the backward.
  const std::string& forward_impl() const { return forward_impl_; }
  const std::string& backward_impl() const { return backward_impl_; }
  /// Runs the forward / backward primitive with omp_get_max_threads() threads. Only when
  /// available(); the backward reads the mean and variance of a forward run before it.
  void forward();
  void backward();

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::string reason_;
  std::string forward_impl_;
  std::string backward_impl_;
};

/// "oneDNN 2.6.3 (cpu runtime: OpenMP)" of the library linked in.
std::string onednn_version();

#endif  // AMPKIT_HAVE_ONEDNN

}  // namespace ampkit::tools
