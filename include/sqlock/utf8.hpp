// UTF-8: the one decoder sqlock uses to validate names and to show text.
#pragma once

#include <cstddef>
#include <string>

namespace sqlock {

/// Length in bytes (1 to 4) of the well-formed UTF-8 sequence starting at
/// `text[pos]`, or 0 if the bytes there are not one (overlong forms,
/// surrogates, code points above U+10FFFF and truncated sequences are not).
/// Stores the code point in `*code_point` when given. `pos` must be < size.
std::size_t utf8_sequence_length(const std::string& text, std::size_t pos,
                                 char32_t* code_point = nullptr) noexcept;

}  // namespace sqlock
