/*
 * Tests of the player's hand on the story from C (docs/edits.md): a past line edited with the
 * rest of the story kept (the preview first), a character's line deleted, a swipe asked for and
 * recorded, another alternative chosen; and the unhappy paths: unknown lines, empty texts, bad
 * options, an older line swiped, each refused with the code of rp-core's error kind and
 * nothing changed.
 *
 * Build and run (scripts/test-all does this, then under valgrind and AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_edits.c target/debug/librp.a -lpthread -ldl -lm -o test_edits
 *   ./test_edits examples/tavern.toml
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

/* Every character answers with the text in user_data. */
static int answer(void *user_data, const char *request_json, size_t request_json_len,
                  rp_token_sink *sink, const char **out_result_json, size_t *out_result_len) {
    (void)request_json;
    (void)request_json_len;
    (void)sink;
    *out_result_json = (const char *)user_data;
    *out_result_len = strlen(*out_result_json);
    return RP_RESULT_OK;
}

/* The number after `"key":` in `json` (0 if absent). */
static uint64_t number_after(const char *json, const char *key) {
    const char *at = json == NULL ? NULL : strstr(json, key);
    return at == NULL ? 0 : (uint64_t)strtoull(at + strlen(key), NULL, 10);
}

/* Wren says `text`; Tobias answers `reply`. Writes the ids of both lines. */
static void say(struct tavern *t, const char *text, char *reply_json, int64_t now,
                uint64_t *line, uint64_t *reply) {
    char input[256];
    char *json = NULL;
    snprintf(input, sizeof input, "{\"speaker\": %llu, \"text\": \"%s\", \"now\": %lld}",
             (unsigned long long)t->wren, text, (long long)now);
    CHECK(rp_engine_run_turn(t->engine, input, strlen(input), NULL, 0, answer, NULL, reply_json,
                             &json) == RP_RESULT_OK);
    *line = number_after(json, "\"input\":");
    *reply = number_after(json, "\"utterance\":");
    rp_string_free(json);
}

static void test_lines_are_edited_and_deleted(void) {
    struct tavern t;
    char *json = NULL;
    uint64_t first = 0, first_reply = 0, second = 0, second_reply = 0, before = 0;
    static char aye[] = "{\"text\": \"Aye, the ferryman.\"}";
    static char nay[] = "{\"text\": \"Nay.\"}";
    const char *text = "I carry a wet letter.";
    const char *drop = "{\"on_invalid\": \"drop\"}";
    const char *explode = "{\"on_invalid\": \"explode\"}";

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    say(&t, "I carry a sealed letter.", aye, 5000, &first, &first_reply);
    say(&t, "Is it far?", nay, 65000, &second, &second_reply);
    CHECK(first != 0 && first_reply != 0 && second != 0);

    before = head(t.engine);
    CHECK(rp_engine_preview_edit(t.engine, first, text, strlen(text), NULL, 0, &json) ==
          RP_RESULT_OK);
    CHECK(contains(json, "\"kind\":\"user_turn\",\"why\":\"the line, edited\""));
    CHECK(contains(json, "\"invalid\":[]"));
    rp_string_free(json);
    CHECK(head(t.engine) == before);

    CHECK(rp_engine_edit_line(t.engine, first, text, strlen(text), NULL, 0, &json) ==
          RP_RESULT_OK);
    CHECK(contains(json, "\"old_branch\":\"main~"));
    rp_string_free(json);
    CHECK(rp_engine_memories_of(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(contains(json, "I carry a wet letter."));
    CHECK(!contains(json, "sealed"));
    rp_string_free(json);

    /* Delete Tobias's first reply, with options. */
    json = NULL;
    CHECK(rp_engine_delete_line(t.engine, first_reply, drop, strlen(drop), &json) == RP_RESULT_OK);
    rp_string_free(json);
    CHECK(rp_engine_memories_of(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(!contains(json, "Aye, the ferryman."));
    CHECK(contains(json, "Nay."));
    rp_string_free(json);

    /* Refusals change nothing. */
    before = head(t.engine);
    json = NULL;
    CHECK(rp_engine_edit_line(t.engine, 999999, "x", 1, NULL, 0, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_edit_line(t.engine, second, "  ", 2, NULL, 0, &json) == RP_RESULT_INVALID);
    CHECK(rp_engine_edit_line(t.engine, second, "\xff", 1, NULL, 0, &json) ==
          RP_RESULT_INVALID_UTF8);
    CHECK(rp_engine_delete_line(t.engine, second, explode, strlen(explode), &json) ==
          RP_RESULT_INVALID);
    CHECK(rp_engine_delete_line(t.engine, second, NULL, 0, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_preview_edit(NULL, second, NULL, 0, NULL, 0, &json) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(json == NULL);
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

static void test_a_reply_is_swiped_and_another_chosen(void) {
    struct tavern t;
    char *json = NULL;
    uint64_t line = 0, reply = 0, index = 0, before = 0;
    static char aye[] = "{\"text\": \"Aye.\"}";
    static char update[] = "{\"text\": \"{\\\"reports\\\": []}\"}";
    const char *other = "{\"text\": \"Tobias Reed: Sit down, stranger.\", \"model\": \"m\"}";

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    say(&t, "May I sit?", aye, 5000, &line, &reply);
    CHECK(rp_engine_swipe_request(t.engine, 0, NULL, 0, &json) == RP_RESULT_OK);
    CHECK(number_after(json, "\"line\":") == reply);
    CHECK(contains(json, "May I sit?"));
    rp_string_free(json);
    CHECK(rp_engine_add_alternative(t.engine, reply, other, strlen(other), &index) ==
          RP_RESULT_OK);
    CHECK(index == 1);
    CHECK(rp_engine_alternatives(t.engine, reply, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"texts\":[\"Aye.\",\"Sit down, stranger.\"]"));
    CHECK(contains(json, "\"chosen\":0"));
    rp_string_free(json);
    CHECK(rp_engine_memories_of(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(!contains(json, "Sit down"));
    rp_string_free(json);

    CHECK(rp_engine_choose(t.engine, reply, 1, NULL, 0, answer, update, &json) == RP_RESULT_OK);
    rp_string_free(json);
    CHECK(rp_engine_memories_of(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(contains(json, "Sit down, stranger."));
    CHECK(!contains(json, "\"Tobias Reed: Aye.\""));
    rp_string_free(json);
    CHECK(rp_engine_alternatives(t.engine, reply, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"chosen\":1"));
    rp_string_free(json);

    /* Refusals: no alternative 7, an empty answer, an older line, NULL callbacks. */
    before = head(t.engine);
    json = NULL;
    CHECK(rp_engine_choose(t.engine, reply, 7, NULL, 0, answer, update, &json) ==
          RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_choose(t.engine, reply, 0, NULL, 0, NULL, NULL, &json) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_add_alternative(t.engine, reply, "{\"text\": \" \"}", 13, &index) ==
          RP_RESULT_INVALID);
    CHECK(rp_engine_add_alternative(t.engine, reply, "{\"text\": ", 9, &index) ==
          RP_RESULT_INVALID);
    CHECK(rp_engine_swipe_request(t.engine, line, NULL, 0, &json) == RP_RESULT_CONFLICT);
    CHECK(json == NULL);
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s path/to/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];
    test_lines_are_edited_and_deleted();
    test_a_reply_is_swiped_and_another_chosen();
    return checks_done("test_edits");
}
