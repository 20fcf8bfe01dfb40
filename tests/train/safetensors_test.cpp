// Tests of the train layer's checkpoint format (src/train/safetensors, checkpoint, files, json):
// the exact bytes of a small file, round trips, every corruption the reader
// must refuse with its message, the checkpoint's metadata and the atomic write.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/checkpoint.hpp"
#include "ampkit/train/files.hpp"
#include "ampkit/train/json.hpp"
#include "ampkit/train/safetensors.hpp"
#include "tests/train/train_test_support.hpp"

namespace ampkit::train {
namespace {

// A file made of `header` (its length prefixed) and `data`.
std::string file_with_header(const std::string& header, const std::string& data) {
  std::string out;
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string parse_error(const std::string& bytes) {
  try {
    parse_safetensors(bytes, "checkpoint 'c'");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

SafeTensorsFile sample_file() {
  SafeTensorsFile f;
  const float a[] = {1.0f, -2.5f, 3.0f, 0.0f, 1e-30f, -0.0f};
  const double b[] = {1.0 / 3.0};
  f.tensors.push_back(SafeTensor::of_f32("h0.attn.qkv.w", {2, 3}, a));
  f.tensors.push_back(SafeTensor::of_f64("run:loss", {1, 1}, b));
  f.tensors.push_back({"empty", SafeDType::f16, {0, 4}, ""});
  f.tensors.push_back({"ids", SafeDType::i32, {2}, std::string("\x01\x00\x00\x00\xff\xff\xff\x7f", 8)});
  f.tensors.push_back({"caf\xc3\xa9", SafeDType::bf16, {1}, std::string("\x80\x3f", 2)});
  f.metadata = {{"format", "x"}, {"text", "line\n\"quoted\" \xe2\x82\xac"}};
  return f;
}

TEST(Safetensors, WritesTheReferenceLayout) {
  SafeTensorsFile f;
  const float v[] = {1.0f, 2.0f};
  f.tensors.push_back(SafeTensor::of_f32("a", {2}, v));
  f.metadata = {{"k", "v"}};
  const std::string bytes = serialize_safetensors(f);
  const std::string header = R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::size_t padded = (header.size() + 7) / 8 * 8;
  ASSERT_EQ(bytes.size(), 8 + padded + 8);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);  // little-endian (the build asserts it)
  EXPECT_EQ(n, padded);
  EXPECT_EQ(bytes.substr(8, header.size()), header);
  EXPECT_EQ(bytes.substr(8 + header.size(), padded - header.size()), std::string(padded - header.size(), ' '));
  EXPECT_EQ(bytes.substr(8 + padded), std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8));
}

TEST(Safetensors, RoundTripsTensorsAndMetadataExactly) {
  const SafeTensorsFile f = sample_file();
  const SafeTensorsFile r = parse_safetensors(serialize_safetensors(f), "test");
  ASSERT_EQ(r.tensors.size(), f.tensors.size());
  for (std::size_t i = 0; i < f.tensors.size(); ++i) {
    EXPECT_EQ(r.tensors[i].name, f.tensors[i].name);
    EXPECT_EQ(r.tensors[i].dtype, f.tensors[i].dtype);
    EXPECT_EQ(r.tensors[i].shape, f.tensors[i].shape);
    EXPECT_EQ(r.tensors[i].bytes, f.tensors[i].bytes);
  }
  EXPECT_EQ(r.metadata, f.metadata);
  EXPECT_EQ(r.find("h0.attn.qkv.w")->f32()[4], 1e-30f);
  EXPECT_EQ(*r.meta("text"), "line\n\"quoted\" \xe2\x82\xac");
  EXPECT_EQ(serialize_safetensors(r), serialize_safetensors(f));
}

TEST(Safetensors, WriterRefusesInconsistentTensors) {
  SafeTensorsFile f;
  f.tensors.push_back({"a", SafeDType::f32, {3}, std::string(8, '\0')});
  EXPECT_THROW(serialize_safetensors(f), Error);
  f.tensors = {{"__metadata__", SafeDType::u8, {1}, "x"}};
  EXPECT_THROW(serialize_safetensors(f), Error);
  f.tensors = {{"a", SafeDType::u8, {1}, "x"}, {"a", SafeDType::u8, {1}, "y"}};
  EXPECT_THROW(serialize_safetensors(f), Error);
}

TEST(Safetensors, RefusesTruncatedFilesAtEveryPoint) {
  const std::string good = serialize_safetensors(sample_file());
  EXPECT_EQ(parse_error(good.substr(0, 5)),
            "checkpoint 'c': truncated: 5 bytes, but a safetensors file starts with an 8-byte header length");
  const std::string in_header = parse_error(good.substr(0, 40));
  EXPECT_EQ(in_header.rfind("checkpoint 'c': truncated: the header needs ", 0), 0u) << in_header;
  const std::string in_data = parse_error(good.substr(0, good.size() - 3));
  EXPECT_EQ(in_data.rfind("checkpoint 'c': truncated: tensor '", 0), 0u) << in_data;
  // Every cut is refused, none crashes.
  for (std::size_t cut = 0; cut < good.size(); ++cut) EXPECT_NE(parse_error(good.substr(0, cut)), "no error") << cut;
}

TEST(Safetensors, RefusesEveryMalformedHeaderWithItsReason) {
  const std::string d8(8, '\0');
  const struct {
    std::string header, data;
    const char* message;
  } cases[] = {
      {"", "", "the header length is 0; not a safetensors file"},
      {"[1]", "", "the header does not start with '{'; not a safetensors file"},
      {"{\"a\":", "",
       "the header is not valid JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', "
       "or a literal at byte 5 of the header"},
      {"{\"a\":{}} x", "",
       "the header is not valid JSON: syntax error while parsing value - invalid literal; last read: '\"a\":{}} x'; "
       "expected end of input at byte 9 of the header"},
      {R"({"a":1})", "", "tensor 'a' is a number, not an object"},
      {R"({"a":{"dtype":"F32","shape":[2]}})", d8, "tensor 'a' lacks data_offsets"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1}})", d8,
       "tensor 'a' has an unknown key 'extra' (expected dtype, shape, data_offsets)"},
      {R"({"a":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}})", d8,
       "tensor 'a' has the unsupported dtype 'F8_E4M3'"},
      {R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", d8,
       "tensor 'a' of dtype F32 and shape [3] needs 12 bytes, but its data_offsets [0, 8] hold 8"},
      {R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", d8,
       "tensor 'a': shape holds '-2'; expected non-negative integers"},
      {R"({"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", d8,
       "tensor 'a': shape holds '2.0'; expected non-negative integers"},
      {R"({"a":{"dtype":"U8","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}})", d8,
       "tensor 'a' of dtype U8 and shape [4294967296, 4294967296, 4294967296] needs more than 2^64 bytes, but its "
       "data_offsets [0, 8] hold 8"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", d8,
       "tensor 'a': data_offsets [8, 0] end before they begin"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", d8,
       "tensor 'a': data_offsets is not an array [begin, end]"},
      {R"({"a":{"dtype":"F32","shape":[200],"data_offsets":[0,800]}})", d8,
       "truncated: tensor 'a' needs bytes [0, 800) of the data, but the file holds only 8 bytes of data"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
       std::string(12, '\0'), "bytes [4, 8) of the data belong to no tensor (a hole before 'b')"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
       std::string(12, '\0'), "tensor 'b' (bytes [4, 12)) overlaps the tensor before it"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", d8,
       "4 bytes follow the last tensor's data (8 bytes of data, tensors cover 4)"},
      {R"({"__metadata__":{"step":3}})", "", "__metadata__ value of 'step' is a number, not a string"},
      {R"({"__metadata__":[]})", "", "__metadata__ is an array, not an object of strings"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
       d8, "the header is not valid JSON: duplicate key \"a\" in an object of the header"},
      {"{\"\xff\":1}", "",
       "the header is not valid JSON: syntax error while parsing object key - invalid string: ill-formed UTF-8 byte; "
       "last read: '\"\xff'; expected string literal at byte 2 of the header"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(parse_error(file_with_header(c.header, c.data)), std::string("checkpoint 'c': ") + c.message) << c.header;
  std::string huge(8, '\0');
  huge[4] = 1;  // 2^32 bytes of header
  EXPECT_EQ(parse_error(huge),
            "checkpoint 'c': the header length is 4294967296 bytes, more than the 100000000 allowed; "
            "not a safetensors file, or a corrupt one");
}

