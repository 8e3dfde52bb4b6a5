#include "contract/claim.hpp"

#include <algorithm>
#include <cmath>

#include "contract/row_names.hpp"

namespace sqlock::detail {

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

duration certain_lease(const Row& row, duration lease) {
    const double left_ms = row.seconds_left * 1000.0;
    if (left_ms >= static_cast<double>(lease.count())) return lease;
    return duration(std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(left_ms)) - 1));
}

}  // namespace sqlock::detail
