// json.hpp: the engine's own small JSON reader and writer, enough for the scenarios it reads
// and the observations it writes (objects, arrays, strings, unsigned integers, booleans, null).
//
// The reader is strict (RFC 8259: no trailing commas, no comments, valid escapes, no lone
// surrogates), bounds its nesting depth, and throws json::Error on anything else, which the ABI
// layer turns into an error answer. Numbers keep their exact value when they are unsigned
// integers that fit in 64 bits; any other number is kept as "not an unsigned integer".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace json {

// What the reader throws, with the byte offset where it stopped.
struct Error : std::runtime_error {
    explicit Error(const std::string &what) : std::runtime_error(what) {}
};

struct Value {
    enum class Kind { Null, Bool, Number, String, Array, Object };
    Kind kind = Kind::Null;
    bool boolean = false;
    // Number: exact when `is_u64`.
    bool is_u64 = false;
    std::uint64_t u64 = 0;
    std::string string;
    std::vector<Value> array;
    std::vector<std::pair<std::string, Value>> object;

    // The member `key` of an object, nullptr when absent (or when this is not an object).
    const Value *get(const std::string &key) const {
        if (kind != Kind::Object) return nullptr;
        for (const auto &member : object)
            if (member.first == key) return &member.second;
        return nullptr;
    }
};

class Reader {
  public:
    Reader(const char *data, std::size_t len) : p_(data), end_(data + len), start_(data) {}

    Value document() {
        Value v = value(0);
        skip_space();
        if (p_ != end_) fail("trailing characters after the JSON value");
        return v;
    }

  private:
    static constexpr int kMaxDepth = 128;
    const char *p_;
    const char *end_;
    const char *start_;

    [[noreturn]] void fail(const std::string &why) const {
        throw Error(why + " at byte " + std::to_string(p_ - start_));
    }

    void skip_space() {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
    }

    void expect_word(const char *word) {
        for (const char *w = word; *w; ++w) {
            if (p_ == end_ || *p_ != *w) fail(std::string("expected `") + word + "`");
            ++p_;
        }
    }

    Value value(int depth) {
        if (depth > kMaxDepth) fail("nesting deeper than 128");
        skip_space();
        if (p_ == end_) fail("unexpected end of input");
        Value v;
        switch (*p_) {
        case '{': {
            v.kind = Value::Kind::Object;
            ++p_;
            skip_space();
            if (p_ != end_ && *p_ == '}') {
                ++p_;
                return v;
            }
            for (;;) {
                skip_space();
                if (p_ == end_ || *p_ != '"') fail("expected a member name");
                std::string key = string();
                skip_space();
                if (p_ == end_ || *p_ != ':') fail("expected `:`");
                ++p_;
                Value member = value(depth + 1);
                v.object.emplace_back(std::move(key), std::move(member));
                skip_space();
                if (p_ != end_ && *p_ == ',') {
                    ++p_;
                    continue;
                }
                if (p_ != end_ && *p_ == '}') {
                    ++p_;
                    return v;
                }
                fail("expected `,` or `}`");
            }
        }
        case '[': {
            v.kind = Value::Kind::Array;
            ++p_;
            skip_space();
            if (p_ != end_ && *p_ == ']') {
                ++p_;
                return v;
            }
            for (;;) {
                v.array.push_back(value(depth + 1));
                skip_space();
                if (p_ != end_ && *p_ == ',') {
                    ++p_;
                    continue;
                }
                if (p_ != end_ && *p_ == ']') {
                    ++p_;
                    return v;
                }
                fail("expected `,` or `]`");
            }
        }
        case '"':
            v.kind = Value::Kind::String;
            v.string = string();
            return v;
        case 't':
            expect_word("true");
            v.kind = Value::Kind::Bool;
            v.boolean = true;
            return v;
        case 'f':
            expect_word("false");
            v.kind = Value::Kind::Bool;
            return v;
        case 'n':
            expect_word("null");
            return v;
        default:
            return number();
        }
    }

    Value number() {
        Value v;
        v.kind = Value::Kind::Number;
        bool negative = false;
        if (p_ != end_ && *p_ == '-') {
            negative = true;
            ++p_;
        }
        if (p_ == end_ || *p_ < '0' || *p_ > '9') fail("expected a value");
        bool fits = true;
        std::uint64_t n = 0;
        if (*p_ == '0') {
            ++p_;
        } else {
            while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
                auto digit = static_cast<std::uint64_t>(*p_ - '0');
                if (n > (UINT64_MAX - digit) / 10) fits = false;
                n = n * 10 + digit;
                ++p_;
            }
        }
        bool integer = true;
        if (p_ != end_ && *p_ == '.') {
            integer = false;
            ++p_;
            if (p_ == end_ || *p_ < '0' || *p_ > '9') fail("expected a digit after `.`");
            while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
        }
        if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
            integer = false;
            ++p_;
            if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            if (p_ == end_ || *p_ < '0' || *p_ > '9') fail("expected a digit in the exponent");
            while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
        }
        v.is_u64 = integer && fits && (!negative || n == 0);
        v.u64 = v.is_u64 ? n : 0;
        return v;
    }

    unsigned hex4() {
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
            if (p_ == end_) fail("unexpected end of input in a \\u escape");
            char c = *p_++;
            code <<= 4;
            if (c >= '0' && c <= '9') code |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') code |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') code |= static_cast<unsigned>(c - 'A' + 10);
            else fail("bad hex digit in a \\u escape");
        }
        return code;
    }

    static void put_utf8(std::string &out, unsigned code) {
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (code >> 18));
            out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
    }

    // Reads a string; the opening quote is at p_. Raw bytes are passed through (the harness
    // sends UTF-8); control characters must be escaped.
    std::string string() {
        ++p_;
        std::string out;
        for (;;) {
            if (p_ == end_) fail("unterminated string");
            char c = *p_++;
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (p_ == end_) fail("unterminated escape");
            char e = *p_++;
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                unsigned code = hex4();
                if (code >= 0xD800 && code <= 0xDBFF) {
                    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') fail("lone surrogate");
                    p_ += 2;
                    unsigned low = hex4();
                    if (low < 0xDC00 || low > 0xDFFF) fail("lone surrogate");
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                } else if (code >= 0xDC00 && code <= 0xDFFF) {
                    fail("lone surrogate");
                }
                put_utf8(out, code);
                break;
            }
            default: fail("bad escape");
            }
        }
    }
};

// Parses one JSON document of `len` bytes.
inline Value parse(const char *data, std::size_t len) { return Reader(data, len).document(); }

// Appends `text` as a JSON string, copying runs of plain characters at once.
inline void quote(std::string &out, const std::string &text) {
    static const char hex[] = "0123456789abcdef";
    out += '"';
    std::size_t run = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        auto u = static_cast<unsigned char>(text[i]);
        if (u >= 0x20 && u != '"' && u != '\\') continue;
        out.append(text, run, i - run);
        run = i + 1;
        if (u == '"') out += "\\\"";
        else if (u == '\\') out += "\\\\";
        else {
            out += "\\u00";
            out += hex[u >> 4];
            out += hex[u & 0xF];
        }
    }
    out.append(text, run, text.size() - run);
    out += '"';
}

} // namespace json
