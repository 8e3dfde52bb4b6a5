#include "contract/table_family.hpp"

#include <cstdio>

#include "base/fnv1a.hpp"
#include "base/validate.hpp"

namespace sqlock::detail {

const std::array<SideTableKind, side_table_count>& side_table_kinds() {
    static const std::array<SideTableKind, side_table_count> kinds = {{
        {SideTable::runs,
         "runs",
         "run history table",
         "its run history",
         "`sqlock run` records no runs and --once-per fails",
         true,
         {"name", "started", "fencing"},
         "name, host, pid, username, program, fencing_id, started, outcome",
         "ended"},
        {SideTable::pauses,
         "pauses",
         "pauses table",
         "its pauses",
         "`sqlock pause` fails and nothing is paused",
         false,
         {},
         "name, paused_by, reason, created, paused_until",
         "paused_until"},
        {SideTable::queue,
         "queue",
         "queue table",
         "its queue of waiters",
         "waiters are not served in the order they came, and each looks every 100 ms",
         true,
         {"name"},
         "lockstring, waiter, inbox, expires",
         "expires"},
        {SideTable::leaders,
         "leaders",
         "leaders table",
         "its leaders' values",
         "`sqlock elect` and Locker::campaign() fail",
         false,
         {},
         "name, fencing_id, value, proclaimed",
         "value"},
        {SideTable::fencing,
         "fencing",
         "fencing register",
         "its fencing register, used on Galera",
         "on Galera, and on a server that refuses GET_LOCK, no acquisition can take its turn",
         false,
         {},
         "name, last_id, written",
         "last_id"},
    }};
    return kinds;
}

const SideTableKind& kind_of(SideTable table) {
    return side_table_kinds()[static_cast<std::size_t>(table)];
}

std::string fit_identifier(const std::string& prefix, const std::string& suffix) {
    constexpr std::size_t max_bytes = 63;
    if (prefix.size() + suffix.size() <= max_bytes) return prefix + suffix;
    char hash[10];
    std::snprintf(hash, sizeof hash, "_%08x", static_cast<unsigned>(fnv1a32(prefix)));
    return prefix.substr(0, max_bytes - suffix.size() - 9) + hash + suffix;
}

std::string name_beside(const std::string& table, const std::string& suffix) {
    const std::string base = fit_identifier(table_basename(table), suffix);
    const std::size_t dot = table.find('.');
    return dot == std::string::npos ? base : table.substr(0, dot + 1) + base;
}

std::string side_table_name(const std::string& table, SideTable side) {
    return name_beside(table, std::string("_") + kind_of(side).suffix);
}

TableFamily::TableFamily(const std::string& table, const Quote& quote)
    : TableFamily(table, quote, Options{}) {}

TableFamily::TableFamily(const std::string& table, const Quote& quote, Options options)
    : quote_(quote), sides_(std::move(options.sides)) {
    table_ = named(table);
    const std::string base = table_basename(table);
    const std::string index =
        options.fit_index ? fit_identifier(base, "_expires_idx") : base + "_expires_idx";
    const std::size_t dot = table.find('.');
    index_ = named(dot == std::string::npos ? index : table.substr(0, dot + 1) + index);
    guard_ = named(name_beside(table, "_guard"));
    for (const SideTableKind& kind : side_table_kinds())
        side_[static_cast<std::size_t>(kind.key)] = named(side_table_name(table, kind.key));
}

FamilyName TableFamily::named(const std::string& name) const {
    return {name, quote_(name), quote_(table_basename(name))};
}

const FamilyName& TableFamily::side(SideTable side) const {
    return side_[static_cast<std::size_t>(side)];
}

FamilyName TableFamily::side_index(SideTable side, const std::string& what) const {
    // Indexes are named within their table's schema: unqualified.
    return named(fit_identifier(table_basename(this->side(side).name), "_" + what + "_idx"));
}

std::string TableFamily::fill(std::string sql) const {
    sql = substitute(std::move(sql), "table", table_.quoted);
    sql = substitute(std::move(sql), "index", index_.local);
    sql = substitute(std::move(sql), "guard", guard_.quoted);
    for (SideTable side : sides_) {
        const SideTableKind& kind = kind_of(side);
        for (const char* what : kind.indexes)
            sql = substitute(std::move(sql), std::string(kind.suffix) + "_" + what + "_idx",
                             side_index(side, what).local);
        sql = substitute(std::move(sql), kind.suffix, this->side(side).quoted);
    }
    return sql;
}

std::string substitute(std::string sql, const std::string& key, const std::string& value) {
    const std::string needle = "${" + key + "}";
    std::size_t pos = 0;
    while ((pos = sql.find(needle, pos)) != std::string::npos) {
        sql.replace(pos, needle.size(), value);
        pos += value.size();
    }
    return sql;
}

}  // namespace sqlock::detail
