// The front end of every communicator (dist layer): argument checks of the collectives, the chunk
// layout, the rank-order reduction all host communicators compute with, the default factory and
// the abort path. The engines behind it: local_communicator.cpp, mpi/, nccl/.
#include "ampkit/dist/communicator.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <type_traits>

#include "ampkit/core/error.hpp"
#include "ampkit/core/float16.hpp"
#include "dist/internal.hpp"

namespace ampkit::dist {
namespace {

bool valid_dtype(DType dtype) { return dtype_name(dtype) != "?"; }

void check_dtype_op(const char* fn, DType dtype, ReduceOp op) {
  if (!valid_dtype(dtype)) fail(fn, "dtype must be f32, bf16, f16 or i32, given the value ", static_cast<int>(dtype));
  if (reduce_op_name(op) == "?") fail(fn, "op must be sum or max, given the value ", static_cast<int>(op));
}

// Bytes of `count` elements times `rows`; throws when it does not fit in size_t.
std::size_t bytes_of(const char* fn, const char* arg, std::size_t count, std::size_t rows, DType dtype) {
  const std::size_t elem = dtype_size(dtype);
  if (count != 0 && rows > std::numeric_limits<std::size_t>::max() / elem / count)
    fail(fn, arg, " (", count, " elements of ", dtype_name(dtype), " times ", rows, ") overflows the address space");
  return count * rows * elem;
}

void check_pointer(const char* fn, const char* arg, const void* p, std::size_t bytes, const char* count_arg,
                   std::size_t count) {
  if (p == nullptr && bytes > 0) fail(fn, arg, " must not be null when ", count_arg, " (", count, ") > 0");
}

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto pa = reinterpret_cast<std::uintptr_t>(a);
  const auto pb = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && pa < pb + b_bytes && pb < pa + a_bytes;
}

void check_dtype(const char* fn, DType dtype) {
  if (!valid_dtype(dtype)) fail(fn, "dtype must be f32, bf16, f16 or i32, given the value ", static_cast<int>(dtype));
}

void check_stream(const char* fn, const void* stream, bool takes_stream, std::string_view engine) {
  if (stream != nullptr && !takes_stream)
    fail(fn, "stream must be nullptr for the ", engine, " communicator (host memory), given a stream");
}

// A buffer of `parts` rows and one of a single row, for reduce_scatter (send, recv) and
// all_gather (recv, send): both non-null when the row is not empty, and the row either is row
// `rank` of the rows (in place) or does not overlap them.
struct Rows {
  const void* p;
  const char* name;
};
void check_rows(const char* fn, Rows rows, Rows row, std::size_t row_count, const char* count_name, int parts, int rank,
                DType dtype) {
  const std::size_t rows_bytes = bytes_of(fn, rows.name, row_count, static_cast<std::size_t>(parts), dtype);
  const std::size_t row_bytes = row_count * dtype_size(dtype);
  check_pointer(fn, "send", std::string_view(rows.name) == "send" ? rows.p : row.p, row_bytes, count_name, row_count);
  check_pointer(fn, "recv", std::string_view(rows.name) == "recv" ? rows.p : row.p, row_bytes, count_name, row_count);
  const void* in_place = static_cast<const std::byte*>(rows.p) + static_cast<std::size_t>(rank) * row_bytes;
  if (row.p != in_place && overlap(rows.p, rows_bytes, row.p, row_bytes))
    fail(fn, row.name, " must be ", rows.name, " + rank() * ", count_name, " (in place) or not overlap ", rows.name,
         ", given an overlapping ", row.name);
}

template <typename Acc>
Acc combine(Acc acc, Acc x, ReduceOp op) {
  if (op == ReduceOp::sum) return acc + x;
  if constexpr (std::is_floating_point_v<Acc>) {
    if (std::isnan(acc)) return acc;
    if (std::isnan(x)) return x;
  }
  return x > acc ? x : acc;
}

// out[i] = in[0][i] op in[1][i] op ... in rank order; Load/Store convert to and from Acc. The one
// place a runtime dtype becomes a type is the switch of reduce_in_rank_order.
template <typename T, typename Acc, typename Load, typename Store>
void reduce_typed(const void* const* in, int parts, void* out, std::size_t count, ReduceOp op, Load load, Store store) {
  T* o = static_cast<T*>(out);
  for (std::size_t i = 0; i < count; ++i) {
    Acc acc = load(static_cast<const T*>(in[0])[i]);
    for (int r = 1; r < parts; ++r) acc = combine(acc, load(static_cast<const T*>(in[r])[i]), op);
    o[i] = store(acc);
  }
}

}  // namespace

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::max: return "max";
  }
  return "?";
}

