// Tests of gzip-compressed data files (src/train/gzip, files' read_data_file, corpus): a file
// written here with zlib reads back as the plain file's bytes and corpus, concatenated members
// too; truncated, corrupt, trailing-garbage and oversized gzip data are refused by name.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/corpus.hpp"
#include "ampkit/train/files.hpp"
#include "ampkit/train/rng.hpp"
#include "tests/train/train_test_support.hpp"
#include "train/gzip.hpp"

namespace ampkit::train {
namespace {

// `text` gzip-compressed with zlib's own writer (gzopen / gzwrite), as gzip(1) would.
std::string gzip_of(const TempDir& dir, const std::string& text) {
  const std::string path = dir.file("scratch.gz");
  gzFile f = gzopen(path.c_str(), "wb9");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  EXPECT_EQ(gzclose(f), Z_OK);
  return slurp(path);
}

// About 300 KB of fortune-format text (several times zlib's 64 KiB output chunk), random words.
std::string fortune_text(std::uint64_t seed) {
  SplitMix64 rng(seed);
  const char* words[] = {"the", "cat", "sat", "on", "a", "mat", "caf\xc3\xa9", "and", "slept", "\xe2\x80\x94"};
  std::string text;
  for (int doc = 0; doc < 3000; ++doc) {
    for (int w = 0; w < 20; ++w) text.append(words[rng.below(10)]).append(w % 7 == 6 ? "\n" : " ");
    text += "\n%\n";
  }
  return text;
}

std::string error_of(const std::string& path) {
  try {
    read_data_file(path, "data file", kMaxDataFileBytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TrainGzip, AGzipFileReadsAsThePlainFile) {
  TempDir dir;
  const std::string text = fortune_text(7);
  const std::string gz = gzip_of(dir, text);
  ASSERT_LT(gz.size(), text.size() / 2);  // it is compressed
  spit(dir.file("t.txt"), text);
  spit(dir.file("t.txt.gz"), gz);
  EXPECT_EQ(read_data_file(dir.file("t.txt.gz"), "data file", kMaxDataFileBytes), text);
  EXPECT_EQ(read_data_file(dir.file("t.txt"), "data file", kMaxDataFileBytes), text);
  const Corpus plain = load_corpus({dir.file("t.txt")});
  const Corpus unzipped = load_corpus({dir.file("t.txt.gz")});
  EXPECT_EQ(unzipped.vocabulary, plain.vocabulary);
  EXPECT_EQ(unzipped.train, plain.train);
  EXPECT_EQ(unzipped.validation, plain.validation);
  EXPECT_EQ(unzipped.documents, plain.documents);
  // Concatenated members decompress to the concatenated texts (as gunzip does).
  const std::string second = fortune_text(8);
  EXPECT_EQ(gunzip(gz + gzip_of(dir, second), kMaxDataFileBytes, "x"), text + second);
}

TEST(TrainGzip, TruncatedCorruptOrOversizedGzipIsRefusedByName) {
  TempDir dir;
  const std::string text = fortune_text(9);
  const std::string gz = gzip_of(dir, text);
  const std::string cut = dir.file("cut.gz");
  spit(cut, gz.substr(0, gz.size() / 2));
  EXPECT_EQ(error_of(cut),
            "data file '" + cut + "': the gzip data end before the compressed stream does (a truncated file)");
  spit(cut, gz.substr(0, gz.size() - 4));  // only the length in the trailer is missing
  EXPECT_EQ(error_of(cut),
            "data file '" + cut + "': the gzip data end before the compressed stream does (a truncated file)");

  std::string flipped = gz;
  for (std::size_t i = 20; i < 60; ++i) flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
  const std::string corrupt = dir.file("corrupt.gz");
  spit(corrupt, flipped);
  const std::string e = error_of(corrupt);
  EXPECT_EQ(e.rfind("data file '" + corrupt + "': not valid gzip data: ", 0), 0u) << e;
  EXPECT_NE(e.find("(a corrupt file)"), std::string::npos) << e;

  std::string crc = gz;
  crc[crc.size() - 6] = static_cast<char>(crc[crc.size() - 6] ^ 1);  // the CRC-32 of the trailer
  spit(corrupt, crc);
  EXPECT_EQ(error_of(corrupt),
            "data file '" + corrupt + "': not valid gzip data: incorrect data check (a corrupt file)");

  spit(corrupt, gz + "trailing text");
  EXPECT_EQ(error_of(corrupt), "data file '" + corrupt +
                                   "': bytes that are not gzip follow the end of the compressed data (a corrupt file)");

  try {
    gunzip(gz, 1000, "data file 'big.gz'");
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(std::string(err.what()), "data file 'big.gz': decompresses to more than the 1000 bytes allowed");
  }
  // Only the magic bytes make a file gzip: plain text starting with other bytes is read as it is.
  EXPECT_TRUE(is_gzip(gz));
  EXPECT_FALSE(is_gzip(text));
  EXPECT_FALSE(is_gzip("\x1f"));
}

}  // namespace
}  // namespace ampkit::train
