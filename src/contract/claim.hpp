// A claim: what one acquisition asks of the database, and what a held
// acquisition renews and releases. A plain lock, a semaphore slot, a shared
// hold and a lock set (of names held exclusively or shared) are all claims:
// the backend contract (backend.hpp) has one acquire, one renew and one
// release, each over a claim.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sqlock/duration.hpp"

namespace sqlock::detail {

/// One row of the lock table, as read back from the database.
struct Row {
    std::int64_t id = 0;
    std::string lockstring;
    std::string created;  // UTC "YYYY-MM-DD HH:MM:SS.mmm"
    std::string expires;  // same
    std::string locked_by;
    double seconds_left = 0.0;  // expires - database now
};

// A name held shared has its marker row: lockstring the name, locked_by
// shared_marker_owner (backend.hpp), expiring no earlier than any of its
// holders' rows. The marker keeps exclusive holders (and DBIx::Locker
// programs) out through the unique constraint, with the exclusive
// statements unchanged. Each holder has a row of its own,
// shared_lockstring(name, token), which carries its id and lease. Every
// statement over a shared entry takes the name's turn (the one exclusive
// acquisitions take), so that the marker always agrees with the holders'
// rows.
enum class ClaimMode {
    exclusive,  // the name's own row
    shared,     // a holder row of the name's, under its marker (backend.hpp)
    slot,       // the lowest free slot row "name#N" of a semaphore
};

/// One name of a claim, with its mode.
struct ClaimEntry {
    std::string name;
    ClaimMode mode = ClaimMode::exclusive;
    std::string shared_row;  // shared: this holder's row, shared_lockstring(name, token)
    int capacity = 0;        // slot: the semaphore's number of slots

    static ClaimEntry exclusive(std::string name) {
        return {std::move(name), ClaimMode::exclusive, {}, 0};
    }
    static ClaimEntry shared_as(std::string name, std::string own_row) {
        return {std::move(name), ClaimMode::shared, std::move(own_row), 0};
    }
    static ClaimEntry slot_of(std::string name, int capacity) {
        return {std::move(name), ClaimMode::slot, {}, capacity};
    }

    bool shared() const noexcept { return mode == ClaimMode::shared; }
    /// The row the entry holds: the name's own, or its holder row. (A slot
    /// held is claimed again as an exclusive entry named by its row.)
    const std::string& row() const noexcept { return shared() ? shared_row : name; }
};

/// One name (`set` false), or several taken all or nothing (`set` true:
/// distinct names in bytewise order, never a slot). A set takes no place
/// in the names' lines (set_acquirer.cpp), so it only ever lets every
/// waiter go first, or nobody.
struct Claim {
    std::vector<ClaimEntry> entries;
    bool set = false;
    /// Whom the attempt lets go first: the live waiters queued for its
    /// names whose ticket is below `before`. 0: nobody (no queue table);
    /// INT64_MAX: every waiter (a caller without a place in line).
    std::int64_t before = 0;

    const ClaimEntry& only() const { return entries.front(); }
    bool any_shared() const noexcept {
        for (const ClaimEntry& e : entries)
            if (e.shared()) return true;
        return false;
    }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        out.reserve(entries.size());
        for (const ClaimEntry& e : entries) out.push_back(e.name);
        return out;
    }
};

/// Outcome of one attempt at a claim.
struct ClaimResult {
    /// Taken: each entry's row (a set's in any order). Empty when not taken
    /// (then nothing was written).
    std::vector<Row> acquired;
    /// Not taken: the live rows in the way, when the backend could read
    /// them cheaply (a set's, among its names and holder rows, markers
    /// included; the caller tells what was in the way).
    std::vector<Row> holders;
    int slot = 0;  // a slot claim taken: its number
    /// `acquired` is a row of ours that an earlier statement wrote, found
    /// again (claim_own_holder), not one this attempt's statement wrote.
    bool claimed = false;
    /// Not taken because waiters queued ahead go first, whether or not the
    /// names were free.
    bool queued = false;
    /// Taken, and the statement that took it also left the caller's place
    /// in line (Claim::before) and woke the waiter behind it.
    bool left_line = false;

    bool taken() const noexcept { return !acquired.empty(); }
};

/// Outcome of releasing a held claim.
struct ClaimRelease {
    std::size_t lost = 0;  // rows that were not ours any more
    bool kept = false;     // a row kept until created + min_hold instead of deleted
};

/// A claim's row of ours found again: an attempt that found its names held
/// by `locked_by` (an owner string carries a token of its own, so the rows
/// are ours: an earlier statement of ours took them and its answer never
/// reached us, a statement applied after its caller gave up, or a retry)
/// becomes taken, with those rows, and `claimed`. True when it did. For one
/// name (a set tells its own rows apart: set_acquirer.cpp).
bool claim_own_holder(ClaimResult& r, const std::string& locked_by);

/// How long a claimed `row` (ClaimResult::claimed), ours, certainly lasts
/// after `sent`, when it came back from a statement sent at `sent` or
/// later: an earlier statement wrote it, perhaps one sent before `sent`, so
/// only the time the database said it had left, less the millisecond its
/// rounding up may add, and never more than `lease`. (A row the attempt's
/// own statement wrote lasts the whole lease from `sent`: the database set
/// its expiry from its own now, later than the sending. Its seconds_left
/// cannot say so: MariaDB reads it a statement later.)
duration certain_lease(const Row& row, duration lease);

/// Whether a live `row` among those a set read (its names and holder rows)
/// keeps the set of `entries` from being taken by `locked_by`: any row but
/// a shared entry's marker and a row of its own.
bool in_the_way(const Row& row, const std::vector<ClaimEntry>& entries,
                const std::string& locked_by);

}  // namespace sqlock::detail
