// The GEMM a peer is asked to time (tools layer, bench/peers/). See peer_shape.hpp.
#include "tools/ampkit/bench/peers/peer_shape.hpp"

namespace ampkit::tools::bench {

std::string op_pair_name(Op a, Op b) { return std::string(a == Op::T ? "t" : "n") + (b == Op::T ? "t" : "n"); }

}  // namespace ampkit::tools::bench
