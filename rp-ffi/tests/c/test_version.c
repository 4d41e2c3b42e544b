/*
 * Tests of rp_version, rp_check_version and rp_last_error through the C ABI,
 * linked against librp.a the way a C program would.
 *
 * Build (scripts/test-all does this, then runs it under valgrind):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      -DRP_EXPECTED_VERSION='"0.1.0"' rp-ffi/tests/c/test_version.c \
 *      target/debug/librp.a -lpthread -ldl -lm -o test_version
 *
 * Reports each failed check on stderr and closes with "N passed, N failed"; exits 0
 * only when every check passed.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rp.h"
#include "check.h"

#ifndef RP_EXPECTED_VERSION
#error "build with -DRP_EXPECTED_VERSION='\"x.y.z\"', the version of the rp-ffi crate"
#endif


/* rp_last_error() is never NULL and is a plain C string. */
static int last_error_is(const char *expected) {
    const char *message = rp_last_error();
    if (message == NULL) {
        fprintf(stderr, "rp_last_error() returned NULL\n");
        return 0;
    }
    if (strcmp(message, expected) != 0) {
        fprintf(stderr, "rp_last_error() is \"%s\", expected \"%s\"\n", message, expected);
        return 0;
    }
    return 1;
}

static rp_result check(const char *expected) {
    return rp_check_version(expected, strlen(expected));
}

static void test_version_is_the_expected_non_empty_string(void) {
    const char *version = rp_version();
    CHECK(version != NULL);
    if (version == NULL) {
        return;
    }
    CHECK(version[0] != '\0');
    CHECK(strcmp(version, RP_EXPECTED_VERSION) == 0);
}

static void test_version_is_one_static_string(void) {
    /* Library-owned and never freed: the same pointer on every call. */
    CHECK(rp_version() == rp_version());
}

static void test_result_codes_keep_their_numbers(void) {
    CHECK(RP_RESULT_OK == 0);
    CHECK(RP_RESULT_PANIC == 1);
    CHECK(RP_RESULT_NULL_ARGUMENT == 2);
    CHECK(RP_RESULT_INVALID_UTF8 == 3);
    CHECK(RP_RESULT_VERSION_MISMATCH == 4);
}

static void test_the_library_version_passes_the_check(void) {
    CHECK(check(RP_EXPECTED_VERSION) == RP_RESULT_OK);
    CHECK(last_error_is(""));
}

static void test_another_version_is_a_mismatch_naming_both(void) {
    CHECK(check("0.0.0-not-rp") == RP_RESULT_VERSION_MISMATCH);
    CHECK(last_error_is("librp is version " RP_EXPECTED_VERSION
                        ", but version 0.0.0-not-rp is required"));
}

static void test_success_clears_the_previous_error(void) {
    CHECK(check("0.0.0-not-rp") == RP_RESULT_VERSION_MISMATCH);
    CHECK(rp_last_error()[0] != '\0');
    CHECK(check(RP_EXPECTED_VERSION) == RP_RESULT_OK);
    CHECK(last_error_is(""));
}

static void test_only_len_bytes_are_read(void) {
    /* Strings in are (pointer, length), not NUL-terminated. */
    static const char padded[] = RP_EXPECTED_VERSION "-and-more";
    const size_t len = strlen(RP_EXPECTED_VERSION);
    CHECK(rp_check_version(padded, len) == RP_RESULT_OK);
    CHECK(rp_check_version(padded, len - 1) == RP_RESULT_VERSION_MISMATCH);
    CHECK(rp_check_version(padded, len + 1) == RP_RESULT_VERSION_MISMATCH);
}

static void test_null_is_a_null_argument(void) {
    CHECK(rp_check_version(NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(last_error_is("`expected` is NULL"));
}

static void test_invalid_utf8_is_refused(void) {
    static const char bad[] = {'0', '.', '1', (char)0xff};
    CHECK(rp_check_version(bad, sizeof bad) == RP_RESULT_INVALID_UTF8);
    CHECK(last_error_is(
        "`expected` is not valid UTF-8: invalid utf-8 sequence of 1 bytes from index 3"));
}

struct thread_outcome {
    int fresh_error_is_empty;
    rp_result result;
    int error_is_its_own;
};

static void *fail_on_another_thread(void *arg) {
    struct thread_outcome *outcome = arg;
    outcome->fresh_error_is_empty = last_error_is("");
    outcome->result = check("9.9.9");
    outcome->error_is_its_own =
        last_error_is("librp is version " RP_EXPECTED_VERSION ", but version 9.9.9 is required");
    return NULL;
}

static void test_each_thread_has_its_own_last_error(void) {
    struct thread_outcome outcome = {0, RP_RESULT_OK, 0};
    pthread_t thread;

    CHECK(rp_check_version(NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(pthread_create(&thread, NULL, fail_on_another_thread, &outcome) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(outcome.fresh_error_is_empty);
    CHECK(outcome.result == RP_RESULT_VERSION_MISMATCH);
    CHECK(outcome.error_is_its_own);
    /* The other thread's failure left this thread's message alone. */
    CHECK(last_error_is("`expected` is NULL"));
}

int main(void) {
    test_version_is_the_expected_non_empty_string();
    test_version_is_one_static_string();
    test_result_codes_keep_their_numbers();
    test_the_library_version_passes_the_check();
    test_another_version_is_a_mismatch_naming_both();
    test_success_clears_the_previous_error();
    test_only_len_bytes_are_read();
    test_null_is_a_null_argument();
    test_invalid_utf8_is_refused();
    test_each_thread_has_its_own_last_error();

    return checks_done("test_version");
}
