#include "mariadb_target.hpp"

#include <algorithm>
#include <cctype>

#include "text.hpp"

namespace sqlock::detail::mariadb {
namespace {

void replace_all(std::string& text, const std::string& needle, const std::string& with) {
    if (needle.empty()) return;
    std::size_t pos = 0;
    while ((pos = text.find(needle, pos)) != std::string::npos) {
        text.replace(pos, needle.size(), with);
        pos += with.size();
    }
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

std::string quote_identifier_path(const std::string& table) {
    std::size_t dot = table.find('.');
    if (dot == std::string::npos) return "`" + table + "`";
    return "`" + table.substr(0, dot) + "`.`" + table.substr(dot + 1) + "`";
}

MariaTarget::MariaTarget(const DatabaseUrl& u, std::string t, duration bound)
    : url(parse_mariadb_url(u)),
      original_url(u.original),
      redacted_url(u.redacted),
      table(std::move(t)),
      quoted_table(quote_identifier_path(table)),
      timeout(bound) {
    turn_scope = lower(table.find('.') == std::string::npos ? url.database + "." + table : table);
    for (const auto& [begin, end] : text::password_ranges(u.original)) {
        const std::string raw = u.original.substr(begin, end - begin);
        secrets_.push_back(raw);
        secrets_.push_back(percent_decode(raw));
    }
    if (url.has_password) secrets_.push_back(url.password);
    secrets_.erase(std::remove(secrets_.begin(), secrets_.end(), std::string()), secrets_.end());
    std::sort(secrets_.begin(), secrets_.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string MariaTarget::grant_hint() const {
    const std::string on = table.find('.') == std::string::npos
                               ? quote_identifier_path(url.database + "." + table)
                               : quoted_table;
    return "GRANT SELECT, INSERT, UPDATE, DELETE ON " + on + " TO '" +
           text::printable(url.user, 64) + "'";
}

std::string MariaTarget::redact(const std::string& text) const {
    std::string out = text;
    replace_all(out, original_url, redacted_url);
    for (const std::string& secret : secrets_) replace_all(out, secret, "***");
    std::string folded;
    folded.reserve(out.size());
    for (char c : out) {
        if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
            if (!folded.empty() && folded.back() != ' ') folded += ' ';
        } else {
            folded += c;
        }
    }
    while (!folded.empty() && folded.back() == ' ') folded.pop_back();
    return folded;
}

}  // namespace sqlock::detail::mariadb
