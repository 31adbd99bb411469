// Parsing Megatron's pipeline_model_parallel_layout strings.
#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

#include "moesim/config/error.hpp"
#include "moesim/plan/layout.hpp"

namespace moesim::plan {

namespace {

// Recursive-descent expansion: sequence := item*, item := (char | '(' sequence ')') ['*' N].
class Expander {
 public:
  static constexpr size_t kMaxExpanded = 1 << 20;

  explicit Expander(const std::string& text) : text_(text) {}

  std::string run() {
    std::string out = sequence();
    if (pos_ != text_.size()) fail("unexpected ')'");
    return out;
  }

 private:
  std::string sequence() {
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != ')') {
      char c = text_[pos_];
      std::string item;
      if (c == '(') {
        ++pos_;
        item = sequence();
        if (pos_ >= text_.size() || text_[pos_] != ')') fail("missing ')'");
        ++pos_;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++pos_;
      } else if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;  // Megatron allows commas and spaces as visual separators
        continue;
      } else {
        fail(std::string("unexpected character '") + c + "' (allowed: E t m L | ( ) * digits)");
      }
      int repeat = 1;
      if (pos_ < text_.size() && text_[pos_] == '*') {
        ++pos_;
        size_t start = pos_;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
        if (start == pos_) fail("'*' must be followed by a count");
        // More than 6 digits is out of range anyway; std::stoi throws beyond INT_MAX.
        repeat = pos_ - start <= 6 ? std::stoi(text_.substr(start, pos_ - start)) : 0;
        if (repeat < 1 || repeat > 100000) fail("repeat count out of range");
      }
      // Nested repeats multiply: "((t*100000)*100000)" would be 10^10 characters.
      if (out.size() + item.size() * static_cast<size_t>(repeat) > kMaxExpanded)
        fail("expands to more than " + std::to_string(kMaxExpanded) + " characters");
      for (int i = 0; i < repeat; ++i) out += item;
    }
    return out;
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw InfeasibleError("pipeline_layout \"" + text_ + "\": " + what + " at position " +
                          std::to_string(pos_));
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<std::string> expand_pipeline_layout(const std::string& layout) {
  std::string flat = Expander(layout).run();
  std::vector<std::string> stages(1);
  for (char c : flat) {
    if (c == '|') stages.emplace_back();
    else stages.back() += c;
  }
  return stages;
}

}  // namespace moesim::plan
