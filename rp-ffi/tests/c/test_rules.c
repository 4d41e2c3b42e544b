/*
 * Tests of rules from C (docs/rules.md): a rule given to Tobias with rp_engine_add_rule, read
 * back with rp_engine_rules (its weight fading with the days, nothing committed), firing in a
 * tick at its time and making him speak to Wren (an intention), and what he learns when Wren
 * does not answer; a rule taken away with rp_engine_remove_rule; and the unhappy paths: bad
 * JSON, values out of range, unknown stimulus kinds, unknown entities, a condition that does
 * not compile, the player as owner, too many rules, times before the world's clock, unknown
 * rule ids, NULL arguments, each refused with the code of rp-core's error kind and nothing
 * changed. Then stimuli climbing the layers (docs/drives.md, "Layers"): a crash Tobias hears
 * goes to the fast model (purpose classify) and, as it matters, to the smart one (purpose
 * think), whose thought is his memory alone; a bad thought is asked again once, then refused.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_rules.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_rules
 *   ./test_rules examples/tavern.toml
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

#define MINUTE 60000LL
#define HOUR 3600000LL
#define DAY (24 * HOUR)

/* Tobias's drive settings: only an intention pushes him to speak (its weight 1), he never
 * tires and knows no night, and Wren's availability does not hold him back. */
#define INTENT_ONLY                                                                          \
    "{\"weights\": {\"social_debt\": 0, \"task\": 0, \"curiosity\": 0, \"availability\": 0, " \
    "\"intent\": 1}, \"energy_drain_per_hour\": 0, \"night_start\": 0, \"night_end\": 0, "    \
    "\"availability_gate\": 0}"

#define LETTER_RULE                                                                     \
    "{\"description\": \"ask Wren about the letter\", \"on\": {\"at\": 3600000}, "      \
    "\"intent\": {\"initiate\": \"wren\", \"about\": \"the letter\"}, \"weight\": 1.0}"

#define TOBIAS_LINE "About that letter, Wren?"

static unsigned long long ull(uint64_t n) { return (unsigned long long)n; }

/* The number after the first `key` in `json` at or after `from` (-1 if absent). */
static double number_after(const char *json, const char *from, const char *key) {
    const char *at = json == NULL ? NULL : strstr(json, from);
    at = at == NULL ? NULL : strstr(at, key);
    return at == NULL ? -1.0 : strtod(at + strlen(key), NULL);
}

static rp_result add_rule(rp_engine *engine, uint64_t owner, const char *json, long long now,
                          uint64_t *out) {
    return rp_engine_add_rule(engine, owner, json, strlen(json), now, out);
}

static char *rules(const rp_engine *engine, uint64_t entity, long long now) {
    char *json = NULL;
    CHECK(rp_engine_rules(engine, entity, now, &json) == RP_RESULT_OK);
    return json;
}

static char *world_json(const rp_engine *engine) {
    char *json = NULL;
    CHECK(rp_engine_world(engine, &json) == RP_RESULT_OK);
    return json;
}

static char *step(rp_engine *engine, rp_job *job) {
    char *json = NULL;
    CHECK(rp_job_step(engine, job, &json) == RP_RESULT_OK);
    return json;
}

/* The tavern with Tobias's drives as INTENT_ONLY; 0 on failure. */
static int tobias_of_one_mind(struct tavern *t) {
    return open_tavern(t) && rp_engine_configure_drives(t->engine, t->tobias, INTENT_ONLY,
                                                        strlen(INTENT_ONLY)) == RP_RESULT_OK;
}

static void test_a_rule_is_added_and_read_with_its_weight_at_any_time(void) {
    struct tavern t;
    char part[200];
    char *json = NULL;
    uint64_t id = 0;
    uint64_t before = 0;
    double weight = 0;

    CHECK(tobias_of_one_mind(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    CHECK(add_rule(t.engine, t.tobias, LETTER_RULE, 0, &id) == RP_RESULT_OK);
    CHECK(id != 0);
    CHECK(head(t.engine) == before + 1);
    before = head(t.engine);

    json = rules(t.engine, t.tobias, 0);
    snprintf(part, sizeof part,
             "[{\"rule\":{\"id\":%llu,\"owner\":%llu,\"description\":\"ask Wren about the "
             "letter\",\"trigger\":{\"at\":3600000},",
             ull(id), ull(t.tobias));
    CHECK(starts_with(json, part));
    snprintf(part, sizeof part,
             "\"intent\":{\"initiate\":{\"to\":%llu,\"about\":\"the letter\"}},\"weight\":1.0,",
             ull(t.wren));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"uses\":0,"));
    CHECK(contains(json, "\"source\":\"host\""));
    CHECK(contains(json, "\"weight_now\":1.0,"));
    rp_string_free(json);

    /* A week later (one half-life) unused, half the weight; reading commits nothing. */
    json = rules(t.engine, t.tobias, 7 * DAY);
    weight = number_after(json, "\"weight_now\":", ":");
    CHECK(weight > 0.4999999 && weight < 0.5000001);
    CHECK(number_after(json, "\"forgotten_at\":", ":") > 28 * DAY);
    rp_string_free(json);
    CHECK(head(t.engine) == before);

    /* Wren (the player) and Mira hold none. */
    json = rules(t.engine, t.wren, 0);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);
    json = rules(t.engine, t.mira, 0);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);
    rp_engine_free(t.engine);
}

