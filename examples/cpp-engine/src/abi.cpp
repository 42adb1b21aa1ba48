// abi.cpp: the C ABI of include/ge_conformance.h for the C++ example engine. Every function is
// noexcept: a C++ exception never crosses the boundary; a scenario the engine cannot read is
// answered with an error, an unimplemented capability with not-supported.
#include <cstdlib>
#include <cstring>
#include <new>

#include "engine.hpp"
#include "ge_conformance.h"

namespace {

#ifdef GE_CONFORMANCE_PLANTED_BUG
constexpr const char *kName = "cpp-engine-planted";
#else
constexpr const char *kName = "cpp-engine";
#endif

// Hands `text` to the harness in a malloc'ed buffer (freed by ge_conformance_free).
int32_t give(const std::string &text, char **buffer, size_t *len) {
    if (!buffer || !len) return 2;
    char *copy = static_cast<char *>(std::malloc(text.size() ? text.size() : 1));
    if (!copy) return 1;
    std::memcpy(copy, text.data(), text.size());
    *buffer = copy;
    *len = text.size();
    return 0;
}

std::string error_answer(const std::string &message) {
    std::string out = "{\"type\":\"error\",\"message\":";
    json::quote(out, message);
    out += '}';
    return out;
}

std::string answer(const char *scenario, size_t scenario_len) {
    json::Value value;
    try {
        value = json::parse(scenario, scenario_len);
    } catch (const json::Error &e) {
        return error_answer(std::string("the scenario is not JSON: ") + e.what());
    }
    const json::Value *capability = value.get("capability");
    if (!capability || capability->kind != json::Value::Kind::String)
        return error_answer("the scenario has no `capability`");
    try {
        std::string observation;
        if (capability->string == "options") {
            observation = engine::options_observation(value);
        } else if (capability->string == "transfer") {
            observation = engine::transfer_observation(value);
        } else {
            std::string out = "{\"type\":\"not-supported\",\"reason\":";
            json::quote(out, capability->string + " is not implemented by this engine");
            out += '}';
            return out;
        }
        return "{\"type\":\"observation\",\"observation\":" + observation + "}";
    } catch (const engine::BadScenario &e) {
        return error_answer(std::string("cannot read the scenario: ") + e.what());
    }
}

} // namespace

extern "C" {

GE_CONFORMANCE_EXPORT uint32_t ge_conformance_abi_version(void) noexcept {
    return GE_CONFORMANCE_ABI_VERSION;
}

GE_CONFORMANCE_EXPORT int32_t ge_conformance_hello(char **hello, size_t *hello_len) noexcept {
    try {
        std::string out = "{\"protocol\":" + std::to_string(GE_CONFORMANCE_PROTOCOL_VERSION) +
                          ",\"name\":\"" + kName +
                          "\",\"version\":\"0.1.0\",\"capabilities\":[\"options\",\"transfer\"],"
                          "\"profiles\":[\"documented\"]}";
        return give(out, hello, hello_len);
    } catch (const std::bad_alloc &) {
        return 1;
    }
}

GE_CONFORMANCE_EXPORT int32_t ge_conformance_answer(const char *scenario, size_t scenario_len,
                                                    const char *sandbox, char **out,
                                                    size_t *out_len) noexcept {
    (void)sandbox; // no capability of this engine touches the file system
    try {
        if (!scenario && scenario_len) return give(error_answer("null scenario"), out, out_len);
        return give(answer(scenario ? scenario : "", scenario_len), out, out_len);
    } catch (const std::bad_alloc &) {
        return 1;
    }
}

GE_CONFORMANCE_EXPORT void ge_conformance_free(char *buffer, size_t buffer_len) noexcept {
    (void)buffer_len;
    std::free(buffer);
}

} // extern "C"
