// FNV-1a: a short name for a text that is the same on every host and in
// every version (a statement's text, a long table name, a lock's turn),
// where two texts rarely share one. Not a security measure.
#pragma once

#include <cstdint>
#include <string>

namespace sqlock::detail {

inline std::uint32_t fnv1a32(const std::string& text) noexcept {
    std::uint32_t h = 2166136261u;
    for (unsigned char c : text) {
        h ^= c;
        h *= 16777619u;
    }
    return h;
}

inline std::uint64_t fnv1a64(const std::string& text) noexcept {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace sqlock::detail
