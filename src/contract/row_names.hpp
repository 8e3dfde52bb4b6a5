// The names of the rows that are not a plain lock's own: a semaphore's
// slots ("name#N") and a shared hold's marker owner and holder rows
// ("name#shared-<token>"). Every backend's statements and the core agree
// on them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace sqlock::detail {

/// The locked_by of a shared marker row: what every statement compares.
extern const std::string shared_marker_owner;

/// "name#shared-" + the first 16 characters of `token`: the row of one
/// shared holder of `name`.
std::string shared_lockstring(const std::string& name, const std::string& token);

/// The name a shared holder row (shared_lockstring()) belongs to; nullopt
/// for any other lockstring.
std::optional<std::string> shared_name_of(const std::string& lockstring);

/// The prefix every shared holder row of `name` starts with.
std::string shared_prefix(const std::string& name);

/// The first text after every one that starts with shared_prefix(name),
/// bytewise: [shared_prefix(name), shared_prefix_end(name)) is exactly the
/// holders' rows, as a range of an index that orders bytes.
std::string shared_prefix_end(const std::string& name);

/// How many bytes a name may have to be held shared: its holders' rows must
/// fit the lockstring column.
constexpr std::size_t max_shared_name_bytes = 104;

/// Throws errc::invalid_argument for a (valid) name too long to be held
/// shared.
void validate_shared_name(const std::string& name);

/// "name#N": the row of slot N of semaphore `name`.
std::string slot_lockstring(const std::string& name, int slot);

/// Where a trailing "#N" (N one or more ASCII digits) starts in
/// `lockstring`, the position of its '#'; npos when there is none. What is
/// before it is the semaphore's name ("" for "#7").
std::size_t slot_suffix_at(const std::string& lockstring);

/// N when `lockstring` is slot_lockstring(name, N) for an N in 1..capacity,
/// else 0.
int slot_number(const std::string& lockstring, const std::string& name, int capacity);

}  // namespace sqlock::detail
