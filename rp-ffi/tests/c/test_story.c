/*
 * Tests of scoped events and threads from C: the picnic (plan with props,
 * start, complete with one item promoted; the props in the participants'
 * prompts only while it is active, the item in the inventory afterwards),
 * the lifecycle's refusals with their codes and messages, bad JSON and
 * NULL arguments and freed handles refused with nothing changed,
 * rp_engine_run_due with time triggers, and threads in and out of prompts.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_story.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_story
 *   ./test_story examples/tavern.toml
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

#define MINUTE 60000
#define HOUR 3600000

#define BASKET "a wicker basket of bread"
#define BLANKET "a red checked blanket"
#define LEDGER "Who took the ledger from behind the bar?"

/* The picnic's plan for Wren and Mira, with its two props. */
static void picnic_plan(const struct tavern *t, char *plan, size_t size, const char *extra) {
    snprintf(plan, size,
             "{\"name\": \"the picnic\", \"participants\": [%llu, %llu], "
             "\"props\": {\"basket\": \"" BASKET "\", \"blanket\": \"" BLANKET "\"}, "
             "\"significance\": 0.6%s}",
             (unsigned long long)t->wren, (unsigned long long)t->mira, extra);
}

static rp_result plan(rp_engine *engine, const char *json, int64_t now, uint64_t *out_id) {
    return rp_engine_plan_event(engine, json, strlen(json), now, out_id);
}

static rp_result complete(rp_engine *engine, uint64_t id, const char *promotion, int64_t now) {
    return rp_engine_complete_event(engine, id, promotion,
                                    promotion == NULL ? 0 : strlen(promotion), now);
}

/* The prompt JSON `speaker` would be given now (the caller frees it), or NULL. */
static char *prompt_of(rp_engine *engine, uint64_t speaker, int64_t now) {
    char *json = NULL;
    CHECK(rp_engine_inspect_prompt(engine, speaker, NULL, 0, now, NULL, 0, &json) ==
          RP_RESULT_OK);
    return json;
}

/* Whether `speaker`'s prompt now holds `part`. */
static int prompt_has(rp_engine *engine, uint64_t speaker, int64_t now, const char *part) {
    char *json = prompt_of(engine, speaker, now);
    int found = contains(json, part);
    rp_string_free(json);
    return found;
}

/* The scoped event's JSON (the caller frees it), or NULL. */
static char *event_json(rp_engine *engine, uint64_t id) {
    char *json = NULL;
    CHECK(rp_engine_scoped_event(engine, id, &json) == RP_RESULT_OK);
    return json;
}

static int event_has(rp_engine *engine, uint64_t id, const char *part) {
    char *json = event_json(engine, id);
    int found = contains(json, part);
    rp_string_free(json);
    return found;
}

static int entity_has(rp_engine *engine, uint64_t id, const char *part) {
    char *json = NULL;
    int found;
    CHECK(rp_engine_entity(engine, id, &json) == RP_RESULT_OK);
    found = contains(json, part);
    rp_string_free(json);
    return found;
}

