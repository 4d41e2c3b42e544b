// A scripted evening at the Crooked Lantern, played from C++ through the
// RAII wrapper rp.hpp: the same session as examples/c/tavern.c. Wren talks
// with Tobias in the corner booth (the first line in the poll form of the
// turn, the second with a generate lambda that streams its words), walks
// over to the bar (events appended to the world) and asks Mira about the
// Ferryman. Failures are rp::Error exceptions; the program prints the world
// as JSON at the end.
//
//   c++ -std=c++17 -Iinclude examples/cpp/tavern.cpp
//       target/debug/librp.a -lpthread -ldl -lm -o tavern-cpp
//   ./tavern-cpp examples/tavern.toml
//
// or against the shared library: -Ltarget/debug -lrp -Wl,-rpath,target/debug.
//
// Exits 0 when every line was answered, 1 on an error and 2 on a usage
// error.
//
// rp.hpp is included twice on purpose: its include guard must make the
// second inclusion a no-op.
#include "rp.hpp"
#include "rp.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

// The scripted "model": what each character says, in order.
class Script {
public:
    void add(std::uint64_t id, std::string name, std::vector<std::string> lines) {
        cast_[id] = Character{std::move(name), std::move(lines), 0};
    }

    const std::string &name_of(std::uint64_t id) const {
        static const std::string someone = "someone";
        const auto found = cast_.find(id);
        return found == cast_.end() ? someone : found->second.name;
    }

    // The next line of `id`; throws when the script has none.
    const std::string &next_line(std::uint64_t id) {
        const auto found = cast_.find(id);
        if (found == cast_.end() || found->second.next == found->second.lines.size()) {
            throw std::runtime_error("the script has no line for " + name_of(id));
        }
        return found->second.lines[found->second.next++];
    }

private:
    struct Character {
        std::string name;
        std::vector<std::string> lines;
        std::size_t next;
    };
    std::map<std::uint64_t, Character> cast_;
};

// The entity id after "speaker": in a request or step (its purpose comes
// before the messages).
std::uint64_t speaker_of(std::string_view json) {
    constexpr std::string_view key = "\"speaker\":";
    const std::size_t at = json.find(key);
    if (at == std::string_view::npos) {
        return 0;
    }
    return std::strtoull(std::string(json.substr(at + key.size(), 24)).c_str(), nullptr, 10);
}

// `text` as a JSON string, quotes included.
std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

std::string result_json(std::string_view line) {
    return "{\"text\": " + json_string(line) + ", \"model\": \"script\"}";
}

std::string input_json(std::uint64_t speaker, std::string_view text, long now) {
    return "{\"speaker\": " + std::to_string(speaker) + ", \"text\": " + json_string(text) +
           ", \"now\": " + std::to_string(now) + "}";
}

void expect_answer(std::string_view outcome, std::string_view line) {
    if (outcome.find("\"replies\":[]") != std::string_view::npos) {
        throw std::runtime_error("nobody answered \"" + std::string(line) + "\"");
    }
}

// A scene the characters left closes with a summary per witness: a request
// of purpose "summary", answered with this.
const std::string summary = "We talked in the booth while the storm beat on the windows.";

bool is_summary(std::string_view json) {
    return json.find("\"purpose\":{\"kind\":\"summary\"}") != std::string_view::npos;
}

// One line of Wren's in the poll form: the game asks what the turn needs
// and provides it, as it would across frames while its model works.
void say_polling(rp::Engine &engine, Script &script, std::uint64_t wren, std::string_view line,
                 long now) {
    std::cout << "Wren: " << line << "\n";
    rp::Turn turn = engine.begin_turn(input_json(wren, line, now));
    for (;;) {
        const std::string step = turn.step();
        if (step.find("\"step\":\"done\"") != std::string::npos) {
            break;
        }
        if (step.find("\"step\":\"generate\"") == std::string::npos) {
            throw std::runtime_error("the script cannot answer the step " + step);
        }
        if (is_summary(step)) {
            turn.provide(result_json(summary));
            continue;
        }
        const std::uint64_t speaker = speaker_of(step);
        const std::string &reply = script.next_line(speaker);
        std::cout << "  " << script.name_of(speaker) << ": " << reply << "\n";
        turn.provide(result_json(reply));
    }
    expect_answer(turn.finish(), line);
}

