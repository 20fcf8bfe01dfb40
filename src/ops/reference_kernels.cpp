// The process-wide switch that makes every op run the reference entry of its kernel list (ops
// layer): set by `ampkit check kernels` around its reference runs, read by select_kernel and
// kernel_statuses (src/ops/kernel_registry.hpp) once per call; and the count of selections per
// thread the tests read.
#include <atomic>

#include "ampkit/ops/kernel_info.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit {
namespace {

std::atomic<bool> g_reference_kernels{false};

}  // namespace

namespace ops {
constinit thread_local std::uint64_t t_kernel_selections = 0;
}  // namespace ops

void set_reference_kernels(bool on) noexcept { g_reference_kernels.store(on, std::memory_order_relaxed); }

bool reference_kernels() noexcept { return g_reference_kernels.load(std::memory_order_relaxed); }

}  // namespace ampkit
