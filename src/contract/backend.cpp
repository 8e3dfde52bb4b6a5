#include "contract/backend.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

#include "base/validate.hpp"
#include "contract/records.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {

std::optional<Row> Connection::find(const std::string& lockstring) {
    const Rows found = query(Query::lock_row, {Value::text(lockstring)});
    if (found.rows.empty()) return std::nullopt;
    return read_lock_row(found.rows.front());
}

std::vector<Row> Connection::list(const std::string& prefix, bool expired_only) {
    const Rows found =
        query(Query::lock_rows, {Value::text(prefix), Value::integer(expired_only ? 1 : 0)});
    std::vector<Row> rows;
    rows.reserve(found.rows.size());
    for (const auto& row : found.rows) rows.push_back(read_lock_row(row));
    return rows;
}

bool Connection::is_held(std::int64_t id, const std::string& locked_by) {
    return !query(Query::lock_held, {Value::integer(id), Value::text(locked_by)}).rows.empty();
}

std::size_t Connection::purge_expired_batch(std::size_t batch) {
    const Query key = has(SideTable::runs) ? Query::purge_locks_and_runs : Query::purge_locks;
    const auto purged = static_cast<std::size_t>(
        query_int64(*this, key, {Value::integer(static_cast<std::int64_t>(batch))}));
    return purged + purge_more(batch, purged);
}

bool Connection::has(SideTable side) {
    bool& known = known_[static_cast<std::size_t>(side)];
    if (known) return true;
    if (side != SideTable::queue) {
        learn_side_tables();
        return known;
    }
    // Every acquisition asks: a table without a queue (not initialised
    // since it came) is looked at again only now and then.
    const auto now = clock::now();
    if (queue_looked_ != clock::time_point{} && now - queue_looked_ < std::chrono::seconds(30))
        return false;
    learn_side_tables();
    if (!known) queue_looked_ = now;
    return known;
}

void Connection::learn_side_tables() {
    const Rows found = query(Query::side_tables, {});
    const bool answered = !found.rows.empty() && found.rows[0].size() >= common_side_tables.size();
    for (std::size_t i = 0; i < common_side_tables.size(); ++i) {
        bool& known = known_[static_cast<std::size_t>(common_side_tables[i])];
        if (answered && as_bool(found.rows[0][i])) known = true;
        if (!known) known = unlisted_side_table_exists(common_side_tables[i]);
    }
}

}  // namespace sqlock::detail
