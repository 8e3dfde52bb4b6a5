#include "common/password_scrub.hpp"

#include <cstring>

#include "text.hpp"

namespace sqlock_cli {

std::string without_passwords(const std::string& text) {
    std::string out = text;
    auto ranges = sqlock::text::password_ranges(text);
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it)
        out.replace(it->first, it->second - it->first, "***");
    return out;
}

static void scrub(char* value) {
    std::string url(value);
    for (const auto& [begin, end] : sqlock::text::password_ranges(url))
        for (std::size_t i = begin; i < end; ++i) value[i] = '*';
}

void scrub_database_passwords(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) return;
        if (std::strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
            scrub(argv[++i]);
        } else if (std::strncmp(argv[i], "--db=", 5) == 0) {
            scrub(argv[i] + 5);
        }
    }
}

}  // namespace sqlock_cli
