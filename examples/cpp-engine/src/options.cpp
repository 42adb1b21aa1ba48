// options.cpp: the options layer of the C++ example engine. It parses, validates and resolves
// the twelve memory options over the global, session and graph levels: a setting at a level
// where the option does not take effect is ignored with a warning; an invalid setting rejects
// the option; otherwise the narrowest level that sets it wins and the default applies when none
// does. Keys outside the twelve are passed through.
//
// GE_CONFORMANCE_PLANTED_BUG (a build macro) plants one integer-width bug: an index of an index
// list is narrowed to 32 bits before it is compared with the graph's count, so 4294967296 is
// taken for index 0.
#include <algorithm>
#include <set>

#include "engine.hpp"

namespace engine {

const char *level_name(Level level) {
    switch (level) {
    case Level::Global: return "global";
    case Level::Session: return "session";
    case Level::Graph: return "graph";
    }
    return "graph";
}

void Diagnostic::write(std::string &out) const {
    out += "{\"clause\":";
    json::quote(out, clause);
    if (key) {
        out += ",\"key\":";
        json::quote(out, *key);
    }
    if (level) {
        out += ",\"level\":\"";
        out += level_name(*level);
        out += '"';
    }
    if (value) {
        out += ",\"value\":";
        json::quote(out, *value);
    }
    if (!subject_field.empty()) {
        out += ",\"subject\":{";
        json::quote(out, subject_field);
        out += ':';
        out += subject_json;
        out += '}';
    }
    out += ",\"message\":";
    json::quote(out, message);
    out += '}';
}

void Diagnostics::push(const Diagnostic &d) {
    std::string text;
    d.write(text);
    if (!seen.insert(std::move(text)).second) return;
    items.push_back(d);
}

void Diagnostics::extend(const Diagnostics &other) {
    for (const auto &d : other.items) push(d);
}

void Diagnostics::write(std::string &out) const {
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        items[i].write(out);
    }
    out += ']';
}

namespace {

// The shape of an option's values.
enum class Kind { Choice, UpTo, IndexList, PairList, Path };

struct OptionSpec {
    const char *key;
    const char *prefix;
    bool levels[3]; // global, session, graph
    const char *default_value;
    Kind kind;
    std::vector<std::uint64_t> choices; // Choice
    std::uint64_t max;                  // UpTo
};

constexpr std::uint64_t kFusionMax = 33554432; // 32 MB

const std::vector<OptionSpec> &specs() {
    static const std::vector<OptionSpec> table = {
        {"ge.exec.atomicCleanPolicy", "ACP", {false, true, false}, "0", Kind::Choice, {0, 1}, 0},
        {"ge.exec.disableReuseMemory", "DRM", {true, true, true}, "0", Kind::Choice, {0, 1}, 0},
        {"ge.exec.input_fusion_size", "IFS", {true, true, true}, "131072", Kind::UpTo, {},
         kFusionMax},
        {"ge.exec.inputReuseMemIndexes", "IRM", {false, false, true}, "", Kind::IndexList, {}, 0},
        {"ge.exec.reuseZeroCopyMemory", "RZC", {true, true, true}, "0", Kind::Choice, {0, 1}, 0},
        {"ge.exec.staticMemoryPolicy", "SMP", {true, true, false}, "0", Kind::Choice,
         {0, 2, 3, 4}, 0},
        {"ge.exec.outputReuseInputMemIndexes", "ORI", {false, false, true}, "", Kind::PairList,
         {}, 0},
        {"ge.exec.outputReuseMemIndexes", "ORM", {false, false, true}, "", Kind::IndexList, {}, 0},
        {"ge.externalWeight", "EXW", {true, true, false}, "0", Kind::Choice, {0, 1, 2}, 0},
        {"ge.externalWeightDir", "EWD", {true, true, false}, "", Kind::Path, {}, 0},
        {"ge.inputBatchCpy", "IBC", {true, true, true}, "0", Kind::Choice, {0, 1}, 0},
        {"ge.featureBaseRefreshable", "FBR", {true, true, true}, "0", Kind::Choice, {0, 1}, 0},
    };
    return table;
}

const OptionSpec *find_spec(const std::string &key) {
    for (const auto &s : specs())
        if (key == s.key) return &s;
    return nullptr;
}

// Digits only, at least one, no leading zero unless the number is 0 itself.
bool plain_decimal(const std::string &text) {
    if (text.empty()) return false;
    for (char c : text)
        if (c < '0' || c > '9') return false;
    return text == "0" || text[0] != '0';
}

// The value of plain decimal digits, nullopt past 64 bits.
std::optional<std::uint64_t> to_u64(const std::string &digits) {
    std::uint64_t n = 0;
    for (char c : digits) {
        auto d = static_cast<std::uint64_t>(c - '0');
        if (n > (UINT64_MAX - d) / 10) return std::nullopt;
        n = n * 10 + d;
    }
    return n;
}

std::vector<std::string> split(const std::string &text, char sep) {
    std::vector<std::string> parts;
    std::string::size_type start = 0;
    for (;;) {
        auto at = text.find(sep, start);
        if (at == std::string::npos) {
            parts.push_back(text.substr(start));
            return parts;
        }
        parts.push_back(text.substr(start, at - start));
        start = at + 1;
    }
}

std::string escaped(const std::string &text) {
    std::string out;
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || c == '\\' || c == '`') {
            static const char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 0xF];
        } else {
            out += c;
        }
    }
    return out;
}

