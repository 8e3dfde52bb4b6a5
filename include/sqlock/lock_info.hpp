// LockInfo — a lock row as the database holds it, for listing and messages.
#pragma once

#include <cstdint>
#include <string>

namespace sqlock {

/// Who holds a lock, parsed leniently from the row's `locked_by` JSON.
/// Fields the row does not carry (for example rows written by DBIx::Locker or
/// by hand) are left empty or zero; a malformed `locked_by` never throws.
struct Holder {
    std::string host;
    long pid = 0;
    std::string user;
    std::string program;
    std::string guid;  ///< the holder's owner token
};

/// A row of the lock table.
struct LockInfo {
    std::int64_t id = 0;        ///< fencing token: strictly increasing, never reused
    std::string name;           ///< the `lockstring` column (slots: "name#N")
    std::string created;        ///< UTC, "YYYY-MM-DD HH:MM:SS.mmm", from the DB clock
    std::string expires;        ///< UTC, same format, from the DB clock
    std::string locked_by;      ///< the raw column (JSON for sqlock holders)
    Holder holder;              ///< `locked_by`, parsed
    double seconds_left = 0.0;  ///< expires minus the database's now; <= 0 once expired

    bool expired() const noexcept { return seconds_left <= 0.0; }
};

/// "host:pid (user, program)" — as much of it as is known, or the raw column.
std::string describe_holder(const LockInfo& info);

}  // namespace sqlock
