#!/usr/bin/env bash
# mpDris2 on a private D-Bus session bus, for MPRISClientsTests.swift.
#
# Usage: dbus-run-session --config-file=BUS.conf -- bash mpris_session.sh MPDRIS2.conf MPD_SOCKET
#
# Starts mpDris2 with only MPDRIS2.conf for configuration and MPD_SOCKET as its server (the
# argument outranks MPD_HOST and the file), then prints two lines for the test:
#   bus ADDRESS      the bus to run playerctl on (DBUS_SESSION_BUS_ADDRESS)
#   pids SCRIPT MPDRIS2
# and waits for mpDris2. SIGTERM (or SIGINT) ends mpDris2 and then this script, whereupon
# dbus-run-session stops the bus: nothing outlives the session. mpDris2 logs to stderr.
set -u

mpDris2 --config="$1" "$2" &
player=$!
trap 'kill -TERM "$player" 2>/dev/null; wait "$player"; exit 0' TERM INT
echo "bus $DBUS_SESSION_BUS_ADDRESS"
echo "pids $$ $player"
wait "$player"
echo "mpDris2 exited with status $?"