Chunk chunk_of(std::size_t count, int parts, int index) {
  if (parts < 1) fail("chunk_of", "parts must be >= 1, given ", parts);
  if (index < 0 || index >= parts) fail("chunk_of", "index must be in [0, ", parts, "), given ", index);
  const auto n = static_cast<std::size_t>(parts);
  const auto c = static_cast<std::size_t>(index);
  const std::size_t base = count / n, extra = count % n;
  return Chunk{c * base + (c < extra ? c : extra), base + (c < extra ? 1 : 0)};
}

void reduce_in_rank_order(const void* const* in, int parts, void* out, std::size_t count, DType dtype, ReduceOp op) {
  constexpr const char* fn = "reduce_in_rank_order";
  check_dtype_op(fn, dtype, op);
  if (parts < 1) fail(fn, "parts must be >= 1, given ", parts);
  if (count == 0) return;
  if (in == nullptr) fail(fn, "in must not be null when count (", count, ") > 0");
  if (out == nullptr) fail(fn, "out must not be null when count (", count, ") > 0");
  for (int r = 0; r < parts; ++r)
    if (in[r] == nullptr) fail(fn, "in[", r, "] must not be null when count (", count, ") > 0");
  if (parts == 1) {
    if (in[0] != out) std::memcpy(out, in[0], count * dtype_size(dtype));
    return;
  }
  switch (dtype) {
    case DType::f32:
      reduce_typed<float, float>(
          in, parts, out, count, op, [](float v) { return v; }, [](float a) { return a; });
      return;
    case DType::bf16:
      if (op == ReduceOp::max) break;
      reduce_typed<std::uint16_t, float>(in, parts, out, count, op, bf16_bits_to_float, float_to_bf16_bits);
      return;
    case DType::f16:
      if (op == ReduceOp::max) break;
      reduce_typed<std::uint16_t, float>(in, parts, out, count, op, half_bits_to_float, float_to_half_bits);
      return;
    case DType::i32:
      if (op == ReduceOp::sum)
        reduce_typed<std::int32_t, std::uint32_t>(
            in, parts, out, count, op, [](std::int32_t v) { return static_cast<std::uint32_t>(v); },
            [](std::uint32_t a) { return static_cast<std::int32_t>(a); });
      else
        reduce_typed<std::int32_t, std::int32_t>(
            in, parts, out, count, op, [](std::int32_t v) { return v; }, [](std::int32_t a) { return a; });
      return;
  }
  // max of 16-bit floats: choose the element by its float value, keep its bits (exact).
  const auto to_float = dtype == DType::bf16 ? bf16_bits_to_float : half_bits_to_float;
  auto* o = static_cast<std::uint16_t*>(out);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t best = static_cast<const std::uint16_t*>(in[0])[i];
    for (int r = 1; r < parts; ++r) {
      const std::uint16_t x = static_cast<const std::uint16_t*>(in[r])[i];
      const float b = to_float(best), v = to_float(x);
      if (!std::isnan(b) && (std::isnan(v) || v > b)) best = x;
    }
    o[i] = best;
  }
}

