// sqlock::diagnose() (sqlock/doctor.hpp): what every backend reports,
// then the backend's own probes (Backend::diagnose).
#include "sqlock/doctor.hpp"

#include "state/access.hpp"
#include "state/locker_state.hpp"

namespace sqlock {

Diagnosis diagnose(const Locker& locker) {
    const detail::LockerState& s = *detail::Access::session(locker);
    Diagnosis d;
    d.facts.push_back({"database", s.url.redacted});
    d.facts.push_back({"backend", s.backend->name()});
    d.facts.push_back({"table", s.table});
    s.backend->diagnose(d);
    return d;
}

}  // namespace sqlock