std::string json_string(const std::string &text) {
    std::string out;
    json::quote(out, text);
    return out;
}

// One item of an index list: a number, or the digits of one too large for 64 bits.
struct Index {
    bool big = false;
    std::uint64_t n = 0;
    std::string digits;

    bool operator<(const Index &o) const {
        if (big != o.big) return !big;
        if (!big) return n < o.n;
        if (digits.size() != o.digits.size()) return digits.size() < o.digits.size();
        return digits < o.digits;
    }

    // True when the index names one of `count` items.
    bool below(std::uint32_t count) const {
        if (big) return false;
#ifdef GE_CONFORMANCE_PLANTED_BUG
        // The planted bug: the index is narrowed to 32 bits before the comparison.
        return static_cast<std::uint32_t>(n) < count;
#else
        return n < count;
#endif
    }

    std::string spelling() const { return big ? digits : std::to_string(n); }

    void subject(Diagnostic &d) const {
        if (big) {
            d.subject_field = "item";
            d.subject_json = json_string(digits);
        } else {
            d.subject_field = "index";
            d.subject_json = std::to_string(n);
        }
    }
};

// One setting being checked.
struct Setting {
    const OptionSpec &spec;
    Level level;
    const std::string &raw;

    Diagnostic diag(const std::string &clause, const std::string &message) const {
        Diagnostic d;
        d.clause = clause;
        d.key = spec.key;
        d.level = level;
        d.value = raw;
        d.message = message;
        return d;
    }

    std::string clause(const char *number) const { return std::string(spec.prefix) + "-" + number; }
};

// A parsed setting: its canonical value and number (switches, modes, sizes), or errors.
struct Parsed {
    bool ok = true;
    std::string canonical;
    std::uint64_t number = 0;
    Diagnostics warnings;
    Diagnostics errors;
};

Parsed parse_number(const Setting &s) {
    Parsed p;
    if (!plain_decimal(s.raw)) {
        p.ok = false;
        p.errors.push(s.diag("OPT-003", "`" + escaped(s.raw) +
                                            "` is not a number in plain decimal (digits only, "
                                            "no sign, space or leading zero)"));
        return p;
    }
    auto n = to_u64(s.raw);
    bool allowed = false;
    if (n) {
        if (s.spec.kind == Kind::UpTo) {
            allowed = *n <= s.spec.max;
        } else {
            allowed = std::find(s.spec.choices.begin(), s.spec.choices.end(), *n) !=
                      s.spec.choices.end();
        }
    }
    if (!allowed) {
        p.ok = false;
        p.errors.push(s.diag(s.clause("001"),
                             s.raw + " is not an allowed value of " + s.spec.key));
        return p;
    }
    p.number = *n;
    p.canonical = std::to_string(*n);
    return p;
}

Parsed parse_indexes(const Setting &s, std::uint32_t count) {
    Parsed p;
    if (s.raw.empty()) return p;
    std::set<Index> seen;
    for (const auto &item : split(s.raw, ',')) {
        if (!plain_decimal(item)) {
            Diagnostic d = s.diag(s.clause("004"), "index-list item `" + escaped(item) +
                                                       "` is not an index in plain decimal");
            d.subject_field = "item";
            d.subject_json = json_string(item);
            p.errors.push(d);
            continue;
        }
        Index index;
        if (auto n = to_u64(item)) {
            index.n = *n;
        } else {
            index.big = true;
            index.digits = item;
        }
        if (seen.count(index)) {
            Diagnostic d = s.diag(s.clause("004"), "index " + item + " is listed more than once");
            index.subject(d);
            p.errors.push(d);
        } else {
            seen.insert(index);
        }
    }
    if (!p.errors.empty()) {
        p.ok = false;
        return p;
    }
    std::string canonical;
    for (const auto &index : seen) {
        if (index.below(count)) {
            if (!canonical.empty()) canonical += ',';
            canonical += index.spelling();
            continue;
        }
        Diagnostic d = s.diag(s.clause("003"), "index " + index.spelling() +
                                                   " is not below the count " +
                                                   std::to_string(count) +
                                                   "; it does not take effect");
        index.subject(d);
        p.warnings.push(d);
    }
    p.canonical = canonical;
    return p;
}

