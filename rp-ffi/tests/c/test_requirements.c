/*
 * Tests of requirements from C (docs/requirements.md): a requirement on Wren added with
 * rp_engine_add_requirement and read back with rp_engine_requirements (pending, announced by
 * one system line); her leaving the booth and a time skip refused through rp_engine_append with
 * RP_RESULT_REQUIREMENT_UNMET and nothing changed, a batch that moves before it pays refused
 * whole, one that pays first accepted; a host action checked with rp_engine_check_action; the
 * warning in the prompts of those present; and the unhappy paths: bad JSON, an unknown
 * subject or container, a condition that does not compile, a taken id, unknown ids, NULL
 * arguments, each refused with the code of rp-core's error kind and nothing changed; a
 * requirement removed with rp_engine_remove_requirement.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_requirements.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_requirements
 *   ./test_requirements examples/tavern.toml
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

#define FARE                                                                               \
    "{\"id\": \"fare\", \"name\": \"The fare\", \"subject\": \"wren\", "                  \
    "\"condition\": \"self.fare_paid == true\", "                                         \
    "\"guards\": [{\"leave\": \"booth\"}, {\"time_skip\": true}, {\"action\": \"board\"}], " \
    "\"text\": \"Wren must settle the bill before leaving the booth.\"}"

#define WARNING "DECISION REQUIRED: The fare: Wren must settle the bill before leaving the booth."

static unsigned long long ull(uint64_t n) { return (unsigned long long)n; }

static rp_result add(rp_engine *engine, const char *json, char **out) {
    return rp_engine_add_requirement(engine, json, strlen(json), out);
}

static rp_result append(rp_engine *engine, const char *json) {
    uint64_t seq = 0;
    return rp_engine_append(engine, json, strlen(json), &seq);
}

static char *requirements(const rp_engine *engine) {
    char *json = NULL;
    CHECK(rp_engine_requirements(engine, &json) == RP_RESULT_OK);
    return json;
}

static char *world_json(const rp_engine *engine) {
    char *json = NULL;
    CHECK(rp_engine_world(engine, &json) == RP_RESULT_OK);
    return json;
}

/* Wren moved to container `to`, as an rp_engine_append batch item. */
static void move_event(char *out, size_t n, const struct tavern *t, uint64_t to) {
    snprintf(out, n,
             "{\"activity_changed\": {\"entity\": %llu, \"activity\": {\"position\": "
             "{\"container\": %llu}}}}",
             ull(t->wren), ull(to));
}

/* Wren's facts with fare_paid set. */
static void pay_event(char *out, size_t n, const struct tavern *t, const char *paid) {
    snprintf(out, n,
             "{\"entity_edited\": {\"id\": %llu, \"facts\": [\"A traveller.\", "
             "\"fare_paid: %s\"]}}",
             ull(t->wren), paid);
}

/* The tavern with FARE added; 0 on failure. */
static int with_fare(struct tavern *t) {
    char *json = NULL;
    if (!open_tavern(t)) {
        return 0;
    }
    if (add(t->engine, FARE, &json) != RP_RESULT_OK) {
        return 0;
    }
    rp_string_free(json);
    return 1;
}

static void test_a_requirement_is_added_read_and_announced(void) {
    struct tavern t;
    char part[200];
    char *json = NULL;
    uint64_t before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    CHECK(add(t.engine, FARE, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "{\"id\":\"fare\",\"name\":\"The fare\",\"subject\":%llu,",
             ull(t.wren));
    CHECK(starts_with(json, part));
    snprintf(part, sizeof part, "{\"leave\":{\"container\":%llu}}", ull(t.booth));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"time_skip\""));
    rp_string_free(json);
    /* Added and announced in one commit. */
    CHECK(head(t.engine) == before + 2);

    json = requirements(t.engine);
    CHECK(starts_with(json, "[{\"requirement\":{\"id\":\"fare\""));
    CHECK(contains(json, "\"pending\":true,\"announced\":true}]"));
    rp_string_free(json);
    /* The announcement: a system line of the warning, recorded in the log. */
    json = NULL;
    CHECK(rp_engine_events(t.engine, before + 1, UINT64_MAX, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"requirement_announced\""));
    CHECK(contains(json, WARNING));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