static void test_the_picnic(void) {
    struct tavern t;
    char json[1024];
    char part[256];
    char *out = NULL;
    uint64_t id = 0, before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    /* Planned: one commit with the clock's advance, in no prompt yet. */
    picnic_plan(&t, json, sizeof json, "");
    before = head(t.engine);
    CHECK(plan(t.engine, json, MINUTE, &id) == RP_RESULT_OK);
    CHECK(head(t.engine) == before + 2);
    out = event_json(t.engine, id);
    snprintf(part, sizeof part, "{\"id\":%llu,\"name\":\"the picnic\",\"status\":\"planned\",",
             (unsigned long long)id);
    CHECK(starts_with(out, part));
    CHECK(contains(out, "\"significance\":0.6"));
    CHECK(contains(out, "\"started\":null,\"closed\":null}"));
    rp_string_free(out);
    CHECK(!prompt_has(t.engine, t.mira, MINUTE, BASKET));

    /* Active: the props are in the participants' prompts, not in Tobias's. */
    CHECK(rp_engine_start_event(t.engine, id, 2 * MINUTE) == RP_RESULT_OK);
    CHECK(event_has(t.engine, id, "\"status\":\"active\""));
    CHECK(event_has(t.engine, id, "\"started\":120000"));
    CHECK(prompt_has(t.engine, t.mira, 2 * MINUTE, "# Happening now"));
    CHECK(prompt_has(t.engine, t.mira, 2 * MINUTE, "the picnic (basket: " BASKET));
    CHECK(prompt_has(t.engine, t.mira, 2 * MINUTE, BLANKET));
    CHECK(prompt_has(t.engine, t.wren, 2 * MINUTE, BASKET));
    CHECK(!prompt_has(t.engine, t.tobias, 2 * MINUTE, BASKET));
    CHECK(rp_engine_scoped_events(t.engine, &out) == RP_RESULT_OK);
    CHECK(starts_with(out, "[{\"id\":"));
    CHECK(contains(out, "\"status\":\"active\""));
    rp_string_free(out);

    /* Completed with the letter promoted to Mira, and her gist of it. */
    snprintf(json, sizeof json,
             "{\"items\": [{\"item\": %llu, \"to\": %llu}], "
             "\"gists\": [{\"witness\": %llu, \"text\": \"Wren gave me a sealed letter on the "
             "grass.\"}]}",
             (unsigned long long)t.letter, (unsigned long long)t.mira,
             (unsigned long long)t.mira);
    CHECK(complete(t.engine, id, json, 3 * MINUTE) == RP_RESULT_OK);
    CHECK(event_has(t.engine, id, "\"status\":\"completed\""));
    CHECK(event_has(t.engine, id, "\"closed\":180000"));
    /* The closed record keeps the props for the host; no prompt shows them. */
    CHECK(event_has(t.engine, id, BASKET));
    CHECK(!prompt_has(t.engine, t.mira, 3 * MINUTE, BASKET));
    CHECK(!prompt_has(t.engine, t.mira, 3 * MINUTE, BLANKET));
    CHECK(!prompt_has(t.engine, t.wren, 3 * MINUTE, BLANKET));
    CHECK(!prompt_has(t.engine, t.mira, 3 * MINUTE, "# Happening now"));
    /* The letter moved from Wren's inventory to Mira's. */
    snprintf(part, sizeof part, "\"inventory\":[%llu]", (unsigned long long)t.letter);
    CHECK(entity_has(t.engine, t.mira, part));
    CHECK(entity_has(t.engine, t.wren, "\"inventory\":[]"));
    CHECK(rp_engine_world(t.engine, &out) == RP_RESULT_OK);
    CHECK(contains(out, "\"scoped_events\":1"));
    CHECK(contains(out, "\"now\":180000"));
    rp_string_free(out);
    CHECK(rp_engine_memories_of(t.engine, t.mira, &out) == RP_RESULT_OK);
    CHECK(contains(out, "Wren gave me a sealed letter on the grass."));
    CHECK(contains(out, "\"kind\":\"event_gist\""));
    rp_string_free(out);
    rp_engine_free(t.engine);
}

static void test_wrong_transitions_are_refused_with_their_codes(void) {
    struct tavern t;
    char json[1024];
    uint64_t id = 0, other = 0, before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    picnic_plan(&t, json, sizeof json, "");
    CHECK(plan(t.engine, json, 0, &id) == RP_RESULT_OK);

    before = head(t.engine);
    CHECK(complete(t.engine, id, NULL, 0) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "the picnic"));
    CHECK(contains(rp_last_error(), "is planned; it cannot complete"));
    CHECK(head(t.engine) == before);

    CHECK(rp_engine_start_event(t.engine, id, 0) == RP_RESULT_OK);
    CHECK(rp_last_error()[0] == '\0');
    before = head(t.engine);
    CHECK(rp_engine_start_event(t.engine, id, 0) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "cannot start again"));
    CHECK(complete(t.engine, id, NULL, 0) == RP_RESULT_OK);
    before = head(t.engine);
    /* Complete twice. */
    CHECK(complete(t.engine, id, NULL, 0) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "cannot complete again"));
    CHECK(contains(rp_last_error(), "closed for good"));
    CHECK(rp_engine_cancel_event(t.engine, id, 0) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "cannot be cancelled"));
    CHECK(rp_engine_expire_event(t.engine, id, 0) == RP_RESULT_CONFLICT);
    CHECK(head(t.engine) == before);

    /* Start a cancelled event. */
    CHECK(plan(t.engine, json, 0, &other) == RP_RESULT_OK);
    CHECK(other != id);
    CHECK(rp_engine_cancel_event(t.engine, other, 0) == RP_RESULT_OK);
    CHECK(event_has(t.engine, other, "\"status\":\"cancelled\""));
    before = head(t.engine);
    CHECK(rp_engine_start_event(t.engine, other, 0) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "is cancelled; it cannot start"));

    /* An expired event, an event that does not exist, a clock gone back. */
    CHECK(plan(t.engine, json, 0, &other) == RP_RESULT_OK);
    CHECK(rp_engine_expire_event(t.engine, other, MINUTE) == RP_RESULT_OK);
    CHECK(event_has(t.engine, other, "\"status\":\"expired\""));
    before = head(t.engine);
    CHECK(rp_engine_start_event(t.engine, 999999, MINUTE) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "event#999999"));
    CHECK(rp_engine_cancel_event(t.engine, 999999, MINUTE) == RP_RESULT_NOT_FOUND);
    {
        char *out = NULL;
        CHECK(rp_engine_scoped_event(t.engine, 999999, &out) == RP_RESULT_NOT_FOUND);
        CHECK(out == NULL);
    }
    CHECK(plan(t.engine, json, 0, &other) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "before the world's clock"));
    CHECK(head(t.engine) == before);

    /* A precondition that does not hold (the clock is at midnight): CONFLICT, saying which. */
    picnic_plan(&t, json, sizeof json, ", \"preconditions\": [\"time.is_day\"]");
    CHECK(plan(t.engine, json, MINUTE, &other) == RP_RESULT_OK);
    before = head(t.engine);
    CHECK(rp_engine_start_event(t.engine, other, MINUTE) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "the precondition `time.is_day` does not hold"));
    CHECK(head(t.engine) == before);
    CHECK(event_has(t.engine, other, "\"status\":\"planned\""));
    rp_engine_free(t.engine);
}

