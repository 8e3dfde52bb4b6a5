#include "sqlock/lock_info.hpp"

#include "url.hpp"
#include "validate.hpp"

namespace sqlock {

std::string describe_holder(const LockInfo& info) {
    const Holder& h = info.holder;
    if (h.host.empty() && h.pid == 0) {
        if (info.locked_by.empty()) return "unknown holder";
        return "'" + detail::printable(info.locked_by, 80) + "'";
    }
    // Rows written by other programs may carry anything: keep messages on
    // one line.
    using detail::escape_controls;
    std::string out =
        (h.host.empty() ? "?" : escape_controls(h.host)) + ":" + std::to_string(h.pid);
    std::string extra;
    if (!h.user.empty()) extra = escape_controls(h.user);
    if (!h.program.empty()) extra += (extra.empty() ? "" : ", ") + escape_controls(h.program);
    if (!extra.empty()) out += " (" + extra + ")";
    return out;
}

}  // namespace sqlock