static void test_a_rule_at_a_time_makes_him_speak_and_an_unanswered_line_teaches(void) {
    struct tavern t;
    char part[200];
    char *json = NULL;
    uint64_t id = 0;
    rp_job *job = NULL;
    int64_t at = 0;
    bool due = false;

    CHECK(tobias_of_one_mind(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(add_rule(t.engine, t.tobias, LETTER_RULE, 0, &id) == RP_RESULT_OK);

    /* The next tick is the rule's time. */
    CHECK(rp_engine_next_tick_at(t.engine, 0, &at, &due) == RP_RESULT_OK);
    CHECK(due && at == HOUR);
    CHECK(rp_engine_next_tick(t.engine, 0, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "{\"at\":%lld,\"entity\":%llu,\"reason\":{\"kind\":\"rule\"}}",
             HOUR, ull(t.tobias));
    CHECK(json != NULL && strcmp(json, part) == 0);
    rp_string_free(json);

    /* It fires: his intention makes him speak to Wren at once, and his prompt says why. */
    CHECK(rp_engine_begin_tick(t.engine, HOUR, NULL, 0, &job) == RP_RESULT_OK);
    json = step(t.engine, job);
    snprintf(part, sizeof part,
             "{\"step\":\"generate\",\"purpose\":{\"kind\":\"initiate\",\"speaker\":%llu}",
             ull(t.tobias));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "the letter"));
    rp_string_free(json);
    CHECK(rp_job_provide(t.engine, job, "{\"text\": \"" TOBIAS_LINE "\"}",
                         strlen("{\"text\": \"" TOBIAS_LINE "\"}")) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "\"rules_fired\":[[%llu,%llu]]", ull(t.tobias), ull(id));
    CHECK(contains(json, part));
    snprintf(part, sizeof part, "\"initiations\":[{\"candidate\":{\"speaker\":%llu,\"to\":%llu,",
             ull(t.tobias), ull(t.wren));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"about\":\"intent\""));
    snprintf(part, sizeof part, "\"rules\":[%llu]", ull(id));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"pushed_over_by\":\"intent\""));
    CHECK(contains(json, TOBIAS_LINE));
    CHECK(contains(json, "\"learned\":[]"));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    /* Spent but held: used once; the intention fulfilled, the answer awaited. */
    json = rules(t.engine, t.tobias, HOUR);
    CHECK(contains(json, "\"uses\":1,\"last_used\":3600000,"));
    rp_string_free(json);
    CHECK(rp_engine_drives(t.engine, t.tobias, HOUR, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"intentions\":[]"));
    snprintf(part, sizeof part, "\"awaiting\":[{\"to\":%llu,\"at\":3600000,", ull(t.wren));
    CHECK(contains(json, part));
    rp_string_free(json);

    /* Wren says nothing for half an hour: he learns from it in arithmetic, no model asked. */
    CHECK(rp_engine_next_tick(t.engine, HOUR, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part,
             "{\"at\":%lld,\"entity\":%llu,\"reason\":{\"kind\":\"feedback\"}}",
             HOUR + 30 * MINUTE, ull(t.tobias));
    CHECK(json != NULL && strcmp(json, part) == 0);
    rp_string_free(json);
    CHECK(rp_engine_begin_tick(t.engine, HOUR + 30 * MINUTE, NULL, 0, &job) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "\"learned\":[{\"entity\":%llu,\"from\":%llu,", ull(t.tobias),
             ull(t.wren));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"reason\":\"Wren did not answer within 30 min\""));
    CHECK(contains(json, "\"target\":{\"kind\":\"term\""));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    /* What he learned is in his drives, and /why says it in words. */
    CHECK(rp_engine_drives(t.engine, t.tobias, HOUR + 30 * MINUTE, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"awaiting\":[]"));
    CHECK(contains(json, "\"term\":\"intent\""));
    CHECK(contains(json, "\"reward\":-1.0"));
    rp_string_free(json);
    CHECK(rp_engine_initiation_candidates(t.engine, t.tobias, HOUR + 30 * MINUTE, &json) ==
          RP_RESULT_OK);
    CHECK(contains(json, "\"learned\":\"Tobias Reed speaks up less to Wren (learned × 0."));
    CHECK(contains(json, "since Wren once did not answer"));
    CHECK(contains(json, "  learned: Tobias Reed speaks up less to Wren"));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

