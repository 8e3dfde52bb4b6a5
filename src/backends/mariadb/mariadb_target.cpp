#include "mariadb_target.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "text.hpp"

namespace sqlock::detail::mariadb {
namespace {

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
      family(table, quote_identifier_path,
             {{SideTable::runs, SideTable::pauses, SideTable::queue, SideTable::leaders,
               SideTable::fencing}}),
      timeout(bound),
      // The password as the connector reads it, too: the URL parser
      // decodes it by its own rules.
      redactor_(u.original, url.has_password ? std::vector<std::string>{url.password}
                                             : std::vector<std::string>{}) {
    turn_scope = lower(table.find('.') == std::string::npos ? url.database + "." + table : table);
    // Only a name of letters, digits, underscores and dots: it is spliced
    // into statements.
    if (const char* hook = std::getenv("SQLOCK_TEST_MARIADB_GET_LOCK")) {
        const std::string name = hook;
        const bool plain =
            !name.empty() && name.find_first_not_of(
                                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789_.") == std::string::npos;
        if (plain) get_lock = name;
    }
}

std::string MariaTarget::grant_hint() const {
    // An unqualified table is in the URL's database.
    auto in_database = [&](const FamilyName& n) {
        return n.name.find('.') == std::string::npos
                   ? quote_identifier_path(url.database + "." + n.name)
                   : n.quoted;
    };
    std::string hint = "GRANT SELECT, INSERT, UPDATE, DELETE ON " + in_database(family.table()) +
                       " TO '" + text::printable(url.user, 64) + "', and the same";
    const std::vector<SideTable>& sides = family.sides();
    for (std::size_t i = 0; i < sides.size(); ++i)
        hint += std::string(i == 0                  ? ""
                            : i + 1 == sides.size() ? " and"
                                                    : ",") +
                " ON " + in_database(family.side(sides[i])) + " (" + kind_of(sides[i]).purpose +
                ")";
    return hint;
}

std::string MariaTarget::redact(const std::string& text) const {
    return redactor_(text);
}

}  // namespace sqlock::detail::mariadb