void Communicator::all_reduce(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op, void* stream) {
  constexpr const char* fn = "all_reduce";
  check_dtype_op(fn, dtype, op);
  const std::size_t bytes = bytes_of(fn, "count", count, 1, dtype);
  check_pointer(fn, "send", send, bytes, "count", count);
  check_pointer(fn, "recv", recv, bytes, "count", count);
  if (send != recv && overlap(send, bytes, recv, bytes))
    fail(fn, "send and recv must be the same buffer (in place) or not overlap, given buffers ", bytes,
         " bytes long that overlap");
  check_stream(fn, stream, takes_stream(), name());
  all_reduce_impl(send, recv, count, dtype, op, stream);
}

void Communicator::reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType dtype, ReduceOp op,
                                  void* stream) {
  constexpr const char* fn = "reduce_scatter";
  check_dtype_op(fn, dtype, op);
  check_rows(fn, Rows{send, "send"}, Rows{recv, "recv"}, recv_count, "recv_count", size(), rank(), dtype);
  check_stream(fn, stream, takes_stream(), name());
  reduce_scatter_impl(send, recv, recv_count, dtype, op, stream);
}

void Communicator::all_gather(const void* send, void* recv, std::size_t send_count, DType dtype, void* stream) {
  constexpr const char* fn = "all_gather";
  check_dtype(fn, dtype);
  check_rows(fn, Rows{recv, "recv"}, Rows{send, "send"}, send_count, "send_count", size(), rank(), dtype);
  check_stream(fn, stream, takes_stream(), name());
  all_gather_impl(send, recv, send_count, dtype, stream);
}

void Communicator::broadcast(void* buffer, std::size_t count, DType dtype, int root, void* stream) {
  constexpr const char* fn = "broadcast";
  check_dtype(fn, dtype);
  if (root < 0 || root >= size()) fail(fn, "root must be in [0, ", size(), "), given ", root);
  check_pointer(fn, "buffer", buffer, bytes_of(fn, "count", count, 1, dtype), "count", count);
  check_stream(fn, stream, takes_stream(), name());
  broadcast_impl(buffer, count, dtype, root, stream);
}

void Communicator::barrier() { barrier_impl(); }

bool launched_by_mpi() noexcept {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

std::unique_ptr<Communicator> make_process_communicator(const MpiOptions& options) {
  if (launched_by_mpi()) {
    if (built_with_mpi()) return make_mpi_communicator(options);
    const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
    if (size == nullptr) size = std::getenv("PMI_SIZE");
    if (size != nullptr && std::strcmp(size, "1") != 0)
      fail_with(ErrorKind::unsupported, "make_process_communicator", "launched by mpirun with ", size,
                " ranks, but this build has no MPI (install libopenmpi-dev "
                "and configure with -DAMPKIT_MPI=ON)");
  }
  return make_local_communicator();
}

namespace detail {

void print_rank_message(int rank, int size, std::string_view message) noexcept {
  std::fprintf(stderr, "ampkit: rank %d of %d: %.*s\n", rank, size, static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
}

double collective_timeout_s(double given) {
  if (given < 0 || std::isnan(given))
    fail("make_mpi_communicator", "options.timeout_s must be >= 0 (0: the default), given ", given);
  if (given > 0) return given;
  const char* text = std::getenv("AMPKIT_DIST_TIMEOUT_S");
  if (text == nullptr || *text == '\0') return 300;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0) || std::isinf(v))
    fail("make_mpi_communicator", "AMPKIT_DIST_TIMEOUT_S must be a positive number of seconds, given \"", text, "\"");
  return v;
}

void abort_for_current_exception(Communicator& comm) noexcept {
  std::string what = "failed with an unknown exception";
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  comm.abort(1, what + " (ending the job so no rank waits for this one)");
  std::_Exit(1);  // abort() does not return; for the compiler, which cannot see through the virtual call
}

}  // namespace detail
}  // namespace ampkit::dist
