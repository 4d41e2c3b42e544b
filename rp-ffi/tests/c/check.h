/*
 * The check macro and helpers shared by the C tests: each failed check is reported on stderr
 * (with rp_last_error() when it says something), and checks_done() prints
 * "NAME: N passed, N failed" and gives the exit status.
 */
#ifndef RP_TEST_CHECK_H
#define RP_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

#include "rp.h"

static int passed = 0;
static int failed = 0;

#define CHECK(condition)                                                         \
    do {                                                                         \
        if (condition) {                                                         \
            passed++;                                                            \
        } else {                                                                 \
            failed++;                                                            \
            fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, \
                    __func__, #condition);                                       \
            const char *last_error_ = rp_last_error();                           \
            if (last_error_ != NULL && last_error_[0] != '\0') {                 \
                fprintf(stderr, "    rp_last_error(): %s\n", last_error_);       \
            }                                                                    \
        }                                                                        \
    } while (0)

static inline int contains(const char *text, const char *part) {
    return text != NULL && strstr(text, part) != NULL;
}

static inline int starts_with(const char *text, const char *prefix) {
    return text != NULL && strncmp(text, prefix, strlen(prefix)) == 0;
}

/* Prints the summary line of test program `name`; the exit status: 0 when every check passed. */
static inline int checks_done(const char *name) {
    printf("%s: %d passed, %d failed\n", name, passed, failed);
    return failed == 0 ? 0 : 1;
}

#endif
