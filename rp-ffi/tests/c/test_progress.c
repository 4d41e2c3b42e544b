/*
 * Tests of the progress of long work from C (docs/progress.md): opening a save with
 * rp_engine_open_with_progress reports "open.snapshot" then "open.replay"; an engine given a
 * callback with rp_engine_set_progress reports "history.replay" (a past point) and
 * "index.build" (the first recall); every phase starts at 0, never goes back, stays within
 * its total and ends with done == total. The callback gets its user_data, a call from it with
 * the same engine is refused with RP_RESULT_CONFLICT (never a deadlock), the open's callback
 * is not kept, a NULL callback reports nothing, and bad arguments get their codes.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_progress.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_progress
 *   ./test_progress examples/tavern.toml
 *
 * The one argument is the path of the demo world file. The save file goes to a fresh
 * directory under $TMPDIR (or /tmp), removed at the end.
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

#define MAX_REPORTS 512

struct report {
    char phase[32];
    uint64_t done, total;
};

/* What a progress callback heard: its user_data. */
struct recorder {
    struct report reports[MAX_REPORTS];
    size_t count;
    size_t dropped;
    /* When set, the callback calls rp_engine_head with it and keeps the result. */
    rp_engine *call_back_into;
    rp_result from_inside;
};

static struct recorder heard;

static void record(void *user_data, const char *phase, uint64_t done, uint64_t total) {
    struct recorder *r = (struct recorder *)user_data;
    if (r->call_back_into != NULL) {
        uint64_t seq = 0;
        r->from_inside = rp_engine_head(r->call_back_into, &seq);
    }
    if (r->count == MAX_REPORTS) {
        r->dropped++;
        return;
    }
    snprintf(r->reports[r->count].phase, sizeof r->reports[r->count].phase, "%s", phase);
    r->reports[r->count].done = done;
    r->reports[r->count].total = total;
    r->count++;
}

static void forget(struct recorder *r) { memset(r, 0, sizeof *r); }

/* Checks that the reports are the phases `expected` (`n` of them) in order, each starting at 0,
 * never going back, within its total and ending with done == total. Returns the total of the
 * last phase. */
static uint64_t check_phases(const struct recorder *r, const char *const *expected, size_t n) {
    size_t i = 0, phase = 0;
    uint64_t total = 0;
    CHECK(r->dropped == 0);
    while (i < r->count) {
        size_t first = i;
        const char *name = r->reports[i].phase;
        total = r->reports[i].total;
        CHECK(phase < n && strcmp(name, expected[phase]) == 0);
        CHECK(r->reports[first].done == 0);
        while (i < r->count && strcmp(r->reports[i].phase, name) == 0) {
            CHECK(r->reports[i].total == total);
            CHECK(r->reports[i].done <= total);
            if (i > first) {
                CHECK(r->reports[i - 1].done <= r->reports[i].done);
            }
            i++;
        }
        CHECK(i - first >= 2);
        CHECK(r->reports[i - 1].done == total);
        phase++;
    }
    CHECK(phase == n);
    return total;
}

/* A save in `dir` with the tavern and `memories` memories of Mira's, then closed. */
static int make_save(const char *save, uint64_t memories) {
    rp_engine *engine = NULL;
    uint64_t mira = 0, id = 0, n = 0;
    char memory[128];
    if (rp_engine_create_from_world_file(save, strlen(save), tavern_path, strlen(tavern_path), 0,
                                         &engine) != RP_RESULT_OK ||
        rp_engine_entity_id(engine, "mira", 4, &mira) != RP_RESULT_OK) {
        return 0;
    }
    for (n = 0; n < memories; n++) {
        snprintf(memory, sizeof memory,
                 "{\"owner\": %llu, \"text\": \"Lights on the marsh, night %llu\"}",
                 (unsigned long long)mira, (unsigned long long)n);
        if (rp_engine_add_memory(engine, memory, strlen(memory), &id) != RP_RESULT_OK) {
            rp_engine_free(engine);
            return 0;
        }
    }
    return rp_engine_free(engine) == RP_RESULT_OK;
}

/* What `entity` could recall right after `seq`. */
static rp_result memories_at(rp_engine *engine, uint64_t entity, uint64_t seq, char **json) {
    char at[64];
    snprintf(at, sizeof at, "{\"seq\": %llu}", (unsigned long long)seq);
    return rp_engine_memories_at(engine, entity, at, strlen(at), json);
}

