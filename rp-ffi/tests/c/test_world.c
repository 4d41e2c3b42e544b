/*
 * Tests of the world model and the branches from C: reading the world, its
 * entities, containers, edges, memories and dialogue as JSON
 * (rp_engine_world, rp_engine_entity, rp_engine_memory, ...), look-ups by
 * id, key and name, changing the world with events (rp_engine_append,
 * rp_engine_next_id, rp_engine_events), and rewind, fork and branches
 * (rp_engine_rewind, rp_engine_preview_rewind, rp_engine_fork,
 * rp_engine_branches, ...). Also the safety rules of the C ABI for every
 * handle type (freed and foreign handles, NULL arguments),
 * and use from several threads as rp.h allows it: one engine per thread,
 * one engine shared by threads, a last error per thread.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind and
 * AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_world.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_world
 *   ./test_world examples/tavern.toml
 *
 * The one argument is the path of the demo world file. Save files go to a
 * fresh directory under $TMPDIR (or /tmp), removed at the end.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed";
 * exits 0 only when every check passed.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rp.h"
#include "check.h"
#include "tavern.h"

/* The number after `"key":` in `json`, or UINT64_MAX. */
static uint64_t json_number(const char *json, const char *key) {
    char pattern[64];
    const char *at;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    at = json == NULL ? NULL : strstr(json, pattern);
    if (at == NULL) {
        return UINT64_MAX;
    }
    return strtoull(at + strlen(pattern), NULL, 10);
}

/* How many times `part` occurs in `text`. */
static int count(const char *text, const char *part) {
    int n = 0;
    const char *at = text;
    while (at != NULL && (at = strstr(at, part)) != NULL) {
        n++;
        at += strlen(part);
    }
    return n;
}

static rp_result append(rp_engine *engine, const char *events, uint64_t *out_head) {
    return rp_engine_append(engine, events, strlen(events), out_head);
}

/* The world JSON, or NULL. */
static char *world_json(const rp_engine *engine) {
    char *json = NULL;
    CHECK(rp_engine_world(engine, &json) == RP_RESULT_OK);
    return json;
}

