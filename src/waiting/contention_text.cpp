#include "waiting/contention_text.hpp"

#include <chrono>
#include <cmath>

#include "base/owner.hpp"

namespace sqlock::detail {

LockInfo to_info(const Row& row) {
    LockInfo info;
    info.id = row.id;
    info.name = row.lockstring;
    info.created = row.created;
    info.expires = row.expires;
    info.locked_by = row.locked_by;
    info.holder = parse_holder(row.locked_by);
    info.seconds_left = row.seconds_left;
    return info;
}

std::string describe_expiry(double seconds_left) {
    if (seconds_left <= 0) return "expired";
    return "expires in " +
           format_duration(duration(static_cast<std::int64_t>(std::ceil(seconds_left)) * 1000));
}

std::string holder_text(const std::optional<LockInfo>& info) {
    if (!info) return "another holder (just taken)";
    return describe_holder(*info) + ", " + describe_expiry(info->seconds_left) + " (" +
           info->expires + " UTC)";
}

std::string waited_text(duration waited) {
    using std::chrono::seconds;
    if (waited < seconds(1)) return format_duration(waited);
    if (waited < seconds(60)) {
        auto tenths = (waited.count() + 50) / 100;
        std::string text = std::to_string(tenths / 10);
        if (tenths % 10) text += "." + std::to_string(tenths % 10);
        return text + "s";
    }
    return format_duration(std::chrono::duration_cast<seconds>(waited + duration(500)));
}

[[noreturn]] void contention_error(errc category, const std::string& message,
                                   const std::optional<LockInfo>& info) {
    if (info) throw error(category, message, *info);
    throw error(category, message);
}

}  // namespace sqlock::detail
