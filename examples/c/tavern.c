/*
 * A scripted evening at the Crooked Lantern, played from C: Wren (the
 * player) talks with Tobias in the corner booth, walks over to the bar (an
 * event appended to the world) and asks Mira about the Ferryman. A scripted
 * generate callback answers for whoever the engine asks, streaming its
 * words through the token callback, which prints them as they come. At the
 * end the program prints the world as JSON.
 *
 *   cc -std=c99 -Iinclude examples/c/tavern.c \
 *      target/debug/librp.a -lpthread -ldl -lm -o tavern
 *   ./tavern examples/tavern.toml
 *
 * or against the shared library:
 *
 *   cc -std=c99 -Iinclude examples/c/tavern.c -Ltarget/debug -lrp \
 *      -Wl,-rpath,target/debug -o tavern
 *
 * A real host calls its model in generate() (an HTTP request to a model
 * server, say) and emits each token it receives. Exits 0 when every line
 * was answered, 1 on an error and 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"

/* The characters the script knows, and what each says, in order. */
struct character {
    const char *name;
    const char *const *lines;
    uint64_t id;
    size_t next;
};

/* What the callbacks share, passed to them as user_data. */
struct model {
    struct character *cast;
    size_t cast_size;
    uint64_t streaming; /* whose line is being printed, 0 between lines */
    char result[1024];  /* the result JSON: must outlive generate()'s return */
};

static struct character *character_of(struct model *model, uint64_t id) {
    size_t i;
    for (i = 0; i < model->cast_size; i++) {
        if (model->cast[i].id == id) {
            return &model->cast[i];
        }
    }
    return NULL;
}

/* The entity id after "speaker": in the request (its purpose comes first). */
static uint64_t speaker_of(const char *request_json) {
    const char *at = strstr(request_json, "\"speaker\":");
    return at == NULL ? 0 : strtoull(at + strlen("\"speaker\":"), NULL, 10);
}

