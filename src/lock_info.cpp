#include "sqlock/lock_info.hpp"

#include "validate.hpp"

namespace sqlock {

std::string describe_holder(const LockInfo& info) {
    const Holder& h = info.holder;
    if (h.host.empty() && h.pid == 0) {
        if (info.locked_by.empty()) return "unknown holder";
        return "'" + detail::printable(info.locked_by, 80) + "'";
    }
    std::string out = (h.host.empty() ? "?" : h.host) + ":" + std::to_string(h.pid);
    std::string extra;
    if (!h.user.empty()) extra = h.user;
    if (!h.program.empty()) extra += (extra.empty() ? "" : ", ") + h.program;
    if (!extra.empty()) out += " (" + extra + ")";
    return out;
}

}  // namespace sqlock
