/*
 * Tests of beliefs about people from C (docs/beliefs.md): a belief Tobias holds of Wren,
 * recorded with rp_engine_observe_belief and read back with rp_engine_beliefs at any time,
 * its confidence halving every half-life without anything committed; a person only
 * mentioned (Wren's mother) made with rp_engine_mention_person, named in a belief, with no
 * mind; each belief only its holder's; and the unhappy paths: values out of range, texts too
 * long, unknown fields and names, a mentioned person as the believer, times before the
 * world's clock, NULL arguments, each refused with its code and nothing changed.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_beliefs.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_beliefs
 *   ./test_beliefs examples/tavern.toml
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

/* The number after the first `key` in `json` at or after `from` (-1 if absent). */
static double number_after(const char *json, const char *from, const char *key) {
    const char *at = json == NULL ? NULL : strstr(json, from);
    at = at == NULL ? NULL : strstr(at, key);
    return at == NULL ? -1.0 : strtod(at + strlen(key), NULL);
}

static rp_result observe(rp_engine *engine, const char *json, long long now) {
    return rp_engine_observe_belief(engine, json, strlen(json), now);
}

static char *beliefs(const rp_engine *engine, uint64_t observer, long long now) {
    char *json = NULL;
    CHECK(rp_engine_beliefs(engine, observer, now, &json) == RP_RESULT_OK);
    return json;
}

static char *world_json(const rp_engine *engine) {
    char *json = NULL;
    CHECK(rp_engine_world(engine, &json) == RP_RESULT_OK);
    return json;
}

static void test_a_belief_is_recorded_and_fades_with_time(void) {
    struct tavern t;
    char part[160];
    char *json = NULL;
    uint64_t before = 0;
    double confidence = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_configure_drives(t.engine, 0, "{\"belief_half_life_hours\": 2}", 29) ==
          RP_RESULT_OK);
    before = head(t.engine);
    CHECK(observe(t.engine,
                  "{\"observer\": \"tobias\", \"about\": \"wren\", \"mood\": \"tired\", "
                  "\"traits\": [\"stubborn\"], \"confidence\": 0.8, \"source\": \"observed\"}",
                  HOUR) == RP_RESULT_OK);
    /* The clock's advance and the belief. */
    CHECK(head(t.engine) == before + 2);
    before = head(t.engine);

    json = beliefs(t.engine, t.tobias, HOUR);
    snprintf(part, sizeof part, "[{\"about\":%llu,\"name\":\"Wren\",\"mentioned\":false,",
             ull(t.wren));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "\"mood\":{\"value\":\"tired\",\"confidence\":0.8,"
                         "\"observed_confidence\":0.8,\"at\":3600000,\"source\":\"observed\"}"));
    CHECK(contains(json, "\"traits\":[{\"value\":\"stubborn\","));
    rp_string_free(json);

    /* Two hours later (one half-life): half as sure of the mood, the trait barely less. */
    json = beliefs(t.engine, t.tobias, 3 * HOUR);
    confidence = number_after(json, "\"mood\":", "\"confidence\":");
    CHECK(confidence > 0.3999999 && confidence < 0.4000001);
    confidence = number_after(json, "\"traits\":", "\"confidence\":");
    CHECK(confidence > 0.79 && confidence < 0.8);
    rp_string_free(json);

    /* Reading commits nothing, not even the clock; Mira believes nothing of Wren's mood. */
    CHECK(head(t.engine) == before);
    json = beliefs(t.engine, t.mira, 3 * HOUR);
    CHECK(!contains(json, "tired"));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

static void test_a_mentioned_person_is_a_lightweight_entity(void) {
    struct tavern t;
    char part[160];
    char *json = NULL;
    uint64_t mother = 0;
    uint64_t again = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_mention_person(t.engine, "Wren's mother", 13, "A seamstress.", 13, t.wren,
                                   0, &mother) == RP_RESULT_OK);
    CHECK(mother != 0);
    CHECK(rp_engine_entity_id(t.engine, "Wren's mother", 13, &again) == RP_RESULT_OK);
    CHECK(again == mother);
    /* No mind: a mentioned person has no drives. */
    json = NULL;
    CHECK(rp_engine_drives(t.engine, mother, 0, &json) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "only mentioned"));
    CHECK(json == NULL);
    /* A name taken is a conflict. */
    CHECK(rp_engine_mention_person(t.engine, "Wren's mother", 13, NULL, 0, 0, 0, &again) ==
          RP_RESULT_CONFLICT);

    CHECK(observe(t.engine,
                  "{\"observer\": \"tobias\", \"about\": \"wren\", \"feelings\": "
                  "[{\"toward\": \"Wren's mother\", \"sentiment\": -0.5, \"text\": \"resents\"}],"
                  " \"source\": {\"told_by\": \"mira\"}, \"confidence\": 0.7}",
                  0) == RP_RESULT_OK);
    CHECK(observe(t.engine,
                  "{\"observer\": \"tobias\", \"about\": \"Wren's mother\", \"traits\": "
                  "[\"strict\"], \"source\": \"inferred\", \"confidence\": 0.4}",
                  0) == RP_RESULT_OK);
    json = beliefs(t.engine, t.tobias, 0);
    snprintf(part, sizeof part,
             "\"value\":{\"toward\":%llu,\"toward_name\":\"Wren's mother\",\"sentiment\":-0.5,"
             "\"text\":\"resents\"}",
             ull(mother));
    CHECK(contains(json, part));
    snprintf(part, sizeof part, "\"source\":{\"told_by\":%llu}", ull(t.mira));
    CHECK(contains(json, part));
    snprintf(part, sizeof part, "{\"about\":%llu,\"name\":\"Wren's mother\",\"mentioned\":true,",
             ull(mother));
    CHECK(contains(json, part));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

