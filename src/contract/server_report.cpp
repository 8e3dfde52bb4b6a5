#include "contract/server_report.hpp"

namespace sqlock::detail {
namespace {

std::string joined(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

// One table this user may not use: its title and name, and what it lacks
// when the backend's probes named it.
struct Unusable {
    std::string table;
    std::vector<std::string> lacking;
    bool serial_id;
};

// "privileges on lock table ops.locks and pauses table ops.locks_pauses",
// or, where the probes named them, "SELECT, DELETE on lock table ops.locks
// and DELETE on pauses table ops.locks_pauses".
std::string lacking_text(const std::vector<Unusable>& tables) {
    bool named = false;
    for (const Unusable& t : tables) named = named || !t.lacking.empty();
    std::vector<std::string> parts;
    for (const Unusable& t : tables)
        parts.push_back(!named              ? t.table
                        : t.lacking.empty() ? "privileges on " + t.table
                                            : joined(t.lacking, ", ") + " on " + t.table);
    return (named ? "" : "privileges on ") + joined(parts, " and ");
}

}  // namespace

void report_server(const ServerFacts& s, Diagnosis& out,
                   const std::function<void(std::string)>& problem) {
    out.facts.push_back({"host name lookup", s.lookups.fact});
    out.facts.push_back({"server version", s.version});
    out.facts.push_back({"server role", s.role});
    out.facts.push_back(clock_fact(s.clock));
    for (const std::string& p : s.lookups.problems) problem(p);
    if (!s.read_only_problem.empty()) problem(s.read_only_problem);
    const std::string clock_line = clock_problem(s.clock);
    if (!clock_line.empty()) problem(clock_line);
}

void report_tables(const ServerFacts& s, const AccessWording& wording, Diagnosis& out,
                   const std::function<void(std::string)>& problem) {
    const std::string table = "lock table " + s.table;
    const std::string usable = "present; " + s.user + " may use it";
    const std::string unusable = "present; " + s.user + " lacks privileges";
    out.facts.push_back({table, !s.table_exists ? "missing"
                                : s.table_usable
                                    ? "present" + s.table_note + "; " + s.user + " may use it"
                                    : unusable});
    report_side_table_facts(s.sides, {usable, unusable, ""}, out);
    if (!s.table_exists) {
        problem(table + " does not exist: run `sqlock init` (needs " + wording.create_needs + ")");
        return;
    }
    // Every table this user may not use, on one line: one GRANT fixes them.
    std::vector<Unusable> tables;
    if (!s.table_usable) tables.push_back({table, s.table_lacking, true});
    for (const SideTableFacts& side : s.sides)
        if (side.exists && !side.usable)
            tables.push_back({std::string(kind_of(side.side).title) + " " + side.name, side.lacking,
                              kind_of(side.side).serial_id});
    bool serial_ids = false;
    for (const Unusable& t : tables) serial_ids = serial_ids || t.serial_id;
    if (!tables.empty())
        problem(wording.user_word + " " + s.user + " lacks " + lacking_text(tables) + ": " +
                wording.grant(tables.size(), serial_ids));
    // A lock table made before sqlock had them locks as before, but what
    // each serves does not work.
    const SideTableWording sides{usable, unusable,
                                 " (needs " + wording.create_needs + ")" + wording.after_side_init};
    for (const std::string& p : side_table_problems(s.sides, table, sides)) problem(p);
}

}  // namespace sqlock::detail
