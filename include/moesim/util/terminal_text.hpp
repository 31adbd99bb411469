#pragma once
// Text that reaches a terminal carries no control sequences from user input: a scenario's or a
// sweep's name with ESC in it (an OSC sequence sets the window title, CSI moves the cursor or
// clears the screen) is shown, not obeyed.
#include <string>
#include <string_view>

namespace moesim::util {

// `text` with every control character except newline and tab escaped: C0 (U+0000-U+001F),
// DEL (U+007F) and C1 (U+0080-U+009F, which some terminals obey as ESC sequences) become
// \u00XX, which is also a JSON string escape, so a JSON text stays valid and means the same;
// a byte that is not part of valid UTF-8 becomes \xNN. Everything else is unchanged.
std::string terminal_safe(std::string_view text);

// Whether terminal_safe(text) == text (without building the copy: outputs can be large).
bool is_terminal_safe(std::string_view text);

}  // namespace moesim::util
