// gzip decompression with zlib (train layer). See gzip.hpp.
#include "train/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>

#include "ampkit/core/error.hpp"

namespace ampkit::train {

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(std::string_view bytes, std::uint64_t max_bytes, std::string_view what) {
  auto fail = [&](auto&&... parts) -> void { throw Error(detail::concat(what, ": ", parts...)); };
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) fail("zlib could not start decompressing (out of memory?)");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&z};
  std::string out;
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t in_left = bytes.size();
  char buf[1 << 16];
  for (;;) {
    // zlib counts in 32-bit unsigned ints: feed at most UINT_MAX bytes at a time.
    if (z.avail_in == 0 && in_left > 0) {
      const std::size_t n = std::min<std::size_t>(in_left, UINT_MAX);
      z.next_in = const_cast<unsigned char*>(in);
      z.avail_in = static_cast<uInt>(n);
      in += n;
      in_left -= n;
    }
    z.next_out = reinterpret_cast<unsigned char*>(buf);
    z.avail_out = sizeof buf;
    const int r = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > max_bytes) fail("decompresses to more than the ", max_bytes, " bytes allowed");
    if (r == Z_STREAM_END) {
      if (z.avail_in == 0 && in_left == 0) return out;
      // Another member follows (gzip files may be concatenated); anything else is an error.
      const auto* next = z.next_in;
      if (z.avail_in < 2 || next[0] != 0x1f || next[1] != 0x8b)
        fail("bytes that are not gzip follow the end of the compressed data (a corrupt file)");
      if (inflateReset(&z) != Z_OK) fail("zlib could not continue with the next gzip member");
      continue;
    }
    if (r == Z_BUF_ERROR && z.avail_in == 0 && in_left == 0)
      fail("the gzip data end before the compressed stream does (a truncated file)");
    if (r != Z_OK)
      fail("not valid gzip data: ", z.msg ? z.msg : "zlib error " + std::to_string(r), " (a corrupt file)");
  }
}

}  // namespace ampkit::train
