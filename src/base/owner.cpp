#include "base/owner.hpp"

#include <pwd.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "base/current_pid.hpp"
#include "base/validate.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {
namespace {

std::string host_name() {
    std::array<char, 256> buf{};
    if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
    return buf.data();
}

std::string user_name() {
    struct passwd pw {};
    struct passwd* result = nullptr;
    std::array<char, 1024> buf{};
    if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &result) == 0 && result)
        return result->pw_name;
    return std::to_string(geteuid());
}

std::string program_name() {
    std::ifstream comm("/proc/self/comm");
    std::string name;
    if (comm && std::getline(comm, name) && !name.empty()) return name;
    return "unknown";
}

// Only valid UTF-8 goes into the JSON; anything else by the one rule.
std::string json_safe(const std::string& s) {
    return is_valid_utf8(s) ? s : text::printable(s, 256);
}

}  // namespace

std::string random_token() {
    // A 128-bit token from a generator seeded by the kernel's CSPRNG, reseeded
    // in every new process: a forked child must not repeat its parent's
    // tokens. Reading std::random_device for every token costs four syscalls
    // on the acquire path for no gain in uniqueness.
    static std::mutex mutex;
    static pid_t seeded_for = 0;
    static std::mt19937_64 engine;
    std::lock_guard<std::mutex> guard(mutex);
    if (seeded_for != current_pid()) {
        std::random_device device;
        std::seed_seq seed{device(), device(), device(), device(),
                           device(), device(), device(), device()};
        engine.seed(seed);
        seeded_for = current_pid();
    }
    static const char* hex = "0123456789abcdef";
    std::string token(32, '0');
    for (int half = 0; half < 2; ++half) {
        std::uint64_t word = engine();
        for (int k = 0; k < 16; ++k) token[half * 16 + k] = hex[(word >> (k * 4)) & 0xF];
    }
    return token;
}

const std::string& this_host() {
    static const std::string host = json_safe(host_name());
    return host;
}

const std::string& this_user() {
    static const std::string user = json_safe(user_name());
    return user;
}

const std::string& this_program() {
    static const std::string program = json_safe(program_name());
    return program;
}

namespace {

nlohmann::json base_owner_json(const std::string& token) {
    const std::string& host = this_host();
    static const std::string user = user_name();
    static const std::string program = program_name();
    return {
        {"host", host},
        {"pid", static_cast<long>(current_pid())},
        {"guid", token},
        {"user", json_safe(user)},
        {"program", json_safe(program)},
        {"by", "sqlock"},
    };
}

// The common case (no metadata) on the acquire path: the JSON text is fixed
// per process except for the token, so it is rendered once with a
// placeholder and the token is written into a copy.
std::string owner_json_without_metadata(const std::string& token) {
    static std::mutex mutex;
    static pid_t rendered_for = 0;
    static std::string text;
    static std::size_t token_at = 0;
    std::lock_guard<std::mutex> guard(mutex);
    if (rendered_for != current_pid()) {
        const std::string placeholder(32, '#');
        text = base_owner_json(placeholder).dump();
        token_at = text.find(placeholder);
        rendered_for = current_pid();
    }
    std::string out = text;
    out.replace(token_at, token.size(), token);
    return out;
}

}  // namespace

Owner make_owner(const std::map<std::string, std::string>& metadata) {
    Owner owner;
    owner.token = random_token();
    if (metadata.empty()) {
        owner.locked_by = owner_json_without_metadata(owner.token);
        return owner;
    }
    nlohmann::json j = base_owner_json(owner.token);
    nlohmann::json meta = nlohmann::json::object();
    for (const auto& [k, v] : metadata) {
        if (!is_valid_utf8(k) || !is_valid_utf8(v))
            throw error(errc::invalid_argument,
                        "lock metadata must be valid UTF-8 (key '" + printable(k) + "')");
        meta[k] = v;
    }
    j["meta"] = std::move(meta);
    owner.locked_by = j.dump();
    if (owner.locked_by.size() > 1024)
        throw error(errc::invalid_argument, "lock metadata too large: locked_by would be " +
                                                std::to_string(owner.locked_by.size()) +
                                                " bytes, the limit is 1024");
    return owner;
}

Owner make_owner(const std::map<std::string, std::string>& metadata, duration min_hold,
                 duration lease) {
    if (min_hold <= duration::zero()) return make_owner(metadata);
    Owner owner = make_owner(metadata);
    nlohmann::json j = nlohmann::json::parse(owner.locked_by);
    j["min_hold_ms"] = static_cast<std::int64_t>(min_hold.count());
    j["lease_ms"] = static_cast<std::int64_t>(lease.count());
    owner.locked_by = j.dump();
    return owner;
}

Holder parse_holder(const std::string& locked_by) noexcept {
    Holder h;
    try {
        auto j = nlohmann::json::parse(locked_by, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object()) return h;
        auto str = [&](const char* key) -> std::string {
            auto it = j.find(key);
            if (it == j.end()) return {};
            if (it->is_string()) return it->get<std::string>();
            if (it->is_number()) return it->dump();
            return {};
        };
        h.host = str("host");
        h.user = str("user");
        h.program = str("program");
        h.guid = str("guid");
        auto millis = [&](const char* key) -> std::int64_t {
            auto it = j.find(key);
            return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
        };
        h.min_hold_ms = millis("min_hold_ms");
        h.lease_ms = millis("lease_ms");
        auto pid = j.find("pid");
        if (pid != j.end()) {
            if (pid->is_number_integer())
                h.pid = pid->get<long>();
            else if (pid->is_string())
                h.pid = std::strtol(pid->get<std::string>().c_str(), nullptr, 10);
        }
    } catch (...) {
        // A lenient parser: whatever we could not read stays empty.
    }
    return h;
}

}  // namespace sqlock::detail
