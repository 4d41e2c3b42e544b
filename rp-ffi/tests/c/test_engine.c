/*
 * Tests of rp_engine (worlds, world files, response control), rp_sheet_check,
 * rp_condition and the ownership rules of the C ABI, linked against librp.a the
 * way a C program would.
 *
 * Build and run (scripts/test-all does this, then runs it under valgrind):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_engine.c target/debug/librp.a -lpthread -ldl -lm \
 *      -o test_engine
 *   ./test_engine examples/tavern.toml
 *
 * The one argument is the path of the demo world file. Save files go to a
 * fresh directory under $TMPDIR (or /tmp), removed at the end.
 *
 * Reports each failed check on stderr and closes with "N passed, N failed"; exits 0
 * only when every check passed.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rp.h"
#include "check.h"

static const char *tavern_path = NULL;

/* The decision JSON is serde_json's compact form: no spaces. */
#define RESPONDS "\"respond\":true"
#define SILENT "\"respond\":false"

/* A new in-memory engine holding the tavern, or NULL. */
static rp_engine *tavern(void) {
    rp_engine *engine = NULL;
    size_t events = 0;
    if (rp_engine_in_memory("test", 4, 0, &engine) != RP_RESULT_OK) {
        return NULL;
    }
    if (rp_engine_load_world_file(engine, tavern_path, strlen(tavern_path), &events) !=
            RP_RESULT_OK ||
        events == 0) {
        rp_engine_free(engine);
        return NULL;
    }
    return engine;
}

static rp_result entity_id(const rp_engine *engine, const char *name, uint64_t *id) {
    return rp_engine_entity_id(engine, name, strlen(name), id);
}

static rp_result decide(rp_engine *engine, uint64_t id, const char *message, char **json) {
    return rp_engine_decide(engine, id, message, strlen(message), json);
}

static void test_mira_responds_when_mentioned_and_stays_silent_otherwise(void) {
    rp_engine *engine = tavern();
    uint64_t mira = 0, by_key = 0, head = 0, after = 0;
    char *json = NULL;

    CHECK(engine != NULL);
    if (engine == NULL) {
        return;
    }
    CHECK(entity_id(engine, "Mira Holt", &mira) == RP_RESULT_OK);
    CHECK(entity_id(engine, "mira", &by_key) == RP_RESULT_OK);
    CHECK(mira == by_key);
    CHECK(rp_engine_head(engine, &head) == RP_RESULT_OK);
    CHECK(head > 0);

    CHECK(decide(engine, mira, "{\"content\":\"Mira, another cider?\",\"author\":\"Wren\"}",
                 &json) == RP_RESULT_OK);
    CHECK(contains(json, RESPONDS));
    CHECK(contains(json, "\"retry_ms\":null"));
    CHECK(contains(json, "\"kind\":\"fired\""));
    CHECK(contains(json, "Her brother vanished on the marsh ten winters ago."));
    rp_string_free(json);
    json = NULL;

    CHECK(decide(engine, mira, "{\"content\":\"the rain will not stop tonight\"}", &json) ==
          RP_RESULT_OK);
    CHECK(contains(json, SILENT));
    rp_string_free(json);
    json = NULL;

    /* The host may say outright whether the message mentions her. */
    CHECK(decide(engine, mira, "{\"content\":\"hey\",\"mentioned\":true}", &json) ==
          RP_RESULT_OK);
    CHECK(contains(json, RESPONDS));
    rp_string_free(json);
    json = NULL;

    /* Every field is optional. */
    CHECK(decide(engine, mira, "{}", &json) == RP_RESULT_OK);
    CHECK(contains(json, SILENT));
    rp_string_free(json);

    /* Each decision is recorded in the log. */
    CHECK(rp_engine_head(engine, &after) == RP_RESULT_OK);
    CHECK(after == head + 4);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
}

static void test_explain_reads_a_decision(void) {
    rp_engine *engine = tavern();
    uint64_t mira = 0;
    char *json = NULL;
    char *text = NULL;

    CHECK(engine != NULL);
    CHECK(entity_id(engine, "Mira Holt", &mira) == RP_RESULT_OK);
    CHECK(decide(engine, mira, "{\"content\":\"Mira!\"}", &json) == RP_RESULT_OK);
    CHECK(json != NULL);
    if (json != NULL) {
        CHECK(rp_decision_explain(json, strlen(json), &text) == RP_RESULT_OK);
        CHECK(contains(text, "fired: $respond true"));
        CHECK(contains(text, "responds"));
        rp_string_free(text);
    }
    rp_string_free(json);
    text = NULL;
    CHECK(rp_decision_explain("{\"respond\":1}", 13, &text) == RP_RESULT_INVALID);
    CHECK(text == NULL);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
}

