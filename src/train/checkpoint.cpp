// Checkpoints on the safetensors format (train layer). See checkpoint.hpp.
#include "ampkit/train/checkpoint.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "ampkit/core/error.hpp"
#include "ampkit/train/files.hpp"
#include "ampkit/train/json.hpp"
#include "train/utf8.hpp"

namespace ampkit::train {
namespace {

constexpr const char* kTrainCurve = "run:train_loss";
constexpr const char* kValidationCurve = "run:validation_loss";
// The state's own metadata keys, in the order written (the caller's entries go after "format").
constexpr const char* kStateKeys[] = {"format",     "step",       "optimizer_steps", "data_rng",
                                      "loss_scale", "vocabulary", "data_fingerprint"};

bool is_state_key(std::string_view key) {
  for (const char* k : kStateKeys)
    if (key == k) return true;
  return false;
}

// The shortest decimal text that reads back as `v` (finite): 65536, not 65536.0, as the
// checkpoints of earlier versions hold it.
std::string shortest_decimal(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

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

const std::string* Checkpoint::meta(std::string_view key) const {
  for (const auto& [k, v] : metadata)
    if (k == key) return &v;
  return nullptr;
}

SafeTensorsFile checkpoint_to_file(const Checkpoint& c) {
  for (const auto& [key, value] : c.metadata)
    if (is_state_key(key))
      throw Error(detail::concat("checkpoint_to_file: the metadata key '", key,
                                 "' is the checkpoint's own; choose another name"));
  SafeTensorsFile f;
  f.metadata.emplace_back("format", kCheckpointFormat);
  f.metadata.insert(f.metadata.end(), c.metadata.begin(), c.metadata.end());
  const std::string scale = "{\"scale\":" + shortest_decimal(c.loss_scale.scale) +
                            ",\"good_steps\":" + std::to_string(c.loss_scale.good_steps) +
                            ",\"skipped_steps\":" + std::to_string(c.loss_scale.skipped_steps) + "}";
  f.metadata.insert(f.metadata.end(), {{"step", std::to_string(c.step)},
                                       {"optimizer_steps", std::to_string(c.optimizer_steps)},
                                       {"data_rng", std::to_string(c.data_rng)},
                                       {"loss_scale", scale},
                                       {"vocabulary", c.vocabulary.utf8()},
                                       {"data_fingerprint", hex64(c.data_fingerprint)}});
  f.tensors = c.tensors;
  f.tensors.push_back(curve_tensor(kTrainCurve, c.train_curve));
  f.tensors.push_back(curve_tensor(kValidationCurve, c.validation_curve));
  return f;
}

Checkpoint checkpoint_from_file(const SafeTensorsFile& f, std::string_view what) {
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

  Checkpoint c;
  for (const auto& [key, value] : f.metadata)
    if (!is_state_key(key)) c.metadata.emplace_back(key, value);
  const std::uint64_t step = integer("step"), optimizer_steps = integer("optimizer_steps");
  if (step > static_cast<std::uint64_t>(INT64_MAX) || optimizer_steps > step)
    fail("the metadata \"optimizer_steps\" (", optimizer_steps, ") exceeds \"step\" (", step, ")");
  c.step = static_cast<std::int64_t>(step);
  c.optimizer_steps = static_cast<std::int64_t>(optimizer_steps);
  c.data_rng = integer("data_rng");

  Json scale;
  try {
    scale = parse_json(meta("loss_scale"));
  } catch (const JsonSyntaxError& e) {
    fail("the metadata \"loss_scale\" is not valid JSON: ", e.what());
  }
  const Json* s = scale.is_object() && scale.contains("scale") ? &scale["scale"] : nullptr;
  const Json* good = scale.is_object() && scale.contains("good_steps") ? &scale["good_steps"] : nullptr;
  const Json* skipped = scale.is_object() && scale.contains("skipped_steps") ? &scale["skipped_steps"] : nullptr;
  if (!s || !good || !skipped || !s->is_number() || !(s->get<double>() > 0.0) || !std::isfinite(s->get<double>()) ||
      !json_uint64(*good) || !json_uint64(*skipped))
    fail("the metadata \"loss_scale\" is '", meta("loss_scale"),
         "'; expected {\"scale\": > 0, \"good_steps\": N, \"skipped_steps\": N}");
  c.loss_scale = {s->get<double>(), static_cast<std::int64_t>(*json_uint64(*good)),
                  static_cast<std::int64_t>(*json_uint64(*skipped))};

  std::vector<char32_t> chars;
  if (decode_utf8(meta("vocabulary"), chars)) fail("the metadata \"vocabulary\" is not valid UTF-8");
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

void save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  write_file_atomically(path, serialize_safetensors(checkpoint_to_file(checkpoint)), "checkpoint");
}

Checkpoint load_checkpoint(const std::string& path) {
  const std::string what = "checkpoint '" + path + "'";
  const std::string bytes = read_file(path, "checkpoint", kMaxCheckpointBytes);
  return checkpoint_from_file(parse_safetensors(bytes, what), what);
}

void check_checkpoint_tensors(const Checkpoint& c, const std::vector<TensorSpec>& expected, std::string_view what) {
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

void save_trainer_state(Trainer& trainer, Checkpoint& c) {
  c.tensors.clear();
  for (const NamedTensor& n : trainer.tensors()) {
    if (n.dtype != DType::f32)
      throw Error(detail::concat("save_trainer_state: the trainer's tensor '", n.name, "' is ", dtype_name(n.dtype),
                                 ", not f32"),
                  ErrorKind::internal);
    c.tensors.push_back(SafeTensor::of_f32(n.name, n.shape, {n.data, static_cast<std::size_t>(n.numel())}));
  }
  c.optimizer_steps = trainer.step_count();
  const LossScaleState s = trainer.loss_scale();
  c.loss_scale = {s.scale, s.good_steps, s.skipped_steps};
}

std::vector<TensorSpec> trainer_tensor_specs(Trainer& trainer) {
  std::vector<TensorSpec> specs;
  for (const NamedTensor& n : trainer.tensors()) specs.push_back({n.name, n.shape});
  return specs;
}

void restore_trainer_state(Trainer& trainer, const Checkpoint& c, std::string_view what) {
  check_checkpoint_tensors(c, trainer_tensor_specs(trainer), what);
  for (const SafeTensor& t : c.tensors) trainer.set_tensor(t.name, t.f32());
  trainer.set_step_count(c.optimizer_steps);
  trainer.set_loss_scale({static_cast<float>(c.loss_scale.scale), c.loss_scale.good_steps, c.loss_scale.skipped_steps});
}

}  // namespace ampkit::train