Parsed parse_pairs(const Setting &s, std::uint32_t inputs, std::uint32_t outputs) {
    Parsed p;
    if (s.raw.empty()) return p;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    auto malformed = [&](const std::string &segment) {
        Diagnostic d = s.diag(s.clause("006"), "pair `" + escaped(segment) +
                                                   "` is not `input,output` in plain decimal");
        d.subject_field = "pair";
        d.subject_json = json_string(segment);
        p.errors.push(d);
    };
    for (const auto &segment : split(s.raw, '|')) {
        auto halves = split(segment, ',');
        if (halves.size() != 2 || !plain_decimal(halves[0]) || !plain_decimal(halves[1])) {
            malformed(segment);
            continue;
        }
        auto input = to_u64(halves[0]);
        auto output = to_u64(halves[1]);
        if (input && output && *input < inputs && *output < outputs) {
            pairs.emplace_back(static_cast<std::uint32_t>(*input),
                               static_cast<std::uint32_t>(*output));
            continue;
        }
        Diagnostic d = s.diag(s.clause("003"), "pair `" + escaped(segment) +
                                                   "` names an index out of range (" +
                                                   std::to_string(inputs) + " input(s), " +
                                                   std::to_string(outputs) + " output(s))");
        d.subject_field = "pair";
        d.subject_json = json_string(segment);
        p.errors.push(d);
    }
    std::map<std::uint32_t, int> by_input, by_output;
    for (const auto &pair : pairs) {
        ++by_input[pair.first];
        ++by_output[pair.second];
    }
    for (const auto &[output, n] : by_output) {
        if (n < 2) continue;
        Diagnostic d = s.diag(s.clause("004"), "output " + std::to_string(output) +
                                                   " is named in " + std::to_string(n) + " pairs");
        d.subject_field = "output";
        d.subject_json = std::to_string(output);
        p.errors.push(d);
    }
    for (const auto &[input, n] : by_input) {
        if (n < 2) continue;
        Diagnostic d = s.diag(s.clause("005"), "input " + std::to_string(input) +
                                                   " is named in " + std::to_string(n) + " pairs");
        d.subject_field = "input";
        d.subject_json = std::to_string(input);
        p.errors.push(d);
    }
    if (!p.errors.empty()) {
        p.ok = false;
        return p;
    }
    std::sort(pairs.begin(), pairs.end());
    std::string canonical;
    for (const auto &pair : pairs) {
        if (!canonical.empty()) canonical += '|';
        canonical += std::to_string(pair.first) + "," + std::to_string(pair.second);
    }
    p.canonical = canonical;
    return p;
}

Parsed parse(const Setting &s, const Facts &facts) {
    switch (s.spec.kind) {
    case Kind::Choice:
    case Kind::UpTo: return parse_number(s);
    case Kind::IndexList: {
        bool inputs = std::string(s.spec.key) == "ge.exec.inputReuseMemIndexes";
        auto count = inputs ? facts.inputs : facts.outputs;
        return parse_indexes(s, count.value_or(UINT32_MAX));
    }
    case Kind::PairList:
        return parse_pairs(s, facts.inputs.value_or(UINT32_MAX),
                           facts.outputs.value_or(UINT32_MAX));
    case Kind::Path: {
        Parsed p;
        if (s.raw.find('\0') != std::string::npos) {
            p.ok = false;
            p.errors.push(s.diag(s.clause("004"), "the directory path holds a NUL byte"));
            return p;
        }
        p.canonical = s.raw;
        return p;
    }
    }
    return Parsed{};
}

const char *kBatchCopyProducts[] = {
    "ascend-950pr",       "ascend-950dt",       "atlas-a3-training",
    "atlas-a3-inference", "atlas-a2-training", "atlas-a2-inference",
};

} // namespace

bool batch_copy_product(const std::string &product) {
    for (const char *p : kBatchCopyProducts)
        if (product == p) return true;
    return false;
}

std::uint64_t Resolved::number(const std::string &key) const {
    auto found = numbers.find(key);
    if (found != numbers.end()) return found->second;
    const OptionSpec *spec = find_spec(key);
    if (!spec) return 0;
    return to_u64(spec->default_value).value_or(0);
}