static void test_the_world_reads_as_json(void) {
    struct tavern t;
    char *json = NULL;
    char part[256];
    uint64_t id = 0, by_name = 0, next = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    /* The whole world: what it is, where its history stands, what is in it. */
    json = world_json(t.engine);
    CHECK(starts_with(json, "{\"name\":\"test\",\"created\":0,\"settings\":{"));
    CHECK(json_number(json, "head") == head(t.engine));
    CHECK(rp_engine_next_id(t.engine, &next) == RP_RESULT_OK);
    CHECK(json_number(json, "next_id") == next);
    CHECK(next > t.letter);
    CHECK(contains(json, "\"branch\":\"main\""));
    CHECK(contains(json, "\"name\":\"Mira Holt\""));
    CHECK(contains(json, "\"name\":\"the corner booth\""));
    CHECK(contains(json, "fond of a stray dog"));
    CHECK(contains(json, "\"counts\":{\"memories\":0,\"dialogue\":0,"));
    rp_string_free(json);

    /* Lists, in id order. */
    CHECK(rp_engine_entities(t.engine, &json) == RP_RESULT_OK);
    CHECK(starts_with(json, "[{\"id\":"));
    CHECK(count(json, "\"host_controlled\":") == 4);
    rp_string_free(json);
    CHECK(rp_engine_containers(t.engine, &json) == RP_RESULT_OK);
    CHECK(count(json, "\"audible_range\":") == 3);
    rp_string_free(json);
    CHECK(rp_engine_edges(t.engine, &json) == RP_RESULT_OK);
    CHECK(count(json, "\"affinity\":") == 5);
    rp_string_free(json);

    /* One entity: identity, sheet, state, activity, inventory. */
    CHECK(rp_engine_entity(t.engine, t.mira, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "{\"id\":%llu,\"key\":\"mira\",\"name\":\"Mira Holt\",",
             (unsigned long long)t.mira);
    CHECK(starts_with(json, part));
    CHECK(contains(json, "\"$if mentioned: $respond true\""));
    CHECK(contains(json, "\"mood\":\"watchful\""));
    snprintf(part, sizeof part, "\"position\":{\"container\":%llu,\"slot\":\"behind the bar\"}",
             (unsigned long long)t.bar);
    CHECK(contains(json, part));
    CHECK(contains(json, "\"verb\":\"polishing tankards\""));
    rp_string_free(json);
    CHECK(rp_engine_entity(t.engine, t.wren, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "\"inventory\":[%llu]", (unsigned long long)t.letter);
    CHECK(contains(json, part));
    CHECK(contains(json, "\"host_controlled\":true"));
    rp_string_free(json);

    /* One container. */
    CHECK(rp_engine_container(t.engine, t.booth, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "\"parent\":%llu", (unsigned long long)t.hall);
    CHECK(contains(json, part));
    CHECK(contains(json, "{\"name\":\"window seat\",\"capacity\":1}"));
    CHECK(contains(json, "\"audible_range\":0"));
    rp_string_free(json);

    /* Containers by key (exact) or name (any case). */
    CHECK(rp_engine_container_id(t.engine, "The Corner BOOTH", 16, &by_name) == RP_RESULT_OK);
    CHECK(by_name == t.booth);
    id = 4242;
    CHECK(rp_engine_container_id(t.engine, "the cellar", 10, &id) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "the cellar"));
    CHECK(id == 4242);

    /* Edges are directed: Mira's feelings about Tobias are not his about her. */
    CHECK(rp_engine_edge(t.engine, t.mira, t.tobias, &json) == RP_RESULT_OK);
    CHECK(contains(json, "owes her eleven silver"));
    CHECK(contains(json, "\"trust\":-0.2"));
    rp_string_free(json);
    CHECK(rp_engine_edge(t.engine, t.tobias, t.mira, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"trust\":0.7"));
    CHECK(!contains(json, "eleven silver"));
    rp_string_free(json);
    CHECK(rp_engine_edges_from(t.engine, t.mira, &json) == RP_RESULT_OK);
    CHECK(count(json, "\"from\":") == 2);
    snprintf(part, sizeof part, "\"from\":%llu", (unsigned long long)t.tobias);
    CHECK(!contains(json, part));
    rp_string_free(json);
    /* Tobias has an eye on the stranger in his booth; she has none on him. */
    CHECK(rp_engine_edge(t.engine, t.tobias, t.wren, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"affinity\":0.2"));
    CHECK(contains(json, "\"summary\":\"The stranger sharing his booth on a wet night"));
    rp_string_free(json);
    CHECK(rp_engine_edges_from(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(count(json, "\"from\":") == 2);
    rp_string_free(json);
    CHECK(rp_engine_edges_from(t.engine, t.letter, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);
    CHECK(rp_engine_dialogue(t.engine, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);

    /* What does not exist is not found, and the output is left alone. */
    json = NULL;
    CHECK(rp_engine_entity(t.engine, 999999, &json) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "999999"));
    CHECK(rp_engine_container(t.engine, t.mira, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_edge(t.engine, t.wren, t.tobias, &json) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "edge"));
    CHECK(rp_engine_edges_from(t.engine, 999999, &json) == RP_RESULT_NOT_FOUND);
    CHECK(json == NULL);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

static void test_events_change_the_world(void) {
    struct tavern t;
    char events[2048];
    char part[256];
    char *json = NULL;
    uint64_t sam = 0, ferry = 0, found = 0, before = 0, after = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);
    CHECK(rp_engine_next_id(t.engine, &sam) == RP_RESULT_OK);
    ferry = sam + 1;

    /* A new character and a new place, in one batch: created, placed, and
     * given feelings. */
    snprintf(events, sizeof events,
             "[{\"entity_created\": {\"id\": %llu, \"name\": \"Old Sam\","
             "  \"aliases\": [\"the ferryman\"], \"facts\": [\"Poles the ferry.\"],"
             "  \"state\": {\"mood\": \"patient\"}}},"
             " {\"container_created\": {\"id\": %llu, \"name\": \"the ferry\","
             "  \"parent\": %llu, \"slots\": [{\"name\": \"deck\", \"capacity\": 4}],"
             "  \"properties\": {\"moving\": true}}},"
             " {\"activity_changed\": {\"entity\": %llu, \"activity\": {"
             "  \"position\": {\"container\": %llu, \"slot\": \"deck\"},"
             "  \"posture\": \"leaning on his pole\"}}},"
             " {\"edge_updated\": {\"edge\": {\"from\": %llu, \"to\": %llu,"
             "  \"affinity\": 0.5, \"summary\": \"An old friend.\"}}},"
             " {\"time_advanced\": {\"to\": 90000}}]",
             (unsigned long long)sam, (unsigned long long)ferry, (unsigned long long)t.hall,
             (unsigned long long)sam, (unsigned long long)ferry, (unsigned long long)sam,
             (unsigned long long)t.mira);
    CHECK(append(t.engine, events, &after) == RP_RESULT_OK);
    CHECK(after == before + 5);
    CHECK(head(t.engine) == after);

    CHECK(rp_engine_entity_id(t.engine, "old sam", 7, &found) == RP_RESULT_OK);
    CHECK(found == sam);
    CHECK(rp_engine_container_id(t.engine, "the ferry", 9, &found) == RP_RESULT_OK);
    CHECK(found == ferry);
    CHECK(rp_engine_entity(t.engine, sam, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "\"position\":{\"container\":%llu,\"slot\":\"deck\"}",
             (unsigned long long)ferry);
    CHECK(contains(json, part));
    CHECK(contains(json, "\"posture\":\"leaning on his pole\""));
    CHECK(contains(json, "\"mood\":\"patient\""));
    CHECK(contains(json, "\"key\":null"));
    rp_string_free(json);
    CHECK(rp_engine_edge(t.engine, sam, t.mira, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"affinity\":0.5"));
    CHECK(contains(json, "\"trust\":0.0"));
    rp_string_free(json);
    json = world_json(t.engine);
    CHECK(contains(json, "\"now\":90000"));
    CHECK(json_number(json, "next_id") == ferry + 1);
    rp_string_free(json);

    /* Edits: a new name (null leaves a field as it is), then Sam leaves,
     * and the ferry goes. */
    snprintf(events, sizeof events,
             "[{\"entity_edited\": {\"id\": %llu, \"name\": \"Samuel\", \"facts\": null}},"
             " {\"edge_removed\": {\"from\": %llu, \"to\": %llu}},"
             " {\"activity_changed\": {\"entity\": %llu, \"activity\": {}}},"
             " {\"container_removed\": {\"id\": %llu}}]",
             (unsigned long long)sam, (unsigned long long)sam, (unsigned long long)t.mira,
             (unsigned long long)sam, (unsigned long long)ferry);
    CHECK(append(t.engine, events, &after) == RP_RESULT_OK);
    CHECK(after == before + 9);
    CHECK(rp_engine_entity(t.engine, sam, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"name\":\"Samuel\""));
    CHECK(contains(json, "\"facts\":[\"Poles the ferry.\"]"));
    CHECK(contains(json, "\"position\":null"));
    rp_string_free(json);
    CHECK(rp_engine_entity_id(t.engine, "old sam", 7, &found) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_container(t.engine, ferry, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_edge(t.engine, sam, t.mira, &json) == RP_RESULT_NOT_FOUND);

    /* The log holds what was appended, in the shape append takes. */
    CHECK(rp_engine_events(t.engine, after - 3, UINT64_MAX, &json) == RP_RESULT_OK);
    snprintf(part, sizeof part, "[{\"seq\":%llu,\"event\":{\"entity_edited\":",
             (unsigned long long)(after - 3));
    CHECK(starts_with(json, part));
    CHECK(count(json, "\"seq\":") == 4);
    CHECK(contains(json, "{\"container_removed\":{\"id\":"));
    rp_string_free(json);
    CHECK(rp_engine_events(t.engine, 0, 1, &json) == RP_RESULT_OK);
    CHECK(starts_with(json, "[{\"seq\":1,\"event\":{\"world_created\":{\"name\":\"test\""));
    rp_string_free(json);
    CHECK(rp_engine_events(t.engine, 5, 4, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);

    /* An empty batch changes nothing. */
    CHECK(append(t.engine, "[]", &after) == RP_RESULT_OK);
    CHECK(after == before + 9);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

/* A batch that must be refused with `code` and a message holding `message`. */
struct refusal {
    const char *events;
    rp_result code;
    const char *message;
};

static void test_refused_events_change_nothing(void) {
    struct tavern t;
    char events[1024];
    char *before_json = NULL;
    char *after_json = NULL;
    uint64_t before = 0, out = 4242;
    size_t i;
    static const char bad_utf8[] = {'[', '{', '"', 't', 'i', 'm', 'e', '_', 'a', 'd', 'v',
                                    'a', 'n', 'c', 'e', 'd', '"', ':', '{', '"', 't', 'o',
                                    '"', ':', '1', '}', '}', ',', '"', (char)0xc3, '"', ']'};
    struct refusal plain[] = {
        {"{not json", RP_RESULT_INVALID, "invalid events JSON"},
        {"{\"time_advanced\": {\"to\": 5}}", RP_RESULT_INVALID, "invalid events JSON"},
        {"[{\"time_advanced\": {\"to\": 5}}, {\"entity_teleported\": {\"id\": 1}}]",
         RP_RESULT_INVALID, "invalid event: events[1]: unknown variant `entity_teleported`"},
        {"[{\"time_advanced\": {}}]", RP_RESULT_INVALID, "missing field `to`"},
        {"[{\"time_advanced\": {\"to\": 5, \"by\": 10}}]", RP_RESULT_INVALID,
         "invalid event: events[0] (time_advanced): unknown field `by`"},
        {"[{\"time_advanced\": {\"to\": 65000}}, {\"entity_created\": {\"id\": 900, "
         "\"name\": \"\"}}]",
         RP_RESULT_INVALID, "events[1] (entity_created): invalid entity"},
        {"[{\"entity_created\": {\"id\": 1, \"name\": \"Nobody\"}}]", RP_RESULT_CONFLICT,
         "already taken"},
        {"[{\"entity_created\": {\"id\": 900, \"name\": \"MIRA HOLT\"}}]", RP_RESULT_CONFLICT,
         "events[0] (entity_created)"},
        {"[{\"entity_created\": {\"id\": 900, \"name\": \"Ghost\", "
         "\"facts\": [\"$if (: $respond\"]}}]",
         RP_RESULT_FACT_SYNTAX, "events[0] (entity_created)"},
        {"[{\"world_created\": {\"name\": \"again\", \"now\": 0}}]", RP_RESULT_CONFLICT,
         "already been created"},
        {"[{\"entity_removed\": {\"id\": 999999}}]", RP_RESULT_NOT_FOUND, "999999"},
        {"[\"time_advanced\"]", RP_RESULT_INVALID, "events[0]"},
    };

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    /* The clock is moved on first, so going back is refused below. */
    CHECK(append(t.engine, "[{\"time_advanced\": {\"to\": 60000}}]", &out) == RP_RESULT_OK);
    before = head(t.engine);
    before_json = world_json(t.engine);

    for (i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        out = 4242;
        CHECK(append(t.engine, plain[i].events, &out) == plain[i].code);
        CHECK(contains(rp_last_error(), plain[i].message));
        if (!contains(rp_last_error(), plain[i].message)) {
            fprintf(stderr, "    batch %zu: %s\n", i, plain[i].events);
        }
        CHECK(out == 4242);
    }

    /* Refusals that need the world's ids. */
    snprintf(events, sizeof events,
             "[{\"activity_changed\": {\"entity\": %llu, \"activity\": {"
             "\"position\": {\"container\": %llu}, \"postion\": {\"container\": %llu}}}}]",
             (unsigned long long)t.mira, (unsigned long long)t.bar,
             (unsigned long long)t.booth);
    CHECK(append(t.engine, events, &out) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "unknown field `activity.postion`"));
    snprintf(events, sizeof events,
             "[{\"container_created\": {\"id\": 900, \"name\": \"loft\", "
             "\"slots\": [{\"name\": \"bed\", \"capcity\": 1}]}}]");
    CHECK(append(t.engine, events, &out) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "unknown field `slots[0].capcity`"));
    snprintf(events, sizeof events,
             "[{\"activity_changed\": {\"entity\": %llu, \"activity\": {"
             "\"position\": {\"container\": 999999}}}}]",
             (unsigned long long)t.mira);
    CHECK(append(t.engine, events, &out) == RP_RESULT_NOT_FOUND);
    /* The window seat holds one, and Tobias sits in it. */
    snprintf(events, sizeof events,
             "[{\"time_advanced\": {\"to\": 70000}},"
             " {\"activity_changed\": {\"entity\": %llu, \"activity\": {"
             "\"position\": {\"container\": %llu, \"slot\": \"window seat\"}}}}]",
             (unsigned long long)t.wren, (unsigned long long)t.booth);
    CHECK(append(t.engine, events, &out) == RP_RESULT_CAPACITY);
    CHECK(contains(rp_last_error(), "events[1] (activity_changed)"));
    CHECK(contains(rp_last_error(), "is full"));
    snprintf(events, sizeof events,
             "[{\"edge_updated\": {\"edge\": {\"from\": %llu, \"to\": %llu, "
             "\"affinity\": 2}}}]",
             (unsigned long long)t.mira, (unsigned long long)t.wren);
    CHECK(append(t.engine, events, &out) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "affinity"));
    snprintf(events, sizeof events,
             "[{\"edge_updated\": {\"edge\": {\"from\": %llu, \"to\": %llu}}}]",
             (unsigned long long)t.mira, (unsigned long long)t.mira);
    CHECK(append(t.engine, events, &out) == RP_RESULT_INVALID);
    CHECK(append(t.engine, "[{\"time_advanced\": {\"to\": 0}}]", &out) == RP_RESULT_INVALID);
    CHECK(rp_engine_append(t.engine, bad_utf8, sizeof bad_utf8, &out) ==
          RP_RESULT_INVALID_UTF8);
    CHECK(out == 4242);

    /* Only `len` bytes are read: a valid prefix of a longer buffer. */
    CHECK(rp_engine_append(t.engine, "[]garbage", 2, &out) == RP_RESULT_OK);
    CHECK(out == before);

    /* Nothing of any refused batch was applied or recorded. */
    CHECK(head(t.engine) == before);
    after_json = world_json(t.engine);
    CHECK(before_json != NULL && after_json != NULL && strcmp(before_json, after_json) == 0);
    rp_string_free(before_json);
    rp_string_free(after_json);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

/* The same bad inputs as rp-py/tests/test_refusals.py, refused with the same
 * kinds (RP_RESULT_INVALID there is InvalidInput, RP_RESULT_NOT_FOUND is
 * NotFound) and the same words: rp-core decides, both bindings convert. */
static void test_the_same_bad_inputs_are_refused_as_in_python(void) {
    struct tavern t;
    char events[512];
    char input[256];
    uint64_t id = 0, first = 0, before = 0;
    rp_turn *turn = NULL;
    static const char unknown_option[] = "{\"max_responder\": 2}";

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    before = head(t.engine);

    /* A misspelt field of an event. */
    snprintf(events, sizeof events,
             "[{\"activity_changed\": {\"entity\": %llu, \"activity\": "
             "{\"postion\": {\"container\": %llu}}}}]",
             (unsigned long long)(t.wren), (unsigned long long)(t.booth));
    CHECK(append(t.engine, events, &id) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(),
                   "invalid event: events[0] (activity_changed): unknown field "
                   "`activity.postion`"));
    CHECK(head(t.engine) == before);

    /* An alias two entities share names neither. */
    CHECK(rp_engine_next_id(t.engine, &first) == RP_RESULT_OK);
    snprintf(events, sizeof events,
             "[{\"entity_created\": {\"id\": %llu, \"name\": \"Ann\", \"aliases\": [\"the twin\"]}},"
             " {\"entity_created\": {\"id\": %llu, \"name\": \"Bea\", \"aliases\": [\"The Twin\"]}}]",
             (unsigned long long)(first), (unsigned long long)(first + 1));
    CHECK(append(t.engine, events, &id) == RP_RESULT_OK);
    CHECK(rp_engine_entity_id(t.engine, "the twin", 8, &id) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "names more than one entity"));
    CHECK(contains(rp_last_error(), "Ann ("));
    CHECK(contains(rp_last_error(), "Bea ("));
    CHECK(rp_engine_entity_id(t.engine, "Nobody", 6, &id) == RP_RESULT_NOT_FOUND);

    /* An unknown turn option. */
    before = head(t.engine);
    snprintf(input, sizeof input, "{\"speaker\": %llu, \"text\": \"Evening.\", \"now\": 60000}",
             (unsigned long long)(t.wren));
    CHECK(rp_turn_begin(t.engine, input, strlen(input), unknown_option, strlen(unknown_option),
                        &turn) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "max_responder"));
    CHECK(turn == NULL);
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

static void test_memories_read_as_json(void) {
    struct tavern t;
    char memory[256];
    char *json = NULL;
    uint64_t first = 0, second = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    snprintf(memory, sizeof memory,
             "{\"owner\": %llu, \"text\": \"Wren paid in silver\", \"witnesses\": [%llu], "
             "\"created\": 1000, \"significance\": 0.75}",
             (unsigned long long)t.mira, (unsigned long long)t.wren);
    CHECK(rp_engine_add_memory(t.engine, memory, strlen(memory), &first) == RP_RESULT_OK);
    snprintf(memory, sizeof memory,
             "{\"owner\": %llu, \"text\": \"The lantern was lit early\", \"created\": 500, "
             "\"pinned\": true}",
             (unsigned long long)t.mira);
    CHECK(rp_engine_add_memory(t.engine, memory, strlen(memory), &second) == RP_RESULT_OK);

    CHECK(rp_engine_memory(t.engine, first, &json) == RP_RESULT_OK);
    CHECK(json_number(json, "id") == first);
    CHECK(json_number(json, "owner") == t.mira);
    CHECK(contains(json, "\"text\":\"Wren paid in silver\""));
    CHECK(contains(json, "\"significance\":0.75"));
    CHECK(contains(json, "\"decay\":\"full\""));
    CHECK(!contains(json, "embedding"));
    rp_string_free(json);

    /* The owner's memories, oldest first; the witness holds none of them. */
    CHECK(rp_engine_memories_of(t.engine, t.mira, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strstr(json, "The lantern") != NULL &&
          strstr(json, "The lantern") < strstr(json, "Wren paid"));
    CHECK(count(json, "\"owner\":") == 2);
    rp_string_free(json);
    CHECK(rp_engine_memories_of(t.engine, t.wren, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);

    json = NULL;
    CHECK(rp_engine_remove_memory(t.engine, first) == RP_RESULT_OK);
    CHECK(rp_engine_memory(t.engine, first, &json) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "memory"));
    CHECK(rp_engine_memories_of(t.engine, 999999, &json) == RP_RESULT_NOT_FOUND);
    CHECK(json == NULL);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

static rp_result time_to(rp_engine *engine, long to) {
    char events[128];
    uint64_t out = 0;
    snprintf(events, sizeof events, "[{\"time_advanced\": {\"to\": %ld}}]", to);
    return append(engine, events, &out);
}

static void test_rewind_fork_and_branches(void) {
    struct tavern t;
    char *json = NULL;
    char *kept = NULL;
    char *name = NULL;
    uint64_t start = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    start = head(t.engine);
    CHECK(time_to(t.engine, 1000) == RP_RESULT_OK);
    CHECK(time_to(t.engine, 2000) == RP_RESULT_OK);
    CHECK(time_to(t.engine, 3000) == RP_RESULT_OK);

    /* What a rewind would undo, without undoing it. */
    CHECK(rp_engine_preview_rewind(t.engine, start + 1, &json) == RP_RESULT_OK);
    CHECK(json_number(json, "from_seq") == start + 3);
    CHECK(json_number(json, "to_seq") == start + 1);
    CHECK(json_number(json, "event_count") == 2);
    CHECK(contains(json, "\"events_by_kind\":{\"time_advanced\":2}"));
    rp_string_free(json);
    CHECK(head(t.engine) == start + 3);

    /* The rewind keeps the undone events as a branch. */
    CHECK(rp_engine_rewind(t.engine, start + 1, &kept) == RP_RESULT_OK);
    CHECK(kept != NULL && strcmp(kept, "main~2") == 0);
    CHECK(head(t.engine) == start + 1);
    json = world_json(t.engine);
    CHECK(contains(json, "\"now\":1000"));
    CHECK(contains(json, "\"branch\":\"main\""));
    rp_string_free(json);
    CHECK(rp_engine_branches(t.engine, &json) == RP_RESULT_OK);
    CHECK(contains(json, "{\"name\":\"main~2\",\"head\":"));
    CHECK(contains(json, "\"current\":false"));
    CHECK(contains(json, "{\"name\":\"main\","));
    CHECK(contains(json, "\"current\":true,\"forked_from\":{\"branch\":\"main~2\",\"seq\":"));
    rp_string_free(json);
    /* Rewinding to the head undoes nothing and makes no branch. */
    CHECK(rp_engine_rewind(t.engine, start + 1, &name) == RP_RESULT_OK);
    CHECK(name == NULL);
    CHECK(rp_engine_rewind(t.engine, start + 1, NULL) == RP_RESULT_OK);

    /* The undone future is still there. */
    CHECK(rp_engine_switch_branch(t.engine, kept, strlen(kept)) == RP_RESULT_OK);
    CHECK(head(t.engine) == start + 3);
    CHECK(rp_engine_current_branch(t.engine, &name) == RP_RESULT_OK);
    CHECK(name != NULL && strcmp(name, "main~2") == 0);
    rp_string_free(name);
    CHECK(rp_engine_switch_branch(t.engine, "main", 4) == RP_RESULT_OK);
    CHECK(head(t.engine) == start + 1);

    /* A fork shares history up to its seq; the current branch stays. */
    CHECK(rp_engine_fork(t.engine, start, "what-if", 7, &json) == RP_RESULT_OK);
    CHECK(starts_with(json, "{\"name\":\"what-if\",\"head\":"));
    CHECK(json_number(json, "head") == start);
    rp_string_free(json);
    CHECK(rp_engine_fork(t.engine, start, "quiet", 5, NULL) == RP_RESULT_OK);
    CHECK(rp_engine_current_branch(t.engine, &name) == RP_RESULT_OK);
    CHECK(name != NULL && strcmp(name, "main") == 0);
    rp_string_free(name);
    CHECK(rp_engine_switch_branch(t.engine, "what-if", 7) == RP_RESULT_OK);
    CHECK(head(t.engine) == start);
    CHECK(time_to(t.engine, 5000) == RP_RESULT_OK);
    CHECK(head(t.engine) == start + 1);
    CHECK(rp_engine_switch_branch(t.engine, "main", 4) == RP_RESULT_OK);
    json = world_json(t.engine);
    CHECK(contains(json, "\"now\":1000"));
    rp_string_free(json);

    /* Rename and delete. */
    CHECK(rp_engine_rename_branch(t.engine, "what-if", 7, "dream", 5) == RP_RESULT_OK);
    CHECK(rp_engine_switch_branch(t.engine, "what-if", 7) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "what-if"));
    CHECK(rp_engine_delete_branch(t.engine, "dream", 5) == RP_RESULT_OK);
    CHECK(rp_engine_delete_branch(t.engine, "quiet", 5) == RP_RESULT_OK);
    CHECK(rp_engine_branches(t.engine, &json) == RP_RESULT_OK);
    CHECK(!contains(json, "dream"));
    CHECK(count(json, "\"name\":") == 2);
    rp_string_free(json);

    /* Refusals change nothing. */
    CHECK(rp_engine_delete_branch(t.engine, "main", 4) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "current branch"));
    CHECK(rp_engine_delete_branch(t.engine, "dream", 5) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_fork(t.engine, start, "main~2", 6, NULL) == RP_RESULT_CONFLICT);
    CHECK(rp_engine_fork(t.engine, start, " padded", 7, NULL) == RP_RESULT_INVALID);
    CHECK(rp_engine_fork(t.engine, start, "", 0, NULL) == RP_RESULT_INVALID);
    CHECK(rp_engine_fork(t.engine, 0, "zero", 4, NULL) == RP_RESULT_INVALID);
    CHECK(rp_engine_fork(t.engine, start + 2, "future", 6, NULL) == RP_RESULT_INVALID);
    CHECK(rp_engine_fork(t.engine, start, "\xff", 1, NULL) == RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_rename_branch(t.engine, "main", 4, "main~2", 6) == RP_RESULT_CONFLICT);
    CHECK(rp_engine_rename_branch(t.engine, "nope", 4, "yes", 3) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_rename_branch(t.engine, "main", 4, "a\nb", 3) == RP_RESULT_INVALID);
    name = (char *)"untouched";
    CHECK(rp_engine_rewind(t.engine, 0, &name) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "seq"));
    CHECK(rp_engine_rewind(t.engine, start + 2, &name) == RP_RESULT_INVALID);
    CHECK(strcmp(name, "untouched") == 0);
    json = NULL;
    CHECK(rp_engine_preview_rewind(t.engine, start + 2, &json) == RP_RESULT_INVALID);
    CHECK(rp_engine_preview_rewind(t.engine, 0, &json) == RP_RESULT_INVALID);
    CHECK(json == NULL);
    CHECK(head(t.engine) == start + 1);
    CHECK(rp_engine_branches(t.engine, &json) == RP_RESULT_OK);
    CHECK(count(json, "\"name\":") == 2);
    rp_string_free(json);

    rp_string_free(kept);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

static void test_branches_are_kept_in_the_save_file(void) {
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    char save[4200];
    rp_engine *engine = NULL;
    char *json = NULL;
    char *kept = NULL;
    uint64_t start = 0;

    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    snprintf(dir, sizeof dir, "%s/rp-test-world-XXXXXX", tmp);
    CHECK(mkdtemp(dir) != NULL);
    snprintf(save, sizeof save, "%s/tavern.rp", dir);

    CHECK(rp_engine_create_from_world_file(save, strlen(save), tavern_path, strlen(tavern_path),
                                           0, &engine) == RP_RESULT_OK);
    start = head(engine);
    CHECK(time_to(engine, 1000) == RP_RESULT_OK);
    CHECK(time_to(engine, 2000) == RP_RESULT_OK);
    CHECK(rp_engine_rewind(engine, start + 1, &kept) == RP_RESULT_OK);
    CHECK(rp_engine_fork(engine, start, "side", 4, NULL) == RP_RESULT_OK);
    CHECK(rp_engine_switch_branch(engine, "side", 4) == RP_RESULT_OK);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);

    /* Reopened: the same branches, on the branch it was closed on. */
    engine = NULL;
    CHECK(rp_engine_open(save, strlen(save), &engine) == RP_RESULT_OK);
    CHECK(rp_engine_current_branch(engine, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "side") == 0);
    rp_string_free(json);
    CHECK(head(engine) == start);
    CHECK(rp_engine_branches(engine, &json) == RP_RESULT_OK);
    CHECK(kept != NULL && contains(json, kept));
    CHECK(contains(json, "\"name\":\"main\""));
    CHECK(contains(json, "\"name\":\"side\""));
    rp_string_free(json);
    CHECK(rp_engine_switch_branch(engine, kept, strlen(kept)) == RP_RESULT_OK);
    CHECK(head(engine) == start + 2);
    /* The log of a save reads back from the file. */
    CHECK(rp_engine_events(engine, start + 1, start + 2, &json) == RP_RESULT_OK);
    CHECK(count(json, "\"time_advanced\"") == 2);
    rp_string_free(json);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    rp_string_free(kept);

    CHECK(unlink(save) == 0);
    CHECK(rmdir(dir) == 0);
}

static void test_a_rewind_ends_an_open_turn(void) {
    struct tavern t;
    rp_turn *turn = NULL;
    char input[256];
    char *json = NULL;
    uint64_t start = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    start = head(t.engine);
    snprintf(input, sizeof input,
             "{\"speaker\": %llu, \"text\": \"Tobias, a word?\", \"now\": 60000}",
             (unsigned long long)t.wren);
    CHECK(rp_turn_begin(t.engine, input, strlen(input), NULL, 0, &turn) == RP_RESULT_OK);
    CHECK(head(t.engine) > start);
    CHECK(rp_engine_rewind(t.engine, start, NULL) == RP_RESULT_OK);
    /* The world the turn began on is gone from the current branch. */
    CHECK(rp_turn_step(t.engine, turn, &json) == RP_RESULT_CONFLICT);
    CHECK(json == NULL);
    CHECK(rp_turn_free(turn) == RP_RESULT_OK);
    CHECK(rp_engine_dialogue(t.engine, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);
    /* Its input is on the branch that keeps the undone events. */
    CHECK(rp_engine_switch_branch(t.engine, "main~2", 6) == RP_RESULT_OK);
    CHECK(rp_engine_dialogue(t.engine, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"text\":\"Tobias, a word?\""));
    rp_string_free(json);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

static void test_null_arguments_are_refused(void) {
    struct tavern t;
    char *json = NULL;
    uint64_t id = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    /* NULL engines. */
    CHECK(rp_engine_world(NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`engine` is NULL") == 0);
    CHECK(rp_engine_entities(NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_entity(NULL, t.mira, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_containers(NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_container(NULL, t.bar, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_container_id(NULL, "bar", 3, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_edges(NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_edges_from(NULL, t.mira, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_edge(NULL, t.mira, t.tobias, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_dialogue(NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_memory(NULL, 1, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_memories_of(NULL, t.mira, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_next_id(NULL, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_append(NULL, "[]", 2, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_events(NULL, 0, 1, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_branches(NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_current_branch(NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_preview_rewind(NULL, 1, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_rewind(NULL, 1, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_fork(NULL, 1, "x", 1, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_switch_branch(NULL, "main", 4) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_rename_branch(NULL, "main", 4, "x", 1) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_delete_branch(NULL, "x", 1) == RP_RESULT_NULL_ARGUMENT);

    /* NULL strings and out-parameters. */
    CHECK(rp_engine_world(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_json` is NULL") == 0);
    CHECK(rp_engine_entities(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_entity(t.engine, t.mira, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_containers(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_container(t.engine, t.bar, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_container_id(t.engine, NULL, 0, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`name_or_key` is NULL") == 0);
    CHECK(rp_engine_container_id(t.engine, "bar", 3, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_edges(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_edges_from(t.engine, t.mira, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_edge(t.engine, t.mira, t.tobias, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_dialogue(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_memory(t.engine, 1, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_memories_of(t.engine, t.mira, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_next_id(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_append(t.engine, NULL, 0, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`events_json` is NULL") == 0);
    CHECK(rp_engine_append(t.engine, "[]", 2, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_events(t.engine, 0, 1, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_branches(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_current_branch(t.engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_preview_rewind(t.engine, 1, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_fork(t.engine, 1, NULL, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_switch_branch(t.engine, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_rename_branch(t.engine, NULL, 0, "x", 1) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_rename_branch(t.engine, "main", 4, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`to` is NULL") == 0);
    CHECK(rp_engine_delete_branch(t.engine, NULL, 0) == RP_RESULT_NULL_ARGUMENT);
    CHECK(json == NULL);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

static void test_freed_and_foreign_engines_are_refused_by_every_new_call(void) {
    struct tavern t;
    int not_an_engine = 0;
    rp_engine *foreign = (rp_engine *)(void *)&not_an_engine;
    rp_engine *handles[2];
    char *json = NULL;
    uint64_t id = 4242;
    size_t i;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
    handles[0] = t.engine;
    handles[1] = foreign;
    for (i = 0; i < 2; i++) {
        rp_engine *e = handles[i];
        CHECK(rp_engine_world(e, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(contains(rp_last_error(), "not a live handle"));
        CHECK(rp_engine_entities(e, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_entity(e, t.mira, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_containers(e, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_container(e, t.bar, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_container_id(e, "bar", 3, &id) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_edges(e, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_edges_from(e, t.mira, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_edge(e, t.mira, t.tobias, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_dialogue(e, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_memory(e, 1, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_memories_of(e, t.mira, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_next_id(e, &id) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_append(e, "[]", 2, &id) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_events(e, 0, 1, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_branches(e, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_current_branch(e, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_preview_rewind(e, 1, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_rewind(e, 1, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_fork(e, 1, "x", 1, &json) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_switch_branch(e, "main", 4) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_rename_branch(e, "main", 4, "x", 1) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_delete_branch(e, "x", 1) == RP_RESULT_INVALID_HANDLE);
        CHECK(rp_engine_free(e) == RP_RESULT_INVALID_HANDLE);
    }
    CHECK(json == NULL);
    CHECK(id == 4242);
    CHECK(not_an_engine == 0);
}

/* What a generate callback that keeps its sink and probes its engine saw. */
struct probe {
    rp_engine *self;
    rp_engine *other;
    rp_token_sink *kept_sink;
    rp_result world_same, append_same, rewind_same, branches_same, world_other;
    char result[128];
};

static int probing_generate(void *user_data, const char *request_json, size_t request_json_len,
                            rp_token_sink *sink, const char **out_result_json,
                            size_t *out_result_len) {
    struct probe *probe = user_data;
    char *json = NULL;
    uint64_t seq = 0;
    (void)request_json;
    (void)request_json_len;
    probe->kept_sink = sink;
    /* The engine running the turn is held: calls with it are refused. */
    probe->world_same = rp_engine_world(probe->self, &json);
    rp_string_free(json);
    json = NULL;
    probe->append_same = rp_engine_append(probe->self, "[]", 2, &seq);
    probe->rewind_same = rp_engine_rewind(probe->self, 1, NULL);
    probe->branches_same = rp_engine_branches(probe->self, &json);
    rp_string_free(json);
    json = NULL;
    /* Another engine answers. */
    probe->world_other = rp_engine_world(probe->other, &json);
    rp_string_free(json);
    snprintf(probe->result, sizeof probe->result, "{\"text\": \"Aye.\"}");
    *out_result_json = probe->result;
    *out_result_len = strlen(probe->result);
    return RP_RESULT_OK;
}

static void test_every_handle_type_refuses_freed_and_foreign_handles(void) {
    struct tavern t;
    struct tavern other;
    struct probe probe;
    int foreign_object = 0;
    void *foreign = &foreign_object;
    rp_turn *turn = NULL;
    rp_condition *condition = NULL;
    char input[256];
    char *json = NULL;
    bool holds = false;

    CHECK(open_tavern(&t));
    CHECK(open_tavern(&other));
    if (t.engine == NULL || other.engine == NULL) {
        return;
    }
    snprintf(input, sizeof input,
             "{\"speaker\": %llu, \"text\": \"Tobias, a word?\", \"now\": 60000}",
             (unsigned long long)t.wren);

    /* rp_turn: freed, foreign. */
    CHECK(rp_turn_begin(t.engine, input, strlen(input), NULL, 0, &turn) == RP_RESULT_OK);
    CHECK(rp_turn_free(turn) == RP_RESULT_OK);
    CHECK(rp_turn_step(t.engine, turn, &json) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_turn_provide(t.engine, turn, "{}", 2) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_turn_finish(t.engine, turn, &json) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_turn_free(turn) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_turn_step(t.engine, (rp_turn *)foreign, &json) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_turn_free((rp_turn *)foreign) == RP_RESULT_INVALID_HANDLE);
    /* An engine handle is not a turn handle, nor the other way round. */
    CHECK(rp_turn_step(t.engine, (rp_turn *)(void *)t.engine, &json) ==
          RP_RESULT_INVALID_HANDLE);
    CHECK(json == NULL);

    /* rp_condition: freed, foreign. */
    CHECK(rp_condition_compile("mentioned", 9, &condition) == RP_RESULT_OK);
    CHECK(rp_condition_free(condition) == RP_RESULT_OK);
    CHECK(rp_condition_test(condition, "{}", 2, 0, &holds, NULL) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_condition_free(condition) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_condition_test((rp_condition *)foreign, "{}", 2, 0, &holds, NULL) ==
          RP_RESULT_INVALID_HANDLE);
    CHECK(rp_condition_free((rp_condition *)foreign) == RP_RESULT_INVALID_HANDLE);

    /* rp_token_sink: dead once its callback returned; foreign. And the
     * callback's calls with its own engine are refused, never a deadlock. */
    memset(&probe, 0, sizeof probe);
    probe.self = t.engine;
    probe.other = other.engine;
    CHECK(rp_engine_run_turn(t.engine, input, strlen(input), "{\"max_responders\": 1}", 21,
                             probing_generate, NULL, &probe, &json) == RP_RESULT_OK);
    rp_string_free(json);
    json = NULL;
    CHECK(probe.world_same == RP_RESULT_CONFLICT);
    CHECK(probe.append_same == RP_RESULT_CONFLICT);
    CHECK(probe.rewind_same == RP_RESULT_CONFLICT);
    CHECK(probe.branches_same == RP_RESULT_CONFLICT);
    CHECK(probe.world_other == RP_RESULT_OK);
    CHECK(probe.kept_sink != NULL);
    CHECK(rp_token_sink_emit(probe.kept_sink, "late", 4) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_token_sink_emit((rp_token_sink *)foreign, "x", 1) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_token_sink_emit(NULL, "x", 1) == RP_RESULT_NULL_ARGUMENT);

    /* NULL handles: freeing does nothing, anything else is refused. */
    CHECK(rp_turn_free(NULL) == RP_RESULT_OK);
    CHECK(rp_condition_free(NULL) == RP_RESULT_OK);
    CHECK(rp_engine_free(NULL) == RP_RESULT_OK);
    CHECK(rp_turn_step(t.engine, NULL, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(foreign_object == 0);

    CHECK(rp_engine_free(other.engine) == RP_RESULT_OK);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

/* Threads. */

#define ROUNDS 25

struct own_engine_worker {
    int index;
    int ok;
    uint64_t final_head;
    uint64_t expected_head;
};

/* Works on an engine of its own: appends, forks, rewinds and reads. */
static void *work_on_an_own_engine(void *arg) {
    struct own_engine_worker *w = arg;
    struct tavern t;
    char name[32];
    char *json = NULL;
    uint64_t start = 0, seq = 0;
    int round;

    w->ok = open_tavern(&t);
    if (!w->ok) {
        return NULL;
    }
    if (rp_engine_head(t.engine, &start) != RP_RESULT_OK) {
        w->ok = 0;
    }
    for (round = 1; round <= ROUNDS && w->ok; round++) {
        if (time_to(t.engine, round * 1000L + w->index) != RP_RESULT_OK ||
            rp_engine_head(t.engine, &seq) != RP_RESULT_OK || seq != start + (uint64_t)round) {
            w->ok = 0;
        }
        snprintf(name, sizeof name, "t%d-r%d", w->index, round);
        if (rp_engine_fork(t.engine, seq, name, strlen(name), NULL) != RP_RESULT_OK ||
            rp_engine_world(t.engine, &json) != RP_RESULT_OK ||
            json_number(json, "head") != seq) {
            w->ok = 0;
        }
        rp_string_free(json);
        json = NULL;
        /* A failure on this thread leaves its own message. */
        if (rp_engine_switch_branch(t.engine, "nope", 4) != RP_RESULT_NOT_FOUND ||
            !contains(rp_last_error(), "nope")) {
            w->ok = 0;
        }
    }
    if (rp_engine_rewind(t.engine, start + 1, NULL) != RP_RESULT_OK ||
        rp_engine_head(t.engine, &w->final_head) != RP_RESULT_OK ||
        rp_engine_branches(t.engine, &json) != RP_RESULT_OK ||
        count(json, "\"name\":") != ROUNDS + 2) {
        w->ok = 0;
    }
    rp_string_free(json);
    w->expected_head = start + 1;
    if (rp_engine_free(t.engine) != RP_RESULT_OK) {
        w->ok = 0;
    }
    return NULL;
}

static void test_two_engines_on_two_threads(void) {
    struct own_engine_worker workers[2];
    pthread_t threads[2];
    int i;

    for (i = 0; i < 2; i++) {
        memset(&workers[i], 0, sizeof workers[i]);
        workers[i].index = i;
        CHECK(pthread_create(&threads[i], NULL, work_on_an_own_engine, &workers[i]) == 0);
    }
    for (i = 0; i < 2; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK(workers[i].ok);
        CHECK(workers[i].final_head == workers[i].expected_head);
    }
}

struct shared_engine_worker {
    rp_engine *engine;
    int ok;
    uint64_t start;
    int reads;
};

static void *append_to_the_shared_engine(void *arg) {
    struct shared_engine_worker *w = arg;
    int round;
    w->ok = 1;
    for (round = 1; round <= ROUNDS; round++) {
        if (time_to(w->engine, round * 1000L) != RP_RESULT_OK) {
            w->ok = 0;
        }
    }
    return NULL;
}

/* Reads the shared engine while the other thread appends: every read sees a
 * whole world, the head never goes back, and the clock matches the head. */
static void *read_the_shared_engine(void *arg) {
    struct shared_engine_worker *w = arg;
    uint64_t last = 0;
    int i;
    w->ok = 1;
    for (i = 0; i < ROUNDS * 2; i++) {
        char *json = NULL;
        uint64_t seq, now;
        if (rp_engine_world(w->engine, &json) != RP_RESULT_OK) {
            w->ok = 0;
            continue;
        }
        seq = json_number(json, "head");
        now = json_number(json, "now");
        if (seq < last || seq < w->start || seq > w->start + ROUNDS ||
            now != (seq - w->start) * 1000) {
            w->ok = 0;
        }
        last = seq;
        w->reads++;
        rp_string_free(json);
    }
    return NULL;
}

static void test_one_engine_shared_by_two_threads(void) {
    struct tavern t;
    struct shared_engine_worker writer;
    struct shared_engine_worker reader;
    pthread_t threads[2];

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    memset(&writer, 0, sizeof writer);
    memset(&reader, 0, sizeof reader);
    writer.engine = reader.engine = t.engine;
    writer.start = reader.start = head(t.engine);
    CHECK(pthread_create(&threads[0], NULL, append_to_the_shared_engine, &writer) == 0);
    CHECK(pthread_create(&threads[1], NULL, read_the_shared_engine, &reader) == 0);
    CHECK(pthread_join(threads[0], NULL) == 0);
    CHECK(pthread_join(threads[1], NULL) == 0);
    CHECK(writer.ok);
    CHECK(reader.ok);
    CHECK(reader.reads == ROUNDS * 2);
    CHECK(head(t.engine) == writer.start + ROUNDS);
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

static void *fail_with_another_message(void *arg) {
    int *ok = arg;
    uint64_t id = 0;
    *ok = rp_engine_next_id(NULL, &id) == RP_RESULT_NULL_ARGUMENT &&
          strcmp(rp_last_error(), "`engine` is NULL") == 0;
    return NULL;
}

static void test_the_last_error_is_per_thread(void) {
    struct tavern t;
    pthread_t thread;
    uint64_t id = 0;
    int ok = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_container_id(t.engine, "the moon", 8, &id) == RP_RESULT_NOT_FOUND);
    CHECK(pthread_create(&thread, NULL, fail_with_another_message, &ok) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(ok);
    CHECK(contains(rp_last_error(), "the moon"));
    CHECK(rp_engine_free(t.engine) == RP_RESULT_OK);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_the_world_reads_as_json();
    test_events_change_the_world();
    test_refused_events_change_nothing();
    test_the_same_bad_inputs_are_refused_as_in_python();
    test_memories_read_as_json();
    test_rewind_fork_and_branches();
    test_branches_are_kept_in_the_save_file();
    test_a_rewind_ends_an_open_turn();
    test_null_arguments_are_refused();
    test_freed_and_foreign_engines_are_refused_by_every_new_call();
    test_every_handle_type_refuses_freed_and_foreign_handles();
    test_two_engines_on_two_threads();
    test_one_engine_shared_by_two_threads();
    test_the_last_error_is_per_thread();

    return checks_done("test_world");
}
