// The consumer project's program: a 2x3 by 3x2 GEMM through the installed library, a bf16 round
// trip, and the version header against the package's version. Exit 0 when all agree.
#include <cstdio>
#include <cstring>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/version.hpp"

int main() {
#ifdef EXPECTED_VERSION
  if (std::strcmp(AMPKIT_VERSION, EXPECTED_VERSION) != 0) {
    std::fprintf(stderr, "consumer: ampkit/version.hpp says %s, the package %s\n", AMPKIT_VERSION, EXPECTED_VERSION);
    return 1;
  }
#endif
  // Column-major: A (2x3) = [1 2 3; 4 5 6], B (3x2) = [1 0; 0 1; 1 1], D = A B = [4 5; 10 11].
  const float a[6] = {1, 4, 2, 5, 3, 6}, b[6] = {1, 0, 1, 0, 1, 1};
  float d[4] = {};
  ampkit::GemmArgs g;
  g.m = 2, g.n = 2, g.k = 3;
  g.a = a, g.lda = 2, g.b = b, g.ldb = 3, g.d = d, g.ldd = 2;
  ampkit::gemm(g);
  const float want[4] = {4, 10, 5, 11};
  for (int i = 0; i < 4; ++i)
    if (d[i] != want[i]) {
      std::fprintf(stderr, "consumer: gemm D[%d] = %g, expected %g\n", i, static_cast<double>(d[i]),
                   static_cast<double>(want[i]));
      return 1;
    }
  const float x[2] = {1.5f, -3.0f};
  unsigned short h[2] = {};
  float y[2] = {};
  ampkit::convert(x, ampkit::DType::f32, h, ampkit::DType::bf16, 2);
  ampkit::convert(h, ampkit::DType::bf16, y, ampkit::DType::f32, 2);
  if (y[0] != x[0] || y[1] != x[1]) {
    std::fprintf(stderr, "consumer: bf16 round trip gave %g %g\n", static_cast<double>(y[0]),
                 static_cast<double>(y[1]));
    return 1;
  }
  std::printf("consumer: ampkit %s ok (gemm, convert)\n", AMPKIT_VERSION);
  return 0;
}
