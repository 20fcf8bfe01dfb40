// The safetensors writer and validating reader (train layer; the header read with nlohmann-json
// through json.hpp). See safetensors.hpp.
#include "ampkit/train/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "ampkit/core/error.hpp"
#include "ampkit/train/json.hpp"

namespace ampkit::train {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; so is this build");

struct DTypeInfo {
  SafeDType type;
  std::string_view name;
  std::size_t size;
};
constexpr DTypeInfo kDTypes[] = {{SafeDType::f64, "F64", 8},     {SafeDType::f32, "F32", 4}, {SafeDType::f16, "F16", 2},
                                 {SafeDType::bf16, "BF16", 2},   {SafeDType::i64, "I64", 8}, {SafeDType::i32, "I32", 4},
                                 {SafeDType::i16, "I16", 2},     {SafeDType::i8, "I8", 1},   {SafeDType::u8, "U8", 1},
                                 {SafeDType::boolean, "BOOL", 1}};

const DTypeInfo* find_dtype(std::string_view name) {
  for (const DTypeInfo& d : kDTypes)
    if (d.name == name) return &d;
  return nullptr;
}

// numel(shape) * size, or false on overflow of 64 bits.
bool byte_count(const std::vector<std::uint64_t>& shape, std::size_t size, std::uint64_t* out) {
  std::uint64_t n = size;
  for (std::uint64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return false;
  *out = n;
  return true;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s.append(i ? ", " : "").append(std::to_string(shape[i]));
  return s + "]";
}

template <typename T>
SafeTensor tensor_of(std::string name, SafeDType dtype, std::vector<std::int64_t> shape, std::span<const T> values) {
  SafeTensor t{std::move(name), dtype, std::move(shape), {}};
  if (t.numel() != static_cast<std::int64_t>(values.size()))
    throw Error(detail::concat("SafeTensor '", t.name, "': the shape holds ", t.numel(), " elements, but ",
                               values.size(), " values were given"));
  t.bytes.assign(reinterpret_cast<const char*>(values.data()), values.size_bytes());
  return t;
}

template <typename T>
std::vector<T> values_of(const SafeTensor& t, SafeDType want) {
  if (t.dtype != want)
    throw Error(detail::concat("tensor '", t.name, "': expected dtype ", safe_dtype_name(want), ", but got ",
                               safe_dtype_name(t.dtype)));
  std::vector<T> v(t.bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), t.bytes.data(), v.size() * sizeof(T));  // an empty vector's data() may be null
  return v;
}

}  // namespace

std::string_view safe_dtype_name(SafeDType t) {
  for (const DTypeInfo& d : kDTypes)
    if (d.type == t) return d.name;
  return "?";
}

std::size_t safe_dtype_size(SafeDType t) {
  for (const DTypeInfo& d : kDTypes)
    if (d.type == t) return d.size;
  return 0;
}

std::int64_t SafeTensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

SafeTensor SafeTensor::of_f32(std::string name, std::vector<std::int64_t> shape, std::span<const float> values) {
  return tensor_of(std::move(name), SafeDType::f32, std::move(shape), values);
}

SafeTensor SafeTensor::of_f64(std::string name, std::vector<std::int64_t> shape, std::span<const double> values) {
  return tensor_of(std::move(name), SafeDType::f64, std::move(shape), values);
}

std::vector<float> SafeTensor::f32() const { return values_of<float>(*this, SafeDType::f32); }
std::vector<double> SafeTensor::f64() const { return values_of<double>(*this, SafeDType::f64); }

