// Checkpoints of `ampkit train` on the safetensors format (tools layer, train/). See checkpoint.hpp.
#include "tools/ampkit/train/checkpoint.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "ampkit/core/error.hpp"
#include "tools/ampkit/common/json_line.hpp"
#include "tools/ampkit/train/files.hpp"
#include "tools/ampkit/train/json_value.hpp"
#include "tools/ampkit/train/utf8.hpp"

namespace ampkit::tools::train {
namespace {

constexpr const char* kTrainCurve = "run:train_loss";
constexpr const char* kValidationCurve = "run:validation_loss";

SafeTensor curve_tensor(const char* name, const std::vector<CurvePoint>& curve) {
  std::vector<double> values;
  values.reserve(2 * curve.size());
  for (const CurvePoint& p : curve) {
    values.push_back(static_cast<double>(p.step));
    values.push_back(p.loss);
  }
  return SafeTensor::of_f64(name, {static_cast<std::int64_t>(curve.size()), 2}, values);
}

std::string hex64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s.append(i ? ", " : "").append(std::to_string(shape[i]));
  return s + "]";
}

SafeTensorsFile checkpoint_to_file(const TrainCheckpoint& c) {
  SafeTensorsFile f;
  tools::JsonLine scale;
  scale.add("scale", c.loss_scale.scale)
      .add("good_steps", c.loss_scale.good_steps)
      .add("skipped_steps", c.loss_scale.skipped_steps);
  f.metadata = {{"format", kCheckpointFormat},
                {"config", config_to_json(c.config)},
                {"step", std::to_string(c.step)},
                {"optimizer_steps", std::to_string(c.optimizer_steps)},
                {"data_rng", std::to_string(c.data_rng)},
                {"loss_scale", scale.str()},
                {"vocabulary", c.vocabulary.utf8()},
                {"data_fingerprint", hex64(c.data_fingerprint)}};
  f.tensors = c.tensors;
  f.tensors.push_back(curve_tensor(kTrainCurve, c.train_curve));
  f.tensors.push_back(curve_tensor(kValidationCurve, c.validation_curve));
  return f;
}

TrainCheckpoint checkpoint_from_file(const SafeTensorsFile& f, std::string_view what) {
  auto fail = [&](auto&&... parts) -> void { throw Error(detail::concat(what, ": ", parts...)); };
  auto meta = [&](const char* key) -> const std::string& {
    const std::string* v = f.meta(key);
    if (!v) fail("the metadata lacks \"", key, "\"; not a checkpoint of ampkit train");
    return *v;
  };
  auto integer = [&](const char* key) {
    const std::string& s = meta(key);
    std::uint64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
      fail("the metadata \"", key, "\" is '", s, "'; expected a non-negative integer");
    return v;
  };
  const std::string* format = f.meta("format");
  if (!format) fail("no \"format\" in the metadata; not a checkpoint of ampkit train");
  if (*format != kCheckpointFormat)
    fail("the format is '", *format, "', but this version of ampkit reads '", kCheckpointFormat, "'");

  TrainCheckpoint c;
  c.config = config_from_json(meta("config"), what);
  const std::uint64_t step = integer("step"), optimizer_steps = integer("optimizer_steps");
  if (step > static_cast<std::uint64_t>(INT64_MAX) || optimizer_steps > step)
    fail("the metadata \"optimizer_steps\" (", optimizer_steps, ") exceeds \"step\" (", step, ")");
  c.step = static_cast<std::int64_t>(step);
  c.optimizer_steps = static_cast<std::int64_t>(optimizer_steps);
  c.data_rng = integer("data_rng");

  JsonValue scale;
  try {
    scale = JsonValue::parse(meta("loss_scale"));
  } catch (const JsonSyntaxError& e) {
    fail("the metadata \"loss_scale\" is not valid JSON: ", e.what());
  }
  const JsonValue* s = scale.find("scale");
  const JsonValue* good = scale.find("good_steps");
  const JsonValue* skipped = scale.find("skipped_steps");
  if (!s || !good || !skipped || !s->as_double() || !(*s->as_double() > 0.0) || !std::isfinite(*s->as_double()) ||
      !good->as_uint64() || !skipped->as_uint64())
    fail("the metadata \"loss_scale\" is '", meta("loss_scale"),
         "'; expected {\"scale\": > 0, \"good_steps\": N, \"skipped_steps\": N}");
  c.loss_scale = {*s->as_double(), static_cast<std::int64_t>(*good->as_uint64()),
                  static_cast<std::int64_t>(*skipped->as_uint64())};

  std::vector<char32_t> chars;
  if (decode_utf8(meta("vocabulary"), chars)) fail("the metadata \"vocabulary\" is not valid UTF-8");
  if (chars.empty()) fail("the metadata \"vocabulary\" is empty");
  try {
    c.vocabulary = Vocabulary(std::move(chars));
  } catch (const Error& e) {
    fail("the metadata \"vocabulary\": ", e.what());
  }
  const std::string& fp = meta("data_fingerprint");
  const auto r = std::from_chars(fp.data(), fp.data() + fp.size(), c.data_fingerprint, 16);
  if (fp.size() != 16 || r.ec != std::errc() || r.ptr != fp.data() + fp.size())
    fail("the metadata \"data_fingerprint\" is '", fp, "'; expected 16 hex digits");

  for (const SafeTensor& t : f.tensors) {
    if (t.name == kTrainCurve || t.name == kValidationCurve) {
      if (t.dtype != SafeDType::f64 || t.shape.size() != 2 || t.shape[1] != 2)
        fail("the tensor '", t.name, "' must be F64 of shape [N, 2], but is ", safe_dtype_name(t.dtype), " ",
             shape_string(t.shape));
      const std::vector<double> v = t.f64();
      std::vector<CurvePoint>& curve = t.name == kTrainCurve ? c.train_curve : c.validation_curve;
      for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
        if (!(v[i] >= 0.0 && v[i] <= 9e15) || v[i] != std::floor(v[i]))
          fail("the tensor '", t.name, "' holds the step ", v[i], "; expected a whole number");
        curve.push_back({static_cast<std::int64_t>(v[i]), v[i + 1]});
      }
      continue;
    }
    c.tensors.push_back(t);
  }
  if (!f.find(kTrainCurve) || !f.find(kValidationCurve))
    fail("the tensor '", f.find(kTrainCurve) ? kValidationCurve : kTrainCurve, "' is missing");
  return c;
}

