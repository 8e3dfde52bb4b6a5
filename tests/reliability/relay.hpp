// Relay — the fault_relay program (tests/reliability/fault_relay.cpp) in
// front of a PostgreSQL server, driven by the fencing tests: it passes,
// freezes (connections stay open, packets go nowhere), refuses or slows
// every packet, or keeps back one statement's answer, on command.
#pragma once

#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "reliability_support.hpp"

namespace reliability {

class Relay {
  public:
    /// Starts a relay on a free 127.0.0.1 port towards the server of
    /// `server_url`; url() reaches that server through it.
    explicit Relay(const std::string& server_url)
        : child_({FAULT_RELAY, std::to_string(sqlock_test::port_of(server_url))}, {},
                 sqlock_test::spawn_options().pipe_stdin(true).pipe_stdout(true)),
          server_url_(server_url) {
        auto line = child_.read_line(10s);
        REQUIRE(line);
        port_ = std::stoi(*line);
    }
    /// Ends the relay as a reader of its commands would: end of file on its
    /// stdin (killed if it has not ended 5 s later).
    ~Relay() { child_.finish(5s); }
    Relay(const Relay&) = delete;
    Relay& operator=(const Relay&) = delete;
    /// "pass", "freeze", "refuse" or "slow"; returns once the relay obeys.
    void command(const std::string& c) { REQUIRE(obeys(c)); }
    /// The same without an assertion, for a thread other than the test's
    /// (Catch2's assertions are not thread-safe): whether the relay obeyed.
    bool obeys(const std::string& c) {
        child_.write_line(c);
        return child_.read_line(10s) == std::optional<std::string>("ok");
    }
    /// After "hold-reply": the printable text of the client's chunk whose
    /// answer the relay kept back, or nothing while none has been.
    std::optional<std::string> held() {
        child_.write_line("held");
        auto line = child_.read_line(10s);
        REQUIRE(line);
        if (line->rfind("held ", 0) != 0) return std::nullopt;
        return line->substr(5);
    }
    int port() const { return port_; }
    /// The server's URL, with the relay's port in place of the server's.
    std::string url() const { return sqlock_test::with_port(server_url_, port_); }

  private:
    sqlock_test::Process child_;
    std::string server_url_;
    int port_ = 0;
};

}  // namespace reliability
