# ports.sh — sourced by the scripts that start throwaway servers (each
# backend's src/backends/<name>/testing/*.sh): a free TCP port on this host.

# True if something listens on TCP port $1.
port_in_use() {
    local listening
    listening=$(ss -Hltn "sport = :$1" 2>/dev/null)
    [ -n "$listening" ]
}

# Prints a random free port in 20000..59999; fails after 100 tries.
pick_port() {
    local port tries
    for tries in $(seq 1 100); do
        port=$((20000 + RANDOM % 40000))
        port_in_use "$port" || { echo "$port"; return 0; }
    done
    echo "${0##*/}: no free TCP port found after $tries tries" >&2
    return 1
}
