/*
 * Prints the version of librp and checks it is the one this program expects.
 *
 * The expected version comes from the first argument or, without one, from
 * RP_EXPECTED_VERSION given at compile time:
 *
 *   cc -std=c99 -Iinclude examples/c/version.c \
 *      -DRP_EXPECTED_VERSION='"0.1.0"' \
 *      target/debug/librp.a -lpthread -ldl -lm -o version
 *   ./version            # checks against 0.1.0
 *   ./version 0.2.0      # checks against 0.2.0
 *
 * Exits 0 when the library's version is non-empty and equal to the expected
 * one, 1 otherwise, and 2 when no expected version was given.
 */
#include <stdio.h>
#include <string.h>

#include "rp.h"

int main(int argc, char **argv) {
    const char *expected = NULL;
    const char *version = rp_version();
    rp_result result;

    if (argc > 1) {
        expected = argv[1];
    } else {
#ifdef RP_EXPECTED_VERSION
        expected = RP_EXPECTED_VERSION;
#endif
    }
    if (expected == NULL) {
        fprintf(stderr, "usage: %s EXPECTED_VERSION (or build with -DRP_EXPECTED_VERSION)\n",
                argv[0]);
        return 2;
    }

    printf("librp %s\n", version);
    if (version[0] == '\0') {
        fprintf(stderr, "error: rp_version() returned an empty string\n");
        return 1;
    }

    /* The library can make the same check, and say why it fails. */
    result = rp_check_version(expected, strlen(expected));
    if (result != RP_RESULT_OK) {
        fprintf(stderr, "error (%d): %s\n", (int)result, rp_last_error());
        return 1;
    }
    if (strcmp(version, expected) != 0) {
        fprintf(stderr, "error: rp_check_version accepted %s, but rp_version() is %s\n",
                expected, version);
        return 1;
    }
    return 0;
}
