// Reading and validating idx image and label files (train layer). See ampkit/train/idx.hpp.
// The format (LeCun's MNIST page): 2 zero bytes, a data-type byte (0x08: unsigned byte), the
// dimension count, that many big-endian uint32 sizes, then the data in row-major order.
#include "ampkit/train/idx.hpp"

#include <sys/stat.h>

#include "ampkit/core/error.hpp"
#include "ampkit/train/corpus.hpp"
#include "ampkit/train/files.hpp"

namespace ampkit::train {
namespace {

std::string hex_byte(unsigned char b) {
  const char* digits = "0123456789abcdef";
  return std::string{digits[b >> 4], digits[b & 15]};
}

std::uint32_t big_endian_u32(std::string_view bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

// The dimensions of the idx data `bytes` with `ndims` dimensions of unsigned bytes; checks the
// header, that no dimension is zero and that the data are exactly as long as the header says.
std::vector<std::int64_t> idx_dims(std::string_view bytes, int ndims, std::string_view what) {
  auto fail = [&](auto&&... parts) -> void { throw Error(detail::concat(what, ": ", parts...)); };
  if (bytes.size() < 4)
    fail("is ", bytes.size(), " bytes; an idx file starts with a 4-byte magic number (a truncated file)");
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  if (b[0] != 0 || b[1] != 0)
    fail("bad magic number ", hex_byte(b[0]), " ", hex_byte(b[1]), " ", hex_byte(b[2]), " ", hex_byte(b[3]),
         "; an idx file starts with 00 00 (not an idx file)");
  if (b[2] != 0x08) fail("data type 0x", hex_byte(b[2]), "; expected 0x08 (unsigned byte)");
  if (b[3] != ndims) fail("has ", static_cast<int>(b[3]), " dimensions; expected ", ndims);
  const std::size_t header = 4 + 4 * static_cast<std::size_t>(ndims);
  if (bytes.size() < header)
    fail("is ", bytes.size(), " bytes, shorter than its ", header, "-byte header (a truncated file)");
  std::vector<std::int64_t> dims(static_cast<std::size_t>(ndims));
  std::uint64_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    dims[d] = big_endian_u32(bytes, 4 + 4 * static_cast<std::size_t>(d));
    if (dims[d] == 0) fail("dimension ", d, " is 0; expected at least 1");
    total *= static_cast<std::uint64_t>(dims[d]);  // at most 3 factors < 2^32 each: checked below
    if (total > kMaxDataFileBytes) fail("its header declares more than ", kMaxDataFileBytes, " bytes of data");
  }
  const std::uint64_t given = bytes.size() - header;
  if (given < total) fail("holds ", given, " bytes of data; its header declares ", total, " (a truncated file)");
  if (given > total) fail("holds ", given, " bytes of data; its header declares only ", total, " (trailing bytes)");
  return dims;
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

IdxImages parse_idx_images(std::string_view bytes, std::string_view what) {
  const std::vector<std::int64_t> dims = idx_dims(bytes, 3, what);
  IdxImages images;
  images.count = dims[0];
  images.rows = dims[1];
  images.cols = dims[2];
  images.pixels.assign(bytes.begin() + 16, bytes.end());
  return images;
}

std::vector<std::uint8_t> parse_idx_labels(std::string_view bytes, int classes, std::string_view what) {
  if (classes < 1 || classes > 256)
    throw Error(detail::concat("parse_idx_labels: classes (", classes, ") must be in [1, 256]"));
  idx_dims(bytes, 1, what);
  std::vector<std::uint8_t> labels(bytes.begin() + 8, bytes.end());
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] >= classes)
      throw Error(detail::concat(what, ": label ", i, " is ", static_cast<int>(labels[i]), "; expected a class in [0, ",
                                 classes, ")"));
  return labels;
}

LabelledImages load_idx_pair(const std::string& images_path, const std::string& labels_path, int classes) {
  LabelledImages set;
  set.images = parse_idx_images(read_data_file(images_path, "images file", kMaxDataFileBytes),
                                detail::concat("images file ", quoted(images_path)));
  set.labels = parse_idx_labels(read_data_file(labels_path, "labels file", kMaxDataFileBytes), classes,
                                detail::concat("labels file ", quoted(labels_path)));
  set.classes = classes;
  if (static_cast<std::int64_t>(set.labels.size()) != set.images.count)
    throw Error(detail::concat("images file ", quoted(images_path), " holds ", set.images.count,
                               " images but labels file ", quoted(labels_path), " holds ", set.labels.size(),
                               " labels; expected one label per image"));
  return set;
}

FashionMnist load_fashion_mnist(const std::string& folder) {
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(detail::concat("fashion-mnist folder ", quoted(folder),
                               ": not found (Debian's package dataset-fashion-mnist installs it at ",
                               kFashionMnistFolder, ")"));
  auto path_of = [&](const char* stem) {
    const std::string plain = folder + "/" + stem;
    return exists(plain) || !exists(plain + ".gz") ? plain : plain + ".gz";
  };
  auto load = [&](const char* prefix) {
    const std::string images = path_of((std::string(prefix) + "-images-idx3-ubyte").c_str());
    LabelledImages set = load_idx_pair(images, path_of((std::string(prefix) + "-labels-idx1-ubyte").c_str()), 10);
    if (set.images.rows != 28 || set.images.cols != 28)
      throw Error(detail::concat("images file ", quoted(images), ": images are ", set.images.rows, "x", set.images.cols,
                                 "; expected 28x28 (Fashion-MNIST)"));
    return set;
  };
  FashionMnist data;
  data.train = load("train");
  data.test = load("t10k");
  return data;
}

}  // namespace ampkit::train