static void test_guarded_transitions_are_refused_until_met(void) {
    struct tavern t;
    char move[300], pay[300], batch[700];
    char *json = NULL;
    char *world_before = NULL;
    uint64_t before = 0;
    rp_result r;

    CHECK(with_fare(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    world_before = world_json(t.engine);
    move_event(move, sizeof move, &t, t.bar);
    pay_event(pay, sizeof pay, &t, "true");

    /* Leaving the booth: refused, naming the requirement, nothing changed. */
    snprintf(batch, sizeof batch, "[%s]", move);
    r = append(t.engine, batch);
    CHECK(r == RP_RESULT_REQUIREMENT_UNMET);
    CHECK(contains(rp_last_error(), "The fare"));
    CHECK(contains(rp_last_error(), "fare"));
    CHECK(contains(rp_last_error(), "Wren must settle the bill"));
    /* A time skip too. */
    r = append(t.engine,
               "[{\"time_skipped\": {\"from\": 0, \"to\": 3600000, \"skip\": {\"kind\": "
               "\"jump\", \"to\": 3600000}}}]");
    CHECK(r == RP_RESULT_REQUIREMENT_UNMET);
    /* Moving, then paying, in one batch: refused whole. */
    snprintf(batch, sizeof batch, "[%s, %s]", move, pay);
    CHECK(append(t.engine, batch) == RP_RESULT_REQUIREMENT_UNMET);
    CHECK(head(t.engine) == before);
    json = world_json(t.engine);
    CHECK(json != NULL && world_before != NULL && strcmp(json, world_before) == 0);
    rp_string_free(json);

    /* A host action, by name: refused for Wren and for no one in particular, not for Tobias. */
    CHECK(rp_engine_check_action(t.engine, "board", 5, t.wren) == RP_RESULT_REQUIREMENT_UNMET);
    CHECK(contains(rp_last_error(), "The fare"));
    CHECK(rp_engine_check_action(t.engine, "board", 5, 0) == RP_RESULT_REQUIREMENT_UNMET);
    CHECK(rp_engine_check_action(t.engine, "board", 5, t.tobias) == RP_RESULT_OK);
    CHECK(rp_engine_check_action(t.engine, "sing", 4, t.wren) == RP_RESULT_OK);

    /* The prompt of Tobias, beside her, carries the warning; Mira's at the bar does not. */
    json = NULL;
    CHECK(rp_engine_inspect_prompt(t.engine, t.tobias, NULL, 0, 0, NULL, 0, &json) ==
          RP_RESULT_OK);
    CHECK(contains(json, WARNING));
    rp_string_free(json);
    json = NULL;
    CHECK(rp_engine_inspect_prompt(t.engine, t.mira, NULL, 0, 0, NULL, 0, &json) ==
          RP_RESULT_OK);
    CHECK(json != NULL && !contains(json, WARNING));
    rp_string_free(json);

    /* Paying first, then moving, in one batch: accepted. */
    snprintf(batch, sizeof batch, "[%s, %s]", pay, move);
    CHECK(append(t.engine, batch) == RP_RESULT_OK);
    json = requirements(t.engine);
    CHECK(contains(json, "\"pending\":false"));
    rp_string_free(json);
    CHECK(rp_engine_check_action(t.engine, "board", 5, t.wren) == RP_RESULT_OK);
    rp_string_free(world_before);
    rp_engine_free(t.engine);
}

static void test_bad_requirements_are_refused_and_change_nothing(void) {
    struct tavern t;
    char *json = NULL;
    char *world_before = NULL;
    uint64_t before = 0;
    size_t i = 0;
    const struct {
        const char *json;
        rp_result code;
    } bad[] = {
        {"not json", RP_RESULT_INVALID},
        {"{\"id\": \"x\"}", RP_RESULT_INVALID},
        {"{\"id\": \"x\", \"name\": \"X\", \"subject\": \"nobody\", \"condition\": \"true\", "
         "\"guards\": [{\"time_skip\": true}], \"text\": \"t\"}",
         RP_RESULT_NOT_FOUND},
        {"{\"id\": \"x\", \"name\": \"X\", \"subject\": \"wren\", \"condition\": \"true\", "
         "\"guards\": [{\"leave\": \"the moon\"}], \"text\": \"t\"}",
         RP_RESULT_NOT_FOUND},
        {"{\"id\": \"x\", \"name\": \"X\", \"subject\": \"wren\", \"condition\": \"self.a ===\", "
         "\"guards\": [{\"time_skip\": true}], \"text\": \"t\"}",
         RP_RESULT_FACT_SYNTAX},
        {"{\"id\": \"x\", \"name\": \"X\", \"condition\": \"self.paid\", "
         "\"guards\": [{\"time_skip\": true}], \"text\": \"t\"}",
         RP_RESULT_INVALID},
        {"{\"id\": \"x\", \"name\": \"X\", \"condition\": \"true\", \"guards\": [], "
         "\"text\": \"t\"}",
         RP_RESULT_INVALID},
        {FARE, RP_RESULT_CONFLICT},
    };

    CHECK(with_fare(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    world_before = world_json(t.engine);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json = NULL;
        CHECK(add(t.engine, bad[i].json, &json) == bad[i].code);
        CHECK(json == NULL);
        CHECK(rp_last_error()[0] != '\0');
    }
    CHECK(rp_engine_remove_requirement(t.engine, "nope", 4) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_add_requirement(t.engine, NULL, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_add_requirement(t.engine, FARE, strlen(FARE), NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_requirements(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_check_action(t.engine, NULL, 0, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_check_action(t.engine, "\xff", 1, 0) == RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_remove_requirement(NULL, "fare", 4) == RP_RESULT_NULL_ARGUMENT);
    CHECK(head(t.engine) == before);
    json = world_json(t.engine);
    CHECK(json != NULL && world_before != NULL && strcmp(json, world_before) == 0);
    rp_string_free(json);

    /* Removed: she leaves freely. */
    CHECK(rp_engine_remove_requirement(t.engine, "fare", 4) == RP_RESULT_OK);
    json = requirements(t.engine);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);
    {
        char move[300], batch[400];
        move_event(move, sizeof move, &t, t.bar);
        snprintf(batch, sizeof batch, "[%s]", move);
        CHECK(append(t.engine, batch) == RP_RESULT_OK);
    }
    rp_string_free(world_before);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s TAVERN_TOML\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];
    test_a_requirement_is_added_read_and_announced();
    test_guarded_transitions_are_refused_until_met();
    test_bad_requirements_are_refused_and_change_nothing();
    return checks_done("test_requirements");
}