static void test_bad_input_is_refused_and_changes_nothing(void) {
    struct tavern t;
    char json[1024];
    char *before_json = NULL;
    char *after_json = NULL;
    uint64_t id = 4242, picnic = 0, before = 0;
    const char bad_utf8[] = "{\"name\": \"\xff\"}";

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    picnic_plan(&t, json, sizeof json, "");
    CHECK(plan(t.engine, json, 0, &picnic) == RP_RESULT_OK);
    CHECK(rp_engine_start_event(t.engine, picnic, 0) == RP_RESULT_OK);
    before = head(t.engine);
    CHECK(rp_engine_world(t.engine, &before_json) == RP_RESULT_OK);

    /* Plans. */
    CHECK(plan(t.engine, "{not json", 0, &id) == RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid event plan"));
    CHECK(plan(t.engine, "[]", 0, &id) == RP_RESULT_INVALID);
    snprintf(json, sizeof json, "{\"name\": \"x\", \"participants\": [%llu], \"colour\": 1}",
             (unsigned long long)t.mira);
    CHECK(plan(t.engine, json, 0, &id) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "colour"));
    snprintf(json, sizeof json,
             "{\"name\": \"x\", \"participants\": [%llu], "
             "\"on_start\": [{\"type\": \"sytem_line\", \"text\": \"hi\"}]}",
             (unsigned long long)t.mira);
    CHECK(plan(t.engine, json, 0, &id) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "sytem_line"));
    picnic_plan(&t, json, sizeof json, ", \"preconditions\": [\"time.is_day &&\"]");
    CHECK(plan(t.engine, json, 0, &id) == RP_RESULT_FACT_SYNTAX);
    CHECK(contains(rp_last_error(), "`time.is_day &&`"));
    picnic_plan(&t, json, sizeof json, ", \"start_when\": present");
    CHECK(plan(t.engine, json, 0, &id) == RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid event plan"));
    picnic_plan(&t, json, sizeof json, ", \"start_when\": \"present.includes(\\\"\"");
    CHECK(plan(t.engine, json, 0, &id) == RP_RESULT_FACT_SYNTAX);
    picnic_plan(&t, json, sizeof json, ", \"significance\": 1.5");
    CHECK(plan(t.engine, json, 0, &id) == RP_RESULT_INVALID);
    snprintf(json, sizeof json, "{\"name\": \"x\", \"participants\": []}");
    CHECK(plan(t.engine, json, 0, &id) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "no participants"));
    snprintf(json, sizeof json, "{\"name\": \"x\", \"participants\": [%llu, 999999]}",
             (unsigned long long)t.mira);
    CHECK(plan(t.engine, json, 0, &id) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "entity#999999"));
    CHECK(rp_engine_plan_event(t.engine, bad_utf8, strlen(bad_utf8), 0, &id) ==
          RP_RESULT_INVALID_UTF8);
    CHECK(contains(rp_last_error(), "`plan_json` is not valid UTF-8"));

    /* Promotions. */
    CHECK(complete(t.engine, picnic, "{\"items\": 3", 0) == RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid promotion JSON"));
    CHECK(complete(t.engine, picnic, "{\"trinkets\": []}", 0) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "trinkets"));
    snprintf(json, sizeof json, "{\"gists\": [{\"witness\": %llu, \"text\": \"I watched.\"}]}",
             (unsigned long long)t.tobias);
    CHECK(complete(t.engine, picnic, json, 0) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "is not a participant of the picnic"));
    snprintf(json, sizeof json, "{\"items\": [{\"item\": 999999, \"to\": %llu}]}",
             (unsigned long long)t.mira);
    CHECK(complete(t.engine, picnic, json, 0) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_complete_event(t.engine, picnic, "\xff", 1, 0) == RP_RESULT_INVALID_UTF8);

    /* Threads. */
    CHECK(rp_engine_open_thread(t.engine, " \n ", 3, &t.mira, 1, 0, &id) == RP_RESULT_INVALID);
    CHECK(rp_engine_open_thread(t.engine, LEDGER, strlen(LEDGER), &t.mira, 0, 0, &id) ==
          RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "at least one participant"));
    {
        const uint64_t nobody[2] = {0, 999999};
        CHECK(rp_engine_open_thread(t.engine, LEDGER, strlen(LEDGER), nobody + 1, 1, 0, &id) ==
              RP_RESULT_NOT_FOUND);
    }
    CHECK(rp_engine_open_thread(t.engine, "\xff", 1, &t.mira, 1, 0, &id) ==
          RP_RESULT_INVALID_UTF8);

    /* Nothing was written, nothing changed: the picnic is still active. */
    CHECK(id == 4242);
    CHECK(head(t.engine) == before);
    CHECK(rp_engine_world(t.engine, &after_json) == RP_RESULT_OK);
    CHECK(before_json != NULL && after_json != NULL && strcmp(before_json, after_json) == 0);
    CHECK(event_has(t.engine, picnic, "\"status\":\"active\""));
    rp_string_free(before_json);
    rp_string_free(after_json);
    rp_engine_free(t.engine);
}

