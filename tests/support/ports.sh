# ports.sh — sourced by the scripts that start throwaway servers (each
# backend's src/backends/<name>/testing/*.sh): a free TCP port on this host.

# True if a TCP socket of this host uses port $1 as its own: a listener, or
# a connection's local end (which keeps a server from binding the port too).
port_in_use() {
    local sockets
    sockets=$(ss -Htan "sport = :$1" 2>/dev/null)
    [ -n "$sockets" ]
}

# The ports pick_port draws from: 20000 up to below the kernel's range for
# the local ends of outgoing connections (ip_local_port_range, 32768-60999
# by default), so that a connection made between picking a port and binding
# it cannot take it; 20000-59999 if that range leaves fewer than 2000.
port_range() {
    local low
    low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 0)
    if [ "${low:-0}" -ge 22000 ]; then echo "20000 $((low - 20000))"; else echo "20000 40000"; fi
}

# Prints a random free port of port_range; fails after 100 tries.
pick_port() {
    local port tries first count
    read -r first count <<<"$(port_range)"
    for tries in $(seq 1 100); do
        port=$((first + (RANDOM * 32768 + RANDOM) % count))
        port_in_use "$port" || { echo "$port"; return 0; }
    done
    echo "${0##*/}: no free TCP port found after $tries tries" >&2
    return 1
}
