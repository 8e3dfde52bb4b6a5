// PgReleaseListener — release notifications via LISTEN/NOTIFY.
//
// Every release (and delete) statement calls pg_notify(channel, lockstring)
// in the same transaction, so a notification arrives exactly when a lock row
// has been freed, from whichever host freed it. One dedicated connection per
// Locker listens; the core's ReleaseHub fans each payload out to every waiter.
//
// A broken listening connection throws errc::connection from await(); the hub
// then makes a new listener and has all waiters re-check, since releases may
// have gone unheard meanwhile.
//
// Thread safety: used by one thread (the hub's).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include "postgres_link.hpp"
#include "postgres_target.hpp"

namespace sqlock::detail::postgres {

class PgReleaseListener final : public ReleaseListener {
  public:
    explicit PgReleaseListener(std::shared_ptr<const PgTarget> target);
    ~PgReleaseListener() override;

    void listen() override;
    std::vector<std::string> await(duration timeout) override;

  private:
    class Receiver;

    std::shared_ptr<const PgTarget> target_;
    std::unique_ptr<Link> link_;
    std::unique_ptr<Receiver> receiver_;  // must go before link_
    std::vector<std::string> received_;
};

}  // namespace sqlock::detail::postgres
