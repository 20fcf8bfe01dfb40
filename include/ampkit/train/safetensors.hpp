// The safetensors file format (train layer): the checkpoints of `ampkit train`, which
// Python users read with the `safetensors` package. Layout: an 8-byte little-endian header
// length N; N bytes of a JSON object mapping each tensor name to {"dtype", "shape",
// "data_offsets": [begin, end)} (offsets into the data that follows the header) plus an optional
// "__metadata__" object of string values; then the tensors' bytes, contiguous, little-endian,
// row-major. The reader checks everything the reference implementation checks and names what is
// wrong: length, JSON, keys, dtypes, shapes against byte counts, offsets, holes and overlaps.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ampkit::train {

/// The safetensors element types ampkit reads and writes.
enum class SafeDType : std::uint8_t { f64, f32, f16, bf16, i64, i32, i16, i8, u8, boolean };

/// "F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL" (the file's spelling).
std::string_view safe_dtype_name(SafeDType t);
/// Bytes per element.
std::size_t safe_dtype_size(SafeDType t);

/// One tensor: its raw little-endian bytes, row-major, numel(shape) * size bytes.
struct SafeTensor {
  std::string name;
  SafeDType dtype = SafeDType::f32;
  std::vector<std::int64_t> shape;
  std::string bytes;

  std::int64_t numel() const;
  /// A tensor of `values` (copied) with `shape`.
  static SafeTensor of_f32(std::string name, std::vector<std::int64_t> shape, std::span<const float> values);
  static SafeTensor of_f64(std::string name, std::vector<std::int64_t> shape, std::span<const double> values);
  /// The values of an F32 / F64 tensor.
  std::vector<float> f32() const;
  std::vector<double> f64() const;
};

/// The contents of a file: tensors in data order and the string metadata, in file order.
struct SafeTensorsFile {
  std::vector<SafeTensor> tensors;
  std::vector<std::pair<std::string, std::string>> metadata;

  /// The tensor `name`, or null.
  const SafeTensor* find(std::string_view name) const;
  /// The metadata value of `key`, or null.
  const std::string* meta(std::string_view key) const;
};

/// The most header bytes accepted (the reference implementation's limit).
constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

/// The file's bytes. The header is padded with spaces to a multiple of 8 bytes, so every tensor
/// starts 8-byte aligned. Throws ampkit::Error on a duplicate or empty name, the name
/// "__metadata__", a negative dimension or a byte count that does not match the shape.
std::string serialize_safetensors(const SafeTensorsFile& file);

/// Reads the bytes of a file; `what` names it in messages ("checkpoint 'run.safetensors'").
/// Throws ampkit::Error "<what>: <problem>" when it is truncated, its header is not a JSON object
/// of the expected form, a dtype is unknown, a shape does not match its byte range, ranges
/// overlap, leave a hole or run past the end, or bytes follow the last tensor.
SafeTensorsFile parse_safetensors(std::string_view bytes, std::string_view what);

}  // namespace ampkit::train
