// gzip decompression of the train layer's data files (zlib; RFC 1952), so that a corpus may be
// given as FILE.gz: read_data_file (files.hpp) calls it when a file starts with gzip's magic
// bytes. The train layer's own helper, not part of the API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ampkit::train {

/// True when `bytes` start with the gzip magic number (1f 8b).
bool is_gzip(std::string_view bytes);

/// The decompressed contents of the gzip data `bytes` (every member, when several are
/// concatenated, as gunzip does). `what` names the file in messages ("data file 'a.txt.gz'").
/// Throws ampkit::Error "<what>: ..." when the data are corrupt (zlib's reason), cut short,
/// followed by bytes that are not gzip, or decompress to more than `max_bytes`.
std::string gunzip(std::string_view bytes, std::uint64_t max_bytes, std::string_view what);

}  // namespace ampkit::train