static void test_a_rule_taken_away_is_gone(void) {
    struct tavern t;
    char *json = NULL;
    uint64_t kept = 0;
    uint64_t removed = 0;
    uint64_t before = 0;
    char part[64];

    CHECK(tobias_of_one_mind(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(add_rule(t.engine, t.tobias,
                   "{\"description\": \"the bell means customers\", \"on\": {\"stimulus\": "
                   "\"sound\"}, \"condition\": \"content.includes('bell')\", \"intent\": "
                   "{\"drive\": \"task\", \"amount\": 0.5}}",
                   0, &kept) == RP_RESULT_OK);
    CHECK(add_rule(t.engine, t.tobias,
                   "{\"description\": \"hum\", \"on\": {\"in_hours\": 2}, \"intent\": "
                   "{\"note\": \"hum a tune\"}, \"weight\": 0.5}",
                   0, &removed) == RP_RESULT_OK);
    CHECK(kept != removed);
    before = head(t.engine);
    /* Taken away at 10 minutes: the clock's advance and the removal. */
    CHECK(rp_engine_remove_rule(t.engine, removed, 10 * MINUTE) == RP_RESULT_OK);
    CHECK(head(t.engine) == before + 2);
    json = rules(t.engine, t.tobias, 10 * MINUTE);
    snprintf(part, sizeof part, "[{\"rule\":{\"id\":%llu,", ull(kept));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "\"trigger\":{\"stimulus\":\"sound\"}"));
    CHECK(contains(json, "\"condition\":\"content.includes('bell')\""));
    CHECK(contains(json, "\"intent\":{\"drive\":{\"drive\":\"task\",\"amount\":0.5}}"));
    CHECK(contains(json, "\"weight\":0.8,"));
    CHECK(!contains(json, "hum"));
    rp_string_free(json);
    /* Twice is not found. */
    before = head(t.engine);
    CHECK(rp_engine_remove_rule(t.engine, removed, 10 * MINUTE) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "rule"));
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

