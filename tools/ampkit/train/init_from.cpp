// --init-from (init_from.hpp).
#include "tools/ampkit/train/init_from.hpp"

#include <algorithm>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/checkpoint.hpp"
#include "ampkit/train/files.hpp"
#include "ampkit/train/safetensors.hpp"

namespace ampkit::tools::train {

using ampkit::train::SafeDType;
using ampkit::train::SafeTensor;
using ampkit::train::SafeTensorsFile;
using ampkit::train::shape_string;

void init_weights_from(ampkit::train::Trainer& trainer, const std::string& path,
                       const ampkit::train::Vocabulary& vocabulary) {
  const std::string what = "--init-from '" + path + "'";
  const std::string bytes = ampkit::train::read_file(path, "--init-from", ampkit::train::kMaxCheckpointBytes);
  const SafeTensorsFile file = ampkit::train::parse_safetensors(bytes, what);
  if (const std::string* v = file.meta("vocabulary"); v != nullptr && *v != vocabulary.utf8())
    throw Error(detail::concat(what, ": its vocabulary is not the training text's (", vocabulary.size(),
                               " characters): token ids would mean other characters"));
  const std::vector<std::string> names = trainer.parameter_names();
  std::vector<const SafeTensor*> sources;
  std::vector<ampkit::train::NamedTensor> params;
  for (ampkit::train::NamedTensor& t : trainer.tensors())
    if (std::find(names.begin(), names.end(), t.name) != names.end()) params.push_back(std::move(t));
  for (const ampkit::train::NamedTensor& p : params) {
    const SafeTensor* s = file.find(p.name);
    if (s == nullptr)
      throw Error(detail::concat(what, ": the model's weight '", p.name, "' ", shape_string(p.shape),
                                 " is missing from the file"));
    if (s->dtype != SafeDType::f32)
      throw Error(detail::concat(what, ": tensor '", p.name, "' is ", ampkit::train::safe_dtype_name(s->dtype),
                                 ", expected F32"));
    if (s->shape != p.shape)
      throw Error(detail::concat(what, ": tensor '", p.name, "' has shape ", shape_string(s->shape),
                                 ", the model expects ", shape_string(p.shape)));
    sources.push_back(s);
  }
  for (const SafeTensor& s : file.tensors)
    if (s.name.find(':') == std::string::npos && std::find(names.begin(), names.end(), s.name) == names.end())
      throw Error(detail::concat(what, ": tensor '", s.name, "' ", shape_string(s.shape),
                                 " is not a weight of this model (--model, --width, --depth, ... differ?)"));
  for (std::size_t i = 0; i < params.size(); ++i) trainer.set_tensor(params[i].name, sources[i]->f32());
}

}  // namespace ampkit::tools::train
