#ifndef QUEUEPLAYER_CAVAHI_SHIM_H
#define QUEUEPLAYER_CAVAHI_SHIM_H
// libavahi-client: the daemon's Zeroconf publication (`_mpd._tcp`) through the Avahi daemon,
// over the D-Bus system bus, on Avahi's threaded poll. Types only: the module links nothing,
// the functions are looked up when the publication starts (DaemonCore's AvahiLibrary.swift).
#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/thread-watch.h>
#include <avahi-common/timeval.h>
#include <net/if.h>
#endif
