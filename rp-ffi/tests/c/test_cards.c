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
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A PNG card's image is kept as a file of its card, listed, fetched, carried out in a CHARX
 * and in again; the host sets an image (an invalid one is refused, changing nothing). */
static void test_a_cards_files_and_image(void) {
    struct tavern t;
    char *json = NULL;
    uint8_t *bytes = NULL, *file = NULL, *charx = NULL;
    size_t len = 0, file_len = 0, charx_len = 0;
    uint64_t tobias = 0, again = 0, before = 0;
    rp_engine *other = NULL, *third = NULL;
    const char *main_png = "assets/icon/image/main.png";

    CHECK(open_tavern(&t));
    if (t.engine == NULL) {
        return;
    }
    /* No card, no files. */
    CHECK(rp_engine_card_assets(t.engine, t.tobias, &json) == RP_RESULT_OK);
    CHECK(json != NULL && strcmp(json, "[]") == 0);
    rp_string_free(json);
    /* Tobias out as a PNG and into another engine: the PNG's image is kept, its card out. */
    CHECK(rp_engine_export_card(t.engine, t.tobias, "png", 3, &bytes, &len) == RP_RESULT_OK);
    CHECK(rp_engine_in_memory("other", 5, 0, &other) == RP_RESULT_OK);
    CHECK(import(other, bytes, len, &json) == RP_RESULT_OK);
    rp_string_free(json);
    CHECK(rp_engine_entity_id(other, "Tobias Reed", 11, &tobias) == RP_RESULT_OK);
    CHECK(rp_engine_card_assets(other, tobias, &json) == RP_RESULT_OK);
    CHECK(contains(json, "[{\"path\":\"assets/icon/image/main.png\",\"size\":"));
    rp_string_free(json);
    CHECK(rp_engine_card_asset(other, tobias, main_png, strlen(main_png), &file, &file_len) ==
          RP_RESULT_OK);
    CHECK(file_len > 8 && file_len < len && memcmp(file, "\x89PNG", 4) == 0);
    CHECK(!has(file, file_len, "chara") && !has(file, file_len, "ccv3"));
    CHECK(rp_engine_card_asset(other, tobias, "nope.png", 8, &file, &file_len) ==
          RP_RESULT_NOT_FOUND);
    /* Out as a CHARX, in again: the same file. */
    CHECK(rp_engine_export_card(other, tobias, "charx", 5, &charx, &charx_len) == RP_RESULT_OK);
    CHECK(rp_engine_in_memory("third", 5, 0, &third) == RP_RESULT_OK);
    CHECK(import(third, charx, charx_len, &json) == RP_RESULT_OK);
    rp_string_free(json);
    CHECK(rp_engine_entity_id(third, "Tobias Reed", 11, &again) == RP_RESULT_OK);
    {
        uint8_t *back = NULL;
        size_t back_len = 0;
        CHECK(rp_engine_card_asset(third, again, main_png, strlen(main_png), &back, &back_len) ==
              RP_RESULT_OK);
        CHECK(back_len == file_len && memcmp(back, file, file_len) == 0);
        rp_bytes_free(back, back_len);
    }
    rp_bytes_free(charx, charx_len);

    /* The host's image, on an entity of no card; a broken one refused. */
    CHECK(rp_engine_set_card_image(t.engine, t.wren, file, file_len, 2000) == RP_RESULT_OK);
    CHECK(rp_engine_card_assets(t.engine, t.wren, &json) == RP_RESULT_OK);
    CHECK(contains(json, main_png));
    rp_string_free(json);
    before = head(t.engine);
    file[file_len - 6] ^= 0x01;
    CHECK(rp_engine_set_card_image(t.engine, t.wren, file, file_len, 2000) == RP_RESULT_INVALID);
    CHECK(contains(rp_last_error(), "CRC"));
    CHECK(rp_engine_set_card_image(t.engine, t.wren, (const uint8_t *)"GIF89a", 6, 2000) ==
          RP_RESULT_INVALID);
    CHECK(rp_engine_set_card_image(t.engine, 999999, bytes, len, 2000) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_set_card_image(t.engine, t.wren, NULL, 4, 2000) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_card_assets(t.engine, 999999, &json) == RP_RESULT_NOT_FOUND);
    CHECK(rp_engine_card_assets(t.engine, t.wren, NULL) == RP_RESULT_NULL_ARGUMENT);
    CHECK(rp_engine_card_asset(t.engine, t.wren, NULL, 3, &file, &file_len) ==
          RP_RESULT_NULL_ARGUMENT);
    CHECK(head(t.engine) == before);
    rp_bytes_free(file, file_len);
    rp_bytes_free(bytes, len);
    rp_engine_free(third);
    rp_engine_free(other);
    rp_engine_free(t.engine);
}

