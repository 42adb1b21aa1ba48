// engine.hpp: the types of the C++ example engine: option maps, diagnostics and the two
// capabilities it offers (options, transfer), written from the documentation text of the GE
// memory options and the suite's JSON vocabulary (spec/schema/).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "json.hpp"

namespace engine {

// The three levels an option can be given at, narrowest last.
enum class Level { Global, Session, Graph };
const char *level_name(Level level);

// What a scenario may say about the context the options are used in.
enum class RunMode { Sync, Async };
enum class Shape { Static, Dynamic };

// A diagnostic, as the vocabulary's `Diagnostic`: clause, key, level, value, one subject field
// at most, and a message for people.
struct Diagnostic {
    std::string clause;
    std::optional<std::string> key;
    std::optional<Level> level;
    std::optional<std::string> value;
    // The subject: its field name (`index`, `item`, `pair`, `input`, `output`, `part`) and the
    // value already written as JSON. Empty name: no subject.
    std::string subject_field;
    std::string subject_json;
    std::string message;

    void write(std::string &out) const;
};

// Diagnostics, each kept once (the same diagnostic found twice is reported once).
struct Diagnostics {
    std::vector<Diagnostic> items;
    std::set<std::string> seen;
    void push(const Diagnostic &d);
    void extend(const Diagnostics &other);
    bool empty() const { return items.empty(); }
    void write(std::string &out) const;
};

// The option maps of a scenario, one per level (key -> raw value).
struct OptionMaps {
    std::map<std::string, std::string> at[3];
};

// Facts the option checks depend on; an absent fact skips the checks that need it.
struct Facts {
    std::optional<std::uint32_t> inputs;
    std::optional<std::uint32_t> outputs;
    std::optional<std::uint32_t> user_inputs;
    std::optional<Shape> shape;
    std::optional<RunMode> run_mode;
    std::optional<std::string> product;
};

// The options after resolution: what the options capability reports, and the numbers the
// transfer capability plans with.
struct Resolved {
    // key -> (canonical value, where it came from: default, global, session, graph)
    std::map<std::string, std::pair<std::string, std::string>> effective;
    // key -> the effective number of a switch, mode or size that was not rejected
    std::map<std::string, std::uint64_t> numbers;
    std::vector<std::string> rejected;
    std::vector<std::string> passthrough;
    Diagnostics errors;
    Diagnostics warnings;

    // The effective number of `key`, its default when absent or rejected.
    std::uint64_t number(const std::string &key) const;
};

// Thrown when a scenario does not have the shape the vocabulary gives it.
struct BadScenario : std::runtime_error {
    explicit BadScenario(const std::string &what) : std::runtime_error(what) {}
};

// Reading the vocabulary's pieces out of a scenario.
OptionMaps read_options(const json::Value *options);
std::uint32_t read_u32(const json::Value &v, const char *field);
std::uint64_t read_u64(const json::Value &v, const char *field);
const std::string &read_string(const json::Value &v, const char *field);
RunMode read_run_mode(const json::Value &scenario);
Shape read_shape(const json::Value *shape);
std::string read_product(const json::Value &scenario);

// The products the text lists for batch copy.
bool batch_copy_product(const std::string &product);

// Parses, validates and resolves the three maps.
Resolved resolve(const OptionMaps &maps, const Facts &facts);

// The two capabilities: each returns the observation's JSON.
std::string options_observation(const json::Value &scenario);
std::string transfer_observation(const json::Value &scenario);

} // namespace engine
