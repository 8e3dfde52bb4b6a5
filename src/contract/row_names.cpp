#include "contract/row_names.hpp"

#include <cctype>

#include "base/validate.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {

std::string slot_lockstring(const std::string& name, int slot) {
    return name + "#" + std::to_string(slot);
}

std::string shared_prefix(const std::string& name) {
    return name + "#shared-";
}

std::string shared_prefix_end(const std::string& name) {
    std::string end = shared_prefix(name);
    end.back() = static_cast<char>(end.back() + 1);  // '-' + 1: '.'
    return end;
}

std::string shared_lockstring(const std::string& name, const std::string& token) {
    return shared_prefix(name) + token.substr(0, 16);
}

std::optional<std::string> shared_name_of(const std::string& lockstring) {
    static const std::string infix = shared_prefix("");
    const std::size_t token_bytes = 16;
    if (lockstring.size() < infix.size() + token_bytes) return std::nullopt;
    const std::size_t at = lockstring.size() - token_bytes - infix.size();
    if (lockstring.compare(at, infix.size(), infix) != 0) return std::nullopt;
    for (std::size_t i = at + infix.size(); i < lockstring.size(); ++i)
        if (!std::isxdigit(static_cast<unsigned char>(lockstring[i]))) return std::nullopt;
    return lockstring.substr(0, at);
}

std::size_t slot_suffix_at(const std::string& lockstring) {
    std::size_t i = lockstring.size();
    while (i > 0 && lockstring[i - 1] >= '0' && lockstring[i - 1] <= '9') --i;
    if (i == lockstring.size() || i == 0 || lockstring[i - 1] != '#') return std::string::npos;
    return i - 1;
}

int slot_number(const std::string& lockstring, const std::string& name, int capacity) {
    if (slot_suffix_at(lockstring) != name.size() || lockstring.compare(0, name.size(), name) != 0)
        return 0;
    // More digits than any capacity has: not one of its slots (and no
    // overflow); a leading zero: not a row slot_lockstring() writes.
    const std::string digits = lockstring.substr(name.size() + 1);
    if (digits.size() > std::to_string(capacity).size() || digits[0] == '0') return 0;
    const int n = std::stoi(digits);
    return n >= 1 && n <= capacity ? n : 0;
}

void validate_shared_name(const std::string& name) {
    if (name.size() > max_shared_name_bytes)
        throw error(errc::invalid_argument,
                    "lock name too long to be held shared: " + std::to_string(name.size()) +
                        " bytes; each shared holder's row is named '<name>#shared-<16 hex "
                        "digits>', so the limit is " +
                        std::to_string(max_shared_name_bytes) + " bytes: '" + printable(name) +
                        "'");
}

}  // namespace sqlock::detail