TEST(ParseJson, ReadsTheWholeGrammarStrictly) {
  const Json v = parse_json(R"( {"b":[1,-2.5e3,true,false,null,"\u00e9\ud83d\ude00\n"],"a":{}} )");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.begin().key(), "b");  // the text's order
  const Json& items = v["b"];
  ASSERT_EQ(items.size(), 6u);
  EXPECT_EQ(json_uint64(items[0]), 1u);
  EXPECT_EQ(items[1].get<double>(), -2500.0);
  EXPECT_FALSE(json_uint64(items[1]));
  EXPECT_EQ(json_kind_name(items[2]), "true or false");
  EXPECT_EQ(json_kind_name(items[4]), "null");
  EXPECT_EQ(items[5].get<std::string>(), "\xc3\xa9\xf0\x9f\x98\x80\n");
  EXPECT_EQ(json_uint64(parse_json("18446744073709551615")), 18446744073709551615ull);
  EXPECT_FALSE(json_uint64(parse_json("18446744073709551616")));
  EXPECT_FALSE(json_uint64(parse_json("-1")));
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "\"\\x\"", "\"a\nb\"", "\"\\ud800\"", "tru",
                          "{\"a\" 1}", "[1 2]", "// c\n1", "NaN", "{\"a\":1,\"a\":2}", "[{\"a\":{},\"a\":1}]"})
    EXPECT_THROW(parse_json(bad), JsonSyntaxError) << bad;
  EXPECT_NO_THROW(parse_json(R"([{"a":1},{"a":2}])"));  // the same key in two objects
  EXPECT_THROW(parse_json(std::string(65, '[') + std::string(65, ']')), JsonSyntaxError);
  EXPECT_NO_THROW(parse_json(std::string(64, '[') + std::string(64, ']')));
}

