// Relay — the fault_relay program (tests/reliability/fault_relay.cpp) in
// front of a PostgreSQL server, driven by the fencing tests: it passes,
// freezes (connections stay open, packets go nowhere), refuses or slows
// every packet on command.
#pragma once

#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "reliability_support.hpp"

namespace reliability {

class Relay {
  public:
    /// Starts a relay on a free 127.0.0.1 port towards `target_port`.
    explicit Relay(int target_port) : child_({FAULT_RELAY, std::to_string(target_port)}) {
        auto line = child_.read_line(10s);
        REQUIRE(line);
        port_ = std::stoi(*line);
    }
    /// "pass", "freeze", "refuse" or "slow"; returns once the relay obeys.
    void command(const std::string& c) { REQUIRE(obeys(c)); }
    /// The same without an assertion, for a thread other than the test's
    /// (Catch2's assertions are not thread-safe): whether the relay obeyed.
    bool obeys(const std::string& c) {
        child_.write_line(c);
        return child_.read_line(10s) == std::optional<std::string>("ok");
    }
    int port() const { return port_; }

  private:
    Child child_;
    int port_ = 0;
};

/// The port of a postgresql:// URL with a port.
inline int port_of(const std::string& url) {
    auto at = url.rfind('@');
    auto colon = url.find(':', at == std::string::npos ? 12 : at);
    return std::stoi(url.substr(colon + 1));
}

/// `url` with its port replaced by `port`.
inline std::string with_port(const std::string& url, int port) {
    auto at = url.rfind('@');
    auto colon = url.find(':', at == std::string::npos ? 12 : at);
    auto slash = url.find('/', colon);
    return url.substr(0, colon + 1) + std::to_string(port) + url.substr(slash);
}

}  // namespace reliability
