#!/bin/sh
# One part of the private Zeroconf stack of ZeroconfTests (AvahiServer.swift):
#   private_avahi.sh bus DIR     a D-Bus system bus of its own, on DIR/system_bus_socket
#   private_avahi.sh avahi DIR   an avahi-daemon on that bus (DBUS_SYSTEM_BUS_ADDRESS)
# configured by DIR/bus.conf and DIR/avahi.conf. Each runs until the test process closes its
# lifeline (the FIFO DIR/lifeline-PART, whose write end the test holds): when the test
# process ends, however it ends, its daemons go with it.
#
# avahi-daemon runs in a mount namespace (its pid file and socket under /run/avahi-daemon
# are its own, so two test runs, or a system Avahi, do not meet) and a network namespace
# whose only interface is a loopback of its own: not one multicast packet can leave the
# machine, whatever the configuration says (it says allow-interfaces=lo as well).
set -u
part=$1
dir=$2
exec 3<"$dir/lifeline-$part"
case $part in
bus)
    dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile &
    ;;
avahi)
    # As root, namespaces of its own; otherwise inside a user namespace where it is root.
    if unshare --mount --net true 2>/dev/null; then
        set -- unshare --mount --net
    else
        set -- unshare --user --map-root-user --mount --net
    fi
    "$@" sh -c 'ip link set lo up && mount -t tmpfs tmpfs /run && mkdir /run/avahi-daemon &&
        exec avahi-daemon -f "$1" --no-drop-root --no-chroot --no-rlimits --no-proc-title' sh "$dir/avahi.conf" &
    ;;
*)
    echo "usage: private_avahi.sh bus|avahi DIR" >&2
    exit 2
    ;;
esac
child=$!
# SIGTERM (ChildProcess.terminate) ends the daemon too: `wait` returns for a trapped signal.
trap 'kill $child $lifeline 2>/dev/null; wait $child; exit 0' TERM INT
cat <&3 >/dev/null &
lifeline=$!
wait $lifeline
kill $child 2>/dev/null
wait $child
