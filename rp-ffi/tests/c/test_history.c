/*
 * Tests of the past from C (docs/history.md): what Mira could recall and what she believed at
 * a seq and at a host time, on the current branch and on the tail a rewind kept; a world query
 * asked about the past, whose context holds the memory she has since lost and whose record
 * notes the point; and the unhappy paths, each with the error kind Rust and Python give: an
 * unknown branch, a seq past the head, a time before the world, an entity unknown then, bad
 * JSON, NULL arguments (the out-parameter left alone).
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_history.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_history
 *   ./test_history examples/tavern.toml
 *
 * The one argument is the path of the demo world file.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed";
 * exits 0 only when every check passed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"
#include "check.h"
#include "tavern.h"

#define HOUR 3600000LL

static unsigned long long ull(uint64_t n) { return (unsigned long long)n; }

static rp_result memories_at(rp_engine *engine, uint64_t entity, const char *as_of,
                             char **json) {
    return rp_engine_memories_at(engine, entity, as_of, strlen(as_of), json);
}

static rp_result beliefs_at(rp_engine *engine, uint64_t entity, const char *as_of,
                            char **json) {
    return rp_engine_beliefs_at(engine, entity, as_of, strlen(as_of), json);
}

/* The tavern, then Mira learns where the key is (at `*noted`, the clock at noon), Wren is
 * reported away an hour later, and Mira forgets the key. 0 on failure. */
static int mira_forgets_the_key(struct tavern *t, uint64_t *noted, uint64_t *reported) {
    char memory[256];
    uint64_t id = 0;
    if (!open_tavern(t)) {
        return 0;
    }
    snprintf(memory, sizeof memory,
             "{\"owner\": %llu, \"text\": \"The key is under the blue mat\"}", ull(t->mira));
    if (rp_engine_report_availability(t->engine, t->tobias, 1.0, 12 * HOUR) != RP_RESULT_OK ||
        rp_engine_add_memory(t->engine, memory, strlen(memory), &id) != RP_RESULT_OK) {
        return 0;
    }
    *noted = head(t->engine);
    if (rp_engine_report_availability(t->engine, t->wren, 0.0, 13 * HOUR) != RP_RESULT_OK) {
        return 0;
    }
    *reported = head(t->engine);
    return rp_engine_remove_memory(t->engine, id) == RP_RESULT_OK;
}

