// Files of the train layer: reading a whole input file with a size limit (a data file also when
// gzip-compressed),
// writing an output atomically (temporary name in the same folder, fsync, rename), and checking
// up front that an output path can be written, so that a run never fails at its end on a typo.
// Every failure throws ampkit::Error (exit code 1) naming the file and the reason.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ampkit::train {

/// The contents of `path`. `role` names it in messages ("data file", "checkpoint"). Throws
/// ampkit::Error when it is missing, unreadable, not a regular file or over `max_bytes`.
std::string read_file(const std::string& path, std::string_view role, std::uint64_t max_bytes);

/// The contents of the data file `path`, decompressed when it is gzip (it starts with the bytes
/// 1f 8b, as FILE.gz does): read_file's checks, then gunzip's — a corrupt or truncated gzip file,
/// or one that decompresses to more than `max_bytes`, throws ampkit::Error naming `role` and
/// `path`.
std::string read_data_file(const std::string& path, std::string_view role, std::uint64_t max_bytes);

/// Writes `bytes` to `path` so that `path` holds either its previous contents or all of
/// `bytes`, never a part: a temporary file beside it (`path`.tmp-PID) is written, flushed to the
/// disk and renamed over `path`. The temporary file is removed on failure. Throws ampkit::Error
/// naming `role` and `path`.
void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view role);

/// Checks that a file can be created at `path` (its folder exists and is writable; `path` is
/// not a folder) by creating and removing a probe file beside it. `option` names the option in
/// messages ("--log"). Throws ampkit::Error.
void check_output_path(const std::string& path, std::string_view option);

/// The folder part of `path` ("." when it has none).
std::string parent_folder(const std::string& path);

}  // namespace ampkit::train
