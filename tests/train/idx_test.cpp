// Tests of the idx reader (src/train/idx.cpp): hand-made idx files read back as written (plain
// and gzip); every malformed file — bad magic, other data type, wrong dimension count, zero
// dimension, truncated header or data, trailing bytes, label out of range, image/label count
// mismatch — is refused with a message naming the file, the expected and the given; and the
// installed Fashion-MNIST set (Debian's dataset-fashion-mnist) loads with its known shape.
#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/idx.hpp"
#include "tests/train/train_test_support.hpp"

namespace ampkit::train {
namespace {

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// An idx file of unsigned bytes with dimensions `dims` and data `data`.
std::string idx_file(const std::vector<std::uint32_t>& dims, const std::string& data) {
  std::string s{'\0', '\0', '\x08', static_cast<char>(dims.size())};
  for (std::uint32_t d : dims) s += be32(d);
  return s + data;
}

std::string pixels(std::size_t n) {
  std::string p;
  for (std::size_t i = 0; i < n; ++i) p += static_cast<char>((i * 37 + 11) & 0xff);
  return p;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string images_error(const std::string& bytes) {
  return error_of([&] { parse_idx_images(bytes, "images file 'x'"); });
}
std::string labels_error(const std::string& bytes, int classes = 10) {
  return error_of([&] { parse_idx_labels(bytes, classes, "labels file 'y'"); });
}

TEST(TrainIdx, AHandMadeFileReadsBackAsWritten) {
  const std::string data = pixels(3 * 4 * 5);
  const IdxImages im = parse_idx_images(idx_file({3, 4, 5}, data), "x");
  EXPECT_EQ(im.count, 3);
  EXPECT_EQ(im.rows, 4);
  EXPECT_EQ(im.cols, 5);
  ASSERT_EQ(im.pixels.size(), data.size());
  for (std::size_t i = 0; i < data.size(); ++i) ASSERT_EQ(im.pixels[i], static_cast<unsigned char>(data[i])) << i;
  const std::vector<std::uint8_t> labels = parse_idx_labels(idx_file({4}, std::string{0, 9, 3, 9}), 10, "y");
  EXPECT_EQ(labels, (std::vector<std::uint8_t>{0, 9, 3, 9}));
}

TEST(TrainIdx, MalformedImageFilesAreRefusedSayingWhatWasExpected) {
  std::string bad = idx_file({2, 2, 2}, pixels(8));
  bad[0] = 'P';
  EXPECT_EQ(images_error(bad),
            "images file 'x': bad magic number 50 00 08 03; an idx file starts with 00 00 (not an idx file)");
  bad = idx_file({2, 2, 2}, pixels(8));
  bad[2] = '\x0d';  // float data
  EXPECT_EQ(images_error(bad), "images file 'x': data type 0x0d; expected 0x08 (unsigned byte)");
  EXPECT_EQ(images_error(idx_file({8}, pixels(8))), "images file 'x': has 1 dimensions; expected 3");
  EXPECT_EQ(images_error(idx_file({2, 0, 2}, "")), "images file 'x': dimension 1 is 0; expected at least 1");
  EXPECT_EQ(images_error(std::string("\0\0", 2)),
            "images file 'x': is 2 bytes; an idx file starts with a 4-byte magic number (a truncated file)");
  EXPECT_EQ(images_error(idx_file({2, 2, 2}, "").substr(0, 10)),
            "images file 'x': is 10 bytes, shorter than its 16-byte header (a truncated file)");
  EXPECT_EQ(images_error(idx_file({2, 2, 2}, pixels(7))),
            "images file 'x': holds 7 bytes of data; its header declares 8 (a truncated file)");
  EXPECT_EQ(images_error(idx_file({2, 2, 2}, pixels(9))),
            "images file 'x': holds 9 bytes of data; its header declares only 8 (trailing bytes)");
  EXPECT_EQ(images_error(idx_file({65536, 65536, 2}, "")),
            "images file 'x': its header declares more than 1073741824 bytes of data");
}

TEST(TrainIdx, MalformedLabelFilesAreRefusedNamingTheLabel) {
  EXPECT_EQ(labels_error(idx_file({3}, std::string{1, 10, 2})),
            "labels file 'y': label 1 is 10; expected a class in [0, 10)");
  EXPECT_EQ(labels_error(idx_file({3}, std::string{1, 2, 2}), 2),
            "labels file 'y': label 1 is 2; expected a class in [0, 2)");
  EXPECT_EQ(labels_error(idx_file({1, 3}, std::string{1, 2, 2})), "labels file 'y': has 2 dimensions; expected 1");
  EXPECT_EQ(labels_error(idx_file({4}, std::string{1, 2, 2})),
            "labels file 'y': holds 3 bytes of data; its header declares 4 (a truncated file)");
  EXPECT_EQ(labels_error(idx_file({3}, ""), 0), "parse_idx_labels: classes (0) must be in [1, 256]");
}

TEST(TrainIdx, APairReadsPlainAndGzipAndRefusesACountMismatch) {
  TempDir dir;
  const std::string images = idx_file({3, 2, 2}, pixels(12));
  spit(dir.file("im"), images);
  spit(dir.file("lab"), idx_file({3}, std::string{0, 1, 2}));
  spit(dir.file("lab4"), idx_file({4}, std::string{0, 1, 2, 0}));
  // The images gzip-compressed with zlib's writer.
  gzFile f = gzopen(dir.file("im.gz").c_str(), "wb9");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, images.data(), static_cast<unsigned>(images.size())), static_cast<int>(images.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
  const LabelledImages plain = load_idx_pair(dir.file("im"), dir.file("lab"), 3);
  const LabelledImages gz = load_idx_pair(dir.file("im.gz"), dir.file("lab"), 3);
  EXPECT_EQ(plain.images.pixels, gz.images.pixels);
  EXPECT_EQ(plain.labels, (std::vector<std::uint8_t>{0, 1, 2}));
  EXPECT_EQ(plain.classes, 3);
  EXPECT_EQ(error_of([&] { load_idx_pair(dir.file("im"), dir.file("lab4"), 3); }),
            "images file '" + dir.file("im") + "' holds 3 images but labels file '" + dir.file("lab4") +
                "' holds 4 labels; expected one label per image");
  EXPECT_EQ(error_of([&] { load_idx_pair(dir.file("im"), dir.file("im"), 3); }),
            "labels file '" + dir.file("im") + "': has 3 dimensions; expected 1");
  EXPECT_EQ(
      error_of([&] { load_fashion_mnist(dir.file("none")); }),
      "fashion-mnist folder '" + dir.file("none") +
          "': not found (Debian's package dataset-fashion-mnist installs it at /usr/share/datasets/fashion-mnist)");
  // A folder of the right names but 2x2 images is refused as not Fashion-MNIST.
  for (const char* prefix : {"train", "t10k"}) {
    spit(dir.file(std::string(prefix) + "-images-idx3-ubyte"), images);
    spit(dir.file(std::string(prefix) + "-labels-idx1-ubyte"), idx_file({3}, std::string{0, 1, 2}));
  }
  EXPECT_EQ(error_of([&] { load_fashion_mnist(dir.path()); }), "images file '" + dir.file("train-images-idx3-ubyte") +
                                                                   "': images are 2x2; expected 28x28 (Fashion-MNIST)");
}

TEST(TrainIdx, TheInstalledFashionMnistLoads) {
  const std::string folder(kFashionMnistFolder);
  if (!std::filesystem::exists(folder + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Debian's dataset-fashion-mnist is not installed (" << folder << ")";
  const FashionMnist data = load_fashion_mnist(folder);
  EXPECT_EQ(data.train.images.count, 60000);
  EXPECT_EQ(data.test.images.count, 10000);
  EXPECT_EQ(data.train.images.rows, 28);
  EXPECT_EQ(data.test.images.cols, 28);
  // Both sets are balanced: 6,000 and 1,000 images of each of the 10 classes.
  std::array<int, 10> train{}, test{};
  for (std::uint8_t l : data.train.labels) ++train[l];
  for (std::uint8_t l : data.test.labels) ++test[l];
  for (int c = 0; c < 10; ++c) {
    EXPECT_EQ(train[c], 6000) << c;
    EXPECT_EQ(test[c], 1000) << c;
  }
}

}  // namespace
}  // namespace ampkit::train
