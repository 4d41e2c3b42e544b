/*
 * Tests of the characters' inner life from C: Tobias's drives read at any time from the clock
 * on (full energy at the start, less hours later) without changing anything; personality and
 * drive settings set, and refused when out of range with nothing changed; stimuli of built-in
 * and world-added kinds delivered, unknown kinds and priorities refused; availability reports;
 * when the next tick is due and why; at midnight a tick puts the characters to sleep, committed
 * as it begins; a tick driven through rp_job in which Tobias, whose social debt toward Wren
 * builds fast, speaks first (a generation of purpose "initiate", one initiation in the
 * outcome); a tick the host fails (the initiation held back); rp_engine_advance through a
 * generate callback; and the unhappy paths: NULL arguments, bad JSON, unknown ids, the player
 * (no drives), times before the world's clock.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_drives.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_drives
 *   ./test_drives examples/tavern.toml
 *
 * The one argument is the path of the demo world file.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed";
 * exits 0 only when every check passed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"
#include "check.h"
#include "tavern.h"

#define MINUTE 60000LL
#define HOUR 3600000LL
#define NOON (12 * HOUR)

#define TOBIAS_LINE "Still here, traveller? The lights will be out on the marsh tonight."

static unsigned long long ull(uint64_t n) { return (unsigned long long)n; }

/* The number after the first `key` in `json` (-1 if absent). */
static double number_after(const char *json, const char *key) {
    const char *at = json == NULL ? NULL : strstr(json, key);
    return at == NULL ? -1.0 : strtod(at + strlen(key), NULL);
}

/* How many times `part` occurs in `text`. */
static int occurrences(const char *text, const char *part) {
    int n = 0;
    const char *at = text;
    while (at != NULL && (at = strstr(at, part)) != NULL) {
        n++;
        at += strlen(part);
    }
    return n;
}

static char *drives(const rp_engine *engine, uint64_t entity, long long now) {
    char *json = NULL;
    CHECK(rp_engine_drives(engine, entity, now, &json) == RP_RESULT_OK);
    return json;
}

static char *world_json(const rp_engine *engine) {
    char *json = NULL;
    CHECK(rp_engine_world(engine, &json) == RP_RESULT_OK);
    return json;
}

static rp_result personality(rp_engine *engine, uint64_t entity, const char *json) {
    return rp_engine_set_personality(engine, entity, json, strlen(json));
}

static rp_result configure(rp_engine *engine, uint64_t entity, const char *json) {
    return rp_engine_configure_drives(engine, entity, json, strlen(json));
}

static rp_result notify(rp_engine *engine, uint64_t entity, const char *kind,
                        const char *priority, const char *payload, long long now, uint64_t *id) {
    return rp_engine_notify(engine, entity, kind, strlen(kind), priority, strlen(priority),
                            payload, strlen(payload), now, id);
}

/* Begins a tick at `now` with `options` (NULL: the defaults). */
static rp_result begin_tick(rp_engine *engine, long long now, const char *options, rp_job **job) {
    return rp_engine_begin_tick(engine, now, options, options == NULL ? 0 : strlen(options), job);
}

static rp_result advance(rp_engine *engine, long long until, const char *options,
                         rp_generate_fn generate, void *user_data, char **out_json) {
    return rp_engine_advance(engine, until, options, options == NULL ? 0 : strlen(options),
                             generate, user_data, out_json);
}

static char *step(rp_engine *engine, rp_job *job) {
    char *json = NULL;
    CHECK(rp_job_step(engine, job, &json) == RP_RESULT_OK);
    return json;
}

/* The tavern with Tobias knowing Wren (the world file's edge), who sits beside him in the
 * booth, his social debt building fast (Wren is within his earshot; Mira, at the bar, is not),
 * his personality even (every trait 0.5), and Wren reported present at noon (the clock moves
 * there). 0 on failure. */
static int tobias_misses_wren(struct tavern *t) {
    if (!open_tavern(t)) {
        return 0;
    }
    return configure(t->engine, t->tobias, "{\"social_debt_per_hour\": 20}") == RP_RESULT_OK &&
           personality(t->engine, t->tobias, "{}") == RP_RESULT_OK &&
           rp_engine_report_availability(t->engine, t->wren, 1.0, NOON) == RP_RESULT_OK;
}