// One line of Wren's in the callback form: rp runs the turn and calls the
// lambdas; the generate lambda streams its line word by word.
void say_with_callbacks(rp::Engine &engine, Script &script, std::uint64_t wren,
                        std::string_view line, long now) {
    std::cout << "Wren: " << line << "\n";
    std::uint64_t streaming = 0;
    const std::string outcome = engine.run_turn(
        input_json(wren, line, now), {},
        [&](std::string_view request, rp::TokenSink &sink) {
            if (is_summary(request)) {
                return result_json(summary);
            }
            const std::string &reply = script.next_line(speaker_of(request));
            std::size_t start = 0;
            while (start < reply.size()) {
                const std::size_t space = reply.find(' ', start);
                const std::size_t end = space == std::string::npos ? reply.size() : space + 1;
                sink.emit(std::string_view(reply).substr(start, end - start));
                start = end;
            }
            std::cout << "\n";
            streaming = 0;
            return result_json(reply);
        },
        [&](std::uint64_t speaker, std::string_view piece) {
            if (speaker != streaming) {
                std::cout << "  " << script.name_of(speaker) << ": ";
                streaming = speaker;
            }
            std::cout << piece << std::flush;
        });
    expect_answer(outcome, line);
}

int play(const char *world_file) {
    rp::Engine engine = rp::Engine::in_memory("tavern");
    const std::size_t events = engine.load_world_file(world_file);
    std::cout << "loaded " << world_file << " (" << events << " events)\n\n";

    const std::uint64_t wren = engine.entity_id("wren");
    Script script;
    script.add(engine.entity_id("tobias"), "Tobias",
               {"Aye. Green ones, out past the reeds, where the old causeway sinks.",
                "Half a mile. Close enough to hear them hum, if lights can hum."});
    script.add(engine.entity_id("Mira Holt"), "Mira",
               {"Cider's a copper. The Ferryman is a story men tell when they owe me money."});

    // Errors are exceptions with the code and rp_last_error()'s message.
    try {
        engine.entity_id("the Ferryman");
    } catch (const rp::Error &error) {
        std::cout << "(no one here is called the Ferryman: code " << error.code() << ", "
                  << error.what() << ")\n\n";
    }

    say_polling(engine, script, wren, "Tobias, seen any lights on the marsh tonight?", 60000);
    say_with_callbacks(engine, script, wren, "Tobias, how far out were they?", 120000);

    // Wren walks over to the bar: events, validated and committed together.
    const std::uint64_t bar = engine.container_id("bar");
    const std::uint64_t seq = engine.append(
        "[{\"time_advanced\": {\"to\": 150000}},"
        " {\"activity_changed\": {\"entity\": " +
        std::to_string(wren) + ", \"activity\": {\"position\": {\"container\": " +
        std::to_string(bar) +
        ", \"slot\": \"stools\"}, \"posture\": \"leaning on the counter\"}}}]");
    std::cout << "\n(Wren walks over to the bar; the log is at event " << seq << ")\n\n";

    say_with_callbacks(engine, script, wren, "Mira, a cider please. Who is the Ferryman?", 180000);

    std::cout << "\nThe world now (rp::Engine::world):\n" << engine.world() << "\n";
    std::cout << "\nWren (rp::Engine::entity):\n" << engine.entity(wren) << "\n";
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s WORLD_FILE\n", argv[0]);
        return 2;
    }
    try {
        return play(argv[1]);
    } catch (const rp::Error &error) {
        std::fprintf(stderr, "error (code %d): %s\n", static_cast<int>(error.code()),
                     error.what());
    } catch (const std::exception &error) {
        std::fprintf(stderr, "error: %s\n", error.what());
    }
    return 1;
}
