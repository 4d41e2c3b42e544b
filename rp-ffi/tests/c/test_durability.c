/*
 * Tests of durability from C: rp_engine_set_durability by name ("immediate", "eventual"),
 * rp_engine_durability, rp_engine_flush. Eventual commits are held and written together;
 * they are read back before they reach the disk, a flush makes them durable, and freeing the
 * engine writes them too, so the save reopens at the same head either way. Going back to
 * "immediate" flushes. A bad name is RP_RESULT_INVALID and changes nothing; NULL arguments
 * get their codes.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_durability.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_durability
 *   ./test_durability examples/tavern.toml
 *
 * The save file goes to a fresh directory under $TMPDIR (or /tmp), removed at the end.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed";
 * exits 0 only when every check passed.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rp.h"
#include "check.h"
#include "tavern.h"

static char dir[4096];

static rp_result set(rp_engine *engine, const char *name) {
    return rp_engine_set_durability(engine, name, strlen(name));
}

/* 1 when the engine's durability is `name`. */
static int durability_is(rp_engine *engine, const char *name) {
    char *got = NULL;
    int same = 0;
    CHECK(rp_engine_durability(engine, &got) == RP_RESULT_OK);
    same = got != NULL && strcmp(got, name) == 0;
    rp_string_free(got);
    return same;
}

/* Appends `n` one-event commits moving the clock on by a second each. */
static void tick(rp_engine *engine, long long *now, int n) {
    char event[64];
    uint64_t seq = 0;
    int i;
    for (i = 0; i < n; i++) {
        int len;
        *now += 1000;
        len = snprintf(event, sizeof event, "[{\"time_advanced\": {\"to\": %lld}}]", *now);
        CHECK(rp_engine_append(engine, event, (size_t)len, &seq) == RP_RESULT_OK);
    }
}

/* The number of events the engine reads back from its log. */
static size_t events_read(rp_engine *engine) {
    char *json = NULL;
    size_t count = 0;
    const char *at;
    CHECK(rp_engine_events(engine, 1, UINT64_MAX, &json) == RP_RESULT_OK);
    for (at = json; at != NULL && (at = strstr(at, "\"seq\":")) != NULL; at++) {
        count++;
    }
    rp_string_free(json);
    return count;
}

static rp_engine *reopen(const char *save) {
    rp_engine *engine = NULL;
    CHECK(rp_engine_open(save, strlen(save), &engine) == RP_RESULT_OK);
    return engine;
}

static void test_eventual_commits_are_read_flushed_and_kept_on_close(void) {
    char save[4200];
    rp_engine *engine = NULL;
    long long now = 0;
    uint64_t expected = 0;

    snprintf(save, sizeof save, "%s/tavern.rp", dir);
    CHECK(rp_engine_create_from_world_file(save, strlen(save), tavern_path, strlen(tavern_path),
                                           0, &engine) == RP_RESULT_OK);
    if (engine == NULL) {
        return;
    }
    CHECK(durability_is(engine, "immediate"));
    CHECK(set(engine, "eventual") == RP_RESULT_OK);
    CHECK(durability_is(engine, "eventual"));
    tick(engine, &now, 20);
    expected = head(engine);
    /* Held, not yet written: read back all the same. */
    CHECK(events_read(engine) == expected);
    CHECK(rp_engine_flush(engine) == RP_RESULT_OK);
    tick(engine, &now, 5);
    expected = head(engine);
    /* Freed without a flush: closing writes what is held. */
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    engine = reopen(save);
    if (engine == NULL) {
        return;
    }
    CHECK(head(engine) == expected);
    CHECK(events_read(engine) == expected);
    /* A reopened engine has the default durability; going back to "immediate" flushes. */
    CHECK(durability_is(engine, "immediate"));
    CHECK(set(engine, "eventual") == RP_RESULT_OK);
    tick(engine, &now, 3);
    expected = head(engine);
    CHECK(set(engine, "immediate") == RP_RESULT_OK);
    CHECK(durability_is(engine, "immediate"));
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    engine = reopen(save);
    CHECK(engine != NULL && head(engine) == expected);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    CHECK(unlink(save) == 0);
}

static void test_refusals_change_nothing(void) {
    struct tavern t;
    char *got = NULL;
    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(set(t.engine, "eventual") == RP_RESULT_OK);
    CHECK(set(t.engine, "sometimes") == RP_RESULT_INVALID);
    CHECK(strstr(rp_last_error(), "durability") != NULL);
    CHECK(durability_is(t.engine, "eventual"));
    CHECK(rp_engine_set_durability(t.engine, NULL, 3) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_set_durability(t.engine, "\xff", 1) == RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_durability(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_flush(NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_durability(NULL, &got) == RP_RESULT_NULL_ARGUMENT);
    CHECK(got == NULL);
    /* In memory, a flush has nothing to sync and succeeds. */
    CHECK(rp_engine_flush(t.engine) == RP_RESULT_OK);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

int main(int argc, char **argv) {
    const char *tmp = getenv("TMPDIR");
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];
    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    snprintf(dir, sizeof dir, "%s/rp-test-durability-XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "cannot make a directory under %s\n", tmp);
        return 1;
    }

    test_eventual_commits_are_read_flushed_and_kept_on_close();
    test_refusals_change_nothing();

    CHECK(rmdir(dir) == 0);
    return checks_done("test_durability");
}