/* Writes `len` bytes to `path`; 1 on success. */
static int write_file(const char *path, const void *bytes, size_t len) {
    FILE *f = fopen(path, "wb");
    int ok = f != NULL && fwrite(bytes, 1, len, f) == len;
    if (f != NULL && fclose(f) != 0) {
        ok = 0;
    }
    return ok;
}

/* A world file's [[cards]]: the card read beside the world file, its character placed;
 * a missing card is an error at its line, nothing applied. */
static void test_a_world_files_cards(void) {
    const char *tmp = getenv("TMPDIR");
    char dir[4096], card[4200], world[4200];
    const char *text = "[world]\nname = \"Inn\"\n"
                       "[[containers]]\nid = \"booth\"\nname = \"the booth\"\n"
                       "[[cards]]\nfile = \"aria.json\"\nid = \"aria\"\ncontainer = \"booth\"\n";
    const char *missing = "[world]\nname = \"Inn\"\n"
                          "[[cards]]\nfile = \"nobody.json\"\nid = \"nobody\"\n";
    rp_engine *engine = NULL;
    size_t events = 0;
    uint64_t aria = 0, before = 0;
    char *json = NULL;

    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    snprintf(dir, sizeof dir, "%s/rp-test-cards-XXXXXX", tmp);
    CHECK(mkdtemp(dir) != NULL);
    snprintf(card, sizeof card, "%s/aria.json", dir);
    snprintf(world, sizeof world, "%s/inn.toml", dir);
    CHECK(write_file(card, CARD, strlen(CARD)));
    CHECK(write_file(world, text, strlen(text)));

    CHECK(rp_engine_in_memory("test", 4, 0, &engine) == RP_RESULT_OK);
    CHECK(rp_engine_load_world_file(engine, world, strlen(world), &events) == RP_RESULT_OK);
    CHECK(rp_engine_entity_id(engine, "aria", 4, &aria) == RP_RESULT_OK);
    CHECK(rp_engine_entity(engine, aria, &json) == RP_RESULT_OK);
    CHECK(contains(json, "\"name\":\"Aria Vell\""));
    CHECK(contains(json, "\"position\":{\"container\":"));
    rp_string_free(json);
    CHECK(rp_engine_export_world_file(engine, &json) == RP_RESULT_OK);
    CHECK(contains(json, "[[cards]]\nfile = \"aria.json\"\nid = \"aria\"\n"));
    rp_string_free(json);

    /* Text under the world file's name reads cards beside it; a missing one is an error. */
    before = head(engine);
    CHECK(rp_engine_apply_world_file(engine, world, strlen(world), missing, strlen(missing),
                                     &events) == RP_RESULT_WORLD_FILE);
    CHECK(contains(rp_last_error(), ":4:8: cards.file: nobody.json: cannot read the card"));
    CHECK(head(engine) == before);
    rp_engine_free(engine);
    remove(card);
    remove(world);
    rmdir(dir);
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
    test_a_cards_files_and_image();
    test_a_world_files_cards();
    return checks_done("test_cards");
}
