#include "moesim/util/terminal_text.hpp"

#include <fmt/format.h>

namespace moesim::util {

namespace {

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when the byte there starts none.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b >= 0xC2 && b <= 0xDF) n = 2;
  else if (b >= 0xE0 && b <= 0xEF) n = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
  else if (b >= 0xF0 && b <= 0xF4) n = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (i + n > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

// Whether the character at text[i] (of `n` bytes, 0: not UTF-8) is shown as an escape.
bool escaped(std::string_view text, std::size_t i, std::size_t n) {
  const auto b = static_cast<unsigned char>(text[i]);
  if (b < 0x80) return (b < 0x20 && b != '\n' && b != '\t') || b == 0x7F;
  return n == 0 || (n == 2 && b == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F);
}

}  // namespace

bool is_terminal_safe(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = static_cast<unsigned char>(text[i]) < 0x80 ? 1 : utf8_length(text, i);
    if (escaped(text, i, n)) return false;
    i += n;
  }
  return true;
}

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const std::size_t n = b < 0x80 ? 1 : utf8_length(text, i);
    if (!escaped(text, i, n)) out.append(text.substr(i, n));
    else if (n == 0) out += fmt::format("\\x{:02X}", b);  // not UTF-8
    else if (n == 1) out += fmt::format("\\u{:04X}", b);  // C0 or DEL
    else out += fmt::format("\\u{:04X}", static_cast<unsigned char>(text[i + 1]));  // C1: U+0080-U+009F
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace moesim::util
