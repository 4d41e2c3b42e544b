/*
 * Tests of character cards from C (docs/cards.md): a V2 card imported from JSON becomes an
 * entity of its prose and comes back byte for byte; the same entity out as V3 and as a PNG,
 * which another engine imports back; and the unhappy paths: a PNG with a broken CRC, bytes
 * that hold no card, a name taken, NULL arguments, an unknown format or entity, each refused
 * with the code of rp-core's error kind and nothing changed.
 *
 * Build and run (scripts/test-all does this, then under valgrind and AddressSanitizer):
 *
 *   cc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude \
 *      rp-ffi/tests/c/test_cards.c target/debug/librp.a -lpthread -ldl -lm -o test_cards
 *   ./test_cards examples/tavern.toml
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

#define CARD                                                                                \
    "{\"spec\":\"chara_card_v2\",\"spec_version\":\"2.0\",\"data\":{\"name\":\"Aria Vell\"," \
    "\"description\":\"{{char}} is a bard with a cracked lute.\",\"personality\":\"wry\","   \
    "\"scenario\":\"\",\"first_mes\":\"*tunes her lute* Evening.\",\"mes_example\":\"\","    \
    "\"alternate_greetings\":[\"Oh. You again.\"],\"extensions\":{\"fav\":true}}}"

/* Whether `needle` occurs in the `len` bytes at `bytes` (memmem is not C99). */
static int has(const uint8_t *bytes, size_t len, const char *needle) {
    size_t n = strlen(needle);
    size_t i;
    for (i = 0; n <= len && i <= len - n; i++) {
        if (memcmp(bytes + i, needle, n) == 0) {
            return 1;
        }
    }
    return 0;
}

static rp_result import(rp_engine *engine, const void *bytes, size_t len, char **json) {
    return rp_engine_import_card(engine, (const uint8_t *)bytes, len, 1000, json);
}

static void test_a_card_comes_in_and_goes_out_unchanged(void) {
    struct tavern t;
    char *json = NULL;
    uint8_t *bytes = NULL;
    size_t len = 0;
    uint64_t aria = 0;
    rp_engine *other = NULL;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(import(t.engine, CARD, strlen(CARD), &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"name\":\"Aria Vell\""));
    CHECK(contains(json, "\"greetings\":{\"first\":\"*tunes her lute* Evening.\","));
    CHECK(contains(json, "\"alternate\":[\"Oh. You again.\"]"));
    rp_string_free(json);
    CHECK(rp_engine_entity_id(t.engine, "Aria Vell", 9, &aria) == RP_RESULT_OK);
    CHECK(rp_engine_entity(t.engine, aria, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"facts\":[\"Aria Vell is a bard with a cracked lute.\","
                         "\"personality: wry\"]"));
    rp_string_free(json);

    /* The same version, byte for byte. */
    CHECK(rp_engine_export_card(t.engine, aria, "v2", 2, &bytes, &len) == RP_RESULT_OK);
    CHECK(len == strlen(CARD) && memcmp(bytes, CARD, len) == 0);
    rp_bytes_free(bytes, len);
    /* V3, every field kept. */
    CHECK(rp_engine_export_card(t.engine, aria, "v3", 2, &bytes, &len) == RP_RESULT_OK);
    CHECK(len > 0 && has(bytes, len, "\"chara_card_v3\""));
    CHECK(has(bytes, len, "\"fav\":true"));
    rp_bytes_free(bytes, len);
    /* A PNG, which another engine reads back. */
    CHECK(rp_engine_export_card(t.engine, aria, "aria.png", 8, &bytes, &len) == RP_RESULT_OK);
    CHECK(len > 8 && memcmp(bytes, "\x89PNG", 4) == 0);
    CHECK(rp_engine_in_memory("other", 5, 0, &other) == RP_RESULT_OK);
    CHECK(import(other, bytes, len, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"name\":\"Aria Vell\""));
    rp_string_free(json);
    rp_bytes_free(bytes, len);
    rp_engine_free(other);
    rp_engine_free(t.engine);
}

