#include "mariadb_bench_layers.hpp"

#include <chrono>
#include <cstdint>
#include <stdexcept>

#include "contract/tuned_claims.hpp"
#include "mariadb_statements.hpp"

namespace sqlock_bench::mariadb {
namespace {

namespace sql = sqlock::detail::mariadb::sql;
using sqlock::detail::QueueGate;

constexpr std::chrono::hours lease{1};
// A try: the turn is not waited for (uncontended, it is always free).
constexpr std::chrono::milliseconds no_wait{0};

// The gate of a caller without a place in line: every live waiter goes first.
QueueGate behind_everyone(const std::string& name) {
    return QueueGate{name, INT64_MAX};
}

}  // namespace

const char* const guarded_slot_name = "raw + batch + turn + the queue gate";

std::vector<std::string> layer_names() {
    return {"raw + text statements (literals, not prepared)", "raw + one batch: insert, row read",
            "raw + batch + the GET_LOCK turn", "raw + batch + turn + the queue gate"};
}

std::string layer_batch(const sqlock::detail::mariadb::MariaTarget& t, std::size_t up_to,
                        const std::string& name, const std::string& locked_by) {
    switch (up_to) {
        case 1:
            return sql::insert_and_read(t, sql::literal(name), lease, locked_by);
        case 2:
            return sql::acquire(t, sql::Protocol{}, name, lease, locked_by, no_wait,
                                QueueGate::none(), false);
        case 3:
            return sql::acquire(t, sql::Protocol{}, name, lease, locked_by, no_wait,
                                behind_everyone(name), false);
    }
    throw std::invalid_argument("no layered batch " + std::to_string(up_to));
}

std::string guarded_slot_batch(const sqlock::detail::mariadb::MariaTarget& t,
                               const std::string& name, const std::string& slot_insert) {
    return sql::under_turn(
        t, name, no_wait, behind_everyone(name),
        "START TRANSACTION;\n" + slot_insert + ";\n" + sql::read_met_row(t) + ";\nCOMMIT;\n");
}

}  // namespace sqlock_bench::mariadb
