// CutOff — one holder cut off from its database, whatever the backend: a
// server is reached through a fault_relay that freezes; an embedded
// database has its write lock held by another connection (the backend's
// hold_write_lock hook). For the fencing tests of the command and of the
// library.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "relay.hpp"
#include "reliability_support.hpp"

namespace reliability {

/// For a test of a link to a server (a relay that freezes, refuses or
/// slows it), written before tests declared their needs as tags: true. The
/// test must carry [needs:server], which keeps it off an embedded database
/// (no link to cut there).
inline bool has_link() {
    return sqlock_test::only_on_server_backend("no link to a server on an embedded database");
}

/// `url` is how the holder reaches the database; `db_url` how everyone
/// else does.
struct CutOff {
    std::unique_ptr<Relay> relay;
    std::shared_ptr<void> write_lock;
    std::string db_url;
    std::string url;

    /// Sets up the cut for the database at `database_url`; true. A test
    /// that cuts off declares [needs:cut-off] (the backend has a way to),
    /// or fails here.
    bool prepare(const std::string& database_url) {
        db_url = url = database_url;
        if (!sqlock_test::declares_need("cut-off", "CutOff::prepare()")) return false;
        if (sqlock_test::is_server_backend()) {
            relay = std::make_unique<Relay>(db_url);
            url = relay->url();
        }
        return true;
    }
    void apply() {
        if (relay)
            relay->command("freeze");
        else
            REQUIRE_NOTHROW(write_lock =
                                sqlock_test::backend_context().hooks.hold_write_lock(db_url));
    }
    void undo() {
        if (relay)
            relay->command("pass");
        else
            write_lock.reset();
    }
};

}  // namespace reliability
