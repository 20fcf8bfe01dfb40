// Tests of the train layer's text data pipeline (src/train/corpus, utf8; rng.hpp): strict
// UTF-8, the refusals of bad files, fortune documents and the split, the vocabulary, the
// platform-independent RNG, the batch sampler and the validation windows, the unigram baseline.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/corpus.hpp"
#include "ampkit/train/rng.hpp"
#include "train/utf8.hpp"

namespace ampkit::train {
namespace {

std::string error_of(const std::vector<CorpusFile>& files) {
  try {
    build_corpus(files);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A fortune file of `n` documents "doc <i>\n".
std::string fortunes(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "doc " + std::to_string(i) + "\nline two\n%\n";
  return s;
}

TEST(TrainUtf8, DecodesEveryLengthAndEncodesBack) {
  const std::string text = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";  // a é € 😀 z
  std::vector<char32_t> cps;
  EXPECT_FALSE(decode_utf8(text, cps).has_value());
  EXPECT_EQ(cps, (std::vector<char32_t>{U'a', 0xe9, 0x20ac, 0x1f600, U'z'}));
  EXPECT_EQ(encode_utf8(cps), text);
  EXPECT_EQ(describe_code_point(0xe9), "'\xc3\xa9' (U+00E9)");
  EXPECT_EQ(describe_code_point(U'\n'), "U+000A");
}

TEST(TrainUtf8, RefusesEveryMalformedForm) {
  const struct {
    std::string bytes;
    std::size_t offset;
    const char* what;
  } cases[] = {
      {std::string("ab\0c", 4), 2, "a NUL byte"},
      {"ab\xff", 2, "an invalid UTF-8 byte 0xff"},
      {"\x80", 0, "an invalid UTF-8 byte 0x80"},           // a lone continuation byte
      {"\xc0\xaf", 0, "an invalid UTF-8 byte 0xc0"},       // overlong 2-byte lead
      {"\xe0\x80\xaf", 0, "an overlong UTF-8 sequence"},   // overlong 3-byte
      {"\xed\xa0\x80", 0, "an encoded UTF-16 surrogate"},  // U+D800
      {"\xf4\x90\x80\x80", 0, "a UTF-8 sequence above U+10FFFF"},
      {"x\xe2\x82", 1, "a UTF-8 sequence cut short"},
      {"\xc3(", 0, "a UTF-8 sequence starting with 0xc3 whose byte 2 is 0x28"},
  };
  for (const auto& c : cases) {
    std::vector<char32_t> cps;
    const auto problem = decode_utf8(c.bytes, cps);
    ASSERT_TRUE(problem.has_value()) << c.what;
    EXPECT_EQ(problem->offset, c.offset) << c.what;
    EXPECT_NE(problem->what.find(c.what), std::string::npos) << problem->what;
  }
}

TEST(TrainCorpus, RefusesEmptyBinaryAndTextlessFilesNamingThem) {
  EXPECT_EQ(error_of({{"e.txt", ""}}), "data file 'e.txt': is empty");
  EXPECT_EQ(error_of({{"b.bin", std::string("line\nmore\0x", 11)}}),
            "data file 'b.bin': not UTF-8 text: a NUL byte at byte 9 (line 2); binary files are not accepted");
  EXPECT_EQ(error_of({{"l.txt", "caf\xe9\n"}}),
            "data file 'l.txt': not UTF-8 text: a UTF-8 sequence cut short by the end of the file at byte 3 (line 1)");
  EXPECT_EQ(error_of({{"w.txt", " \n\t\n"}}),
            "data file 'w.txt': holds no text (only white space or '%' separator lines)");
  EXPECT_EQ(error_of({{"p.txt", "%\n%\n"}}),
            "data file 'p.txt': holds no text (only white space or '%' separator lines)");
  EXPECT_EQ(error_of({{"s.txt", "short"}}),
            "data file 's.txt': holds 5 characters; at least 10 are needed to hold out a validation tenth");
  EXPECT_EQ(error_of({}), "training data: no files given");
}

TEST(TrainCorpus, MissingAndFolderPathsAreRefusedByName) {
  try {
    load_corpus({"/nonexistent/ampkit/data.txt"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "data file '/nonexistent/ampkit/data.txt': cannot open it: No such file or directory");
  }
  try {
    load_corpus({"/tmp"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "data file '/tmp': is a folder, not a file");
  }
}

TEST(TrainCorpus, FortuneDocumentsSplitEveryTenth) {
  const Corpus c = build_corpus({{"f", fortunes(25)}});
  EXPECT_EQ(c.documents, 25);
  EXPECT_EQ(c.validation_documents, 2);  // documents 9 and 19
  const std::string train = c.vocabulary.decode(c.train), validation = c.vocabulary.decode(c.validation);
  EXPECT_EQ(validation, "doc 9\nline two\n\ndoc 19\nline two\n\n");
  EXPECT_EQ(train.find("doc 9\n"), std::string::npos);
  EXPECT_EQ(train.substr(0, 34), "doc 0\nline two\n\ndoc 1\nline two\n\ndo");
  EXPECT_EQ(train.find('%'), std::string::npos);
  EXPECT_NE(c.split.find("every 10th of 25 documents"), std::string::npos);
}

TEST(TrainCorpus, PlainTextHoldsOutTheLastTenth) {
  const std::string text = "The quick brown fox jumps over the lazy dog.\n";  // 45 characters
  const Corpus c = build_corpus({{"t", text}});
  EXPECT_EQ(c.documents, 1);
  EXPECT_EQ(c.vocabulary.decode(c.train), text.substr(0, 41));
  EXPECT_EQ(c.vocabulary.decode(c.validation), text.substr(41));
}

TEST(TrainCorpus, VocabularyIsTheSortedDistinctCodePoints) {
  const Corpus c = build_corpus({{"u",
                                  "\xef\xbb\xbf"
                                  "b\xc3\xa9"
                                  "a\xe2\x82\xac"
                                  "bbbbbbbbbb"}});  // BOM dropped
  EXPECT_EQ(c.vocabulary.chars(), (std::vector<char32_t>{U'a', U'b', 0xe9, 0x20ac}));
  EXPECT_EQ(c.vocabulary.id(0x20ac), 3);
  EXPECT_EQ(c.vocabulary.id(U'z'), -1);
  EXPECT_EQ(c.vocabulary.encode("ab\xe2\x82\xac", "prompt"), (std::vector<std::int32_t>{0, 1, 3}));
  try {
    c.vocabulary.encode("abz", "--prompt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--prompt: the character 'z' (U+007A) is not in the model's vocabulary of 4 characters");
  }
  EXPECT_THROW(Vocabulary({U'b', U'a'}), Error);
  EXPECT_THROW(Vocabulary({0xd800}), Error);
}

TEST(TrainCorpus, SameFilesSameCorpusAndFingerprint) {
  const std::vector<CorpusFile> files = {{"a", fortunes(12)}, {"b", "plain text file\n"}};
  const Corpus x = build_corpus(files), y = build_corpus(files);
  EXPECT_EQ(x.train, y.train);
  EXPECT_EQ(x.validation, y.validation);
  EXPECT_EQ(x.fingerprint, y.fingerprint);
  EXPECT_NE(build_corpus({{"a", fortunes(12)}, {"b", "plain text file!\n"}}).fingerprint, x.fingerprint);
  EXPECT_EQ(x.documents, 13);
}

// SplitMix64's published outputs for seed 0 (the reference C implementation), so that every
// platform's data order is the same.
TEST(TrainRng, SplitMix64MatchesTheReferenceSequence) {
  SplitMix64 r(0);
  EXPECT_EQ(r.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(r.next(), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(r.next(), 0x06c45d188009454full);
  SplitMix64 copy(r.state());
  EXPECT_EQ(copy.next(), r.next());
}

TEST(TrainRng, BelowIsInRangeAndRoughlyUniform) {
  SplitMix64 r(42);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    const std::uint64_t v = r.below(7);
    ASSERT_LT(v, 7u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
  EXPECT_EQ(r.below(1), 0u);
  for (int i = 0; i < 1000; ++i) {
    const double u = r.unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(TrainBatches, SamplerIsSeededAndResumable) {
  std::vector<std::int32_t> stream(1000);
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = static_cast<std::int32_t>(i);
  BatchSampler a(stream, 4, 8, 7), b(stream, 4, 8, 7);
  Batch x, y;
  a.next(x);
  b.next(y);
  EXPECT_EQ(x.tokens, y.tokens);
  ASSERT_EQ(x.tokens.size(), 32u);
  for (std::int64_t r = 0; r < 4; ++r)
    for (std::int64_t t = 0; t < 8; ++t) {
      const auto i = static_cast<std::size_t>(r * 8 + t);
      EXPECT_EQ(x.targets[i], x.tokens[i] + 1);  // the next token
      if (t > 0) {
        EXPECT_EQ(x.tokens[i], x.tokens[i - 1] + 1);
      }
    }
  // The state continues the sequence exactly.
  const std::uint64_t state = a.state();
  a.next(x);
  BatchSampler c(stream, 4, 8, 999);
  c.set_state(state);
  c.next(y);
  EXPECT_EQ(x.tokens, y.tokens);
  // The first offsets for seed 7, fixed on every platform (SplitMix64 and Lemire's reduction).
  BatchSampler d(stream, 2, 8, 7);
  d.next(x);
  SplitMix64 r(7);
  EXPECT_EQ(x.tokens[0], static_cast<std::int32_t>(r.below(992)));
  EXPECT_EQ(x.tokens[8], static_cast<std::int32_t>(r.below(992)));
  EXPECT_THROW(BatchSampler(std::span<const std::int32_t>(stream).first(8), 1, 8, 0), Error);
}

TEST(TrainBatches, ValidationWindowsSpanTheStreamEvenly) {
  std::vector<std::int32_t> stream(101);
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = static_cast<std::int32_t>(i);
  const std::vector<Batch> v = validation_batches(stream, 2, 10, 45);  // 45 / 20 -> 2 batches
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].tokens[0], 0);    // first window at 0
  EXPECT_EQ(v[1].tokens[10], 90);  // last window ends at the stream's end
  EXPECT_EQ(v[1].targets[19], 100);
  EXPECT_EQ(v[0].tokens[10], 30);  // 90 / 3
  EXPECT_EQ(v[1].tokens[0], 60);
  EXPECT_EQ(validation_batches(stream, 3, 10, 1).size(), 1u);  // at least one batch
}

TEST(TrainCorpus, UnigramBaselineIsTheFrequencyCrossEntropy) {
  Corpus c;
  c.vocabulary = Vocabulary({U'a', U'b'});
  c.train = {0, 0, 0, 1};  // counts +1: a 4, b 2 of 6
  c.validation = {0, 1};
  EXPECT_NEAR(unigram_baseline(c), -(std::log(4.0 / 6) + std::log(2.0 / 6)) / 2, 1e-12);
}

// The default corpus, where Debian's fortunes package is installed (.ci/install-deps installs it).
TEST(TrainCorpus, DefaultCorpusIsEnglishProseBelowItsUnigramEntropy) {
  std::ifstream probe(default_corpus_paths().front());
  if (!probe) GTEST_SKIP() << "Debian's fortunes package is not installed";
  const Corpus c = load_corpus(default_corpus_paths());
  EXPECT_GT(c.documents, 10000);
  EXPECT_GT(c.train.size(), 2'000'000u);
  EXPECT_GT(c.validation.size(), 200'000u);
  EXPECT_LT(c.vocabulary.size(), 200);
  const double baseline = unigram_baseline(c);
  EXPECT_GT(baseline, 2.5);  // English letters: about 3 nats (4.1 bits) per character
  EXPECT_LT(baseline, 3.5);
}

}  // namespace
}  // namespace ampkit::train