const SafeTensor* SafeTensorsFile::find(std::string_view name) const {
  for (const SafeTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const std::string* SafeTensorsFile::meta(std::string_view key) const {
  for (const auto& [k, v] : metadata)
    if (k == key) return &v;
  return nullptr;
}

// `text` as a JSON string literal: nlohmann escapes '"', '\\', \b \f \n \r \t and the other
// control bytes as \u00xx, and passes UTF-8 through; invalid UTF-8 throws.
std::string json_quote(const std::string& text) {
  try {
    return Json(text).dump();
  } catch (const nlohmann::json::type_error&) {
    throw Error(detail::concat("serialize_safetensors: the name or metadata '", text, "' is not valid UTF-8"));
  }
}

std::string serialize_safetensors(const SafeTensorsFile& file) {
  std::string header = "{";
  if (!file.metadata.empty()) {
    header += "\"__metadata__\":{";
    for (std::size_t i = 0; i < file.metadata.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j)
        if (file.metadata[j].first == file.metadata[i].first)
          throw Error(detail::concat("serialize_safetensors: metadata key '", file.metadata[i].first, "' given twice"));
      header.append(i ? "," : "")
          .append(json_quote(file.metadata[i].first))
          .append(":")
          .append(json_quote(file.metadata[i].second));
    }
    header += "}";
  }
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const SafeTensor& t = file.tensors[i];
    if (t.name.empty() || t.name == "__metadata__")
      throw Error(detail::concat("serialize_safetensors: invalid tensor name '", t.name, "'"));
    for (std::size_t j = 0; j < i; ++j)
      if (file.tensors[j].name == t.name)
        throw Error(detail::concat("serialize_safetensors: tensor name '", t.name, "' given twice"));
    std::vector<std::uint64_t> shape;
    for (std::int64_t d : t.shape) {
      if (d < 0)
        throw Error(detail::concat("serialize_safetensors: tensor '", t.name, "' has a negative dimension ", d));
      shape.push_back(static_cast<std::uint64_t>(d));
    }
    std::uint64_t bytes = 0;
    if (!byte_count(shape, safe_dtype_size(t.dtype), &bytes) || bytes != t.bytes.size())
      throw Error(detail::concat("serialize_safetensors: tensor '", t.name, "' of dtype ", safe_dtype_name(t.dtype),
                                 " and shape ", shape_text(shape), " holds ", t.bytes.size(), " bytes"));
    header.append(header.size() > 1 ? "," : "").append(json_quote(t.name)).append(":{\"dtype\":\"");
    header.append(safe_dtype_name(t.dtype)).append("\",\"shape\":[");
    for (std::size_t d = 0; d < shape.size(); ++d) header.append(d ? "," : "").append(std::to_string(shape[d]));
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + header.size() + offset);
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  out += header;
  for (const SafeTensor& t : file.tensors) out += t.bytes;
  return out;
}

