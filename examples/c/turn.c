/*
 * A conversation in the corner booth of the tavern, driven from C with the
 * callback form of the turn (rp_engine_run_turn): Wren speaks, the engine
 * decides who answers and builds each answerer's prompt, and a scripted
 * "model" streams its replies token by token, printed as they come.
 *
 *   cc -std=c99 -Iinclude examples/c/turn.c \
 *      target/debug/librp.a -lpthread -ldl -lm -o turn
 *   ./turn examples/tavern.toml
 *
 * A real host calls its model in generate() (an HTTP request to a local
 * server, say) and calls rp_token_sink_emit for each token it receives.
 * Exits 0 when every turn ran, 1 on an error and 2 on a usage error.
 */
#include <stdio.h>
#include <string.h>

#include "rp.h"

/* What the callbacks share, passed to them as user_data. */
struct model {
    const char *const *replies; /* the scripted replies, in order */
    size_t next;
    uint64_t speaker;   /* whose line is being streamed, 0 before the first */
    char result[1024];  /* the result JSON; must outlive generate()'s return */
};

/* The engine's entities, for names in the transcript. */
static uint64_t tobias = 0;
static uint64_t mira = 0;

static const char *name_of(uint64_t id) {
    if (id == tobias) {
        return "Tobias Reed";
    }
    if (id == mira) {
        return "Mira Holt";
    }
    return "someone";
}

/* The token callback: prints each piece as it arrives. */
static void on_token(void *user_data, uint64_t speaker, const char *text, size_t text_len) {
    struct model *model = user_data;
    if (speaker != model->speaker) {
        printf("%s: ", name_of(speaker));
        model->speaker = speaker;
    }
    printf("%s", text);
    (void)text_len;
    fflush(stdout);
}

/* The "model": streams the next scripted reply word by word, then returns
 * it whole as the result JSON. (The replies need no JSON escaping.) */
static int generate(void *user_data, const char *request_json, size_t request_json_len,
                    rp_token_sink *sink, const char **out_result_json, size_t *out_result_len) {
    struct model *model = user_data;
    const char *reply = model->replies[model->next];
    const char *word = reply;

    /* The request holds the prompt the engine built: messages in the
     * OpenAI chat format, ready for a model server. */
    (void)request_json;
    (void)request_json_len;
    if (reply == NULL) {
        *out_result_json = "the script has no more lines";
        *out_result_len = strlen(*out_result_json);
        return RP_RESULT_GENERATION;
    }
    model->next++;
    model->speaker = 0;
    while (*word != '\0') {
        const char *space = strchr(word, ' ');
        size_t len = space == NULL ? strlen(word) : (size_t)(space - word) + 1;
        if (rp_token_sink_emit(sink, word, len) != RP_RESULT_OK) {
            return RP_RESULT_GENERATION;
        }
        word += len;
    }
    printf("\n");
    snprintf(model->result, sizeof model->result, "{\"text\": \"%s\", \"model\": \"script\"}",
             reply);
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

int main(int argc, char **argv) {
    static const char *const player_lines[] = {
        "Tobias, seen any lights on the marsh tonight?",
        "Tobias, how far out were they?",
    };
    static const char *const replies[] = {
        "Aye. Green ones, out past the reeds, where the old causeway sinks.",
        "Half a mile. Close enough to hear them hum, if lights can hum.",
        NULL,
    };
    struct model model = {replies, 0, 0, {0}};
    rp_engine *engine = NULL;
    size_t events = 0;
    uint64_t wren = 0;
    uint64_t seq = 0;
    char input[512];
    char *outcome = NULL;
    size_t i;
    int status = 1;

    if (argc != 2) {
        fprintf(stderr, "usage: %s WORLD_FILE\n", argv[0]);
        return 2;
    }
    if (failed(rp_engine_in_memory("example", 7, 0, &engine), "creating the world") ||
        failed(rp_engine_load_world_file(engine, argv[1], strlen(argv[1]), &events),
               "loading the world file") ||
        failed(rp_engine_entity_id(engine, "wren", 4, &wren), "finding Wren") ||
        failed(rp_engine_entity_id(engine, "tobias", 6, &tobias), "finding Tobias") ||
        failed(rp_engine_entity_id(engine, "mira", 4, &mira), "finding Mira")) {
        goto done;
    }
    printf("loaded %s (%zu events)\n\n", argv[1], events);

    for (i = 0; i < sizeof player_lines / sizeof player_lines[0]; i++) {
        /* A minute of game time between lines. */
        snprintf(input, sizeof input, "{\"speaker\": %llu, \"text\": \"%s\", \"now\": %lu}",
                 (unsigned long long)wren, player_lines[i], (unsigned long)(i + 1) * 60000UL);
        printf("Wren: %s\n", player_lines[i]);
        if (failed(rp_engine_run_turn(engine, input, strlen(input), NULL, 0, generate, on_token,
                                      &model, &outcome),
                   "running the turn")) {
            goto done;
        }
        /* The outcome JSON holds the decisions and replies (and, with
         * "outcome_prompts": true in the options, the prompts). */
        if (strstr(outcome, "\"replies\":[]") != NULL) {
            printf("(nobody answers)\n");
        }
        rp_string_free(outcome);
        outcome = NULL;
    }
    if (failed(rp_engine_head(engine, &seq), "reading the head")) {
        goto done;
    }
    printf("\n(the log holds %llu events)\n", (unsigned long long)seq);
    status = 0;

done:
    rp_string_free(outcome);
    rp_engine_free(engine);
    return status;
}