Resolved resolve(const OptionMaps &maps, const Facts &facts) {
    Resolved r;
    const Level levels[3] = {Level::Global, Level::Session, Level::Graph};
    for (const auto &spec : specs()) {
        bool rejected = false;
        bool won = false;
        Parsed winner;
        Level winner_level = Level::Global;
        for (Level level : levels) {
            const auto &map = maps.at[static_cast<int>(level)];
            auto found = map.find(spec.key);
            if (found == map.end()) continue;
            Setting setting{spec, level, found->second};
            if (!spec.levels[static_cast<int>(level)]) {
                r.warnings.push(setting.diag("OPT-002", std::string(spec.key) +
                                                            " does not take effect at the " +
                                                            level_name(level) +
                                                            " level; ignored"));
                continue;
            }
            Parsed parsed = parse(setting, facts);
            if (!parsed.ok) {
                r.errors.extend(parsed.errors);
                rejected = true;
                continue;
            }
            r.warnings.extend(parsed.warnings);
            if (std::string(spec.key) == "ge.inputBatchCpy" && level != Level::Session) {
                r.warnings.push(setting.diag("IBC-006",
                                             std::string(spec.key) +
                                                 " is best set at the session level, not at the " +
                                                 level_name(level) + " level"));
            }
            winner = parsed;
            winner_level = level;
            won = true;
        }
        if (rejected) {
            r.rejected.push_back(spec.key);
            continue;
        }
        if (won) {
            r.effective[spec.key] = {winner.canonical, level_name(winner_level)};
            if (spec.kind == Kind::Choice || spec.kind == Kind::UpTo)
                r.numbers[spec.key] = winner.number;
        } else {
            r.effective[spec.key] = {spec.default_value, "default"};
            if (spec.kind == Kind::Choice || spec.kind == Kind::UpTo)
                r.numbers[spec.key] = to_u64(spec.default_value).value_or(0);
        }
    }
    std::set<std::string> passthrough;
    for (const auto &map : maps.at)
        for (const auto &entry : map)
            if (!find_spec(entry.first)) passthrough.insert(entry.first);
    r.passthrough.assign(passthrough.begin(), passthrough.end());

    // Warnings for an explicitly set value that asks for something a condition rules out.
    // A number asks for nothing when it is 0, a path when it is empty.
    auto asked = [&](const std::string &key) -> std::optional<std::pair<Level, std::string>> {
        auto found = r.effective.find(key);
        if (found == r.effective.end() || found->second.second == "default") return std::nullopt;
        const std::string &value = found->second.first;
        bool number = r.numbers.count(key) > 0;
        if ((number && value == "0") || value.empty()) return std::nullopt;
        const std::string &from = found->second.second;
        Level level = from == "global" ? Level::Global
                      : from == "session" ? Level::Session
                                          : Level::Graph;
        return std::make_pair(level, value);
    };
    auto warn = [&](const std::string &key, const std::pair<Level, std::string> &at,
                    const char *clause, const std::string &why) {
        Diagnostic d;
        d.clause = clause;
        d.key = key;
        d.level = at.first;
        d.value = at.second;
        d.message = key + " = " + at.second + " has no effect: " + why;
        r.warnings.push(d);
    };
    bool sync = facts.run_mode == RunMode::Sync;
    bool dynamic = facts.shape == Shape::Dynamic;
    if (auto at = asked("ge.exec.input_fusion_size")) {
        if (sync)
            warn("ge.exec.input_fusion_size", *at, "IFS-003",
                 "input fusion works only in the asynchronous run (RunGraphAsync)");
        if (dynamic)
            warn("ge.exec.input_fusion_size", *at, "IFS-004",
                 "input fusion works only for static graphs");
    }
    if (auto at = asked("ge.inputBatchCpy")) {
        if (facts.user_inputs && *facts.user_inputs <= 1)
            warn("ge.inputBatchCpy", *at, "IBC-003",
                 "batch copy takes effect only with more than one user input");
        if (facts.product && !batch_copy_product(*facts.product))
            warn("ge.inputBatchCpy", *at, "IBC-004", "batch copy is not available on this product");
        if (sync)
            warn("ge.inputBatchCpy", *at, "IBC-005",
                 "batch copy is enabled only by the asynchronous run (RunGraphAsync)");
    }
    if (auto at = asked("ge.featureBaseRefreshable")) {
        if (dynamic)
            warn("ge.featureBaseRefreshable", *at, "FBR-003",
                 "a refreshable feature base applies only to static-shape graphs");
    }
    if (auto at = asked("ge.externalWeightDir")) {
        auto weight = r.effective.find("ge.externalWeight");
        if (weight != r.effective.end() && weight->second.first == "0")
            warn("ge.externalWeightDir", *at, "EWD-003",
                 "ge.externalWeight is off, so no weight file is written");
    }
    return r;
}

