#include "contract/backend.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

#include "base/validate.hpp"
#include "contract/records.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {

bool Connection::has_history() {
    if (!history_known_) learn_side_tables();
    return history_known_;
}

bool Connection::has_pauses() {
    if (!pauses_known_) learn_side_tables();
    return pauses_known_;
}

bool Connection::has_leaders() {
    if (!leaders_known_) learn_side_tables();
    return leaders_known_;
}

bool Connection::has_queue() {
    if (queue_known_) return true;
    // Every acquisition asks: a table without a queue (not initialised
    // since it came) is looked at again only now and then.
    const auto now = clock::now();
    if (queue_looked_ != clock::time_point{} && now - queue_looked_ < std::chrono::seconds(30))
        return false;
    learn_side_tables();
    if (!queue_known_) queue_looked_ = now;
    return queue_known_;
}

void Connection::learn_side_tables() {
    const Rows found = query(Query::side_tables, {});
    if (!found.rows.empty() && found.rows[0].size() >= 4) {
        history_known_ = history_known_ || as_bool(found.rows[0][0]);
        pauses_known_ = pauses_known_ || as_bool(found.rows[0][1]);
        queue_known_ = queue_known_ || as_bool(found.rows[0][2]);
        leaders_known_ = leaders_known_ || as_bool(found.rows[0][3]);
    }
    if (!history_known_) history_known_ = unlisted_side_table_exists(SideTable::history);
    if (!pauses_known_) pauses_known_ = unlisted_side_table_exists(SideTable::pauses);
    if (!queue_known_) queue_known_ = unlisted_side_table_exists(SideTable::queue);
    if (!leaders_known_) leaders_known_ = unlisted_side_table_exists(SideTable::leaders);
}

}  // namespace sqlock::detail