static void test_bad_messages_are_invalid_and_leave_the_output_alone(void) {
    rp_engine *engine = tavern();
    uint64_t mira = 0, head = 0, after = 0;
    char *json = NULL;
    static const char bad_utf8[] = {'{', '"', 'c', 'o', 'n', 't', 'e', 'n', 't', '"',
                                    ':', '"', (char)0xff, '"', '}'};

    CHECK(engine != NULL);
    CHECK(entity_id(engine, "Mira Holt", &mira) == RP_RESULT_OK);
    CHECK(rp_engine_head(engine, &head) == RP_RESULT_OK);

    CHECK(decide(engine, mira, "{not json", &json) == RP_RESULT_INVALID);
    CHECK(starts_with(rp_last_error(), "invalid message: "));
    CHECK(json == NULL);
    CHECK(decide(engine, mira, "{\"shout\":true}", &json) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "shout"));
    CHECK(decide(engine, mira, "{\"unread_count\":-1}", &json) == RP_RESULT_INVALID);
    CHECK(decide(engine, mira, "\"Mira\"", &json) == RP_RESULT_INVALID);
    CHECK(rp_engine_decide(engine, mira, bad_utf8, sizeof bad_utf8, &json) ==
          RP_RESULT_INVALID_UTF8);
    /* Only len bytes are read: a valid prefix of a longer buffer. */
    CHECK(rp_engine_decide(engine, mira, "{}garbage", 2, &json) == RP_RESULT_OK);
    CHECK(contains(json, SILENT));
    rp_string_free(json);

    /* Refused messages were not recorded. */
    CHECK(rp_engine_head(engine, &after) == RP_RESULT_OK);
    CHECK(after == head + 1);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
}

static void test_unknown_entities_are_not_found(void) {
    rp_engine *engine = tavern();
    uint64_t id = 12345;
    char *json = NULL;

    CHECK(engine != NULL);
    CHECK(entity_id(engine, "Nobody At All", &id) == RP_RESULT_NOT_FOUND);
    CHECK(contains(rp_last_error(), "Nobody At All"));
    CHECK(id == 12345);
    CHECK(decide(engine, 987654321, "{}", &json) == RP_RESULT_NOT_FOUND);
    CHECK(json == NULL);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
}

