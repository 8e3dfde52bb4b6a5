#include "election/leader_read.hpp"

#include <nlohmann/json.hpp>

#include "base/validate.hpp"
#include "contract/records.hpp"
#include "waiting/contention_text.hpp"

namespace sqlock::detail {

const char* const leader_value_key = "leader_value";

namespace {

// The value campaign() left in the row's metadata; "" for a row without
// one (or not sqlock's JSON).
std::string value_in_metadata(const std::string& locked_by) {
    const nlohmann::json j = nlohmann::json::parse(locked_by, nullptr, false);
    if (!j.is_object()) return {};
    const auto meta = j.find("meta");
    if (meta == j.end() || !meta->is_object()) return {};
    const auto value = meta->find(leader_value_key);
    return value != meta->end() && value->is_string() ? value->get<std::string>() : std::string();
}

}  // namespace

std::optional<LeaderInfo> read_leader(Connection& c, const std::string& name) {
    std::optional<Row> row;
    std::optional<std::string> proclaimed;
    if (c.has(SideTable::leaders)) {
        const Rows r = c.query(Query::leader, {Value::text(name)});
        if (!r.rows.empty()) {
            const std::vector<Field>& f = r.rows[0];
            row = read_lock_row(f);
            proclaimed = f.at(6);
        }
    } else {
        row = c.find(name);  // a table made before leaders' values
    }
    if (!row || row->seconds_left <= 0.0 || row->locked_by == shared_marker_owner)
        return std::nullopt;
    LeaderInfo info;
    info.lock = to_info(*row);
    info.value = proclaimed ? *proclaimed : value_in_metadata(row->locked_by);
    return info;
}

void validate_leader_value(const std::string& value) {
    if (value.size() > max_leader_value_bytes)
        throw error(errc::invalid_argument, "a leader's value is at most " +
                                                std::to_string(max_leader_value_bytes) +
                                                " bytes, got " + std::to_string(value.size()));
    if (!is_valid_utf8(value))
        throw error(errc::invalid_argument, "a leader's value must be UTF-8 text");
    for (const char ch : value)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
            throw error(
                errc::invalid_argument,
                "a leader's value must not contain control characters: " + printable(value));
}

}  // namespace sqlock::detail
