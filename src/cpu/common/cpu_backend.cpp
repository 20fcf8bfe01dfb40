// The CPU backend (device layer): host memory (64-byte aligned), plain copies and fills, no
// stream (a CPU op has finished when it returns), and the CPU kernel lists of every op. The CPU is
// one device: device_index is not read.
#include <cstring>
#include <new>

#include "ampkit/core/error.hpp"
#include "cpu/activation/activation_kernels.hpp"
#include "cpu/conv2d/conv2d_kernels.hpp"
#include "cpu/convert/convert_kernels.hpp"
#include "cpu/elementwise/elementwise_kernels.hpp"
#include "cpu/embedding/embedding_kernels.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/optimizer/optimizer_kernels.hpp"
#include "cpu/pool2d/pool2d_kernels.hpp"
#include "cpu/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"
#include "ops/backend.hpp"
#include "ops/kernel_lists.hpp"

namespace ampkit::ops {
namespace {

constexpr std::align_val_t kAlignment{64};

KernelLists cpu_lists() {
  KernelLists l;
  l.gemm = cpu::gemm_kernels();
  l.gemm_call = cpu::gemm_call;
  l.layer_norm_forward = cpu::layer_norm_fwd_kernels();
  l.layer_norm_backward = cpu::layer_norm_bwd_kernels();
  l.rms_norm_forward = cpu::rms_norm_fwd_kernels();
  l.rms_norm_backward = cpu::rms_norm_bwd_kernels();
  l.convert = cpu::convert_kernels();
  l.gelu = cpu::gelu_kernels();
  l.elementwise = cpu::elementwise_kernels();
  l.sum_rows = cpu::sum_rows_kernels();
  l.softmax_cross_entropy_forward = cpu::softmax_cross_entropy_forward_kernels();
  l.softmax_cross_entropy_backward = cpu::softmax_cross_entropy_backward_kernels();
  l.attention_forward = ops::attention_forward_kernels();
  l.attention_backward = ops::attention_backward_kernels();
  l.embedding_forward = cpu::embedding_forward_kernels();
  l.embedding_backward = cpu::embedding_backward_kernels();
  l.pool2d = cpu::pool2d_kernels();
  l.adamw_step = cpu::adamw_kernels();
  l.sgd_step = cpu::sgd_kernels();
  l.global_grad_norm = cpu::global_grad_norm_kernels();
  l.all_finite = cpu::all_finite_kernels();
  l.multi_tensor_step = cpu::multi_tensor_step_kernels();
  l.conv2d_forward = cpu::conv2d_forward_kernels();
  l.conv2d_backward_data = cpu::conv2d_backward_data_kernels();
  l.conv2d_backward_weight = cpu::conv2d_backward_weight_kernels();
  return l;
}

class CpuBackend final : public Backend {
 public:
  CpuBackend() : Backend(Device::cpu, "cpu", lists_) {}

  bool built() const override { return true; }
  const char* unavailable() const override { return nullptr; }
  int usable_devices() const override { return 1; }
  std::string device_description(int) const override { return "cpu"; }
  const char* pointer_problem(const void*, int) const override { return nullptr; }

  void* allocate(std::size_t bytes, int) const override {
    if (bytes == 0) return nullptr;
    void* p = ::operator new(bytes, kAlignment, std::nothrow);
    if (p == nullptr)
      fail_with(ErrorKind::out_of_memory, "allocate", detail::concat("no memory for ", bytes, " bytes"));
    return p;
  }
  void deallocate(void* ptr) const noexcept override {
    if (ptr != nullptr) ::operator delete(ptr, kAlignment);
  }
  void copy_to_device(void* dst, const void* src, std::size_t bytes, int) const override { copy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes, int) const override { copy(dst, src, bytes); }
  void copy_on_device(void* dst, const void* src, std::size_t bytes, int) const override { copy(dst, src, bytes); }
  void copy_on_device_async(void* dst, const void* src, std::size_t bytes, int) const override {
    copy(dst, src, bytes);
  }
  void fill_bytes(void* dst, int byte, std::size_t bytes, int) const override {
    if (bytes != 0) std::memset(dst, byte, bytes);
  }

  void set_stream(void* stream, int) const override {
    if (stream != nullptr) fail("set_stream", "the cpu has no streams: stream must be nullptr");
  }
  void* stream(int) const override { return nullptr; }
  void synchronize(int) const override {}
  std::size_t workspace_bytes(int) const noexcept override { return 0; }
  void release_workspace(int) const override {}

 private:
  static void copy(void* dst, const void* src, std::size_t bytes) {
    if (bytes != 0) std::memmove(dst, src, bytes);
  }

  KernelLists lists_ = cpu_lists();
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuBackend b;
  return b;
}

}  // namespace ampkit::ops
