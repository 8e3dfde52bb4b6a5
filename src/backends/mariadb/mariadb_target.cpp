#include "mariadb_target.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "contract/schema.hpp"
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
      quoted_table(quote_identifier_path(table)),
      runs(runs_table_name(table)),
      quoted_runs(quote_identifier_path(runs)),
      pauses(pauses_table_name(table)),
      quoted_pauses(quote_identifier_path(pauses)),
      queue(queue_table_name(table)),
      quoted_queue(quote_identifier_path(queue)),
      leaders(leaders_table_name(table)),
      quoted_leaders(quote_identifier_path(leaders)),
      guard(guard_routine_name(table)),
      quoted_guard(quote_identifier_path(guard)),
      fencing(fencing_table_name(table)),
      quoted_fencing(quote_identifier_path(fencing)),
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
    auto in_database = [&](const std::string& name, const std::string& quoted) {
        return name.find('.') == std::string::npos
                   ? quote_identifier_path(url.database + "." + name)
                   : quoted;
    };
    const std::string to = " TO '" + text::printable(url.user, 64) + "'";
    return "GRANT SELECT, INSERT, UPDATE, DELETE ON " + in_database(table, quoted_table) + to +
           ", and the same ON " + in_database(runs, quoted_runs) + " (its run history), ON " +
           in_database(pauses, quoted_pauses) + " (its pauses), ON " +
           in_database(queue, quoted_queue) + " (its queue of waiters), ON " +
           in_database(leaders, quoted_leaders) + " (its leaders' values) and ON " +
           in_database(fencing, quoted_fencing) + " (its fencing register, used on Galera)";
}

std::string MariaTarget::redact(const std::string& text) const {
    return redactor_(text);
}

}  // namespace sqlock::detail::mariadb
