// Where sqlock's words go: the data a command was asked for on stdout;
// everything else (results, notes, errors) on stderr as single lines
// prefixed "sqlock: ", governed by --quiet and --verbose.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "text.hpp"  // text::printable, the one rule for showing text

namespace sqlock_cli {

/// Output
///
/// --quiet silences result messages and notes (and the "lock busy"
/// message), never errors nor the data a command was asked for; --verbose adds details and the wait
/// progress line when stderr is not a terminal. Stateless apart from the two flags; cheap to copy.
class Output {
  public:
    Output() = default;
    Output(bool quiet, bool verbose) : quiet_(quiet), verbose_(verbose) {}

    bool quiet() const noexcept { return quiet_; }
    bool verbose() const noexcept { return verbose_; }

    /// Data asked for (a listing, JSON, a token) on stdout, even with --quiet.
    /// Nothing else goes to stdout, so a script can capture it whole.
    static void data(const std::string& text);
    /// Flushes the data; what went wrong if any of it could not be written
    /// (a full disk, a closed pipe with SIGPIPE ignored), once.
    static std::optional<std::string> finish_data();
    /// A result message ("deleted 3 expired locks", "no locks"): a
    /// "sqlock: ..." line on stderr, not with --quiet.
    void result(const std::string& line) const;
    /// A "sqlock: ..." line on stderr (not with --quiet).
    void note(const std::string& message) const;
    /// A "sqlock: ..." line on stderr, only with --verbose (and not --quiet).
    void detail(const std::string& message) const;
    /// A "sqlock: ..." line on stderr, always. Newlines in `message` are
    /// flattened so that every error is exactly one line.
    static void error(const std::string& message);

    /// What a line is, for a sink.
    enum class line_kind { result, note, detail, error };
    using line_sink = std::function<void(line_kind, const std::string& message)>;
    /// Sends every line Output writes to `sink` instead of stderr (after
    /// the --quiet and --verbose checks), so that `run --log-format json`
    /// writes nothing but JSON; an empty sink restores the "sqlock: " lines.
    /// Set it before any thread that writes starts.
    static void redirect(line_sink sink);

  private:
    static void write_line(line_kind kind, const std::string& message);

    bool quiet_ = false;
    bool verbose_ = false;
};

/// `text` on one line: CR and LF become spaces, trailing blanks go.
std::string one_line(std::string text);

/// "'name'" for messages (text::printable, the one rule for showing text), cut
/// after 512 bytes: every valid name is shown whole.
std::string in_quotes(const std::string& name);

/// `text` as one shell word that can be pasted from a message into bash:
/// 'text' (with ' written as '\''), or $'...' with \xNN escapes when it holds
/// control characters or bytes that are not UTF-8, which no terminal shows
/// as themselves.
std::string pasteable(const std::string& text);

/// "1 row", "3 rows": a count with its noun (regular plurals only).
std::string count_of(std::size_t n, const std::string& noun);

/// Columns `text` takes on a terminal: East Asian wide characters count 2,
/// combining marks 0, everything else (after text::printable) 1.
std::size_t display_width(const std::string& text);

/// " [url]": the suffix naming the database in messages. Pass a URL that is
/// already redacted (Locker::url()).
std::string at_database(const std::string& redacted_url);

/// Writes all of `text` to `fd` in as few write() calls as possible, so a
/// line is not interleaved with output of the command sqlock runs.
void write_all(int fd, const std::string& text) noexcept;

}  // namespace sqlock_cli