void save_checkpoint(const std::string& path, const TrainCheckpoint& checkpoint) {
  write_file_atomically(path, serialize_safetensors(checkpoint_to_file(checkpoint)), "checkpoint");
}

TrainCheckpoint load_checkpoint(const std::string& path) {
  const std::string what = "checkpoint '" + path + "'";
  const std::string bytes = read_file(path, "checkpoint", kMaxCheckpointBytes);
  return checkpoint_from_file(parse_safetensors(bytes, what), what);
}

void check_checkpoint_tensors(const TrainCheckpoint& c, const std::vector<TensorSpec>& expected,
                              std::string_view what) {
  auto fail = [&](auto&&... parts) -> void { throw Error(detail::concat(what, ": ", parts...)); };
  for (const TensorSpec& e : expected) {
    const SafeTensor* found = nullptr;
    for (const SafeTensor& t : c.tensors)
      if (t.name == e.name) found = &t;
    if (!found) fail("the tensor '", e.name, "' that this model needs is missing");
    if (found->dtype != SafeDType::f32)
      fail("the tensor '", e.name, "' is ", safe_dtype_name(found->dtype), "; expected F32");
    if (found->shape != e.shape)
      fail("the tensor '", e.name, "' has shape ", shape_string(found->shape), ", but this model's is ",
           shape_string(e.shape));
  }
  for (const SafeTensor& t : c.tensors) {
    bool known = false;
    for (const TensorSpec& e : expected) known = known || e.name == t.name;
    if (!known) fail("the tensor '", t.name, "' is not part of this model");
  }
}

}  // namespace ampkit::tools::train
