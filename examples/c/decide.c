/*
 * Loads a world file into an in-memory world and asks whether a character
 * responds to a message: response control from C.
 *
 *   cc -std=c99 -Iinclude examples/c/decide.c \
 *      target/debug/librp.a -lpthread -ldl -lm -o decide
 *   ./decide examples/tavern.toml "Mira Holt" "Mira, another cider?"
 *
 * Prints the decision as JSON, then why. Exits 0 when the character
 * responds, 3 when it stays silent (or should be asked again later), 1 on an
 * error and 2 on a usage error.
 */
#include <stdio.h>
#include <string.h>

#include "rp.h"

/* Reports a failed call and says whether it failed. */
static int failed(rp_result result, const char *what) {
    if (result == RP_RESULT_OK) {
        return 0;
    }
    fprintf(stderr, "error: %s (code %d): %s\n", what, (int)result, rp_last_error());
    return 1;
}

int main(int argc, char **argv) {
    rp_engine *engine = NULL;
    size_t events = 0;
    uint64_t character = 0;
    char message[4096];
    char *decision = NULL;
    char *explanation = NULL;
    int status = 1;

    if (argc != 4) {
        fprintf(stderr, "usage: %s WORLD_FILE CHARACTER MESSAGE\n", argv[0]);
        return 2;
    }

    if (failed(rp_engine_in_memory("example", 7, 0, &engine), "creating the world") ||
        failed(rp_engine_load_world_file(engine, argv[1], strlen(argv[1]), &events),
               "loading the world file") ||
        failed(rp_engine_entity_id(engine, argv[2], strlen(argv[2]), &character),
               "finding the character")) {
        goto done;
    }
    printf("loaded %s (%zu events)\n", argv[1], events);

    /* The message is JSON. A real host builds it with its JSON library;
     * this example refuses text it would have to escape. */
    if (strchr(argv[3], '"') != NULL || strchr(argv[3], '\\') != NULL) {
        fprintf(stderr, "error: this example does not escape quotes or backslashes\n");
        goto done;
    }
    snprintf(message, sizeof message, "{\"content\":\"%s\",\"author\":\"example\"}", argv[3]);

    if (failed(rp_engine_decide(engine, character, message, strlen(message), &decision),
               "deciding")) {
        goto done;
    }
    printf("decision: %s\n", decision);
    if (failed(rp_decision_explain(decision, strlen(decision), &explanation), "explaining")) {
        goto done;
    }
    printf("why:\n%s", explanation);
    status = strstr(decision, "\"respond\":true") != NULL ? 0 : 3;

done:
    rp_string_free(explanation);
    rp_string_free(decision);
    rp_engine_free(engine);
    return status;
}