static void test_null_arguments_are_refused(void) {
    struct tavern t;
    char json[1024];
    char *out = NULL;
    uint64_t id = 4242, picnic = 0, before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    picnic_plan(&t, json, sizeof json, "");
    CHECK(plan(t.engine, json, 0, &picnic) == RP_RESULT_OK);
    CHECK(rp_engine_start_event(t.engine, picnic, 0) == RP_RESULT_OK);
    before = head(t.engine);

    CHECK(rp_engine_plan_event(t.engine, NULL, 0, 0, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`plan_json` is NULL") == 0);
    CHECK(rp_engine_plan_event(t.engine, json, strlen(json), 0, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_event_id` is NULL") == 0);
    CHECK(rp_engine_plan_event(NULL, json, strlen(json), 0, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_start_event(NULL, picnic, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_complete_event(t.engine, picnic, NULL, 5, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`promotion_json` is NULL") == 0);
    CHECK(rp_engine_complete_event(NULL, picnic, NULL, 0, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_cancel_event(NULL, picnic, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_expire_event(NULL, picnic, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_run_due(t.engine, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_json` is NULL") == 0);
    CHECK(rp_engine_run_due(NULL, 0, &out) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_open_thread(t.engine, NULL, 0, &t.mira, 1, 0, &id) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`text` is NULL") == 0);
    CHECK(rp_engine_open_thread(t.engine, LEDGER, strlen(LEDGER), NULL, 2, 0, &id) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`participants` is NULL but its length is 2") == 0);
    CHECK(rp_engine_open_thread(t.engine, LEDGER, strlen(LEDGER), &t.mira, 1, 0, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_thread_id` is NULL") == 0);
    CHECK(rp_engine_resolve_thread(NULL, 1, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_drop_thread(NULL, 1, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_scoped_events(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_scoped_event(t.engine, picnic, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_threads(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_threads(NULL, &out) == RP_RESULT_NULL_ARGUMENT);
    CHECK(id == 4242);
    CHECK(out == NULL);
    CHECK(head(t.engine) == before);
    CHECK(event_has(t.engine, picnic, "\"status\":\"active\""));
    rp_engine_free(t.engine);
}

static void test_freed_and_foreign_engines_are_refused(void) {
    struct tavern t;
    int not_an_engine = 0;
    rp_engine *foreign = (rp_engine *)(void *)&not_an_engine;
    rp_engine *handles[2];
    char json[1024];
    char *out = NULL;
    uint64_t id = 4242;
    size_t i;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    picnic_plan(&t, json, sizeof json, "");
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
    handles[0] = t.engine;
    handles[1] = foreign;
    for (i = 0; i < 2; i++) {
        rp_engine *e = handles[i];
        CHECK(plan(e, json, 0, &id) == RP_RESULT_INVALID_HANDLE);
        CHECK(contains(rp_last_error(), "not a live handle"));
        CHECK(rp_engine_start_event(e, 1, 0) == RP_RESULT_INVALID_HANDLE);
        CHECK(complete(e, 1, "{}", 0) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_cancel_event(e, 1, 0) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_expire_event(e, 1, 0) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_run_due(e, 0, &out) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_open_thread(e, LEDGER, strlen(LEDGER), &t.mira, 1, 0, &id) ==
              RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_resolve_thread(e, 1, 0) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_drop_thread(e, 1, 0) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_scoped_events(e, &out) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_scoped_event(e, 1, &out) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_threads(e, &out) == RP_RESULT_INVALID_HANDLE);
    }
    CHECK(out == NULL);
    CHECK(id == 4242);
    CHECK(not_an_engine == 0);
}

static void test_run_due_moves_events_on_by_time(void) {
    struct tavern t;
    char json[1024];
    char expected[256];
    char *out = NULL;
    uint64_t timed = 0, day = 0, before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    snprintf(expected, sizeof expected, ", \"start_at\": %d, \"expire_at\": %d", HOUR, 3 * HOUR);
    picnic_plan(&t, json, sizeof json, expected);
    CHECK(plan(t.engine, json, 0, &timed) == RP_RESULT_OK);
    CHECK(event_has(t.engine, timed, "\"start_at\":3600000"));
    CHECK(event_has(t.engine, timed, "\"expire_at\":10800000"));
    /* Due at once, but held until day comes (the clock starts at midnight). */
    picnic_plan(&t, json, sizeof json,
                ", \"start_at\": 0, \"preconditions\": [\"time.is_day\"]");
    CHECK(plan(t.engine, json, 0, &day) == RP_RESULT_OK);

    /* Too early for the timed one; the daytime one is due but held. */
    CHECK(rp_engine_run_due(t.engine, HOUR / 2, &out) == RP_RESULT_OK);
    snprintf(expected, sizeof expected, "{\"started\":[],\"expired\":[],\"held\":[[%llu,",
             (unsigned long long)day);
    CHECK(starts_with(out, expected));
    CHECK(contains(out, "the precondition `time.is_day` does not hold"));
    rp_string_free(out);
    CHECK(event_has(t.engine, timed, "\"status\":\"planned\""));

    /* Its time comes: it starts, in the participants' prompts. */
    CHECK(rp_engine_run_due(t.engine, HOUR, &out) == RP_RESULT_OK);
    snprintf(expected, sizeof expected, "{\"started\":[%llu],\"expired\":[]",
             (unsigned long long)timed);
    CHECK(starts_with(out, expected));
    rp_string_free(out);
    CHECK(event_has(t.engine, timed, "\"status\":\"active\""));
    CHECK(event_has(t.engine, timed, "\"started\":3600000"));
    CHECK(prompt_has(t.engine, t.mira, HOUR, BASKET));
    CHECK(rp_engine_world(t.engine, &out) == RP_RESULT_OK);
    CHECK(contains(out, "\"now\":3600000"));
    rp_string_free(out);

    /* Its expiry: gone from the prompts, nothing promoted. */
    CHECK(rp_engine_run_due(t.engine, 3 * HOUR, &out) == RP_RESULT_OK);
    snprintf(expected, sizeof expected, "\"expired\":[%llu]", (unsigned long long)timed);
    CHECK(contains(out, expected));
    rp_string_free(out);
    CHECK(event_has(t.engine, timed, "\"status\":\"expired\""));
    CHECK(!prompt_has(t.engine, t.mira, 3 * HOUR, BASKET));
    snprintf(expected, sizeof expected, "\"inventory\":[%llu]", (unsigned long long)t.letter);
    CHECK(entity_has(t.engine, t.wren, expected));

    /* Nothing due: nothing recorded but the clock. */
    before = head(t.engine);
    CHECK(rp_engine_run_due(t.engine, 3 * HOUR, &out) == RP_RESULT_OK);
    CHECK(contains(out, "\"started\":[],\"expired\":[]"));
    rp_string_free(out);
    out = NULL;
    CHECK(head(t.engine) == before);
    /* The clock never goes back. */
    CHECK(rp_engine_run_due(t.engine, HOUR, &out) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "before the world's clock"));
    CHECK(out == NULL);
    CHECK(head(t.engine) == before);
    /* Held, then checked again: at noon the daytime one starts. */
    CHECK(rp_engine_run_due(t.engine, 12 * HOUR, &out) == RP_RESULT_OK);
    snprintf(expected, sizeof expected, "{\"started\":[%llu],", (unsigned long long)day);
    CHECK(starts_with(out, expected));
    rp_string_free(out);
    CHECK(event_has(t.engine, day, "\"status\":\"active\""));
    rp_engine_free(t.engine);
}

static void test_threads_stay_in_prompts_until_closed(void) {
    struct tavern t;
    char *out = NULL;
    char part[256];
    uint64_t participants[2];
    uint64_t ledger = 0, rain = 0, before = 0;
    const char *rain_text = "  Will the rain stop before dawn?  ";

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    participants[0] = t.mira;
    participants[1] = t.mira;
    before = head(t.engine);
    CHECK(rp_engine_open_thread(t.engine, LEDGER, strlen(LEDGER), participants, 2, MINUTE,
                                &ledger) == RP_RESULT_OK);
    CHECK(head(t.engine) == before + 2);
    CHECK(rp_engine_threads(t.engine, &out) == RP_RESULT_OK);
    snprintf(part, sizeof part,
             "[{\"id\":%llu,\"text\":\"" LEDGER "\",\"participants\":[%llu],\"opened\":60000,"
             "\"status\":\"open\"}]",
             (unsigned long long)ledger, (unsigned long long)t.mira);
    CHECK(out != NULL && strcmp(out, part) == 0);
    rp_string_free(out);
    CHECK(rp_engine_world(t.engine, &out) == RP_RESULT_OK);
    CHECK(contains(out, "\"threads\":[{\"id\":"));
    CHECK(contains(out, LEDGER));
    rp_string_free(out);

    /* In Mira's prompt, under its heading; not in Tobias's. */
    CHECK(prompt_has(t.engine, t.mira, MINUTE, "# Unresolved\\n" LEDGER));
    CHECK(!prompt_has(t.engine, t.tobias, MINUTE, LEDGER));

    participants[1] = t.tobias;
    CHECK(rp_engine_open_thread(t.engine, rain_text, strlen(rain_text), participants + 1, 1,
                                MINUTE, &rain) == RP_RESULT_OK);
    CHECK(prompt_has(t.engine, t.tobias, MINUTE, "Will the rain stop before dawn?"));

    /* Resolved: gone; resolving or dropping it again is a conflict. */
    CHECK(rp_engine_resolve_thread(t.engine, ledger, 2 * MINUTE) == RP_RESULT_OK);
    CHECK(!prompt_has(t.engine, t.mira, 2 * MINUTE, LEDGER));
    CHECK(rp_engine_threads(t.engine, &out) == RP_RESULT_OK);
    CHECK(contains(out, "\"status\":\"resolved\""));
    rp_string_free(out);
    before = head(t.engine);
    CHECK(rp_engine_drop_thread(t.engine, ledger, 2 * MINUTE) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "already closed"));
    CHECK(rp_engine_resolve_thread(t.engine, ledger, 2 * MINUTE) == RP_RESULT_CONFLICT);
    CHECK(rp_engine_resolve_thread(t.engine, 999999, 2 * MINUTE) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "thread#999999"));
    CHECK(head(t.engine) == before);

    /* Dropped: gone too. */
    CHECK(rp_engine_drop_thread(t.engine, rain, 3 * MINUTE) == RP_RESULT_OK);
    CHECK(!prompt_has(t.engine, t.tobias, 3 * MINUTE, "rain stop"));
    CHECK(rp_engine_threads(t.engine, &out) == RP_RESULT_OK);
    CHECK(contains(out, "\"status\":\"dropped\""));
    rp_string_free(out);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_the_picnic();
    test_wrong_transitions_are_refused_with_their_codes();
    test_bad_input_is_refused_and_changes_nothing();
    test_null_arguments_are_refused();
    test_freed_and_foreign_engines_are_refused();
    test_run_due_moves_events_on_by_time();
    test_threads_stay_in_prompts_until_closed();

    return checks_done("test_story");
}
