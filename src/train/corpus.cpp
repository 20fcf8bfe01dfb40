// The training text of `ampkit train` (train layer): documents, split, vocabulary,
// batches and the unigram baseline. See corpus.hpp.
#include "ampkit/train/corpus.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "ampkit/core/error.hpp"
#include "ampkit/train/files.hpp"
#include "train/utf8.hpp"

namespace ampkit::train {
namespace {

// Debian 12 (bookworm): fortunes 1:1.99.1-7.3 and fortunes-min (fortunes, literature, riddles).
// ascii-art is left out: pictures, not text.
constexpr const char* kDefaultCorpusFiles[] = {
    "art",       "computers",  "cookie",        "debian",       "definitions", "disclaimer", "drugs",
    "education", "ethnic",     "food",          "fortunes",     "goedel",      "humorists",  "kids",
    "knghtbrd",  "law",        "linux",         "linuxcookie",  "literature",  "love",       "magic",
    "medicine",  "men-women",  "miscellaneous", "news",         "paradoxum",   "people",     "perl",
    "pets",      "platitudes", "politics",      "pratchett",    "riddles",     "science",    "songs-poems",
    "sports",    "startrek",   "tao",           "translate-me", "wisdom",      "work",       "zippy"};

std::int64_t line_of(std::string_view bytes, std::size_t offset) {
  return 1 + std::count(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
}

bool is_blank(std::u32string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char32_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

// The documents of one decoded file: split at lines that are exactly "%" (fortune format) when
// there is one, else the whole text. Blank documents are dropped.
std::vector<std::u32string> split_documents(const std::vector<char32_t>& text) {
  std::vector<std::u32string> docs;
  std::u32string current;
  bool fortune = false;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = i;
    while (end < text.size() && text[end] != U'\n') ++end;
    std::u32string_view line(text.data() + i, end - i);
    if (!line.empty() && line.back() == U'\r') line.remove_suffix(1);
    if (line == U"%") {
      fortune = true;
      if (!is_blank(current)) docs.push_back(current);
      current.clear();
    } else {
      current.append(text.data() + i, text.data() + std::min(end + 1, text.size()));
    }
    i = end + 1;
  }
  if (!fortune) return is_blank(current) ? docs : std::vector<std::u32string>{current};
  if (!is_blank(current)) docs.push_back(current);
  return docs;
}

void append_document(std::u32string& stream, const std::u32string& doc, bool separate) {
  stream += doc;
  if (!separate) return;
  if (stream.empty() || stream.back() != U'\n') stream += U'\n';
  stream += U'\n';
}

std::vector<std::int32_t> tokenize(const Vocabulary& vocab, std::u32string_view text) {
  std::vector<std::int32_t> out(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) out[i] = vocab.id(text[i]);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Vocabulary

Vocabulary::Vocabulary(std::vector<char32_t> chars) : chars_(std::move(chars)) {
  for (std::size_t i = 0; i < chars_.size(); ++i) {
    const char32_t c = chars_[i];
    if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
      throw Error(detail::concat("vocabulary: ", describe_code_point(c), " is not a Unicode scalar value"));
    if (i > 0 && chars_[i - 1] >= c)
      throw Error(detail::concat("vocabulary: characters must be distinct and in increasing order, but ",
                                 describe_code_point(c), " follows ", describe_code_point(chars_[i - 1])));
  }
}

std::int32_t Vocabulary::id(char32_t cp) const {
  const auto it = std::lower_bound(chars_.begin(), chars_.end(), cp);
  return it != chars_.end() && *it == cp ? static_cast<std::int32_t>(it - chars_.begin()) : -1;
}

std::string Vocabulary::decode(std::span<const std::int32_t> tokens) const {
  std::string out;
  out.reserve(tokens.size());
  for (std::int32_t t : tokens) {
    if (t < 0 || t >= size()) throw Error(detail::concat("vocabulary: token id ", t, " is outside [0, ", size(), ")"));
    append_utf8(chars_[static_cast<std::size_t>(t)], out);
  }
  return out;
}

std::vector<std::int32_t> Vocabulary::encode(std::string_view text, std::string_view what) const {
  std::vector<char32_t> cps;
  if (const auto problem = decode_utf8(text, cps))
    throw Error(detail::concat(what, ": not UTF-8 text: ", problem->what, " at byte ", problem->offset));
  std::vector<std::int32_t> out;
  out.reserve(cps.size());
  for (char32_t c : cps) {
    const std::int32_t t = id(c);
    if (t < 0)
      throw Error(detail::concat(what, ": the character ", describe_code_point(c),
                                 " is not in the model's vocabulary of ", size(), " characters"));
    out.push_back(t);
  }
  return out;
}

std::string Vocabulary::utf8() const { return encode_utf8(chars_); }

// ---------------------------------------------------------------------------------------------
// Corpus

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

Corpus build_corpus(const std::vector<CorpusFile>& files) {
  if (files.empty()) throw Error("training data: no files given");
  Corpus corpus;
  std::vector<std::u32string> docs;
  std::uint64_t hash = fnv1a64("");
  for (const CorpusFile& f : files) {
    const std::string who = "data file '" + f.name + "'";
    if (f.bytes.empty()) throw Error(who + ": is empty");
    std::vector<char32_t> text;
    if (const auto problem = decode_utf8(f.bytes, text))
      throw Error(detail::concat(who, ": not UTF-8 text: ", problem->what, " at byte ", problem->offset, " (line ",
                                 line_of(f.bytes, problem->offset), ")",
                                 problem->nul ? "; binary files are not accepted" : ""));
    if (!text.empty() && text.front() == 0xfeff) text.erase(text.begin());  // byte-order mark
    std::vector<std::u32string> file_docs = split_documents(text);
    if (file_docs.empty()) throw Error(who + ": holds no text (only white space or '%' separator lines)");
    for (auto& d : file_docs) docs.push_back(std::move(d));
    hash = fnv1a64(f.name + '\0', hash);
    hash = fnv1a64(f.bytes, hash);
    corpus.bytes += static_cast<std::int64_t>(f.bytes.size());
  }
  corpus.fingerprint = hash;
  corpus.documents = static_cast<std::int64_t>(docs.size());

  std::u32string train, validation;
  const bool separate = docs.size() > 1;
  if (corpus.documents >= kValidationEvery) {
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const bool held_out = static_cast<std::int64_t>(i) % kValidationEvery == kValidationEvery - 1;
      append_document(held_out ? validation : train, docs[i], separate);
      corpus.validation_documents += held_out;
    }
    corpus.split = "every 10th of " + std::to_string(corpus.documents) + " documents is validation text";
  } else {
    std::u32string all;
    for (const auto& d : docs) append_document(all, d, separate);
    const std::size_t held_out = all.size() / static_cast<std::size_t>(kValidationEvery);
    if (held_out == 0)
      throw Error(detail::concat(files.size() == 1 ? "data file '" + files[0].name + "'" : std::string("training data"),
                                 ": holds ", all.size(), " characters; at least ", kValidationEvery,
                                 " are needed to hold out a validation tenth"));
    train = all.substr(0, all.size() - held_out);
    validation = all.substr(all.size() - held_out);
    corpus.split = "the last tenth of the text (" + std::to_string(held_out) + " characters) is validation text";
  }

  std::vector<char32_t> chars(train.begin(), train.end());
  chars.insert(chars.end(), validation.begin(), validation.end());
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  corpus.vocabulary = Vocabulary(std::move(chars));
  corpus.train = tokenize(corpus.vocabulary, train);
  corpus.validation = tokenize(corpus.vocabulary, validation);
  return corpus;
}

Corpus load_corpus(const std::vector<std::string>& paths) {
  std::vector<CorpusFile> files;
  files.reserve(paths.size());
  for (const std::string& p : paths) files.push_back({p, read_data_file(p, "data file", kMaxDataFileBytes)});
  return build_corpus(files);
}

std::vector<std::string> default_corpus_paths() {
  std::vector<std::string> paths;
  for (const char* name : kDefaultCorpusFiles) paths.push_back(std::string(kDefaultCorpusFolder) + "/" + name);
  return paths;
}

void require_default_corpus() {
  for (const std::string& p : default_corpus_paths()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0)
      throw Error(detail::concat("the default training text ", p,
                                 " is missing: install Debian's fortunes package (apt-get install fortunes, as "
                                 ".ci/install-deps does) or give a UTF-8 text file with --data FILE"));
  }
}

// ---------------------------------------------------------------------------------------------
// Batches

BatchSampler::BatchSampler(std::span<const std::int32_t> stream, std::int64_t rows, std::int64_t context,
                           std::uint64_t seed)
    : stream_(stream), rows_(rows), context_(context), rng_(seed) {
  if (rows < 1 || context < 1 || static_cast<std::int64_t>(stream.size()) < context + 1)
    throw Error(detail::concat("BatchSampler: need rows >= 1, context >= 1 and at least context + 1 = ", context + 1,
                               " tokens, but got rows ", rows, ", context ", context, ", ", stream.size(), " tokens"));
}

void BatchSampler::next(Batch& batch) {
  batch.rows = rows_;
  batch.context = context_;
  const auto n = static_cast<std::size_t>(rows_ * context_);
  batch.tokens.resize(n);
  batch.targets.resize(n);
  const auto starts = static_cast<std::uint64_t>(static_cast<std::int64_t>(stream_.size()) - context_);
  for (std::int64_t r = 0; r < rows_; ++r) {
    const std::size_t start = rng_.below(starts);
    const std::size_t row = static_cast<std::size_t>(r * context_);
    std::copy_n(stream_.begin() + static_cast<std::ptrdiff_t>(start), context_,
                batch.tokens.begin() + static_cast<std::ptrdiff_t>(row));
    std::copy_n(stream_.begin() + static_cast<std::ptrdiff_t>(start + 1), context_,
                batch.targets.begin() + static_cast<std::ptrdiff_t>(row));
  }
}

std::vector<Batch> validation_batches(std::span<const std::int32_t> stream, std::int64_t rows, std::int64_t context,
                                      std::int64_t max_tokens) {
  const auto length = static_cast<std::int64_t>(stream.size());
  if (rows < 1 || context < 1 || length < context + 1)
    throw Error(
        detail::concat("validation_batches: need rows >= 1, context >= 1 and at least context + 1 = ", context + 1,
                       " tokens, but got rows ", rows, ", context ", context, ", ", length, " tokens"));
  const std::int64_t count = std::max<std::int64_t>(1, max_tokens / (rows * context));
  const std::int64_t windows = rows * count;
  const std::int64_t last_start = length - context - 1;
  std::vector<Batch> batches(static_cast<std::size_t>(count));
  for (std::int64_t w = 0; w < windows; ++w) {
    Batch& b = batches[static_cast<std::size_t>(w / rows)];
    if (b.tokens.empty()) {
      b.rows = rows, b.context = context;
      b.tokens.resize(static_cast<std::size_t>(rows * context));
      b.targets.resize(static_cast<std::size_t>(rows * context));
    }
    // Evenly spread: w * last_start / (windows - 1), in exact integer arithmetic.
    const std::int64_t start =
        windows == 1 ? 0
                     : static_cast<std::int64_t>(static_cast<Uint128>(w) * static_cast<Uint128>(last_start) /
                                                 static_cast<Uint128>(windows - 1));
    const std::size_t row = static_cast<std::size_t>((w % rows) * context);
    std::copy_n(stream.begin() + start, context, b.tokens.begin() + static_cast<std::ptrdiff_t>(row));
    std::copy_n(stream.begin() + start + 1, context, b.targets.begin() + static_cast<std::ptrdiff_t>(row));
  }
  return batches;
}

double unigram_baseline(const Corpus& corpus) {
  const auto v = static_cast<std::size_t>(corpus.vocabulary.size());
  std::vector<double> counts(v, 1.0);  // add-one smoothing
  for (std::int32_t t : corpus.train) counts[static_cast<std::size_t>(t)] += 1.0;
  const double total = static_cast<double>(corpus.train.size() + v);
  if (corpus.validation.empty()) return 0.0;
  double nll = 0.0;
  for (std::int32_t t : corpus.validation) nll -= std::log(counts[static_cast<std::size_t>(t)] / total);
  return nll / static_cast<double>(corpus.validation.size());
}

}  // namespace ampkit::train