static void test_null_arguments_are_refused(void) {
    rp_engine *engine = tavern();
    rp_engine *none = NULL;
    uint64_t id = 0;
    size_t events = 0;
    char *json = NULL;

    CHECK(engine != NULL);
    CHECK(rp_engine_in_memory(NULL, 0, 0, &none) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`name` is NULL") == 0);
    CHECK(rp_engine_in_memory("x", 1, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`out_engine` is NULL") == 0);
    CHECK(none == NULL);
    CHECK(rp_engine_open(NULL, 0, &none) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_create_from_world_file("a", 1, NULL, 0, 0, &none) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_head(NULL, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(rp_last_error(), "`engine` is NULL") == 0);
    CHECK(rp_engine_head(engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_entity_id(engine, NULL, 0, &id) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_entity_id(engine, "mira", 4, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_decide(NULL, 1, "{}", 2, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_decide(engine, 1, NULL, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_decide(engine, 1, "{}", 2, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_apply_world_file(engine, "f", 1, NULL, 0, &events) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_load_world_file(engine, NULL, 0, &events) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_export_world_file(engine, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_sheet_check(NULL, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_decision_explain(NULL, 0, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(json == NULL);
    /* Freeing NULL does nothing. */
    CHECK(rp_engine_free(NULL) == RP_RESULT_OK);
    rp_string_free(NULL);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
}

static void test_freed_and_foreign_handles_are_invalid(void) {
    rp_engine *engine = tavern();
    rp_engine *other = NULL;
    int not_an_engine = 0;
    rp_engine *foreign = (rp_engine *)(void *)&not_an_engine;
    uint64_t head = 0;
    char *json = NULL;

    CHECK(engine != NULL);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
    CHECK(rp_engine_head(engine, &head) == RP_RESULT_INVALID_HANDLE);
    CHECK(contains(rp_last_error(), "not a live handle"));
    CHECK(decide(engine, 1, "{}", &json) == RP_RESULT_INVALID_HANDLE);
    CHECK(json == NULL);
    CHECK(rp_engine_export_world_file(engine, &json) == RP_RESULT_INVALID_HANDLE);
    /* A double free is reported, not a crash. */
    CHECK(rp_engine_free(engine) == RP_RESULT_INVALID_HANDLE);

    /* A new engine never takes over a freed handle. */
    CHECK(rp_engine_in_memory("other", 5, 0, &other) == RP_RESULT_OK);
    CHECK(other != engine);
    CHECK(rp_engine_head(engine, &head) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_engine_free(other) == RP_RESULT_OK);

    CHECK(rp_engine_head(foreign, &head) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_engine_free(foreign) == RP_RESULT_INVALID_HANDLE);
    CHECK(not_an_engine == 0);
}

static void test_sheet_check_places_errors(void) {
    static const char good[] = "A fisherman.\n$if mentioned: $respond\n";
    static const char bad[] = "A fisherman.\n\n$if mentioned &&: $respond\n";
    static const char bad_directive[] = "$shout loudly";
    char *json = NULL;

    CHECK(rp_sheet_check(good, strlen(good), &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "{\"ok\":true}") == 0);
    rp_string_free(json);
    json = NULL;

    /* A bad sheet is a verdict, not a failed call. */
    CHECK(rp_sheet_check(bad, strlen(bad), &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"ok\":false"));
    CHECK(contains(json, "\"line\":3"));
    CHECK(contains(json, "\"column\":"));
    CHECK(contains(json, "\"message\":\""));
    rp_string_free(json);
    json = NULL;

    CHECK(rp_sheet_check(bad_directive, strlen(bad_directive), &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"line\":1"));
    CHECK(contains(json, "\"column\":1"));
    CHECK(contains(json, "unknown directive"));
    rp_string_free(json);
}

static rp_result condition(const char *source, rp_condition **out) {
    return rp_condition_compile(source, strlen(source), out);
}

static rp_result holds(const rp_condition *c, const char *context, uint64_t seed, bool *out,
                       char **trace) {
    return rp_condition_test(c, context, strlen(context), seed, out, trace);
}

static void test_a_condition_is_tested_against_a_context(void) {
    rp_condition *night_door = NULL;
    rp_condition *chatter = NULL;
    bool yes = false;
    bool first = false;
    bool again = true;
    char *trace = NULL;

    CHECK(condition("time.is_night && !content.match(/knock/i)", &night_door) == RP_RESULT_OK);
    CHECK(holds(night_door, "{\"hour\": 23, \"content\": \"Hello?\"}", 0, &yes, NULL) ==
          RP_RESULT_OK);
    CHECK(yes);
    CHECK(holds(night_door, "{\"hour\": 23, \"content\": \"*Knock knock*\"}", 0, &yes,
                NULL) == RP_RESULT_OK);
    CHECK(!yes);
    CHECK(holds(night_door, "{}", 0, &yes, NULL) == RP_RESULT_OK); /* noon */
    CHECK(!yes);

    /* The same seed draws the same numbers; the trace shows them. */
    CHECK(condition("random() < 0.5", &chatter) == RP_RESULT_OK);
    CHECK(holds(chatter, "{}", 42, &first, &trace) == RP_RESULT_OK);
    CHECK(contains(trace, "\"kind\":\"random\""));
    rp_string_free(trace);
    CHECK(holds(chatter, "{}", 42, &again, NULL) == RP_RESULT_OK);
    CHECK(first == again);

    CHECK(rp_condition_free(night_door) == RP_RESULT_OK);
    CHECK(rp_condition_free(chatter) == RP_RESULT_OK);
}

static void test_condition_errors(void) {
    rp_condition *c = (rp_condition *)NULL;
    rp_condition *untouched = (rp_condition *)(void *)&c;
    bool yes = true;
    char *trace = NULL;

    /* Syntax: the code of fact sheets, placed by line and column. */
    c = untouched;
    CHECK(condition("mentioned &&", &c) == RP_RESULT_FACT_SYNTAX);
    CHECK(contains(rp_last_error(), "line 1"));
    CHECK(c == untouched);
    CHECK(condition("eval(content)", &c) == RP_RESULT_FACT_SYNTAX);

    CHECK(condition("random() < 2 && interaction_type.length > 0", &c) == RP_RESULT_OK);
    /* A runtime error makes it false and is traced: not a failure. */
    CHECK(holds(c, "{}", 1, &yes, &trace) == RP_RESULT_OK);
    CHECK(!yes);
    CHECK(contains(trace, "\"kind\":\"error\""));
    rp_string_free(trace);
    /* A bad context is refused and the answer left alone. */
    yes = true;
    CHECK(holds(c, "[1, 2]", 1, &yes, NULL) == RP_RESULT_INVALID);
    CHECK(holds(c, "{\"colour\": \"red\"}", 1, &yes, NULL) == RP_RESULT_INVALID);
    CHECK(holds(c, "{\"mentioned\": \"yes\"}", 1, &yes, NULL) == RP_RESULT_INVALID);
    CHECK(yes);
    CHECK(rp_condition_test(c, NULL, 0, 1, &yes, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_condition_test(c, "{}", 2, 1, NULL, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_condition_compile(NULL, 0, &c) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_condition_compile("true", 4, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_condition_compile("\xff", 1, &c) == RP_RESULT_INVALID_UTF8);

    CHECK(rp_condition_free(c) == RP_RESULT_OK);
    /* Freed, foreign and NULL handles. */
    CHECK(holds(c, "{}", 1, &yes, NULL) == RP_RESULT_INVALID_HANDLE);
    CHECK(rp_condition_free(c) == RP_RESULT_INVALID_HANDLE);
    CHECK(holds(untouched, "{}", 1, &yes, NULL) == RP_RESULT_INVALID_HANDLE);
    CHECK(holds(NULL, "{}", 1, &yes, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_condition_free(NULL) == RP_RESULT_OK);
}

static rp_result add_memory(rp_engine *engine, const char *json, uint64_t *id) {
    return rp_engine_add_memory(engine, json, strlen(json), id);
}

static rp_result recall(rp_engine *engine, uint64_t speaker, const char *query,
                        const char *options, char **json) {
    return rp_engine_recall(engine, speaker, query, strlen(query), 0, options,
                            options == NULL ? 0 : strlen(options), json);
}

static void test_memories_are_recalled_by_their_owner_only(void) {
    rp_engine *engine = tavern();
    uint64_t mira = 0;
    uint64_t wren = 0;
    uint64_t ale = 0;
    uint64_t secret = 0;
    uint64_t head = 0;
    uint64_t after = 0;
    char memory[256];
    char *json = NULL;

    CHECK(engine != NULL);
    CHECK(entity_id(engine, "Mira Holt", &mira) == RP_RESULT_OK);
    CHECK(entity_id(engine, "Wren", &wren) == RP_RESULT_OK);
    snprintf(memory, sizeof memory,
             "{\"owner\": %llu, \"text\": \"Wren ordered the dark ale\", "
             "\"witnesses\": [%llu], \"significance\": 0.7}",
             (unsigned long long)mira, (unsigned long long)wren);
    CHECK(add_memory(engine, memory, &ale) == RP_RESULT_OK);
    snprintf(memory, sizeof memory,
             "{\"owner\": %llu, \"text\": \"I hid the letter behind the dark ale casks\"}",
             (unsigned long long)wren);
    CHECK(add_memory(engine, memory, &secret) == RP_RESULT_OK);

    /* Mira finds hers, never Wren's, even asked with its exact words. */
    CHECK(recall(engine, mira, "dark ale", NULL, &json) == RP_RESULT_OK);
    CHECK(contains(json, "Wren ordered the dark ale"));
    CHECK(!contains(json, "letter"));
    rp_string_free(json);
    CHECK(recall(engine, mira, "I hid the letter behind the dark ale casks", "{\"k\": 5}",
                 &json) == RP_RESULT_OK);
    CHECK(!contains(json, "letter"));
    rp_string_free(json);
    /* Query syntax is only characters. */
    CHECK(recall(engine, wren, "\"letter AND (casks:", NULL, &json) == RP_RESULT_OK);
    CHECK(contains(json, "letter"));
    rp_string_free(json);

    /* Recall marks; bad ids change nothing. */
    CHECK(rp_engine_head(engine, &head) == RP_RESULT_OK);
    CHECK(rp_engine_mark_recalled(engine, &ale, 1, 5000, &after) == RP_RESULT_OK);
    CHECK(after == head + 1);
    {
        uint64_t twice[2] = {ale, ale};
        uint64_t missing = 999999;
        CHECK(rp_engine_mark_recalled(engine, twice, 2, 0, &after) == RP_RESULT_INVALID);
        CHECK(rp_engine_mark_recalled(engine, &missing, 1, 0, &after) == RP_RESULT_NOT_FOUND);
        CHECK(rp_engine_mark_recalled(engine, NULL, 1, 0, &after) == RP_RESULT_NULL_ARGUMENT);
        CHECK(rp_engine_mark_recalled(engine, NULL, 0, 0, &after) == RP_RESULT_OK);
        CHECK(after == head + 1);
    }

    /* Errors. */
    CHECK(recall(engine, 999999, "ale", NULL, &json) == RP_RESULT_NOT_FOUND);
    CHECK(recall(engine, mira, "ale", "{\"k\": 0}", &json) == RP_RESULT_INVALID);
    CHECK(recall(engine, mira, "ale", "[]", &json) == RP_RESULT_INVALID);
    CHECK(add_memory(engine, "{\"owner\": 999999, \"text\": \"x\"}", &ale) ==
          RP_RESULT_NOT_FOUND);
    CHECK(add_memory(engine, "{\"text\": \"x\"}", &ale) == RP_RESULT_INVALID);
    CHECK(rp_engine_remove_memory(engine, secret) == RP_RESULT_OK);
    CHECK(rp_engine_remove_memory(engine, secret) == RP_RESULT_NOT_FOUND);
    CHECK(recall(engine, wren, "letter", NULL, &json) == RP_RESULT_OK);
    CHECK(strcmp(json, "[]") == 0);
    rp_string_free(json);
    CHECK(rp_engine_recall(engine, mira, NULL, 0, 0, NULL, 0, &json) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_recall(engine, mira, "a", 1, 0, NULL, 0, NULL) == RP_RESULT_NULL_ARGUMENT);

    /* Semantic recall: the host's vectors, stored with the memory. */
    snprintf(memory, sizeof memory,
             "{\"owner\": %llu, \"text\": \"the cellar smells of hops\", "
             "\"embedding\": [1.0, 0.0, 0.0]}",
             (unsigned long long)mira);
    CHECK(add_memory(engine, memory, &ale) == RP_RESULT_OK);
    CHECK(recall(engine, mira, "beer", "{\"query_embedding\": [0.9, 0.1, 0.0], \"semantic\": 1}",
                 &json) == RP_RESULT_OK);
    CHECK(contains(json, "the cellar smells of hops"));
    rp_string_free(json);
    CHECK(recall(engine, mira, "beer", "{\"query_embedding\": []}", &json) == RP_RESULT_INVALID);
    snprintf(memory, sizeof memory,
             "{\"owner\": %llu, \"text\": \"x\", \"embedding\": [0, 0]}",
             (unsigned long long)mira);
    CHECK(add_memory(engine, memory, &ale) == RP_RESULT_INVALID);

    /* Pinned memories are always loaded, whatever the query. */
    snprintf(memory, sizeof memory,
             "{\"owner\": %llu, \"text\": \"I swore to keep the lantern lit\", "
             "\"pinned\": true}",
             (unsigned long long)mira);
    CHECK(add_memory(engine, memory, &ale) == RP_RESULT_OK);
    CHECK(rp_engine_always_loaded(engine, mira, 3, &json) == RP_RESULT_OK);
    CHECK(contains(json, "I swore to keep the lantern lit"));
    CHECK(contains(json, "\"pinned\":true"));
    CHECK(!contains(json, "dark ale"));
    rp_string_free(json);
    CHECK(rp_engine_always_loaded(engine, 999999, 3, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_always_loaded(engine, mira, 3, NULL) == RP_RESULT_NULL_ARGUMENT);

    /* Entity search: by name, never query syntax. */
    CHECK(rp_engine_search_entities(engine, "holt", 4, 3, &json) == RP_RESULT_OK);
    CHECK(starts_with(json, "[{\"id\":"));
    CHECK(contains(json, "\"name\":\"Mira Holt\""));
    rp_string_free(json);
    CHECK(rp_engine_search_entities(engine, "\"(holt:", 7, 3, &json) == RP_RESULT_OK);
    CHECK(contains(json, "Mira Holt"));
    rp_string_free(json);
    CHECK(rp_engine_search_entities(engine, "holt", 4, 0, &json) == RP_RESULT_INVALID);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
}

static void test_world_file_errors_have_their_own_codes(void) {
    rp_engine *engine = tavern();
    size_t events = 99;
    uint64_t head = 0, after = 0;
    static const char type_error[] = "[[entities]]\nid = \"x\"\nname = 3\n";
    static const char sheet_error[] =
        "[world]\nname = \"The Crooked Lantern\"\n"
        "[[entities]]\nid = \"x\"\nname = \"X\"\nfacts = '''\n$if (: $respond\n'''\n";
    static const char nope[] = "/nonexistent/rp/world.toml";

    CHECK(engine != NULL);
    CHECK(rp_engine_head(engine, &head) == RP_RESULT_OK);
    CHECK(rp_engine_apply_world_file(engine, "bad.toml", 8, type_error, strlen(type_error),
                                     &events) == RP_RESULT_WORLD_FILE);
    CHECK(starts_with(rp_last_error(), "bad.toml:3:"));
    CHECK(rp_engine_apply_world_file(engine, "sheet.toml", 10, sheet_error,
                                     strlen(sheet_error), &events) == RP_RESULT_WORLD_FILE);
    /* A sheet error in a world file is a world-file error at the sheet line's
     * place in the file (line 7), naming the line of the sheet too. */
    CHECK(starts_with(rp_last_error(), "sheet.toml:7:6: entities.facts: line 1 of the fact sheet"));
    CHECK(rp_engine_load_world_file(engine, nope, strlen(nope), &events) ==
          RP_RESULT_WORLD_FILE);
    CHECK(events == 99);
    /* The world is unchanged. */
    CHECK(rp_engine_head(engine, &after) == RP_RESULT_OK);
    CHECK(after == head);
    /* Applying the same file again changes nothing. */
    CHECK(rp_engine_load_world_file(engine, tavern_path, strlen(tavern_path), &events) ==
          RP_RESULT_OK);
    CHECK(events == 0);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
}

static void test_an_exported_world_loads_into_another(void) {
    rp_engine *engine = tavern();
    rp_engine *copy = NULL;
    char *text = NULL;
    size_t events = 0;
    uint64_t tobias = 0;

    CHECK(engine != NULL);
    CHECK(rp_engine_export_world_file(engine, &text) == RP_RESULT_OK);
    CHECK(contains(text, "Mira Holt"));
    CHECK(rp_engine_in_memory("copy", 4, 0, &copy) == RP_RESULT_OK);
    if (text != NULL) {
        CHECK(rp_engine_apply_world_file(copy, "export.toml", 11, text, strlen(text),
                                         &events) == RP_RESULT_OK);
    }
    CHECK(events > 0);
    CHECK(entity_id(copy, "Tobias Reed", &tobias) == RP_RESULT_OK);
    rp_string_free(text);
    CHECK(rp_engine_free(copy) == RP_RESULT_OK);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
}

static void test_a_save_file_keeps_the_world(void) {
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    char save[4200];
    rp_engine *engine = NULL;
    rp_engine *again = NULL;
    uint64_t mira = 0, head = 0, reopened_head = 0, reopened_mira = 0;
    char *json = NULL;

    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    snprintf(dir, sizeof dir, "%s/rp-test-engine-XXXXXX", tmp);
    CHECK(mkdtemp(dir) != NULL);
    snprintf(save, sizeof save, "%s/tavern.rp", dir);

    CHECK(rp_engine_create_from_world_file(save, strlen(save), tavern_path, strlen(tavern_path),
                                           0, &engine) == RP_RESULT_OK);
    CHECK(entity_id(engine, "Mira Holt", &mira) == RP_RESULT_OK);
    CHECK(decide(engine, mira, "{\"content\":\"Mira?\"}", &json) == RP_RESULT_OK);
    CHECK(contains(json, RESPONDS));
    rp_string_free(json);
    CHECK(rp_engine_head(engine, &head) == RP_RESULT_OK);

    /* The file exists now: creating it again is a conflict. */
    CHECK(rp_engine_create_from_world_file(save, strlen(save), tavern_path,
                                           strlen(tavern_path), 0, &again) ==
          RP_RESULT_CONFLICT);
    CHECK(again == NULL);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);

    CHECK(rp_engine_open(save, strlen(save), &again) == RP_RESULT_OK);
    CHECK(rp_engine_head(again, &reopened_head) == RP_RESULT_OK);
    CHECK(reopened_head == head);
    CHECK(entity_id(again, "mira", &reopened_mira) == RP_RESULT_OK);
    CHECK(reopened_mira == mira);
    CHECK(rp_engine_free(again) == RP_RESULT_OK);

    /* A world file is not a save. */
    again = NULL;
    CHECK(rp_engine_open(tavern_path, strlen(tavern_path), &again) == RP_RESULT_NOT_A_SAVE);
    CHECK(again == NULL);

    CHECK(unlink(save) == 0);
    CHECK(rmdir(dir) == 0);
}

#define THREADS 4
#define DECISIONS_PER_THREAD 10

struct worker {
    rp_engine *engine;
    uint64_t mira;
    int ok;
};

static void *decide_repeatedly(void *arg) {
    struct worker *worker = arg;
    int i;
    worker->ok = 1;
    for (i = 0; i < DECISIONS_PER_THREAD; i++) {
        char *json = NULL;
        if (decide(worker->engine, worker->mira, "{\"content\":\"Mira\"}", &json) !=
                RP_RESULT_OK ||
            !contains(json, RESPONDS)) {
            worker->ok = 0;
        }
        rp_string_free(json);
    }
    return NULL;
}

static void test_one_engine_serves_several_threads(void) {
    rp_engine *engine = tavern();
    struct worker workers[THREADS];
    pthread_t threads[THREADS];
    uint64_t mira = 0, head = 0, after = 0;
    int i;

    CHECK(engine != NULL);
    CHECK(entity_id(engine, "Mira Holt", &mira) == RP_RESULT_OK);
    CHECK(rp_engine_head(engine, &head) == RP_RESULT_OK);
    for (i = 0; i < THREADS; i++) {
        workers[i].engine = engine;
        workers[i].mira = mira;
        workers[i].ok = 0;
        CHECK(pthread_create(&threads[i], NULL, decide_repeatedly, &workers[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK(workers[i].ok);
    }
    CHECK(rp_engine_head(engine, &after) == RP_RESULT_OK);
    CHECK(after == head + THREADS * DECISIONS_PER_THREAD);
    CHECK(rp_engine_free(engine) == RP_RESULT_OK);
}

static void test_new_result_codes_keep_their_numbers(void) {
    CHECK(RP_RESULT_INVALID_HANDLE == 5);
    CHECK(RP_RESULT_NOT_FOUND == 6);
    CHECK(RP_RESULT_INVALID == 7);
    CHECK(RP_RESULT_CONFLICT == 8);
    CHECK(RP_RESULT_CAPACITY == 9);
    CHECK(RP_RESULT_WORLD_FILE == 10);
    CHECK(RP_RESULT_STORAGE == 11);
    CHECK(RP_RESULT_CORRUPT == 12);
    CHECK(RP_RESULT_UNSUPPORTED_VERSION == 13);
    CHECK(RP_RESULT_NOT_A_SAVE == 14);
    CHECK(RP_RESULT_FACT_SYNTAX == 15);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];

    test_mira_responds_when_mentioned_and_stays_silent_otherwise();
    test_explain_reads_a_decision();
    test_bad_messages_are_invalid_and_leave_the_output_alone();
    test_unknown_entities_are_not_found();
    test_null_arguments_are_refused();
    test_freed_and_foreign_handles_are_invalid();
    test_sheet_check_places_errors();
    test_a_condition_is_tested_against_a_context();
    test_condition_errors();
    test_memories_are_recalled_by_their_owner_only();
    test_world_file_errors_have_their_own_codes();
    test_an_exported_world_loads_into_another();
    test_a_save_file_keeps_the_world();
    test_one_engine_serves_several_threads();
    test_new_result_codes_keep_their_numbers();

    return checks_done("test_engine");
}