Checkpoint sample_checkpoint() {
  Checkpoint c;
  c.metadata = {{"run", "{\"width\":16}"}, {"note", "caf\xc3\xa9"}};
  c.step = 20;
  c.optimizer_steps = 18;
  c.data_rng = 0xfedcba9876543210ull;
  c.loss_scale = {32768.0, 5, 2};
  c.vocabulary = Vocabulary({U'\n', U' ', U'a', 0xe9});
  c.data_fingerprint = 0x0123456789abcdefull;
  c.train_curve = {{1, 4.5}, {2, 4.25}};
  c.validation_curve = {{0, 4.6}, {20, 3.1}};
  const float w[] = {1, 2, 3, 4, 5, 6};
  c.tensors = {SafeTensor::of_f32("emb.w", {3, 2}, w), SafeTensor::of_f32("emb.w:adam_m", {3, 2}, w)};
  return c;
}

std::string checkpoint_error(const SafeTensorsFile& f) {
  try {
    checkpoint_from_file(f, "checkpoint 'c'");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TrainCheckpointFile, SavesAndLoadsEveryField) {
  TempDir dir;
  const std::string path = dir.file("run.safetensors");
  const Checkpoint c = sample_checkpoint();
  save_checkpoint(path, c);
  const Checkpoint r = load_checkpoint(path);
  EXPECT_EQ(r.metadata, c.metadata);
  EXPECT_EQ(r.step, 20);
  EXPECT_EQ(r.optimizer_steps, 18);
  EXPECT_EQ(r.data_rng, c.data_rng);
  EXPECT_EQ(r.loss_scale, c.loss_scale);
  EXPECT_EQ(r.vocabulary, c.vocabulary);
  EXPECT_EQ(r.data_fingerprint, c.data_fingerprint);
  EXPECT_EQ(r.train_curve, c.train_curve);
  EXPECT_EQ(r.validation_curve, c.validation_curve);
  ASSERT_EQ(r.tensors.size(), 2u);
  EXPECT_EQ(r.tensors[1].name, "emb.w:adam_m");
  EXPECT_EQ(r.tensors[0].f32(), c.tensors[0].f32());
  // Nothing but the checkpoint is left in the folder.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(TrainCheckpointFile, RefusesMissingOrMalformedMetadata) {
  const SafeTensorsFile good = checkpoint_to_file(sample_checkpoint());
  EXPECT_EQ(checkpoint_error(good), "no error");
  auto with = [&](const char* key, const std::string& value) {
    SafeTensorsFile f = good;
    for (auto& [k, v] : f.metadata)
      if (k == key) v = value;
    return checkpoint_error(f);
  };
  auto without = [&](const char* key) {
    SafeTensorsFile f = good;
    std::erase_if(f.metadata, [&](const auto& kv) { return kv.first == key; });
    return checkpoint_error(f);
  };
  EXPECT_EQ(without("format"), "checkpoint 'c': no \"format\" in the metadata; not a checkpoint of ampkit train");
  EXPECT_EQ(with("format", "ampkit-train-0"),
            "checkpoint 'c': the format is 'ampkit-train-0', but this version of ampkit reads 'ampkit-train-1'");
  EXPECT_EQ(without("step"), "checkpoint 'c': the metadata lacks \"step\"; not a checkpoint of ampkit train");
  EXPECT_EQ(with("step", "-1"), "checkpoint 'c': the metadata \"step\" is '-1'; expected a non-negative integer");
  EXPECT_EQ(with("optimizer_steps", "21"),
            "checkpoint 'c': the metadata \"optimizer_steps\" (21) exceeds \"step\" (20)");
  EXPECT_EQ(with("data_rng", "0x12"),
            "checkpoint 'c': the metadata \"data_rng\" is '0x12'; expected a non-negative integer");
  EXPECT_NE(with("loss_scale", "{\"scale\":0,\"good_steps\":0,\"skipped_steps\":0}").find("expected {\"scale\": > 0"),
            std::string::npos);
  EXPECT_NE(with("loss_scale", "{").find("\"loss_scale\" is not valid JSON"), std::string::npos);
  EXPECT_EQ(with("vocabulary", "ba"),
            "checkpoint 'c': the metadata \"vocabulary\": vocabulary: characters must be distinct and in increasing "
            "order, but 'a' (U+0061) follows 'b' (U+0062)");
  EXPECT_EQ(with("vocabulary", ""), "no error");  // a run on token ids has none (ampkit train requires one)
  EXPECT_EQ(with("data_fingerprint", "xyz"),
            "checkpoint 'c': the metadata \"data_fingerprint\" is 'xyz'; expected 16 hex digits");
  EXPECT_EQ(with("note", "changed"), "no error");  // the caller's entries are the caller's to check
  SafeTensorsFile no_curve = good;
  std::erase_if(no_curve.tensors, [](const SafeTensor& t) { return t.name == "run:validation_loss"; });
  EXPECT_EQ(checkpoint_error(no_curve), "checkpoint 'c': the tensor 'run:validation_loss' is missing");
  SafeTensorsFile bad_curve = good;
  for (SafeTensor& t : bad_curve.tensors)
    if (t.name == "run:train_loss") t = SafeTensor::of_f32("run:train_loss", {1}, std::vector<float>{1.0f});
  EXPECT_EQ(checkpoint_error(bad_curve),
            "checkpoint 'c': the tensor 'run:train_loss' must be F64 of shape [N, 2], but is F32 [1]");
}

TEST(TrainCheckpointFile, CallerMetadataFollowsTheFormatAndKeepsItsOrder) {
  const SafeTensorsFile f = checkpoint_to_file(sample_checkpoint());
  ASSERT_GE(f.metadata.size(), 4u);
  EXPECT_EQ(f.metadata[0].first, "format");
  EXPECT_EQ(f.metadata[1].first, "run");
  EXPECT_EQ(f.metadata[2].first, "note");
  EXPECT_EQ(f.metadata[3].first, "step");
  // The loss scale is written in its shortest form (65536, not 65536.0), as earlier versions did.
  Checkpoint c = sample_checkpoint();
  c.loss_scale = {65536.0, 0, 0};
  EXPECT_EQ(*checkpoint_to_file(c).meta("loss_scale"), R"({"scale":65536,"good_steps":0,"skipped_steps":0})");
  c.metadata.emplace_back("step", "3");
  try {
    checkpoint_to_file(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "checkpoint_to_file: the metadata key 'step' is the checkpoint's own; choose another name");
  }
}

TEST(TrainCheckpointFile, TensorsMustMatchTheModel) {
  const Checkpoint c = sample_checkpoint();
  auto error = [&](const std::vector<TensorSpec>& specs) {
    try {
      check_checkpoint_tensors(c, specs, "--resume 'c'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error({{"emb.w", {3, 2}}, {"emb.w:adam_m", {3, 2}}}), "no error");
  EXPECT_EQ(error({{"emb.w", {4, 2}}, {"emb.w:adam_m", {3, 2}}}),
            "--resume 'c': the tensor 'emb.w' has shape [3, 2], but this model's is [4, 2]");
  EXPECT_EQ(error({{"emb.w", {3, 2}}, {"emb.w:adam_m", {3, 2}}, {"out.w", {2, 2}}}),
            "--resume 'c': the tensor 'out.w' that this model needs is missing");
  EXPECT_EQ(error({{"emb.w", {3, 2}}}), "--resume 'c': the tensor 'emb.w:adam_m' is not part of this model");
}

TEST(TrainCheckpointFile, CorruptFilesOnDiskAreRefusedByName) {
  TempDir dir;
  const std::string path = dir.file("c.safetensors");
  save_checkpoint(path, sample_checkpoint());
  const std::string good = slurp(path);
  spit(path, good.substr(0, good.size() / 2));
  try {
    load_checkpoint(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("checkpoint '" + path + "': truncated: ", 0), 0u) << e.what();
  }
  try {
    load_checkpoint(dir.file("missing"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "checkpoint '" + dir.file("missing") + "': cannot open it: No such file or directory");
  }
}

TEST(TrainFiles, AFailedWriteLeavesThePreviousFileIntact) {
  TempDir dir;
  const std::string path = dir.file("c.safetensors");
  write_file_atomically(path, "first", "checkpoint");
  // The temporary name is taken by a folder: the write fails before touching `path`.
  std::filesystem::create_directory(path + ".tmp-" + std::to_string(::getpid()));
  EXPECT_THROW(write_file_atomically(path, "second", "checkpoint"), Error);
  EXPECT_EQ(slurp(path), "first");
  std::filesystem::remove(path + ".tmp-" + std::to_string(::getpid()));
  write_file_atomically(path, "second", "checkpoint");
  EXPECT_EQ(slurp(path), "second");
}

TEST(TrainFiles, OutputPathsAreCheckedUpFront) {
  TempDir dir;
  EXPECT_NO_THROW(check_output_path(dir.file("log.jsonl"), "--log"));
  EXPECT_FALSE(std::filesystem::exists(dir.file("log.jsonl")));  // the probe is removed
  try {
    check_output_path(dir.file("no/such/log.jsonl"), "--log");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--log '" + dir.file("no/such/log.jsonl") + "': the folder '" + dir.file("no/such") + "' does not exist");
  }
  try {
    check_output_path(dir.path(), "--plot");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--plot '" + dir.path() + "': is a folder; expected a file name");
  }
  EXPECT_EQ(parent_folder("a.txt"), ".");
  EXPECT_EQ(parent_folder("/a.txt"), "/");
  EXPECT_EQ(parent_folder("x/y/a.txt"), "x/y");
}

}  // namespace
}  // namespace ampkit::train