static void test_drives_are_read_at_any_time_and_change_nothing(void) {
    struct tavern t;
    char part[128];
    char *json = NULL;
    uint64_t before = 0;
    double energy = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    /* Full energy when the world begins; less three hours later (awake, it drains). */
    json = drives(t.engine, t.tobias, 0);
    snprintf(part, sizeof part, "{\"entity\":%llu,\"at\":0,\"energy\":1.0,", ull(t.tobias));
    CHECK(starts_with(json, part));
    /* His social debt toward Mira, whom he knows, has not begun to build. */
    snprintf(part, sizeof part, "[%llu,0.0]", ull(t.mira));
    CHECK(contains(json, part));
    CHECK(contains(json, "\"personality\":{\"humor\":"));
    CHECK(contains(json, "\"inbox\":[]"));
    CHECK(contains(json, "\"held_until\":null,\"intentions\":[],\"awaiting\":[],\"learned\":[],\"feedback\":[]}"));
    rp_string_free(json);
    json = drives(t.engine, t.tobias, 3 * HOUR);
    energy = number_after(json, "\"energy\":");
    CHECK(energy > 0.8 && energy < 0.95);
    CHECK(number_after(json, "\"at\":") == 3 * HOUR);
    rp_string_free(json);
    /* Reading changed nothing, the clock included. */
    CHECK(head(t.engine) == before);
    json = world_json(t.engine);
    CHECK(contains(json, "\"now\":0,"));
    rp_string_free(json);

    /* No one Mira knows can hear her at the bar (Tobias and Wren sit in the booth): no
       candidate. */
    CHECK(rp_engine_initiation_candidates(t.engine, t.mira, HOUR, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);

    /* The player has no drives; unknown ids, times before the clock, NULLs are refused. */
    json = NULL;
    CHECK(rp_engine_drives(t.engine, t.wren, 0, &json) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "host-controlled"));
    CHECK(rp_engine_initiation_candidates(t.engine, t.wren, 0, &json) == RP_RESULT_INVALID);
    CHECK(rp_engine_drives(t.engine, 999999, 0, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_initiation_candidates(t.engine, 999999, 0, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_drives(t.engine, t.tobias, -1, &json) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "before the world's clock"));
    CHECK(rp_engine_initiation_candidates(t.engine, t.tobias, -1, &json) == RP_RESULT_INVALID);
    CHECK(rp_engine_drives(t.engine, t.tobias, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_json` is NULL") == 0);
    CHECK(rp_engine_drives(NULL, t.tobias, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_initiation_candidates(t.engine, t.tobias, 0, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(json == NULL);
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

static void test_personality_is_set_and_refused_out_of_range(void) {
    struct tavern t;
    char *json = NULL;
    uint64_t before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    CHECK(personality(t.engine, t.tobias, "{\"shyness\": 0.9, \"patience\": 0.2}") ==
          RP_RESULT_OK);
    CHECK(head(t.engine) == before + 1);
    json = drives(t.engine, t.tobias, 0);
    CHECK(contains(json, "\"patience\":0.2,"));
    CHECK(contains(json, "\"shyness\":0.9,"));
    CHECK(contains(json, "\"humor\":0.5,"));
    rp_string_free(json);

    /* Out of range, unknown traits, not an object: refused, nothing changed. */
    before = head(t.engine);
    CHECK(personality(t.engine, t.tobias, "{\"shyness\": 1.5}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "shyness"));
    CHECK(personality(t.engine, t.tobias, "{\"shy\": 1}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "shy"));
    CHECK(personality(t.engine, t.tobias, "[0.5]") == RP_RESULT_INVALID);
    CHECK(personality(t.engine, t.tobias, "{\"humor\": \"high\"}") == RP_RESULT_INVALID);
    CHECK(head(t.engine) == before);
    json = drives(t.engine, t.tobias, 0);
    CHECK(contains(json, "\"shyness\":0.9,"));
    rp_string_free(json);

    /* The player has none; unknown ids, NULLs and bad UTF-8 are refused. */
    CHECK(personality(t.engine, t.wren, "{}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "host-controlled"));
    CHECK(personality(t.engine, 999999, "{}") == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_set_personality(t.engine, t.tobias, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`personality_json` is NULL") == 0);
    CHECK(rp_engine_set_personality(t.engine, t.tobias, "\xff", 1) == RP_RESULT_INVALID_UTF8);
    CHECK(personality(NULL, t.tobias, "{}") == RP_RESULT_NULL_ARGUMENT);
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

static void test_drive_settings_stimuli_and_availability(void) {
    struct tavern t;
    char *json = NULL;
    uint64_t before = 0, id = 0, other = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    /* Settings out of range or unknown: refused, nothing changed. */
    CHECK(configure(t.engine, t.tobias, "{\"social_debt_per_hour\": -1}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "social_debt_per_hour"));
    CHECK(configure(t.engine, 0, "{\"energy_drain_per_hour\": -0.5}") == RP_RESULT_INVALID);
    CHECK(configure(t.engine, 0, "{\"threshold\": 2}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "threshold"));
    CHECK(configure(t.engine, 0, "{\"stimulus_kinds\": [\"a door\"]}") == RP_RESULT_INVALID);
    CHECK(configure(t.engine, 0, "{\"tresholds\": 0.5}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "tresholds"));
    CHECK(configure(t.engine, t.wren, "{}") == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "host-controlled"));
    CHECK(configure(t.engine, 999999, "{}") == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_configure_drives(t.engine, 0, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(head(t.engine) == before);

    /* A kind the world does not know is refused; once the world's settings add it, it is
       delivered to Tobias's inbox, the clock moving to the stimulus's time. */
    CHECK(notify(t.engine, t.tobias, "door", "normal", "the door slams", MINUTE, &id) ==
          RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "unknown stimulus kind \"door\""));
    CHECK(head(t.engine) == before);
    CHECK(configure(t.engine, 0, "{\"stimulus_kinds\": [\"door\"]}") == RP_RESULT_OK);
    CHECK(head(t.engine) == before + 1);
    CHECK(notify(t.engine, t.tobias, "door", "normal", "the door slams", MINUTE, &id) ==
          RP_RESULT_OK);
    CHECK(id != 0);
    CHECK(head(t.engine) > before + 1);
    json = world_json(t.engine);
    CHECK(contains(json, "\"now\":60000,"));
    rp_string_free(json);
    json = drives(t.engine, t.tobias, MINUTE);
    CHECK(contains(json, "\"kind\":\"door\""));
    CHECK(contains(json, "\"payload\":\"the door slams\""));
    CHECK(number_after(json, "\"inbox\":[{\"id\":") == (double)id);
    rp_string_free(json);
    /* A built-in kind needs no setting. */
    CHECK(notify(t.engine, t.mira, "sound", "high", "glass breaks", 2 * MINUTE, &other) ==
          RP_RESULT_OK);
    CHECK(other > id);

    /* Bad priorities, kinds, times and entities: refused, nothing changed. */
    before = head(t.engine);
    CHECK(notify(t.engine, t.tobias, "door", "urgent", "again", 3 * MINUTE, &id) ==
          RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "not a priority"));
    CHECK(notify(t.engine, t.tobias, "smell", "low", "peat smoke", 3 * MINUTE, &id) ==
          RP_RESULT_INVALID);
    CHECK(notify(t.engine, t.tobias, "door", "low", "late", 0, &id) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "before the world's clock"));
    CHECK(notify(t.engine, t.wren, "door", "low", "a draught", 3 * MINUTE, &id) ==
          RP_RESULT_INVALID);
    CHECK(notify(t.engine, 999999, "door", "low", "a draught", 3 * MINUTE, &id) ==
          RP_RESULT_NOT_FOUND);
    CHECK(notify(t.engine, t.tobias, "door", "low", "x", 3 * MINUTE, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_notify(t.engine, t.tobias, NULL, 0, "low", 3, "x", 1, 3 * MINUTE, &id) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`kind` is NULL") == 0);
    CHECK(rp_engine_notify(t.engine, t.tobias, "door", 4, "low", 3, "\xff", 1, 3 * MINUTE,
                           &id) == RP_RESULT_INVALID_UTF8);
    CHECK(head(t.engine) == before);

    /* Availability: reported about anyone, in [0, 1], never before the clock. */
    CHECK(rp_engine_report_availability(t.engine, t.wren, 0.3, 4 * MINUTE) == RP_RESULT_OK);
    CHECK(head(t.engine) > before);
    before = head(t.engine);
    CHECK(rp_engine_report_availability(t.engine, t.wren, 1.5, 5 * MINUTE) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "availability"));
    CHECK(rp_engine_report_availability(t.engine, t.wren, 0.5, 0) == RP_RESULT_INVALID);
    CHECK(rp_engine_report_availability(t.engine, 999999, 0.5, 5 * MINUTE) ==
          RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_report_availability(NULL, t.wren, 0.5, 5 * MINUTE) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(head(t.engine) == before);
    json = world_json(t.engine);
    CHECK(contains(json, "\"now\":240000,"));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

static void test_at_midnight_a_tick_puts_the_characters_to_sleep(void) {
    struct tavern t;
    char *json = NULL;
    rp_job *job = NULL;
    int64_t at = -1;
    bool due = false;
    uint64_t before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    /* The world begins at midnight; nights last from ten to six; no one is talking. */
    CHECK(configure(t.engine, 0, "{\"night_start\": 22, \"night_end\": 6}") == RP_RESULT_OK);
    CHECK(rp_engine_next_tick_at(t.engine, 0, &at, &due) == RP_RESULT_OK);
    CHECK(due && at == 0);
    CHECK(rp_engine_next_tick(t.engine, 0, &json) == RP_RESULT_OK);
    CHECK(starts_with(json, "{\"at\":0,\"entity\":"));
    CHECK(contains(json, "\"reason\":{\"kind\":\"sleep\"}}"));
    rp_string_free(json);

    /* The tick's arithmetic is committed as it begins; it asks for nothing. */
    before = head(t.engine);
    CHECK(rp_engine_begin_tick(t.engine, 0, NULL, 0, &job) == RP_RESULT_OK);
    CHECK(head(t.engine) > before);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    CHECK(starts_with(json, "{\"seq\":"));
    CHECK(number_after(json, "{\"seq\":") == (double)head(t.engine));
    CHECK(contains(json, "\"at\":0,"));
    CHECK(occurrences(json, "\"asleep\":true") == 2);
    CHECK(contains(json, "\"initiations\":[]"));
    rp_string_free(json);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    json = drives(t.engine, t.tobias, 0);
    CHECK(contains(json, "\"mode\":\"sleep\""));
    rp_string_free(json);
    json = drives(t.engine, t.mira, 0);
    CHECK(contains(json, "\"mode\":\"sleep\""));
    rp_string_free(json);

    /* They wake by day: the next tick is at 6 in the morning. */
    CHECK(rp_engine_next_tick_at(t.engine, 0, &at, &due) == RP_RESULT_OK);
    CHECK(due && at == 6 * HOUR);
    CHECK(rp_engine_next_tick(t.engine, 0, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"reason\":{\"kind\":\"wake\"}}"));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

static void test_tobias_speaks_first_in_a_tick_driven_through_rp_job(void) {
    struct tavern t;
    char part[256];
    char *json = NULL;
    rp_job *job = NULL;
    int64_t at = -1;
    bool due = false;
    uint64_t before = 0;

    CHECK(tobias_misses_wren(&t));
    if (t.engine == NULL) {
        return;
    }
    /* Never before the world's clock. */
    CHECK(rp_engine_next_tick_at(t.engine, 0, &at, &due) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "before the world's clock"));
    CHECK(rp_engine_next_tick(t.engine, 0, &json) == RP_RESULT_INVALID);
    CHECK(at == -1 && !due && json == NULL);

    /* By noon his debt toward Wren is full: he would speak to her now, and says why. */
    json = drives(t.engine, t.tobias, NOON);
    snprintf(part, sizeof part, "[%llu,1.0]", ull(t.wren));
    CHECK(contains(json, part));
    CHECK(number_after(json, "\"pressure\":") >= number_after(json, "\"threshold\":"));
    rp_string_free(json);
    CHECK(rp_engine_initiation_candidates(t.engine, t.tobias, NOON, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "[{\"speaker\":%llu,\"to\":%llu,\"about\":\"social_debt\",",
             ull(t.tobias), ull(t.wren));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "\"pushed_over_by\":\"social_debt\""));
    CHECK(contains(json, "\"explanation\":\"Tobias Reed → Wren: pressure "));
    CHECK(occurrences(json, "\"explanation\":") == 1);
    CHECK(!contains(json, "\"open\":false"));
    rp_string_free(json);

    CHECK(rp_engine_next_tick_at(t.engine, NOON, &at, &due) == RP_RESULT_OK);
    CHECK(due && at == NOON);
    CHECK(rp_engine_next_tick(t.engine, NOON, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part,
             "{\"at\":%lld,\"entity\":%llu,\"reason\":{\"kind\":\"pressure\",\"to\":%llu}}",
             NOON, ull(t.tobias), ull(t.wren));
    CHECK(json != NULL && strcmp(json, part) == 0);
    rp_string_free(json);

    /* The tick asks for his first line, then commits it as a turn. */
    before = head(t.engine);
    CHECK(rp_engine_begin_tick(t.engine, at, NULL, 0, &job) == RP_RESULT_OK);
    json = step(t.engine, job);
    snprintf(part, sizeof part,
             "{\"step\":\"generate\",\"purpose\":{\"kind\":\"initiate\",\"speaker\":%llu}",
             ull(t.tobias));
    CHECK(starts_with(json, part));
    CHECK(contains(json, "You are Tobias Reed"));
    rp_string_free(json);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_CONFLICT);
    CHECK(rp_job_provide(t.engine, job, "{\"text\": \"" TOBIAS_LINE "\"}",
                         strlen("{\"text\": \"" TOBIAS_LINE "\"}")) == RP_RESULT_OK);
    /* Wren is the player and Mira, at the bar, did not hear it: no one else is asked. */
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_OK);
    CHECK(head(t.engine) > before);
    CHECK(number_after(json, "{\"seq\":") == (double)head(t.engine));
    snprintf(part, sizeof part, "\"at\":%lld,", NOON);
    CHECK(contains(json, part));
    snprintf(part, sizeof part, "\"initiations\":[{\"candidate\":{\"speaker\":%llu,\"to\":%llu,",
             ull(t.tobias), ull(t.wren));
    CHECK(contains(json, part));
    CHECK(occurrences(json, "\"explanation\":") == 1);
    CHECK(contains(json, "\"name\":\"sheet\",\"open\":true"));
    CHECK(contains(json, TOBIAS_LINE));
    CHECK(contains(json, "\"held\":[]"));
    rp_string_free(json);
    CHECK(rp_job_step(t.engine, job, &json) == RP_RESULT_CONFLICT);
    CHECK(rp_job_free(job) == RP_RESULT_OK);

    /* The line is in the dialogue, and speaking paid his debt. */
    CHECK(rp_engine_dialogue(t.engine, &json) == RP_RESULT_OK);
    CHECK(contains(json, TOBIAS_LINE));
    rp_string_free(json);
    json = drives(t.engine, t.tobias, NOON);
    snprintf(part, sizeof part, "[%llu,0.0]", ull(t.wren));
    CHECK(contains(json, part));
    rp_string_free(json);

    /* Refused: bad options, a time before the clock, NULLs; no job made. */
    job = NULL;
    CHECK(begin_tick(t.engine, NOON, "{\"max_initiations\": 1, \"x\": 1}", &job) ==
          RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid tick options: "));
    CHECK(begin_tick(t.engine, NOON, "{\"turn\": {\"max_responders\": -1}}", &job) ==
          RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "turn.max_responders"));
    CHECK(rp_engine_begin_tick(t.engine, 0, NULL, 0, &job) == RP_RESULT_INVALID);
    CHECK(rp_engine_begin_tick(t.engine, NOON, NULL, 3, &job) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_begin_tick(t.engine, NOON, NULL, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_job` is NULL") == 0);
    CHECK(rp_engine_begin_tick(NULL, NOON, NULL, 0, &job) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_next_tick_at(t.engine, NOON, NULL, &due) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_next_tick_at(t.engine, NOON, &at, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_next_tick(t.engine, NOON, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(job == NULL);
    rp_engine_free(t.engine);
}

static void test_a_tick_the_host_fails_holds_the_initiation_back(void) {
    struct tavern t;
    char *json = NULL;
    rp_job *job = NULL;

    CHECK(tobias_misses_wren(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(begin_tick(t.engine, NOON, "{\"max_initiations\": 1}", &job) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(contains(json, "\"kind\":\"initiate\""));
    rp_string_free(json);
    CHECK(rp_job_fail(t.engine, job, "no model", 8) == RP_RESULT_OK);
    json = step(t.engine, job);
    CHECK(json != NULL && strcmp(json, "{\"step\":\"done\"}") == 0);
    rp_string_free(json);
    json = NULL;
    CHECK(rp_job_finish(t.engine, job, &json) == RP_RESULT_GENERATION);
    CHECK(contains(rp_last_error(), "no model"));
    CHECK(json == NULL);
    CHECK(rp_job_free(job) == RP_RESULT_OK);
    /* The hold is committed: no initiation until it ends. */
    json = drives(t.engine, t.tobias, NOON);
    CHECK(!contains(json, "\"held_until\":null"));
    CHECK(number_after(json, "\"held_until\":") > NOON);
    rp_string_free(json);
    CHECK(rp_engine_initiation_candidates(t.engine, t.tobias, NOON, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"name\":\"held\",\"open\":false"));
    rp_string_free(json);
    rp_engine_free(t.engine);
}

/* The generate callback of rp_engine_advance: Tobias's line for each initiation, a summary
 * for each scene an initiation closes first, and a try to use its own engine (refused, never
 * a deadlock). */
struct host {
    rp_engine *engine;
    int calls;
    int initiations;
    int fail;
    rp_result reentrant;
};

static int host_generate(void *user_data, const char *request_json, size_t request_json_len,
                         rp_token_sink *sink, const char **out_result_json,
                         size_t *out_result_len) {
    static const char line[] = "{\"text\": \"" TOBIAS_LINE "\"}";
    static const char summary[] = "{\"text\": \"Tobias talked about the rain.\"}";
    struct host *h = user_data;
    int64_t at = 0;
    bool due = false;
    const bool initiate = starts_with(request_json, "{\"purpose\":{\"kind\":\"initiate\",");
    (void)sink;
    h->calls++;
    CHECK(strlen(request_json) == request_json_len);
    CHECK(initiate || starts_with(request_json, "{\"purpose\":{\"kind\":\"summary\"}"));
    h->reentrant = rp_engine_next_tick_at(h->engine, 0, &at, &due);
    if (h->fail) {
        *out_result_json = "the model server is down";
        *out_result_len = strlen(*out_result_json);
        return RP_RESULT_GENERATION;
    }
    h->initiations += initiate;
    *out_result_json = initiate ? line : summary;
    *out_result_len = strlen(*out_result_json);
    return RP_RESULT_OK;
}

static void test_advance_plays_host_time_through_the_callback(void) {
    struct tavern t;
    struct host h;
    char *json = NULL;
    const long long until = NOON + 10 * MINUTE;

    CHECK(tobias_misses_wren(&t));
    if (t.engine == NULL) {
        return;
    }
    memset(&h, 0, sizeof h);
    h.engine = t.engine;
    CHECK(advance(t.engine, until, "{\"max_initiations\": 1}", host_generate, &h, &json) ==
          RP_RESULT_OK);
    CHECK(h.calls >= 1);
    CHECK(h.reentrant == RP_RESULT_CONFLICT);
    /* One outcome per tick, the first Tobias's initiation at noon. */
    CHECK(starts_with(json, "[{\"seq\":"));
    CHECK(contains(json, "\"initiations\":[{\"candidate\":{"));
    CHECK(occurrences(json, "\"explanation\":") == h.initiations);
    CHECK(contains(json, TOBIAS_LINE));
    rp_string_free(json);
    /* The clock is at `until`. */
    json = world_json(t.engine);
    CHECK(contains(json, "\"now\":43800000,"));
    rp_string_free(json);

    /* A failing callback: the initiation is held back, the call says why. */
    h.fail = 1;
    h.calls = 0;
    json = NULL;
    CHECK(rp_engine_advance(t.engine, until + 2 * HOUR, NULL, 0, host_generate, &h, &json) ==
          RP_RESULT_GENERATION);
    CHECK(contains(rp_last_error(), "the model server is down"));
    CHECK(h.calls == 1);
    CHECK(json == NULL);
    json = drives(t.engine, t.tobias, until + 2 * HOUR);
    CHECK(!contains(json, "\"held_until\":null"));
    rp_string_free(json);
    json = NULL;

    /* Refused: a time before the clock, bad options, NULLs. */
    CHECK(rp_engine_advance(t.engine, 0, NULL, 0, host_generate, &h, &json) ==
          RP_RESULT_INVALID);
    CHECK(advance(t.engine, until + 3 * HOUR, "{\"x\": 1}", host_generate, &h, &json) ==
          RP_RESULT_INVALID);
    CHECK(rp_engine_advance(t.engine, until + 3 * HOUR, NULL, 0, NULL, &h, &json) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`generate` is NULL") == 0);
    CHECK(rp_engine_advance(t.engine, until + 3 * HOUR, NULL, 0, host_generate, &h, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(json == NULL);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_drives_are_read_at_any_time_and_change_nothing();
    test_personality_is_set_and_refused_out_of_range();
    test_drive_settings_stimuli_and_availability();
    test_at_midnight_a_tick_puts_the_characters_to_sleep();
    test_tobias_speaks_first_in_a_tick_driven_through_rp_job();
    test_a_tick_the_host_fails_holds_the_initiation_back();
    test_advance_plays_host_time_through_the_callback();

    return checks_done("test_drives");
}
