#include "base/error_table.hpp"

#include <cstring>

namespace sqlock::detail {

std::string MessageWords::fill(const char* pattern) const {
    std::string out;
    for (const char* p = pattern; *p;) {
        const char* close = *p == '{' ? std::strchr(p, '}') : nullptr;
        if (close) {
            const std::string word(p + 1, close);
            bool found = false;
            for (const auto& w : words_)
                if (word == w.first) {
                    out += w.second;
                    found = true;
                    break;
                }
            if (found) {
                p = close + 1;
                continue;
            }
        }
        out += *p++;
    }
    return out;
}

const ErrorRow* find_error_row(const ErrorRow* rows, std::size_t count, int code,
                               const char* when) {
    for (std::size_t i = 0; i < count; ++i) {
        const ErrorRow& row = rows[i];
        if (row.code != code) continue;
        if (!row.when || (when && std::strcmp(row.when, when) == 0)) return &row;
    }
    return nullptr;
}

error error_of_row(const ErrorRow& row, const std::string& message, std::string backend_code) {
    if (row.read_only) return error::read_only_database(message, std::move(backend_code));
    return error(row.category, message, std::move(backend_code));
}

}  // namespace sqlock::detail