static const char *const OPENING[] = {"open.snapshot", "open.replay"};

static void test_opening_a_save_reports_its_phases(void) {
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    char save[4200];
    rp_engine *engine = NULL;
    rp_engine *untouched = (rp_engine *)&heard;
    char *json = NULL;
    uint64_t mira = 0, replayed = 0;

    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    snprintf(dir, sizeof dir, "%s/rp-test-progress-XXXXXX", tmp);
    CHECK(mkdtemp(dir) != NULL);
    snprintf(save, sizeof save, "%s/tavern.rp", dir);
    CHECK(make_save(save, 30));

    forget(&heard);
    CHECK(rp_engine_open_with_progress(save, strlen(save), record, &heard, &engine) ==
          RP_RESULT_OK);
    CHECK(engine != NULL);
    replayed = check_phases(&heard, OPENING, 2);
    CHECK(replayed > 0 && replayed <= head(engine));
    CHECK(heard.reports[0].total == 1); /* open.snapshot: one item */

    /* The open's callback is not kept: a replay to a past point reports nothing. */
    forget(&heard);
    CHECK(rp_engine_entity_id(engine, "mira", 4, &mira) == RP_RESULT_OK);
    CHECK(memories_at(engine, mira, head(engine) - 1, &json) == RP_RESULT_OK);
    rp_string_free(json);
    json = NULL;
    CHECK(heard.count == 0);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);

    /* No callback: an ordinary open. */
    engine = NULL;
    CHECK(rp_engine_open_with_progress(save, strlen(save), NULL, NULL, &engine) == RP_RESULT_OK);
    CHECK(engine != NULL);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);

    /* Bad arguments: their codes, the out-parameter left alone, nothing reported. */
    forget(&heard);
    CHECK(rp_engine_open_with_progress(NULL, 3, record, &heard, &untouched) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_open_with_progress("\xff", 1, record, &heard, &untouched) ==
          RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_open_with_progress(save, strlen(save), record, &heard, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_open_with_progress(tavern_path, strlen(tavern_path), record, &heard,
                                       &untouched) == RP_RESULT_NOT_A_SAVE);
    CHECK(untouched == (rp_engine *)&heard);
    CHECK(heard.count == 0);

    CHECK(unlink(save) == 0);
    CHECK(rmdir(dir) == 0);
}

static const char *const PAST[] = {"history.replay"};
static const char *const INDEX[] = {"index.build"};

static void test_an_engine_reports_its_later_phases(void) {
    struct tavern t;
    char *json = NULL;
    uint64_t now = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    now = head(t.engine);
    forget(&heard);
    CHECK(rp_engine_set_progress(t.engine, record, &heard) == RP_RESULT_OK);

    /* A past point: the replay to it. */
    CHECK(memories_at(t.engine, t.mira, now - 1, &json) == RP_RESULT_OK);
    rp_string_free(json);
    json = NULL;
    CHECK(check_phases(&heard, PAST, 1) > 0);

    /* The first recall builds the memory index; a call from the callback with the same
     * engine is refused, not a deadlock. */
    forget(&heard);
    heard.call_back_into = t.engine;
    CHECK(rp_engine_recall(t.engine, t.tobias, "marsh", 5, (int64_t)now, NULL, 0, &json) ==
          RP_RESULT_OK);
    rp_string_free(json);
    json = NULL;
    check_phases(&heard, INDEX, 1);
    CHECK(heard.from_inside == RP_RESULT_CONFLICT);
    /* ... and once the call is over, the engine answers again. */
    CHECK(head(t.engine) == now);

    /* Removed: nothing more is heard. */
    forget(&heard);
    CHECK(rp_engine_set_progress(t.engine, NULL, NULL) == RP_RESULT_OK);
    CHECK(memories_at(t.engine, t.mira, now - 2, &json) == RP_RESULT_OK);
    rp_string_free(json);
    CHECK(heard.count == 0);

    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
    /* A freed engine is refused. */
    CHECK(rp_engine_set_progress(t.engine, record, &heard) == RP_RESULT_INVALID_HANDLE);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_opening_a_save_reports_its_phases();
    test_an_engine_reports_its_later_phases();

    return checks_done("test_progress");
}