static void test_bad_rules_are_refused_and_change_nothing(void) {
    struct tavern t;
    char *json = NULL;
    char *before_world = NULL;
    char *after_world = NULL;
    uint64_t before = 0;
    uint64_t id = 12345;
    uint64_t kept = 0;
    size_t i = 0;
    char rule[200];
    static const struct {
        const char *json;
        rp_result code;
        const char *says;
    } cases[] = {
        {"{", RP_RESULT_INVALID, "JSON"},
        {"[1, 2]", RP_RESULT_INVALID, "object"},
        {"{\"description\": \"x\", \"on\": {\"in_hours\": 1}, \"intent\": {\"note\": \"y\"}, "
         "\"weight\": 5}",
         RP_RESULT_INVALID, "weight"},
        {"{\"description\": \"x\", \"on\": {\"stimulus\": \"smell\"}, \"intent\": {\"note\": "
         "\"y\"}}",
         RP_RESULT_INVALID, "smell"},
        {"{\"description\": \"x\", \"on\": {\"in_hours\": 1, \"at\": 5}, \"intent\": {\"note\": "
         "\"y\"}}",
         RP_RESULT_INVALID, "on:"},
        {"{\"description\": \"\", \"on\": {\"in_hours\": 1}, \"intent\": {\"note\": \"y\"}}",
         RP_RESULT_INVALID, "empty"},
        {"{\"description\": \"x\", \"on\": {\"in_hours\": 1}, \"intent\": {\"note\": \"y\"}, "
         "\"typo\": 1}",
         RP_RESULT_INVALID, "typo"},
        {"{\"description\": \"x\", \"on\": {\"in_hours\": 1}, \"intent\": {\"drive\": "
         "\"task\", \"amount\": 2}}",
         RP_RESULT_INVALID, "amount"},
        {"{\"description\": \"x\", \"on\": {\"in_hours\": 1}, \"intent\": {\"initiate\": "
         "\"tobias\"}}",
         RP_RESULT_INVALID, "someone else"},
        {"{\"description\": \"x\", \"on\": {\"in_hours\": 1}, \"intent\": {\"initiate\": "
         "\"Nobody\"}}",
         RP_RESULT_NOT_FOUND, "Nobody"},
        {"{\"description\": \"x\", \"on\": {\"in_hours\": 1}, \"intent\": {\"note\": \"y\"}, "
         "\"condition\": \"content.(\"}",
         RP_RESULT_FACT_SYNTAX, "rule condition, line 1, column 9"},
    };
    static const char *note = "{\"description\": \"x\", \"on\": {\"in_hours\": 1}, "
                              "\"intent\": {\"note\": \"y\"}}";

    CHECK(tobias_of_one_mind(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    before_world = world_json(t.engine);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const rp_result got = add_rule(t.engine, t.tobias, cases[i].json, 0, &id);
        CHECK(got == cases[i].code);
        CHECK(contains(rp_last_error(), cases[i].says));
        if (got != cases[i].code || !contains(rp_last_error(), cases[i].says)) {
            fprintf(stderr, "    case: %s\n", cases[i].json);
        }
    }
    /* The player holds no rules; an unknown owner is not found. */
    CHECK(add_rule(t.engine, t.wren, note, 0, &id) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "only the engine's characters hold rules"));
    CHECK(add_rule(t.engine, 999999, note, 0, &id) == RP_RESULT_NOT_FOUND);
    /* Invalid UTF-8 and NULLs. */
    CHECK(rp_engine_add_rule(t.engine, t.tobias, "\xff", 1, 0, &id) == RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_add_rule(t.engine, t.tobias, NULL, 0, 0, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`rule_json` is NULL") == 0);
    CHECK(rp_engine_add_rule(t.engine, t.tobias, note, strlen(note), 0, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_rule_id` is NULL") == 0);
    CHECK(rp_engine_add_rule(NULL, t.tobias, note, strlen(note), 0, &id) ==
          RP_RESULT_NULL_ARGUMENT);
    /* Nothing was written to the out-parameter. */
    CHECK(id == 12345);
    /* Unknown rules and entities; NULLs. */
    CHECK(rp_engine_remove_rule(t.engine, 999999, 0) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_remove_rule(NULL, 1, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_rules(t.engine, 999999, 0, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_rules(t.engine, t.tobias, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_json` is NULL") == 0);
    CHECK(rp_engine_rules(NULL, t.tobias, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(json == NULL);
    /* Nothing changed. */
    CHECK(head(t.engine) == before);
    after_world = world_json(t.engine);
    CHECK(before_world != NULL && after_world != NULL && strcmp(before_world, after_world) == 0);
    rp_string_free(before_world);
    rp_string_free(after_world);

    /* Time never goes back, for adding or removing. */
    CHECK(add_rule(t.engine, t.tobias, note, HOUR, &kept) == RP_RESULT_OK);
    before = head(t.engine);
    CHECK(add_rule(t.engine, t.tobias, note, 0, &id) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "before the world's clock"));
    CHECK(rp_engine_remove_rule(t.engine, kept, 0) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "before the world's clock"));
    CHECK(head(t.engine) == before);

    /* A character holds at most 64 rules. */
    for (i = 1; i < 64; i++) {
        snprintf(rule, sizeof rule,
                 "{\"description\": \"rule %u\", \"on\": {\"in_hours\": 1}, \"intent\": "
                 "{\"note\": \"y\"}}",
                 (unsigned)i);
        CHECK(add_rule(t.engine, t.tobias, rule, HOUR, &id) == RP_RESULT_OK);
    }
    before = head(t.engine);
    CHECK(add_rule(t.engine, t.tobias, note, HOUR, &id) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "already holds 64 rules"));
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

#define CRASH "a crash in the kitchen"
#define CLASSIFIED                                                                         \
    "{\"text\": \"{\\\"intent\\\": \\\"trouble\\\", \\\"sentiment\\\": \\\"negative\\\", "      \
    "\\\"confidence\\\": 0.9, \\\"significance\\\": 0.9}\"}"

/* A crash Tobias hears at `now`, and the tick that processes it (at once: it is CRITICAL);
 * the classification answered CLASSIFIED, the thought `thought` (a result's JSON). Returns
 * the tick's outcome (free it), NULL on failure. */
static char *crash(struct tavern *t, long long now, const char *thought, int thinks) {
    char part[160];
    char *json = NULL;
    rp_job *job = NULL;
    uint64_t stimulus = 0;
    int i;
    CHECK(rp_engine_notify(t->engine, t->tobias, "sound", 5, "critical", 8, CRASH, strlen(CRASH),
                           now, &stimulus) == RP_RESULT_OK);
    CHECK(rp_engine_begin_tick(t->engine, now, NULL, 0, &job) == RP_RESULT_OK);
    if (job == NULL) {
        return NULL;
    }
    json = step(t->engine, job);
    snprintf(part, sizeof part,
             "{\"step\":\"generate\",\"purpose\":{\"kind\":\"classify\",\"speaker\":%llu}",
             ull(t->tobias));
    CHECK(starts_with(json, part));
    CHECK(contains(json, CRASH));
    rp_string_free(json);
    CHECK(rp_job_provide(t->engine, job, CLASSIFIED, strlen(CLASSIFIED)) == RP_RESULT_OK);
    for (i = 0; i < thinks; i++) {
        json = step(t->engine, job);
        snprintf(part, sizeof part,
                 "{\"step\":\"generate\",\"purpose\":{\"kind\":\"think\",\"speaker\":%llu}",
                 ull(t->tobias));
        CHECK(starts_with(json, part));
        rp_string_free(json);
        CHECK(rp_job_provide(t->engine, job, thought, strlen(thought)) == RP_RESULT_OK);
    }
    json = step(t->engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    json = NULL;
    CHECK(rp_job_finish(t->engine, job, &json) == RP_RESULT_OK);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    return json;
}

static void test_a_crash_climbs_to_a_thought_of_his_own(void) {
    struct tavern t;
    char part[160];
    char *json = NULL;
    const char *thought =
        "{\"text\": \"{\\\"thought\\\": \\\"Something broke. Mira will need a hand.\\\", "
        "\\\"task\\\": \\\"more\\\"}\"}";

    CHECK(tobias_of_one_mind(&t));
    if (t.engine == NULL) {
        return;
    }
    json = crash(&t, HOUR, thought, 1);
    CHECK(contains(json, "\"layers\":{\"reflex\":0,\"rules\":0,\"classify\":0,\"think\":1}"));
    CHECK(contains(json, "\"reason\":\"arithmetic is not confident: 0.30 below 0.50\""));
    CHECK(contains(json, "\"thought\":\"it matters: significance 0.90 from 0.70 (trouble)\""));
    snprintf(part, sizeof part, "\"thoughts\":[[%llu,", ull(t.tobias));
    CHECK(contains(json, part));
    rp_string_free(json);
    /* The thought is his memory alone, and its effect is on his drives. */
    CHECK(rp_engine_memories_of(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"text\":\"Something broke. Mira will need a hand.\""));
    CHECK(contains(json, "\"kind\":\"thought\""));
    snprintf(part, sizeof part, "\"witnesses\":[%llu]", ull(t.tobias));
    CHECK(contains(json, part));
    rp_string_free(json);
    CHECK(rp_engine_memories_of(t.engine, t.wren, &json) == RP_RESULT_OK);
    CHECK(!contains(json, "Something broke"));
    rp_string_free(json);
    CHECK(rp_engine_drives(t.engine, t.tobias, HOUR, &json) == RP_RESULT_OK);
    CHECK(number_after(json, "\"task\"", ":") > 0.24);
    rp_string_free(json);
    rp_engine_free(t.engine);

    /* A thought that says how much (the engine says how much) is asked again once, then
     * refused: nothing of it applied. */
    CHECK(tobias_of_one_mind(&t));
    if (t.engine == NULL) {
        return;
    }
    json = crash(&t, HOUR, "{\"text\": \"{\\\"thought\\\": \\\"x\\\", \\\"task\\\": 5}\"}", 2);
    CHECK(contains(json, "\"thoughts\":[]"));
    rp_string_free(json);
    CHECK(rp_engine_memories_of(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(!contains(json, "\"kind\":\"thought\""));
    rp_string_free(json);
    CHECK(rp_engine_events(t.engine, 1, UINT64_MAX, &json) == RP_RESULT_OK);
    CHECK(contains(json, "the thought was rejected: "));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_a_rule_is_added_and_read_with_its_weight_at_any_time();
    test_a_rule_at_a_time_makes_him_speak_and_an_unanswered_line_teaches();
    test_a_rule_taken_away_is_gone();
    test_bad_rules_are_refused_and_change_nothing();
    test_a_crash_climbs_to_a_thought_of_his_own();

    return checks_done("test_rules");
}
