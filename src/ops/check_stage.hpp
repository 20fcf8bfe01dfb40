// The two stages of an op's argument check (ops layer, internal): the descriptor rules, which need
// no memory, and the memory rules. Every validator in src/ops/<op>/ and src/layers/ takes a Stage;
// the op call runs both, the public *_descriptor_check queries run the first only.
#pragma once

namespace ampkit::ops {

/// What a validator checks. Stage::descriptor (stage 1): the rules over presence, rank, shape,
/// strides, dtype, device kind and index, and the op's attributes — a view's data may be null
/// and is never read or looked up (the graph verifier checks nodes this way, before memory
/// exists). Stage::call: stage 1 and stage 2, the memory rules (data given where there are
/// elements, device memory of that GPU, no forbidden overlap), checked in the same single pass
/// as before, so a call fails with the message it always failed with and costs nothing more.
enum class Stage { descriptor, call };

}  // namespace ampkit::ops
