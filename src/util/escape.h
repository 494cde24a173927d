// Text from the command's side (its argv, its cwd, the reason built from
// them, the paths of its denials, its stderr) as sbx shows it to a person
// who decides about it: every byte that a terminal would act on, and every
// character that reorders or hides text, written out as an escape, so that
// nothing the command chose can clear the screen, move the cursor, draw a
// fake prompt or make one word look like another.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "util/shell_word.h"
#include "util/utf8.h"

namespace sbx {

namespace escape_detail {

// Code points shown as \u{XXXX}: the C1 controls, the bidi embeddings,
// overrides, isolates and marks, zero-width characters and the BOM, the
// line and paragraph separators.
inline bool hidden_code_point(char32_t c) {
    return (c >= 0x80 && c <= 0x9f) || c == 0x061c || (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
           (c >= 0x2060 && c <= 0x2069) || c == 0xfeff;
}

inline char32_t decode(std::string_view s, std::size_t i, std::size_t len) {
    const auto b = static_cast<unsigned char>(s[i]);
    char32_t c = len == 1 ? b : len == 2 ? (b & 0x1f) : len == 3 ? (b & 0x0f) : (b & 0x07);
    for (std::size_t k = 1; k < len; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    return c;
}

// s with each byte or character that needs it replaced by `escape`'s text;
// the rest copied.  Returns whether anything was escaped.
template <typename Escape>
bool escaped_into(std::string_view s, std::string& out, Escape&& escape) {
    bool any = false;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t prefix;
        bool incomplete;
        const std::size_t len = utf8_sequence(s, i, prefix, incomplete);
        char buf[16];
        if (len == 0) {  // not UTF-8: the byte
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i]));
            out += buf;
            any = true;
            i += 1;
            continue;
        }
        const char32_t c = decode(s, i, len);
        if (c < 0x20 || c == 0x7f || hidden_code_point(c)) {
            out += escape(c);
            any = true;
        } else if (c == '\\') {
            out += "\\\\";
            any = true;
        } else {
            out.append(s.substr(i, len));
        }
        i += len;
    }
    return any;
}

inline std::string c_escape(char32_t c) {
    switch (c) {
        case '\n': return "\\n";
        case '\t': return "\\t";
        case '\r': return "\\r";
        case 0x1b: return "\\e";
        default: break;
    }
    char buf[16];
    if (c < 0x80) std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
    else std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
    return buf;
}

}  // namespace escape_detail

// s with control bytes (\n, \e, \x01 ...), DEL, bytes that are not UTF-8
// (\xff), C1 controls, bidi and zero-width characters (\u202e) escaped, and
// a backslash doubled, so that the text shown is one line and reads back to
// exactly s.
inline std::string escape_for_display(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    escape_detail::escaped_into(s, out, escape_detail::c_escape);
    return out;
}

// An argv word as a shell reads it back: shell_word's form, or, when the
// word holds anything escape_for_display escapes, bash's $'...' form with
// the same escapes (\e, \x1b, \u202e), which bash and zsh read back as the
// word.
inline std::string shell_word_for_display(std::string_view w) {
    std::string body;
    const bool escaped = escape_detail::escaped_into(w, body, escape_detail::c_escape);
    if (!escaped) return shell_word(w);
    std::string out = "$'";
    for (char c : body) out += c == '\'' ? std::string_view("\\'") : std::string_view(&c, 1);
    return out + "'";
}

// text folded into lines of at most `width` bytes (never inside a UTF-8
// sequence), each line after the first starting with `indent`; text is
// expected to be escaped already (one line).
inline std::string fold_for_display(std::string_view text, std::size_t width, std::string_view indent) {
    std::string out;
    std::size_t column = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto b = static_cast<unsigned char>(text[i]);
        const bool starts_character = (b & 0xc0) != 0x80;
        if (starts_character && column >= width) {
            out += '\n';
            out += indent;
            column = 0;
        }
        out += text[i];
        if (starts_character) ++column;
    }
    return out;
}

}  // namespace sbx
