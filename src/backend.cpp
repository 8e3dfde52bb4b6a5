#include "backend.hpp"

#include "backend_catalog.hpp"
#include "backend_factory.hpp"
#include "backend_loader.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {

std::string slot_lockstring(const std::string& name, int slot) {
    return name + "#" + std::to_string(slot);
}

AcquireResult Connection::try_acquire_slot(const std::string& name, int capacity, duration lease,
                                           const std::string& locked_by, int* slot_out) {
    // Lowest slot first, always in the same order: concurrent callers cannot
    // livelock, and capacity changes only move the upper bound.
    AcquireResult last;
    for (int slot = 1; slot <= capacity; ++slot) {
        AcquireResult r = try_acquire(slot_lockstring(name, slot), lease, locked_by);
        if (r.acquired) {
            *slot_out = slot;
            return r;
        }
        // Report the slot that frees up first.
        if (r.holder && (!last.holder || r.holder->seconds_left < last.holder->seconds_left))
            last.holder = r.holder;
    }
    return last;
}

std::unique_ptr<Backend> make_backend(const DatabaseUrl& url, const std::string& table,
                                      duration timeout) {
    for (const CatalogEntry& entry : backend_catalog())
        if (entry.name == url.backend) return load_backend(entry).make(url, table, timeout);
    // parse_database_url() only returns URLs of catalogued backends.
    throw error(errc::configuration, "no backend serves '" + url.redacted + "'");
}

}  // namespace sqlock::detail
