// transfer.cpp: the transfer layer of the C++ example engine. It decides how the user inputs of
// one run move from host to device: an input already on the device is not moved; in an
// asynchronous run of a static graph with a fusion threshold above 0, every host input of at
// most the threshold is fused (the fused size is the plain sum of their sizes); with batch copy
// on, the product in the text's list, an asynchronous run and more than one user input, the
// host inputs left over are batch-copied when there are at least two; every other host input is
// moved directly.
#include <algorithm>
#include <map>

#include "engine.hpp"

namespace engine {

namespace {

void write_list(std::string &out, const char *name, const std::vector<std::uint32_t> &list) {
    out += ",\"";
    out += name;
    out += "\":[";
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(list[i]);
    }
    out += ']';
}

struct Input {
    std::uint32_t index;
    std::uint64_t size;
    bool on_device;
};

} // namespace

std::string transfer_observation(const json::Value &scenario) {
    std::vector<Input> inputs;
    const json::Value *list = scenario.get("inputs");
    if (!list || list->kind != json::Value::Kind::Array)
        throw BadScenario("`inputs` is missing or not an array");
    for (const auto &item : list->array) {
        if (item.kind != json::Value::Kind::Object) throw BadScenario("an input is not an object");
        const json::Value *index = item.get("index");
        const json::Value *size = item.get("size");
        if (!index || !size) throw BadScenario("an input lacks `index` or `size`");
        Input input{read_u32(*index, "index"), read_u64(*size, "size"), false};
        if (const json::Value *placement = item.get("placement")) {
            const std::string &where = read_string(*placement, "placement");
            if (where == "device") input.on_device = true;
            else if (where != "host") throw BadScenario("unknown placement `" + where + "`");
        }
        inputs.push_back(input);
    }
    RunMode run_mode = read_run_mode(scenario);
    Shape shape = read_shape(scenario.get("shape"));
    std::string product = read_product(scenario);
    auto user_inputs = static_cast<std::uint32_t>(std::min<std::size_t>(inputs.size(), UINT32_MAX));

    // The index lists concern the graph's memory plan, which a transfer scenario does not
    // describe: their range is not checked here.
    Facts facts;
    facts.user_inputs = user_inputs;
    facts.shape = shape;
    facts.run_mode = run_mode;
    facts.product = product;
    Resolved r = resolve(read_options(scenario.get("options")), facts);

    Diagnostics errors = r.errors;
    std::map<std::uint32_t, int> seen;
    for (const auto &input : inputs) ++seen[input.index];
    for (const auto &[index, n] : seen) {
        if (n < 2) continue;
        Diagnostic d;
        d.clause = "TRF-002";
        d.subject_field = "input";
        d.subject_json = std::to_string(index);
        d.message = std::to_string(n) + " inputs share the index " + std::to_string(index);
        errors.push(d);
    }

    std::vector<std::uint32_t> fused, direct, batched, on_device;
    std::uint64_t fused_bytes = 0;
    if (errors.empty()) {
        std::uint64_t threshold = r.number("ge.exec.input_fusion_size");
        bool fusion = run_mode == RunMode::Async && shape == Shape::Static && threshold > 0;
        bool batch = r.number("ge.inputBatchCpy") == 1 && batch_copy_product(product) &&
                     run_mode == RunMode::Async && user_inputs > 1;
        std::vector<std::uint32_t> rest;
        bool overflow = false;
        for (const auto &input : inputs) {
            if (input.on_device) {
                on_device.push_back(input.index);
            } else if (fusion && input.size <= threshold) {
                fused.push_back(input.index);
                if (fused_bytes > UINT64_MAX - input.size) overflow = true;
                fused_bytes += input.size;
            } else {
                rest.push_back(input.index);
            }
        }
        if (overflow) {
            fused.clear();
            on_device.clear();
            rest.clear();
            fused_bytes = 0;
            Diagnostic d;
            d.clause = "TRF-002";
            d.subject_field = "part";
            d.subject_json = "\"fused-inputs\"";
            d.message = "the inputs chosen for fusion add up to more than 2^64 - 1 bytes";
            errors.push(d);
        } else if (batch && rest.size() >= 2) {
            batched = rest;
        } else {
            direct = rest;
        }
    }

    std::string out = "{\"capability\":\"transfer\"";
    write_list(out, "fused", fused);
    out += ",\"fused_bytes\":" + std::to_string(fused_bytes);
    write_list(out, "direct", direct);
    write_list(out, "batched", batched);
    write_list(out, "on_device", on_device);
    out += ",\"errors\":";
    errors.write(out);
    out += ",\"warnings\":";
    r.warnings.write(out);
    out += '}';
    return out;
}

} // namespace engine
