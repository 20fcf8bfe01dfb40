// What the `ampkit` tool was built from (tools layer, common/): the project version (the
// generated ampkit/version.hpp, AMPKIT_VERSION) and the git commit, which cmake/commit.cmake
// writes at build time into <build>/generated/build_commit.cpp.
#pragma once

namespace ampkit::tools {

// The git commit of the source tree at build time: 12 hex digits, "-dirty" appended when tracked
// files differed from it; "unknown" when the tree was not a git checkout.
const char* build_commit();

}  // namespace ampkit::tools
