// The idx files of MNIST-style image data sets (train layer): unsigned-byte image tensors
// [count, rows, cols] and label vectors [count], read (plain or gzip-compressed) and validated
// strictly, and the Fashion-MNIST set of Debian's `dataset-fashion-mnist` package (70,000
// labelled 28x28 images of 10 classes). Read by `ampkit train --model cnn` and its tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ampkit::train {

/// Images of an idx3 file: `count` images of rows x cols unsigned bytes, row-major, image after
/// image (pixels.size() == count * rows * cols).
struct IdxImages {
  std::int64_t count = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;
};

/// A labelled image set: images and one label (a class in [0, classes)) per image.
struct LabelledImages {
  IdxImages images;
  std::vector<std::uint8_t> labels;
  int classes = 0;
};

/// The images of the idx3 data `bytes`: magic 00 00 08 03 (unsigned bytes, 3 dimensions),
/// three big-endian uint32 dimensions (count, rows, cols; each at least 1), then exactly
/// count*rows*cols bytes. `what` names the file in messages ("images file 'x'"). Throws
/// ampkit::Error "<what>: ..." saying what was expected and what was given: a wrong magic, a
/// data type other than unsigned byte, a dimension count other than 3, a zero dimension, a file
/// shorter (truncated) or longer than its header says.
IdxImages parse_idx_images(std::string_view bytes, std::string_view what);

/// The labels of the idx1 data `bytes`: magic 00 00 08 01, one big-endian uint32 count, then
/// exactly count bytes, each a class in [0, classes). Throws ampkit::Error as parse_idx_images
/// does, and naming the first label out of range (its index and value).
std::vector<std::uint8_t> parse_idx_labels(std::string_view bytes, int classes, std::string_view what);

/// The images file `images_path` and labels file `labels_path` (each plain or gzip), read with
/// read_data_file and parsed as above. Throws ampkit::Error naming both files when the image
/// count and the label count differ.
LabelledImages load_idx_pair(const std::string& images_path, const std::string& labels_path, int classes);

/// Where Debian's `dataset-fashion-mnist` installs the data.
inline constexpr std::string_view kFashionMnistFolder = "/usr/share/datasets/fashion-mnist";

/// Fashion-MNIST: its training set (60,000 images) and test set (10,000), 28x28, 10 classes.
struct FashionMnist {
  LabelledImages train, test;
};

/// The Fashion-MNIST files of `folder`: {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]
/// (the .gz name is taken when the plain one is absent). Throws ampkit::Error naming the file
/// when one is missing or invalid, or when its images are not 28x28 (this is the set the CNN
/// of `ampkit train --model cnn` is built for); the message of a missing folder names the
/// Debian package.
FashionMnist load_fashion_mnist(const std::string& folder);

}  // namespace ampkit::train
