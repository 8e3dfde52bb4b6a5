#include "contract/backend.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

#include "base/validate.hpp"
#include "contract/records.hpp"
#include "contract/tuned_claims.hpp"
#include "loading/backend_catalog.hpp"
#include "loading/backend_factory.hpp"
#include "loading/backend_loader.hpp"
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

bool in_the_way(const Row& row, const std::vector<ClaimEntry>& entries,
                const std::string& locked_by) {
    if (row.locked_by == locked_by) return false;
    if (row.locked_by != shared_marker_owner) return true;
    return std::none_of(entries.begin(), entries.end(), [&](const ClaimEntry& e) {
        return e.shared() && e.name == row.lockstring;
    });
}

bool claim_own_holder(ClaimResult& r, const std::string& locked_by) {
    if (r.taken() || r.holders.size() != 1 || r.holders.front().locked_by != locked_by)
        return false;
    r.acquired = std::move(r.holders);
    r.holders.clear();
    r.claimed = true;
    return true;
}

bool claim_own_holder(AcquireResult& r, const std::string& locked_by) {
    if (r.acquired || !r.holder || r.holder->locked_by != locked_by) return false;
    r.acquired = std::move(r.holder);
    r.holder.reset();
    r.claimed = true;
    return true;
}

duration certain_lease(const Row& row, duration lease) {
    const double left_ms = row.seconds_left * 1000.0;
    if (left_ms >= static_cast<double>(lease.count())) return lease;
    return duration(std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(left_ms)) - 1));
}

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

std::unique_ptr<Backend> make_backend(const DatabaseUrl& url, const std::string& table,
                                      duration timeout) {
    for (const CatalogEntry& entry : backend_catalog())
        if (entry.name == url.backend) return load_backend(entry).make(url, table, timeout);
    // parse_database_url() only returns URLs of catalogued backends.
    throw error(errc::configuration, "no backend serves '" + url.redacted + "'");
}

}  // namespace sqlock::detail
