#include "password_scrub.hpp"

#include <cstring>

namespace sqlock_cli {

std::vector<std::pair<std::size_t, std::size_t>> password_ranges(const std::string& url) {
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    std::size_t scheme_end = url.find("://");
    if (scheme_end != std::string::npos) {
        std::size_t auth_start = scheme_end + 3;
        std::size_t auth_end = url.find_first_of("/?#", auth_start);
        if (auth_end == std::string::npos) auth_end = url.size();
        // The last '@' of the authority ends the userinfo: passwords may hold '@'.
        std::size_t at = url.rfind('@', auth_end);
        if (at != std::string::npos && at >= auth_start && at < auth_end) {
            std::size_t colon = url.find(':', auth_start);
            if (colon != std::string::npos && colon < at) ranges.emplace_back(colon + 1, at);
        }
    }
    std::size_t q = url.find('?');
    if (q != std::string::npos) {
        std::size_t pos = q + 1;
        while ((pos = url.find("password=", pos)) != std::string::npos) {
            bool at_boundary = url[pos - 1] == '?' || url[pos - 1] == '&';
            std::size_t value = pos + 9;
            if (at_boundary) {
                std::size_t end = url.find('&', value);
                if (end == std::string::npos) end = url.size();
                ranges.emplace_back(value, end);
            }
            pos = value;
        }
    }
    return ranges;
}

std::string without_passwords(const std::string& text) {
    std::string out = text;
    auto ranges = password_ranges(text);
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it)
        out.replace(it->first, it->second - it->first, "***");
    return out;
}

static void scrub(char* value) {
    std::string url(value);
    for (const auto& [begin, end] : password_ranges(url))
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
