// The benchmark's results: one row per measured figure, printed as a table or
// as JSON (so that runs can be compared by a script).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace sqlock_bench {

/// What a row is expected to achieve. Nothing fails on a timing: a missed
/// target is reported, never turned into an exit status.
struct Goal {
    enum class kind {
        none,
        ratio_at_least,  // sqlock / baseline >= bound (throughputs)
        ratio_at_most,   // sqlock / baseline <= bound (costs)
        below,           // the sqlock figure itself < bound (latencies)
    };
    kind what = kind::none;
    double bound = 0.0;

    static Goal none() { return {}; }
    static Goal ratio_at_least(double b) { return {kind::ratio_at_least, b}; }
    static Goal ratio_at_most(double b) { return {kind::ratio_at_most, b}; }
    static Goal below(double b) { return {kind::below, b}; }
};

/// One figure: sqlock's value, the baseline measured in the same run, and
/// their ratio (always sqlock / baseline, in the row's unit).
struct Result {
    enum class state { measured, skipped, failed };

    std::string section;    // "uncontended", "contention", ...
    std::string operation;  // what was measured, with its parameters
    std::string backend;    // "sqlite", "postgresql"
    std::string unit;       // "cycles/s", "hand-offs/s", "ms", "us", "s", "MiB"
    std::optional<double> sqlock;
    std::optional<double> baseline;
    std::string baseline_name;  // what the baseline is
    /// The median of per-round ratios when sqlock and the baseline ran in
    /// alternating rounds: steadier on a noisy machine than the ratio of the
    /// medians, which is used otherwise.
    std::optional<double> paired_ratio;
    Goal goal;
    std::string note;  // extra figures, or why skipped / what failed
    state status = state::measured;

    std::optional<double> ratio() const;
    /// Whether the goal was met; empty without a goal or figures.
    std::optional<bool> met() const;
};

/// Report
///
/// Collects rows, run-wide facts (machine, versions) and notes (scaling in
/// quick mode, skips). Not thread-safe; used by the parent process only.
class Report {
  public:
    void fact(const std::string& key, const std::string& value);
    void note(const std::string& text);
    void add(Result row);
    void skip(const std::string& section, const std::string& backend, const std::string& why);
    void fail(const std::string& section, const std::string& backend, const std::string& what);

    bool any_failed() const;
    void print_table(std::ostream& out) const;
    nlohmann::json to_json() const;

  private:
    std::vector<std::pair<std::string, std::string>> facts_;
    std::vector<std::string> notes_;
    std::vector<Result> rows_;
};

/// "41,230/s", "1.84 ms", "3.2 MiB": a figure in its unit, for people.
std::string format_value(double value, const std::string& unit);

}  // namespace sqlock_bench
