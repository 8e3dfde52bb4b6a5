#include "loading/backend_catalog.hpp"

namespace sqlock::detail {

const CatalogEntry* find_backend_by_scheme(const std::string& scheme) {
    for (const CatalogEntry& entry : backend_catalog())
        for (const std::string& s : entry.schemes)
            if (s == scheme) return &entry;
    return nullptr;
}

std::string known_schemes_text() {
    const auto& catalog = backend_catalog();
    std::string text;
    for (std::size_t i = 0; i < catalog.size(); ++i) {
        if (i > 0) text += i + 1 == catalog.size() ? " or " : ", ";
        text += catalog[i].schemes.front() + ":";
    }
    return text;
}

}  // namespace sqlock::detail
