// Launch shapes of the simple training-graph kernels (CUDA layer, internal): grid-stride loops
// over a flat range, so any grid covers any size; the grid is capped well below CUDA's limit.
// Every element or row is computed by one thread or one block in a fixed way, so the bits never
// depend on the grid. Included by the .cu files of src/cuda/<op>/.
#pragma once

#include <cstdint>

namespace ampkit::cuda {

inline constexpr int kFlatThreads = 256;
inline constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;

/// Blocks of kFlatThreads for `total` elements, one element a thread (at least 1, at most kMaxBlocks).
inline unsigned flat_blocks(std::int64_t total) {
  std::int64_t blocks = (total + kFlatThreads - 1) / kFlatThreads;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

/// One block a row for `rows` rows (at least 1, at most kMaxBlocks; blocks stride over the rest).
inline unsigned row_blocks(std::int64_t rows) {
  const std::int64_t blocks = rows < 1 ? 1 : rows;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

/// The flat index of this thread and the grid's stride.
__device__ __forceinline__ std::int64_t flat_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t flat_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

}  // namespace ampkit::cuda
