#include "sqlock/lock_info.hpp"

#include "contract/row_names.hpp"

#include <signal.h>
#include <sys/types.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <limits>

#include "base/owner.hpp"

#include "base/utc_time.hpp"
#include "base/validate.hpp"

namespace sqlock {

std::string describe_holder(const LockInfo& info) {
    const Holder& h = info.holder;
    if (info.shared_marker())
        return "shared holders (`sqlock show " + detail::printable(info.name) + "` lists them)";
    if (h.host.empty() && h.pid == 0) {
        if (info.locked_by.empty()) return "unknown holder";
        return "'" + detail::printable(info.locked_by, 80) + "'";
    }
    // Rows written by other programs may carry anything: keep messages on
    // one line.
    using text::printable;
    std::string out = (h.host.empty() ? "?" : printable(h.host)) + ":" + std::to_string(h.pid);
    std::string extra;
    if (!h.user.empty()) extra = printable(h.user);
    if (!h.program.empty()) extra += (extra.empty() ? "" : ", ") + printable(h.program);
    if (holder_process_gone(info))
        extra += (extra.empty() ? "" : ", ") + std::string("process gone");
    if (!extra.empty()) out += " (" + extra + ")";
    return out;
}

bool holder_process_gone(const LockInfo& info) {
    const Holder& h = info.holder;
    if (h.pid <= 0 || h.pid > std::numeric_limits<pid_t>::max() || h.host.empty() ||
        h.host != detail::this_host())
        return false;
    // EPERM: it exists, as another user's process.
    return ::kill(static_cast<pid_t>(h.pid), 0) != 0 && errno == ESRCH;
}

bool kept_by_min_hold(const LockInfo& info) {
    const Holder& h = info.holder;
    if (h.min_hold_ms <= 0 || info.expired()) return false;
    const auto created = info.created_time(), expires = info.expires_time();
    if (created.time_since_epoch().count() == 0 || expires.time_since_epoch().count() == 0)
        return false;
    const auto held_for =
        std::chrono::duration_cast<std::chrono::milliseconds>(expires - created).count();
    // Release keeps the row until exactly created + min_hold (times are
    // shown to the millisecond). A running job's lease ends there only if
    // its lease is the minimum hold and it was never renewed: then only a
    // holder known to be gone tells.
    if (held_for < h.min_hold_ms - 1 || held_for > h.min_hold_ms + 1) return false;
    return h.lease_ms != h.min_hold_ms || holder_process_gone(info);
}

namespace detail {

// "YYYY-MM-DD HH:MM:SS[.fff]" (UTC) as a time point; the epoch if it is not.
std::chrono::system_clock::time_point parse_utc(const std::string& text) noexcept {
    int y, mo, d, h, mi, sec;
    char sep;
    int used = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &y, &mo, &d, &sep, &h, &mi, &sec,
                    &used) != 7 ||
        (sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
        sec > 60)
        return {};
    long ms = 0;
    if (text.size() > static_cast<std::size_t>(used) && text[used] == '.') {
        int digits = 0;
        for (std::size_t i = used + 1;
             i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
            if (digits < 3) ms = ms * 10 + (text[i] - '0');
            ++digits;
        }
        for (; digits < 3; ++digits) ms *= 10;
    }
    // Days from the civil date (Howard Hinnant's algorithm), proleptic Gregorian.
    y -= mo <= 2;
    const long era = (y >= 0 ? y : y - 399) / 400;
    const long yoe = y - era * 400;
    const long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    const long days = era * 146097 + doe - 719468;
    const auto since_epoch =
        std::chrono::milliseconds(((days * 24 + h) * 60 + mi) * 60 * 1000LL + sec * 1000LL + ms);
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(since_epoch));
}

}  // namespace detail

std::chrono::system_clock::time_point LockInfo::created_time() const noexcept {
    return detail::parse_utc(created);
}

std::chrono::system_clock::time_point LockInfo::expires_time() const noexcept {
    return detail::parse_utc(expires);
}

// Here, beside its one reader in the public API, so that what reads rows
// (the parsers' fuzzers included) needs no backend code.
const std::string detail::shared_marker_owner =
    R"({"sqlock":"shared","see":"the rows named <name>#shared-*"})";

bool LockInfo::shared_marker() const {
    return locked_by == detail::shared_marker_owner;
}

}  // namespace sqlock
