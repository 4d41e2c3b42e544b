// Prints the version of librp from C++ and checks it is the one expected.
//
// The expected version comes from the first argument or, without one, from
// RP_EXPECTED_VERSION given at compile time:
//
//   c++ -std=c++17 -Iinclude -DRP_EXPECTED_VERSION='"0.1.0"'
//       examples/cpp/version.cpp target/debug/librp.a -lpthread -ldl -lm
//       -o version-cpp
//
// Exits 0 when the library's version is non-empty and equal to the expected
// one, 1 otherwise, and 2 when no expected version was given.
//
// rp.h is included twice on purpose: its include guard must make the second
// inclusion a no-op, and its declarations must compile as C++ with C linkage.
#include "rp.h"
#include "rp.h"

#include <cstdio>
#include <string_view>

namespace {

std::string_view expected_version(int argc, char **argv) {
    if (argc > 1) {
        return argv[1];
    }
#ifdef RP_EXPECTED_VERSION
    return RP_EXPECTED_VERSION;
#else
    return {};
#endif
}

}  // namespace

int main(int argc, char **argv) {
    const std::string_view expected = expected_version(argc, argv);
    if (expected.empty()) {
        std::fprintf(stderr, "usage: %s EXPECTED_VERSION (or build with -DRP_EXPECTED_VERSION)\n",
                     argv[0]);
        return 2;
    }

    const std::string_view version = rp_version();
    std::printf("librp %.*s\n", static_cast<int>(version.size()), version.data());
    if (version.empty()) {
        std::fprintf(stderr, "error: rp_version() returned an empty string\n");
        return 1;
    }

    // A string_view is not NUL-terminated; rp takes (pointer, length).
    const rp_result result = rp_check_version(expected.data(), expected.size());
    if (result != RP_RESULT_OK) {
        std::fprintf(stderr, "error (%d): %s\n", static_cast<int>(result), rp_last_error());
        return 1;
    }
    if (version != expected) {
        std::fprintf(stderr, "error: rp_check_version accepted %.*s, but rp_version() is %.*s\n",
                     static_cast<int>(expected.size()), expected.data(),
                     static_cast<int>(version.size()), version.data());
        return 1;
    }
    return 0;
}