static void test_bad_beliefs_are_refused_and_change_nothing(void) {
    struct tavern t;
    char *json = NULL;
    char *before_world = NULL;
    char *after_world = NULL;
    char *long_mood = NULL;
    uint64_t before = 0;
    uint64_t mother = 0;
    size_t i = 0;
    const char *prefix = "{\"observer\": \"tobias\", \"about\": \"wren\", \"mood\": \"";
    static const struct {
        const char *json;
        rp_result code;
        const char *says;
    } cases[] = {
        {"{\"observer\": \"tobias\", \"about\": \"wren\", \"energy\": 1.5}", RP_RESULT_INVALID,
         "energy"},
        {"{\"observer\": \"tobias\", \"about\": \"wren\", \"mood\": \"ok\", \"confidence\": -1}",
         RP_RESULT_INVALID, "confidence"},
        {"{\"observer\": \"tobias\", \"about\": \"wren\", \"feelings\": [{\"toward\": \"mira\", "
         "\"sentiment\": 3}]}",
         RP_RESULT_INVALID, "sentiment"},
        {"{\"observer\": \"tobias\", \"about\": \"wren\"}", RP_RESULT_INVALID, "needs"},
        {"{\"observer\": \"tobias\", \"about\": \"tobias\", \"mood\": \"ok\"}", RP_RESULT_INVALID,
         "someone else"},
        {"{\"observer\": \"tobias\", \"about\": \"wren\", \"mood\": \"ok\", \"x\": 1}",
         RP_RESULT_INVALID, "unknown field"},
        {"{\"observer\": \"tobias\", \"about\": \"wren\", \"mood\": \"a\\nb\"}", RP_RESULT_INVALID,
         "line break"},
        {"{\"observer\": \"Wren's mother\", \"about\": \"wren\", \"mood\": \"ok\"}",
         RP_RESULT_INVALID, "only mentioned"},
        {"{\"observer\": \"nobody\", \"about\": \"wren\", \"mood\": \"ok\"}", RP_RESULT_NOT_FOUND,
         "nobody"},
        {"[1, 2]", RP_RESULT_INVALID, "object"},
        {"{\"observer\": ", RP_RESULT_INVALID, "JSON"},
    };

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_mention_person(t.engine, "Wren's mother", 13, NULL, 0, 0, 0, &mother) ==
          RP_RESULT_OK);
    before = head(t.engine);
    before_world = world_json(t.engine);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const rp_result got = observe(t.engine, cases[i].json, 0);
        CHECK(got == cases[i].code);
        CHECK(contains(rp_last_error(), cases[i].says));
        if (got != cases[i].code) {
            fprintf(stderr, "    case: %s\n", cases[i].json);
        }
    }
    /* A mood of 201 characters is too long. */
    long_mood = malloc(strlen(prefix) + 201 + 3);
    if (long_mood != NULL) {
        memcpy(long_mood, prefix, strlen(prefix));
        memset(long_mood + strlen(prefix), 'x', 201);
        memcpy(long_mood + strlen(prefix) + 201, "\"}", 3);
        CHECK(observe(t.engine, long_mood, 0) == RP_RESULT_INVALID);
        CHECK(contains(rp_last_error(), "longer than 200"));
        free(long_mood);
    }
    /* Time never goes back; invalid UTF-8, NULLs and unknown observers are refused. */
    CHECK(observe(t.engine, "{\"observer\": \"tobias\", \"about\": \"wren\", \"mood\": \"ok\"}",
                  -1) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "before the world's clock"));
    CHECK(rp_engine_observe_belief(t.engine, "\xff", 1, 0) == RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_observe_belief(t.engine, NULL, 0, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_observe_belief(NULL, "{}", 2, 0) == RP_RESULT_NULL_ARGUMENT);
    json = NULL;
    CHECK(rp_engine_beliefs(t.engine, 999999, 0, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_beliefs(t.engine, t.tobias, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_json` is NULL") == 0);
    CHECK(rp_engine_beliefs(NULL, t.tobias, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(json == NULL);
    CHECK(rp_engine_mention_person(t.engine, "", 0, NULL, 0, 0, 0, &mother) ==
          RP_RESULT_INVALID);
    CHECK(rp_engine_mention_person(t.engine, "Ada", 3, NULL, 0, 999999, 0, &mother) ==
          RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_mention_person(t.engine, "Ada", 3, NULL, 0, 0, 0, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    /* Nothing changed. */
    CHECK(head(t.engine) == before);
    after_world = world_json(t.engine);
    CHECK(before_world != NULL && after_world != NULL && strcmp(before_world, after_world) == 0);
    rp_string_free(before_world);
    rp_string_free(after_world);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_a_belief_is_recorded_and_fades_with_time();
    test_a_mentioned_person_is_a_lightweight_entity();
    test_bad_beliefs_are_refused_and_change_nothing();

    return checks_done("test_beliefs");
}
