// sqlock leader NAME [--watch] [--json]: who leads NAME (`sqlock elect`,
// Election::campaign), and with --watch one line per change until interrupted.
#include <optional>

#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"
#include "run/signals.hpp"
#include "sqlock/leadership.hpp"
#include "text.hpp"

namespace sqlock_cli {
namespace {

const char* const leader_usage = "NAME [--watch] [--json]";

const char* const leader_details =
    "Says who leads NAME: the host and process whose `sqlock elect NAME` (or\n"
    "Election::campaign) holds it, its fencing id, since when, its lease end and the\n"
    "value it published. Exits 0 when someone leads, 1 when nobody does.\n"
    "\n"
    "--watch prints the current state, then one line per change until interrupted\n"
    "(SIGINT, SIGTERM: exit 0): a new leader, a new value, a vacancy (the leader\n"
    "resigned, stopped, or its lease ran out), and when the database cannot be\n"
    "reached (the state found after it answers again is printed, even if it is\n"
    "unchanged). A vacancy is printed between two leaders even when the hand-over was\n"
    "too fast to be seen. On PostgreSQL changes are pushed; elsewhere NAME is read\n"
    "every --poll (default 250ms, at most 1s).\n"
    "\n"
    "--json prints one JSON object per line: \"event\" (leader, value, vacant or\n"
    "disconnected), \"name\", \"value\" and \"id\" (null when vacant), \"holder\" (as in\n"
    "`show --json`; null when vacant), \"since\" and \"expires\" (UTC, the\n"
    "database's clock; null when vacant), and \"error\" for disconnected.\n"
    "\n"
    "Examples:\n"
    "  sqlock leader scheduler\n"
    "  sqlock leader scheduler --watch --json | jq .\n";

void add_leader_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("watch", "Print the state, then each change until interrupted");
    add("poll",
        "With --watch, where changes are not pushed: read every DUR (10ms to 1s, default 250ms)",
        cxxopts::value<std::string>(), "DUR");
    add("json", "Print JSON (one object per line) instead of text");
}

nlohmann::ordered_json event_json(const std::string& name, const sqlock::LeaderEvent& e) {
    nlohmann::ordered_json j;
    j["event"] = sqlock::to_string(e.kind);
    j["name"] = name;
    if (e.leader) {
        const sqlock::LockInfo& row = e.leader->lock;
        j["value"] = e.leader->value;
        j["id"] = row.id;
        j["holder"] = lock_json(row)["holder"];  // as `show --json` says it
        j["since"] = row.created;
        j["expires"] = row.expires;
    } else {
        for (const char* key : {"value", "id", "holder", "since", "expires"}) j[key] = nullptr;
    }
    if (e.kind == sqlock::leader_event::disconnected) j["error"] = e.error;
    return j;
}

std::string event_text(const std::string& name, const sqlock::LeaderEvent& e) {
    const std::string subject = std::string(sqlock::to_string(e.kind)) + " " + in_quotes(name);
    switch (e.kind) {
        case sqlock::leader_event::leader: {
            const sqlock::LockInfo& row = e.leader->lock;
            return subject + ": " + sqlock::describe_holder(row) + ", id " +
                   std::to_string(row.id) + ", since " + row.created + ", value " +
                   in_quotes(e.leader->value);
        }
        case sqlock::leader_event::value:
            return subject + ": id " + std::to_string(e.leader->lock.id) + ", value " +
                   in_quotes(e.leader->value);
        case sqlock::leader_event::vacant:
            return subject + ": nobody leads";
        case sqlock::leader_event::disconnected:
            return subject + ": " + one_line(e.error);
    }
    return subject;
}

void print(const Invocation& inv, const std::string& name, const sqlock::LeaderEvent& e) {
    Output::data(inv.options.count("json") ? json_text(event_json(name, e), false)
                                           : event_text(name, e));
}

int watch(Invocation& inv, SignalRelay& signals, sqlock::Locker& locker, const std::string& name) {
    sqlock::ObserveOptions o;
    if (inv.options.count("poll")) {
        o.poll = duration_option(inv.options, "poll", duration_kind::positive);
        if (o.poll < std::chrono::milliseconds(10) || o.poll > std::chrono::seconds(1))
            throw usage_error("--poll must be 10ms to 1s, got " + sqlock::format_duration(o.poll));
    }
    sqlock::LeaderWatch w = sqlock::Election(locker, name).observe(o);
    for (;;) {
        if (signals.take_pending()) return exit_code::ok;
        // Short slices: a signal is taken between them.
        if (auto e = w.next(std::chrono::milliseconds(200))) {
            print(inv, name, *e);
            // Each line as it happens, also into a pipe; a reader that has
            // gone (`| head -1`) ends the watch (exit 70, as any command
            // whose data cannot be written).
            if (auto why = Output::finish_data())
                throw cli_error(exit_code::internal, "could not write to standard output: " + *why);
        }
    }
}

int run_leader(Invocation& inv) {
    if (inv.args.size() != 1)
        throw usage_error("leader needs exactly one name; " + usage_line("leader", leader_usage));
    if (inv.options.count("poll") && !inv.options.count("watch"))
        throw usage_error("--poll goes with --watch");
    const std::string& name = inv.args[0];
    // Before the Locker: its threads inherit the blocked signals, which
    // --watch then takes between reads.
    SignalRelay signals;
    sqlock::Locker locker = open_locker(inv.global);
    if (inv.options.count("watch")) return watch(inv, signals, locker, name);
    const std::optional<sqlock::LeaderInfo> leader = sqlock::Election(locker, name).leader();
    sqlock::LeaderEvent e;
    e.kind = leader ? sqlock::leader_event::leader : sqlock::leader_event::vacant;
    e.leader = leader;
    print(inv, name, e);
    return leader ? exit_code::ok : exit_code::not_held;
}

}  // namespace

Command leader_command() {
    return {"leader",
            leader_usage,
            "show who leads NAME; with --watch, each change; exits 1 if nobody leads",
            leader_details,
            add_leader_options,
            run_leader};
}

}  // namespace sqlock_cli
