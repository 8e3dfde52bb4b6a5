// How lock rows are shown: a table for `list`, a block for `show`, and JSON
// (one object per row, same fields) for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sqlock/error.hpp"
#include "sqlock/lock_info.hpp"
#include "sqlock/pause.hpp"
#include "sqlock/run_history.hpp"

namespace sqlock_cli {

/// The command `sqlock run` recorded in the row (its argv[0]), else the
/// holder's program name, else empty.
std::string holder_command(const sqlock::LockInfo& info);

/// The `--label` the holder gave `sqlock run`, or "".
std::string holder_label(const sqlock::LockInfo& info);

/// What `list` shows as the holder's job: its label, else its command.
std::string holder_job(const sqlock::LockInfo& info);

/// "59m12s", or "-" once expired.
std::string time_left(const sqlock::LockInfo& info);

/// "expires in 59m12s" / "expired 3s ago".
std::string expiry_phrase(const sqlock::LockInfo& info);

/// "lock 'name' is held by host:pid (user, program), expires in 5m (... UTC)".
std::string holder_sentence(const sqlock::LockInfo& info);

/// "held", "kept" (by a minimum hold after the job finished) or "expired".
std::string state_word(const sqlock::LockInfo& info);

/// The holder's pid, "12345 (gone)" for a process on this host that no
/// longer exists, "-" when unknown.
std::string pid_text(const sqlock::LockInfo& info);

/// One row as JSON (fields in this order, for people reading it): name, id, created, expires,
/// seconds_left, expired, holder {host, pid, user, program, command}, locked_by (the raw column).
nlohmann::ordered_json lock_json(const sqlock::LockInfo& info);

/// `json` as text. Invalid UTF-8 (rows written by other programs) is
/// replaced rather than thrown on.
std::string json_text(const nlohmann::ordered_json& json, bool pretty);

/// The errc::lost (exit 79) of `release` and `renew` by token when NAME has
/// no row at all; `db` is at_database()'s suffix.
sqlock::error not_held_by_anyone(const std::string& name, const std::string& db);

/// The `list` table, header included, one line per row, no trailing newline.
std::string lock_table(const std::vector<sqlock::LockInfo>& rows);

/// "job 'x' is paused by user@host since ... UTC until ... UTC: reason",
/// one line, for `run` and `pause`.
std::string describe_pause(const sqlock::PauseInfo& p);

/// A pause as JSON: name, paused_by, reason, created, until (null: until
/// resumed).
nlohmann::ordered_json pause_json(const sqlock::PauseInfo& p);

/// The pauses as a table with a header line, for `list`.
std::string pause_table(const std::vector<sqlock::PauseInfo>& pauses);

/// Rows of cells (the first the header) as text, columns two spaces apart,
/// lined up by display width (list, pauses, history).
std::string aligned_columns(const std::vector<std::vector<std::string>>& cells);

/// One run of the history as JSON: id, name, window_start, host, pid, user,
/// program, fencing_id, started, ended, outcome, exit_status, signal,
/// duration_seconds (`history --json`, `check --json`).
nlohmann::ordered_json run_json(const sqlock::RunRecord& run);

/// A run's duration for people: "250ms", "4.2s", "1h2m"; "-" when unknown.
std::string seconds_text(const std::optional<double>& seconds);

/// How a run ended for people: "exit 3", "SIGKILL", "-".
std::string status_text(const sqlock::RunRecord& run);

/// The `show` block: "field: value" lines, no trailing newline.
std::string lock_details(const sqlock::LockInfo& info);

}  // namespace sqlock_cli