/* Writes `text` as a JSON string (quotes included) into `out`. */
static void json_string(char *out, size_t size, const char *text) {
    size_t n = 0;
    if (size < 3) {
        return;
    }
    out[n++] = '"';
    for (; *text != '\0' && n + 3 < size; text++) {
        if (*text == '"' || *text == '\\') {
            out[n++] = '\\';
        }
        out[n++] = *text;
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* The token callback: prints each piece as it arrives. */
static void on_token(void *user_data, uint64_t speaker, const char *text, size_t text_len) {
    struct model *model = user_data;
    struct character *who = character_of(model, speaker);
    if (speaker != model->streaming) {
        printf("  %s: ", who == NULL ? "someone" : who->name);
        model->streaming = speaker;
    }
    fwrite(text, 1, text_len, stdout);
    fflush(stdout);
}

/* The "model"'s summary of a scene that closes (when Wren leaves the booth). */
#define SUMMARY_RESULT \
    "{\"text\": \"We talked in the booth while the storm beat on the windows.\", " \
    "\"model\": \"script\"}"

/* The "model": the next scripted line of whoever is asked, streamed word by
 * word, then returned whole as the result JSON; a scene's summary when one
 * closes. */
static int generate(void *user_data, const char *request_json, size_t request_json_len,
                    rp_token_sink *sink, const char **out_result_json, size_t *out_result_len) {
    struct model *model = user_data;
    struct character *who = character_of(model, speaker_of(request_json));
    const char *line;
    const char *word;
    char text[900];

    (void)request_json_len;
    /* A scene the characters left closes with a summary per witness. */
    if (strstr(request_json, "\"purpose\":{\"kind\":\"summary\"}") != NULL) {
        *out_result_json = SUMMARY_RESULT;
        *out_result_len = strlen(SUMMARY_RESULT);
        return RP_RESULT_OK;
    }
    if (who == NULL || who->lines[who->next] == NULL) {
        *out_result_json = "the script has no line for this character";
        *out_result_len = strlen(*out_result_json);
        return RP_RESULT_GENERATION;
    }
    line = who->lines[who->next++];
    for (word = line; *word != '\0';) {
        const char *space = strchr(word, ' ');
        size_t len = space == NULL ? strlen(word) : (size_t)(space - word) + 1;
        if (rp_token_sink_emit(sink, word, len) != RP_RESULT_OK) {
            return RP_RESULT_GENERATION;
        }
        word += len;
    }
    printf("\n");
    model->streaming = 0;
    json_string(text, sizeof text, line);
    snprintf(model->result, sizeof model->result, "{\"text\": %s, \"model\": \"script\"}", text);
    *out_result_json = model->result;
    *out_result_len = strlen(model->result);
    return RP_RESULT_OK;
}

/* Reports a failed call and says whether it failed. */
static int failed(rp_result result, const char *what) {
    if (result == RP_RESULT_OK) {
        return 0;
    }
    fprintf(stderr, "error: %s (code %d): %s\n", what, (int)result, rp_last_error());
    return 1;
}

/* Wren says `line` at `now`; returns 0 when someone answered. */
static int wren_says(rp_engine *engine, struct model *model, uint64_t wren, const char *line,
                     long now) {
    char text[512];
    char input[768];
    char *outcome = NULL;
    int answered;

    json_string(text, sizeof text, line);
    snprintf(input, sizeof input, "{\"speaker\": %llu, \"text\": %s, \"now\": %ld}",
             (unsigned long long)wren, text, now);
    printf("Wren: %s\n", line);
    if (failed(rp_engine_run_turn(engine, input, strlen(input), NULL, 0, generate, on_token,
                                  model, &outcome),
               "running the turn")) {
        return 1;
    }
    /* The outcome JSON holds the decisions and the replies (and, with
     * "outcome_prompts": true in the options, the prompts). */
    answered = strstr(outcome, "\"replies\":[]") == NULL;
    rp_string_free(outcome);
    if (!answered) {
        fprintf(stderr, "error: nobody answered \"%s\"\n", line);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    static const char *const tobias_lines[] = {
        "Aye. Green ones, out past the reeds, where the old causeway sinks.",
        "Half a mile. Close enough to hear them hum, if lights can hum.",
        NULL,
    };
    static const char *const mira_lines[] = {
        "Cider's a copper. The Ferryman is a story men tell when they owe me money.",
        NULL,
    };
    struct character cast[] = {
        {"Tobias", tobias_lines, 0, 0},
        {"Mira", mira_lines, 0, 0},
    };
    struct model model;
    rp_engine *engine = NULL;
    size_t events = 0;
    uint64_t wren = 0, bar = 0, seq = 0;
    char walk[512];
    char *json = NULL;
    int status = 1;

    if (argc != 2) {
        fprintf(stderr, "usage: %s WORLD_FILE\n", argv[0]);
        return 2;
    }
    memset(&model, 0, sizeof model);
    model.cast = cast;
    model.cast_size = sizeof cast / sizeof cast[0];

    if (failed(rp_engine_in_memory("tavern", 6, 0, &engine), "creating the world") ||
        failed(rp_engine_load_world_file(engine, argv[1], strlen(argv[1]), &events),
               "loading the world file") ||
        failed(rp_engine_entity_id(engine, "wren", 4, &wren), "finding Wren") ||
        failed(rp_engine_entity_id(engine, "tobias", 6, &cast[0].id), "finding Tobias") ||
        failed(rp_engine_entity_id(engine, "mira", 4, &cast[1].id), "finding Mira") ||
        failed(rp_engine_container_id(engine, "bar", 3, &bar), "finding the bar")) {
        goto done;
    }
    printf("loaded %s (%zu events)\n\n", argv[1], events);

    /* In the corner booth: only Tobias hears Wren. */
    if (wren_says(engine, &model, wren, "Tobias, seen any lights on the marsh tonight?", 60000) ||
        wren_says(engine, &model, wren, "Tobias, how far out were they?", 120000)) {
        goto done;
    }

    /* Wren walks over to the bar: the world changes by events, in one
     * transaction, validated first (a full stool would be refused). */
    snprintf(walk, sizeof walk,
             "[{\"time_advanced\": {\"to\": 150000}},"
             " {\"activity_changed\": {\"entity\": %llu, \"activity\": {"
             "\"position\": {\"container\": %llu, \"slot\": \"stools\"},"
             " \"posture\": \"leaning on the counter\"}}}]",
             (unsigned long long)wren, (unsigned long long)bar);
    if (failed(rp_engine_append(engine, walk, strlen(walk), &seq), "walking to the bar")) {
        goto done;
    }
    printf("\n(Wren walks over to the bar; the log is at event %llu)\n\n",
           (unsigned long long)seq);

    /* At the bar: Mira answers when she is named. */
    if (wren_says(engine, &model, wren, "Mira, a cider please. Who is the Ferryman?", 180000)) {
        goto done;
    }

    /* The world as it stands: entities, containers, edges, and where the
     * history is. */
    if (failed(rp_engine_world(engine, &json), "reading the world")) {
        goto done;
    }
    printf("\nThe world now (rp_engine_world):\n%s\n", json);
    rp_string_free(json);
    json = NULL;
    if (failed(rp_engine_entity(engine, wren, &json), "reading Wren")) {
        goto done;
    }
    printf("\nWren (rp_engine_entity):\n%s\n", json);
    status = 0;

done:
    rp_string_free(json);
    if (engine != NULL && failed(rp_engine_free(engine), "closing the world")) {
        status = 1;
    }
    return status;
}