static void test_memories_and_beliefs_at_a_seq_and_a_time(void) {
    struct tavern t;
    char at[128];
    char *json = NULL;
    uint64_t noted = 0, reported = 0, now = 0;

    CHECK(mira_forgets_the_key(&t, &noted, &reported));
    if (t.engine == NULL) {
        return;
    }
    now = head(t.engine);
    snprintf(at, sizeof at, "{\"seq\": %llu}", ull(noted));
    CHECK(memories_at(t.engine, t.mira, at, &json) == RP_RESULT_OK);
    CHECK(contains(json, "The key is under the blue mat"));
    CHECK(contains(json, "\"branch\":\"main\""));
    snprintf(at, sizeof at, "\"seq\":%llu,", ull(noted));
    CHECK(contains(json, at));
    rp_string_free(json);
    json = NULL;

    /* Today the note is gone, and reading changed nothing. */
    snprintf(at, sizeof at, "{\"seq\": %llu, \"branch\": \"main\"}", ull(now));
    CHECK(memories_at(t.engine, t.mira, at, &json) == RP_RESULT_OK);
    CHECK(!contains(json, "blue mat"));
    CHECK(contains(json, "\"memories\":[]"));
    rp_string_free(json);
    json = NULL;
    CHECK(head(t.engine) == now);

    /* By time: at 12:30 the report about Wren (13:00) had not come; at 13:00 it had. */
    CHECK(beliefs_at(t.engine, t.mira, "{\"time\": 45000000}", &json) == RP_RESULT_OK);
    snprintf(at, sizeof at, "\"about\":%llu,", ull(t.tobias));
    CHECK(contains(json, at));
    snprintf(at, sizeof at, "\"about\":%llu,", ull(t.wren));
    CHECK(!contains(json, at));
    CHECK(contains(json, "\"edges\":["));
    rp_string_free(json);
    json = NULL;
    CHECK(beliefs_at(t.engine, t.mira, "{\"time\": 46800000}", &json) == RP_RESULT_OK);
    CHECK(contains(json, at));
    /* The last event at or before 13:00: the removal, which did not move the clock. */
    snprintf(at, sizeof at, "\"seq\":%llu,", ull(now));
    CHECK(contains(json, at));
    CHECK(contains(json, "\"now\":46800000"));
    rp_string_free(json);
    json = NULL;
    /* A millisecond before: the note, before the clock moved to 13:00. */
    CHECK(beliefs_at(t.engine, t.mira, "{\"time\": 46799999}", &json) == RP_RESULT_OK);
    snprintf(at, sizeof at, "\"seq\":%llu,", ull(noted));
    CHECK(contains(json, at));
    CHECK(contains(json, "\"now\":43200000"));
    rp_string_free(json);
    json = NULL;

    /* A rewind keeps the tail as a branch; its past still answers. */
    CHECK(rp_engine_rewind(t.engine, noted, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "main~2") == 0);
    rp_string_free(json);
    json = NULL;
    snprintf(at, sizeof at, "{\"seq\": %llu, \"branch\": \"main~2\"}", ull(now));
    CHECK(memories_at(t.engine, t.mira, at, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"branch\":\"main~2\""));
    CHECK(!contains(json, "blue mat"));
    rp_string_free(json);
    json = NULL;
    snprintf(at, sizeof at, "{\"seq\": %llu}", ull(noted));
    CHECK(memories_at(t.engine, t.mira, at, &json) == RP_RESULT_OK);
    CHECK(contains(json, "blue mat"));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

static void test_bad_points_are_refused_with_their_kinds(void) {
    struct tavern t;
    char at[128];
    char *json = NULL;
    char *untouched = (char *)"untouched";
    uint64_t noted = 0, reported = 0;

    CHECK(mira_forgets_the_key(&t, &noted, &reported));
    if (t.engine == NULL) {
        return;
    }
    json = untouched;
    CHECK(memories_at(t.engine, t.mira, "{\"seq\": 1, \"branch\": \"nowhere\"}", &json) ==
          RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "nowhere"));
    snprintf(at, sizeof at, "{\"seq\": %llu}", ull(head(t.engine) + 1));
    CHECK(memories_at(t.engine, t.mira, at, &json) == RP_RESULT_INVALID);
    CHECK(beliefs_at(t.engine, t.mira, at, &json) == RP_RESULT_INVALID);
    CHECK(memories_at(t.engine, t.mira, "{\"seq\": 0}", &json) == RP_RESULT_INVALID);
    CHECK(beliefs_at(t.engine, t.mira, "{\"time\": -1}", &json) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "before the world"));
    CHECK(memories_at(t.engine, 999999, "{\"seq\": 1}", &json) == RP_RESULT_NOT_FOUND);
    /* Mira did not exist at seq 1 (only the world did). */
    CHECK(beliefs_at(t.engine, t.mira, "{\"seq\": 1}", &json) == RP_RESULT_NOT_FOUND);
    CHECK(memories_at(t.engine, t.mira, "{\"seq\": 1, \"time\": 2}", &json) ==
          RP_RESULT_INVALID);
    CHECK(memories_at(t.engine, t.mira, "{\"sec\": 1}", &json) == RP_RESULT_INVALID);
    CHECK(memories_at(t.engine, t.mira, "[1]", &json) == RP_RESULT_INVALID);
    CHECK(rp_engine_memories_at(t.engine, t.mira, "{\"seq\": 1}", 3, &json) ==
          RP_RESULT_INVALID);
    CHECK(rp_engine_memories_at(t.engine, t.mira, "\xff", 1, &json) == RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_memories_at(t.engine, t.mira, NULL, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_beliefs_at(t.engine, t.mira, NULL, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(json == untouched);
    CHECK(memories_at(t.engine, t.mira, "{\"seq\": 1}", NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(beliefs_at(t.engine, t.mira, "{\"seq\": 1}", NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(memories_at(NULL, t.mira, "{\"seq\": 1}", &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(json == untouched);
    rp_engine_free(t.engine);
}

static void test_a_query_asked_about_the_past(void) {
    struct tavern t;
    char input[256];
    char *json = NULL;
    rp_job *job = NULL;
    uint64_t noted = 0, reported = 0, before = 0;
    const char *answer = "{\"text\": \"{\\\"type\\\": \\\"answer\\\", \\\"content\\\": "
                         "\\\"Under the mat.\\\", \\\"confidence\\\": \\\"high\\\", "
                         "\\\"sources\\\": []}\"}";

    CHECK(mira_forgets_the_key(&t, &noted, &reported));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    snprintf(input, sizeof input,
             "{\"text\": \"Where is the key?\", \"asked_as\": %llu, \"now\": 90000000, "
             "\"config\": {\"as_of\": {\"seq\": %llu}}}",
             ull(t.mira), ull(noted));
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_OK);
    CHECK(rp_job_step(t.engine, job, &json) == RP_RESULT_OK);
    CHECK(contains(json, "The key is under the blue mat"));
    rp_string_free(json);
    json = NULL;
    CHECK(rp_job_provide(t.engine, job, answer, strlen(answer)) == RP_RESULT_OK);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    snprintf(input, sizeof input, "\"as_of\":{\"seq\":%llu}", ull(noted));
    CHECK(contains(json, input));
    rp_string_free(json);
    json = NULL;
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    CHECK(head(t.engine) == before + 2);

    /* Asked about today, the note is not in the context. */
    snprintf(input, sizeof input,
             "{\"text\": \"Where is the key?\", \"asked_as\": %llu, \"now\": 90000000}",
             ull(t.mira));
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_OK);
    CHECK(rp_job_step(t.engine, job, &json) == RP_RESULT_OK);
    CHECK(!contains(json, "blue mat"));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    /* A bad point: the kinds of rp_engine_memories_at, no job made. */
    job = NULL;
    snprintf(input, sizeof input,
             "{\"text\": \"Where?\", \"now\": 1, \"config\": {\"as_of\": {\"seq\": 1, "
             "\"branch\": \"nowhere\"}}}");
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_NOT_FOUND);
    snprintf(input, sizeof input,
             "{\"text\": \"Where?\", \"now\": 1, \"config\": {\"as_of\": {\"time\": -5}}}");
    CHECK(rp_engine_begin_query(t.engine, input, strlen(input), &job) == RP_RESULT_INVALID);
    CHECK(job == NULL);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_memories_and_beliefs_at_a_seq_and_a_time();
    test_bad_points_are_refused_with_their_kinds();
    test_a_query_asked_about_the_past();

    return checks_done("test_history");
}