SafeTensorsFile parse_safetensors(std::string_view bytes, std::string_view what) {
  auto fail = [&](auto&&... parts) -> void { throw Error(detail::concat(what, ": ", parts...)); };
  if (bytes.size() < 8)
    fail("truncated: ", bytes.size(), " bytes, but a safetensors file starts with an 8-byte header length");
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (n == 0) fail("the header length is 0; not a safetensors file");
  if (n > kMaxSafetensorsHeader)
    fail("the header length is ", n, " bytes, more than the ", kMaxSafetensorsHeader,
         " allowed; not a safetensors file, or a corrupt one");
  if (n > bytes.size() - 8)
    fail("truncated: the header needs ", n, " bytes, but only ", bytes.size() - 8, " follow its length");
  const std::string_view header = bytes.substr(8, n);
  const std::string_view data = bytes.substr(8 + n);
  if (header.front() != '{') fail("the header does not start with '{'; not a safetensors file");
  Json root;
  try {
    root = parse_json(header);
  } catch (const JsonSyntaxError& e) {
    fail("the header is not valid JSON: ", e.what(), " of the header");
  }
  if (!root.is_object()) fail("the header is ", json_kind_name(root), ", not a JSON object");

  SafeTensorsFile file;
  struct Range {
    std::uint64_t begin, end;
    std::size_t index;
  };
  std::vector<Range> ranges;
  for (const auto& [name, entry] : root.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail("__metadata__ is ", json_kind_name(entry), ", not an object of strings");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) fail("__metadata__ value of '", key, "' is ", json_kind_name(value), ", not a string");
        file.metadata.emplace_back(key, value.get<std::string>());
      }
      continue;
    }
    const std::string who = "tensor '" + name + "'";
    if (!entry.is_object()) fail(who, " is ", json_kind_name(entry), ", not an object");
    for (const auto& [key, value] : entry.items())
      if (key != "dtype" && key != "shape" && key != "data_offsets")
        fail(who, " has an unknown key '", key, "' (expected dtype, shape, data_offsets)");
    const auto dtype = entry.find("dtype");
    const auto shape = entry.find("shape");
    const auto offsets = entry.find("data_offsets");
    if (dtype == entry.end() || shape == entry.end() || offsets == entry.end())
      fail(who, " lacks ", dtype == entry.end() ? "dtype" : shape == entry.end() ? "shape" : "data_offsets");
    if (!dtype->is_string()) fail(who, ": dtype is ", json_kind_name(*dtype), ", not a string");
    const DTypeInfo* info = find_dtype(dtype->get<std::string>());
    if (!info) fail(who, " has the unsupported dtype '", dtype->get<std::string>(), "'");
    if (!shape->is_array()) fail(who, ": shape is ", json_kind_name(*shape), ", not an array");
    std::vector<std::uint64_t> dims;
    for (const Json& d : *shape) {
      const auto v = json_uint64(d);
      if (!v || *v > static_cast<std::uint64_t>(INT64_MAX))
        fail(who, ": shape holds ", d.is_number() ? "'" + d.dump() + "'" : std::string(json_kind_name(d)),
             "; expected non-negative integers");
      dims.push_back(*v);
    }
    if (!offsets->is_array() || offsets->size() != 2) fail(who, ": data_offsets is not an array [begin, end]");
    const auto begin = json_uint64((*offsets)[0]);
    const auto end = json_uint64((*offsets)[1]);
    if (!begin || !end) fail(who, ": data_offsets must be two non-negative integers");
    if (*end < *begin) fail(who, ": data_offsets [", *begin, ", ", *end, "] end before they begin");
    std::uint64_t expect = 0;
    if (!byte_count(dims, info->size, &expect) || expect != *end - *begin)
      fail(who, " of dtype ", info->name, " and shape ", shape_text(dims), " needs ",
           byte_count(dims, info->size, &expect) ? std::to_string(expect) : std::string("more than 2^64"),
           " bytes, but its data_offsets [", *begin, ", ", *end, "] hold ", *end - *begin);
    if (*end > data.size())
      fail("truncated: ", who, " needs bytes [", *begin, ", ", *end, ") of the data, but the file holds only ",
           data.size(), " bytes of data");
    SafeTensor t{name, info->type, {}, {}};
    for (std::uint64_t d : dims) t.shape.push_back(static_cast<std::int64_t>(d));
    ranges.push_back({*begin, *end, file.tensors.size()});
    file.tensors.push_back(std::move(t));
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::uint64_t at = 0;
  for (const Range& r : ranges) {
    const std::string& name = file.tensors[r.index].name;
    if (r.begin < at) fail("tensor '", name, "' (bytes [", r.begin, ", ", r.end, ")) overlaps the tensor before it");
    if (r.begin > at)
      fail("bytes [", at, ", ", r.begin, ") of the data belong to no tensor (a hole before '", name, "')");
    at = r.end;
  }
  if (at != data.size())
    fail(data.size() - at, " bytes follow the last tensor's data (", data.size(), " bytes of data, tensors cover ", at,
         ")");
  for (const Range& r : ranges) file.tensors[r.index].bytes.assign(data.substr(r.begin, r.end - r.begin));
  // Data order, as written.
  std::vector<SafeTensor> ordered;
  ordered.reserve(ranges.size());
  for (const Range& r : ranges) ordered.push_back(std::move(file.tensors[r.index]));
  file.tensors = std::move(ordered);
  return file;
}

}  // namespace ampkit::train
