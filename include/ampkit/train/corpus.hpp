// The training text of `ampkit train` (train layer): UTF-8 files read strictly, split
// into documents, a deterministic train/validation split, the character vocabulary and int32
// token streams; the seeded batch sampler and the fixed validation windows; the unigram
// baseline a trained model must beat. The default corpus is the fortune cookies of Debian's
// `fortunes` package (real English prose, quotations and verse, about 2.5 M characters).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ampkit/train/rng.hpp"

namespace ampkit::train {

/// The characters of a model: distinct Unicode code points, sorted; token id = index.
class Vocabulary {
 public:
  Vocabulary() = default;
  /// `chars` must be strictly increasing Unicode scalar values (throws ampkit::Error otherwise).
  explicit Vocabulary(std::vector<char32_t> chars);

  std::int64_t size() const { return static_cast<std::int64_t>(chars_.size()); }
  const std::vector<char32_t>& chars() const { return chars_; }
  /// The token id of `cp`, or -1 when it is not in the vocabulary.
  std::int32_t id(char32_t cp) const;
  /// The UTF-8 text of `tokens` (each in [0, size())).
  std::string decode(std::span<const std::int32_t> tokens) const;
  /// The tokens of UTF-8 `text`; throws ampkit::Error naming `what` and the first character
  /// that is not in the vocabulary, or the first invalid UTF-8 byte.
  std::vector<std::int32_t> encode(std::string_view text, std::string_view what) const;
  /// The vocabulary as one UTF-8 string (its characters in order), as checkpoints store it.
  std::string utf8() const;

  bool operator==(const Vocabulary&) const = default;

 private:
  std::vector<char32_t> chars_;
};

/// One input: a name for messages (the file path) and its bytes.
struct CorpusFile {
  std::string name;
  std::string bytes;
};

/// The token streams of a corpus.
struct Corpus {
  Vocabulary vocabulary;                        // every character of every file
  std::vector<std::int32_t> train, validation;  // token ids
  std::int64_t documents = 0, validation_documents = 0;
  std::string split;              // how the split was made, for the report
  std::uint64_t fingerprint = 0;  // FNV-1a 64 of the files' names and bytes
  std::int64_t bytes = 0;         // total size of the files
};

/// Every 10th document (index 9, 19, ...) is validation text when there are at least this
/// many documents; otherwise the last tenth of the text is.
constexpr std::int64_t kValidationEvery = 10;
/// Largest accepted data file (1 GiB): its tokens take 4 bytes per character.
constexpr std::uint64_t kMaxDataFileBytes = std::uint64_t{1} << 30;

/// Builds the corpus of `files`, in order. A file in fortune format (some line is exactly "%")
/// is split into its documents at those lines; any other file is one document. Documents are
/// joined with a blank line between them. A leading byte-order mark is dropped. Throws
/// ampkit::Error naming the file when one is empty, holds a NUL byte or invalid UTF-8 (with the
/// byte offset and line), holds no text, or when the text is too short to split (fewer than
/// kValidationEvery characters).
Corpus build_corpus(const std::vector<CorpusFile>& files);

/// Reads and builds the corpus of `paths`, each plain or gzip-compressed (read_data_file's errors
/// for missing, unreadable or corrupt files).
Corpus load_corpus(const std::vector<std::string>& paths);

/// The folder of the default corpus and its files (Debian 12's `fortunes` and `fortunes-min`
/// packages, every text file except the ASCII-art pictures), in this fixed order.
constexpr const char* kDefaultCorpusFolder = "/usr/share/games/fortunes";
std::vector<std::string> default_corpus_paths();
/// Throws ampkit::Error saying to install Debian's `fortunes` package (or to pass --data) when
/// a file of the default corpus is missing.
void require_default_corpus();

/// Inputs and next-token targets of `rows` windows of `context` tokens, row-major [rows, context].
struct Batch {
  std::int64_t rows = 0, context = 0;
  std::vector<std::int32_t> tokens, targets;
};

/// Random training windows: each row starts at an offset drawn uniformly from the stream by a
/// SplitMix64 seeded with the run's seed; the generator's state is the data-order state a
/// checkpoint saves. `stream` must outlive the sampler and hold at least context + 1 tokens.
class BatchSampler {
 public:
  BatchSampler(std::span<const std::int32_t> stream, std::int64_t rows, std::int64_t context, std::uint64_t seed);
  /// Fills `batch` with the next rows (the generator advances by exactly `rows` draws).
  void next(Batch& batch);
  std::uint64_t state() const { return rng_.state(); }
  void set_state(std::uint64_t state) { rng_ = SplitMix64(state); }

 private:
  std::span<const std::int32_t> stream_;
  std::int64_t rows_, context_;
  SplitMix64 rng_;
};

/// The fixed validation batches: rows x batches windows whose starts are spread evenly over
/// `stream` (the first at 0, the last at the end), with batches = max(1, max_tokens / (rows x
/// context)). The same every time, so validation losses of any runs compare. `stream` must
/// hold at least context + 1 tokens.
std::vector<Batch> validation_batches(std::span<const std::int32_t> stream, std::int64_t rows, std::int64_t context,
                                      std::int64_t max_tokens);

/// Cross-entropy (nats per character) of the validation stream under the training stream's
/// character frequencies (add-one smoothed): the loss of a model that ignores context.
double unigram_baseline(const Corpus& corpus);

/// FNV-1a 64 of `bytes`, continuing from `hash`.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ull);

}  // namespace ampkit::train