// ---- reading scenarios ----

OptionMaps read_options(const json::Value *options) {
    OptionMaps maps;
    if (!options || options->kind == json::Value::Kind::Null) return maps;
    if (options->kind != json::Value::Kind::Object) throw BadScenario("`options` is not an object");
    const char *names[3] = {"global", "session", "graph"};
    for (int i = 0; i < 3; ++i) {
        const json::Value *level = options->get(names[i]);
        if (!level) continue;
        if (level->kind != json::Value::Kind::Object)
            throw BadScenario(std::string("`options.") + names[i] + "` is not an object");
        for (const auto &member : level->object) {
            if (member.second.kind != json::Value::Kind::String)
                throw BadScenario("option `" + member.first + "` is not a string");
            maps.at[i][member.first] = member.second.string;
        }
    }
    return maps;
}

std::uint64_t read_u64(const json::Value &v, const char *field) {
    if (v.kind != json::Value::Kind::Number || !v.is_u64)
        throw BadScenario(std::string("`") + field + "` is not an unsigned 64-bit integer");
    return v.u64;
}

std::uint32_t read_u32(const json::Value &v, const char *field) {
    std::uint64_t n = read_u64(v, field);
    if (n > UINT32_MAX) throw BadScenario(std::string("`") + field + "` does not fit in 32 bits");
    return static_cast<std::uint32_t>(n);
}

const std::string &read_string(const json::Value &v, const char *field) {
    if (v.kind != json::Value::Kind::String)
        throw BadScenario(std::string("`") + field + "` is not a string");
    return v.string;
}

RunMode read_run_mode(const json::Value &scenario) {
    const json::Value *mode = scenario.get("run_mode");
    if (!mode) return RunMode::Async;
    const std::string &text = read_string(*mode, "run_mode");
    if (text == "sync") return RunMode::Sync;
    if (text == "async") return RunMode::Async;
    throw BadScenario("unknown run_mode `" + text + "`");
}

Shape read_shape(const json::Value *shape) {
    if (!shape) return Shape::Static;
    const std::string &text = read_string(*shape, "shape");
    if (text == "static") return Shape::Static;
    if (text == "dynamic") return Shape::Dynamic;
    throw BadScenario("unknown shape `" + text + "`");
}

std::string read_product(const json::Value &scenario) {
    const json::Value *product = scenario.get("product");
    if (!product) return "ascend-950pr";
    return read_string(*product, "product");
}

std::string options_observation(const json::Value &scenario) {
    Facts facts;
    facts.inputs = 1;
    facts.outputs = 1;
    Shape shape = Shape::Static;
    if (const json::Value *graph = scenario.get("graph")) {
        if (graph->kind != json::Value::Kind::Object) throw BadScenario("`graph` is not an object");
        if (const json::Value *n = graph->get("inputs")) facts.inputs = read_u32(*n, "graph.inputs");
        if (const json::Value *n = graph->get("outputs"))
            facts.outputs = read_u32(*n, "graph.outputs");
        shape = read_shape(graph->get("shape"));
    }
    facts.user_inputs = facts.inputs;
    facts.shape = shape;
    facts.run_mode = read_run_mode(scenario);
    facts.product = read_product(scenario);
    Resolved r = resolve(read_options(scenario.get("options")), facts);

    std::string out = "{\"capability\":\"options\",\"effective\":{";
    bool first = true;
    for (const auto &[key, value] : r.effective) {
        if (!first) out += ',';
        first = false;
        json::quote(out, key);
        out += ":{\"value\":";
        json::quote(out, value.first);
        out += ",\"from\":";
        json::quote(out, value.second);
        out += '}';
    }
    out += "},\"rejected\":[";
    for (std::size_t i = 0; i < r.rejected.size(); ++i) {
        if (i) out += ',';
        json::quote(out, r.rejected[i]);
    }
    out += "],\"passthrough\":[";
    for (std::size_t i = 0; i < r.passthrough.size(); ++i) {
        if (i) out += ',';
        json::quote(out, r.passthrough[i]);
    }
    out += "],\"errors\":";
    r.errors.write(out);
    out += ",\"warnings\":";
    r.warnings.write(out);
    out += '}';
    return out;
}

} // namespace engine
