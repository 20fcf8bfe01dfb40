// Host staging of the CUDA reference entries (CUDA layer; cuda_reference.hpp).
#include "cuda/common/cuda_reference.hpp"

#include <algorithm>

#include "ops/backend.hpp"

namespace ampkit::cuda {

std::size_t rows_bytes(std::int64_t rows, std::int64_t n, std::int64_t row_stride, DType t) {
  if (rows <= 0 || n <= 0) return 0;
  return static_cast<std::size_t>((rows - 1) * row_stride + n) * dtype_size(t);
}

HostStaging::HostStaging(int device_index) : device_index_(device_index) {
  ops::backend(Device::cuda).synchronize(device_index_);
}

void HostStaging::add(const void* ptr, std::size_t bytes) {
  if (ptr == nullptr || bytes == 0) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
  regions_.push_back({begin, begin + bytes, {}});
}

void HostStaging::stage_in() {
  std::sort(regions_.begin(), regions_.end(), [](const Region& a, const Region& b) { return a.begin < b.begin; });
  std::vector<Region> merged;
  for (Region& r : regions_) {
    if (!merged.empty() && r.begin < merged.back().end)
      merged.back().end = std::max(merged.back().end, r.end);
    else
      merged.push_back(std::move(r));
  }
  regions_ = std::move(merged);
  const ops::Backend& gpu = ops::backend(Device::cuda);
  for (Region& r : regions_) {
    r.bytes.resize(r.end - r.begin);
    gpu.copy_to_host(r.bytes.data(), reinterpret_cast<const void*>(r.begin), r.bytes.size(), device_index_);
  }
}

void* HostStaging::host(const void* ptr) const {
  const auto at = reinterpret_cast<std::uintptr_t>(ptr);
  for (const Region& r : regions_)
    if (ptr != nullptr && at >= r.begin && at < r.end) return const_cast<std::byte*>(r.bytes.data()) + (at - r.begin);
  return nullptr;
}

void HostStaging::stage_out() {
  const ops::Backend& gpu = ops::backend(Device::cuda);
  for (const Region& r : regions_)
    gpu.copy_to_device(reinterpret_cast<void*>(r.begin), r.bytes.data(), r.bytes.size(), device_index_);
}

}  // namespace ampkit::cuda
