/*
 * Tests of what lorebooks and cards put in a prompt, from C (docs/cards.md): a sticky lorebook
 * entry activated in a turn leaves a timer the next call reads (rp_engine_lore_timers), a card's
 * macros expanded as the speaker's prompt expands them (rp_engine_expand_macros); and the
 * unhappy paths: unknown entities, NULL arguments and invalid UTF-8, each refused with the code
 * of rp-core's error kind and nothing changed.
 *
 * Build and run (scripts/test-all does this, then under valgrind and AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_lore.c target/debug/librp.a -lpthread -ldl -lm -o test_lore
 *   ./test_lore examples/tavern.toml
 *
 * Reports each failed check on stderr and closes with "N passed, N failed"; exits 0 only when
 * every check passed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"
#include "check.h"
#include "tavern.h"

#define BOOK                                                                               \
    "{\"entries\": {\"0\": {\"uid\": 0, \"key\": [\"bell\"], \"content\": \"The bell is " \
    "cracked.\", \"sticky\": 4}}}"

/* Every character answers "Aye." */
static int aye(void *user_data, const char *request_json, size_t request_json_len,
               rp_token_sink *sink, const char **out_result_json, size_t *out_result_len) {
    static const char result[] = "{\"text\": \"Aye.\", \"model\": \"scripted\"}";
    (void)user_data;
    (void)request_json;
    (void)request_json_len;
    (void)sink;
    *out_result_json = result;
    *out_result_len = strlen(result);
    return RP_RESULT_OK;
}

static void test_a_sticky_entry_leaves_a_timer(void) {
    struct tavern t;
    char *json = NULL;
    char input[256];
    uint64_t book = 0;
    uint64_t before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_import_lorebook(t.engine, (const uint8_t *)BOOK, strlen(BOOK), 0, 1000,
                                    &book) == RP_RESULT_OK);
    CHECK(rp_engine_lore_timers(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);
    snprintf(input, sizeof input,
             "{\"speaker\": %llu, \"text\": \"Did you hear the bell, Tobias?\", \"now\": 5000}",
             (unsigned long long)t.wren);
    CHECK(rp_engine_run_turn(t.engine, input, strlen(input), NULL, 0, aye, NULL, NULL, &json) ==
          RP_RESULT_OK);
    rp_string_free(json);
    CHECK(rp_engine_lore_timers(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"kind\":\"sticky\""));
    CHECK(contains(json, "\"entry\":0"));
    rp_string_free(json);

    /* Unknown entities and NULL arguments: refused, nothing changed. */
    before = head(t.engine);
    json = NULL;
    CHECK(rp_engine_lore_timers(t.engine, 99999, &json) == RP_RESULT_NOT_FOUND);
    CHECK(json == NULL);
    CHECK(rp_engine_lore_timers(t.engine, t.tobias, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_lore_timers(NULL, t.tobias, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

static void test_macros_expand_as_the_prompt_expands_them(void) {
    struct tavern t;
    char *text = NULL;
    char *again = NULL;
    const char *greeting = "*waves at {{user}}* I am {{char}}.{{// a note}} {{pick:a,b,c}}";
    uint64_t before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_expand_macros(t.engine, greeting, strlen(greeting), t.tobias, t.wren,
                                  &text) == RP_RESULT_OK);
    CHECK(contains(text, "*waves at Wren* I am Tobias Reed."));
    CHECK(!contains(text, "{{") && !contains(text, "a note"));
    /* The same world, the same draw. */
    CHECK(rp_engine_expand_macros(t.engine, greeting, strlen(greeting), t.tobias, t.wren,
                                  &again) == RP_RESULT_OK);
    CHECK(text != NULL && again != NULL && strcmp(text, again) == 0);
    rp_string_free(text);
    rp_string_free(again);

    before = head(t.engine);
    text = NULL;
    CHECK(rp_engine_expand_macros(t.engine, greeting, strlen(greeting), 99999, t.wren, &text) ==
          RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_expand_macros(t.engine, greeting, strlen(greeting), t.tobias, 99999, &text) ==
          RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_expand_macros(t.engine, "\xff", 1, t.tobias, t.wren, &text) ==
          RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_expand_macros(t.engine, NULL, 3, t.tobias, t.wren, &text) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_expand_macros(t.engine, "x", 1, t.tobias, t.wren, NULL) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(text == NULL);
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s path/to/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];
    test_a_sticky_entry_leaves_a_timer();
    test_macros_expand_as_the_prompt_expands_them();
    return checks_done("test_lore");
}