static void test_bad_cards_are_refused_and_change_nothing(void) {
    struct tavern t;
    char *json = NULL;
    uint8_t *bytes = NULL;
    size_t len = 0;
    uint64_t before = 0;

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(import(t.engine, CARD, strlen(CARD), &json) == RP_RESULT_OK);
    rp_string_free(json);
    CHECK(rp_engine_export_card(t.engine, t.tobias, "png", 3, &bytes, &len) == RP_RESULT_OK);
    before = head(t.engine);

    /* A flipped bit: the CRC names it. */
    bytes[len - 30] ^= 0x20;
    json = NULL;
    CHECK(import(t.engine, bytes, len, &json) == RP_RESULT_INVALID);
    CHECK(json == NULL);
    CHECK(contains(rp_last_error(), "CRC"));
    rp_bytes_free(bytes, len);
    CHECK(import(t.engine, "[1, 2]", 6, &json) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "a JSON object"));
    CHECK(import(t.engine, "{\"name\": 5}", 11, &json) == RP_RESULT_INVALID);
    CHECK(import(t.engine, CARD, strlen(CARD), &json) == RP_RESULT_CONFLICT);
    CHECK(contains(rp_last_error(), "already"));
    CHECK(import(t.engine, NULL, 4, &json) == RP_RESULT_NULL_ARGUMENT);
    CHECK(import(t.engine, CARD, strlen(CARD), NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(head(t.engine) == before);

    CHECK(rp_engine_export_card(t.engine, 999999, "v2", 2, &bytes, &len) ==
          RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_export_card(t.engine, t.tobias, "gif", 3, &bytes, &len) ==
          RP_RESULT_INVALID);
    CHECK(rp_engine_export_card(t.engine, t.tobias, "v2", 2, NULL, &len) ==
          RP_RESULT_NULL_ARGUMENT);
    rp_bytes_free(NULL, 0);
    rp_engine_free(t.engine);
}

static void test_a_lorebook_is_added_or_refused(void) {
    struct tavern t;
    uint64_t id = 0, before = 0;
    const char *book = "{\"entries\": {\"0\": {\"uid\": 0, \"key\": [\"/lights?/i\"], "
                       "\"content\": \"Green lights mean drowned men.\"}}}";
    const char *bad = "{\"entries\": [{\"keys\": [\"/(x/\"]}]}";

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    CHECK(rp_engine_import_lorebook(t.engine, (const uint8_t *)book, strlen(book), 0, 1000,
                                    &id) == RP_RESULT_OK);
    CHECK(id > 0);
    CHECK(rp_engine_import_lorebook(t.engine, (const uint8_t *)book, strlen(book), t.tobias,
                                    1000, &id) == RP_RESULT_OK);
    {
        char *json = NULL;
        CHECK(rp_engine_lorebooks(t.engine, &json) == RP_RESULT_OK);
        CHECK(contains(json, "\"owner\":null") && contains(json, "\"entries\":1"));
        rp_string_free(json);
        CHECK(rp_engine_export_lorebook(t.engine, id, "world_info", 10, &json) == RP_RESULT_OK);
        CHECK(json != NULL && strcmp(json, book) == 0);
        rp_string_free(json);
        CHECK(rp_engine_export_lorebook(t.engine, id, "lorebook_v3", 11, &json) == RP_RESULT_OK);
        CHECK(contains(json, "\"spec\":\"lorebook_v3\""));
        rp_string_free(json);
        CHECK(rp_engine_export_lorebook(t.engine, 999999, "v3", 2, &json) == RP_RESULT_NOT_FOUND);
        CHECK(rp_engine_export_lorebook(t.engine, id, "yaml", 4, &json) == RP_RESULT_INVALID);
    }
    before = head(t.engine);
    CHECK(rp_engine_import_lorebook(t.engine, (const uint8_t *)bad, strlen(bad), 0, 1000, &id) ==
          RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "not a JavaScript regular expression"));
    CHECK(rp_engine_import_lorebook(t.engine, (const uint8_t *)book, strlen(book), 999999, 1000,
                                    &id) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_import_lorebook(t.engine, (const uint8_t *)book, strlen(book), 0, 1000,
                                    NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(head(t.engine) == before);
    rp_engine_free(t.engine);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/examples/tavern.toml\n", argv[0]);
        return 2;
    }
    tavern_path = argv[1];
    test_a_card_comes_in_and_goes_out_unchanged();
    test_bad_cards_are_refused_and_change_nothing();
    test_a_lorebook_is_added_or_refused();
    return checks_done("test_cards");
}
