#ifndef QUEUEPLAYER_CSONIC_SHIM_H
#define QUEUEPLAYER_CSONIC_SHIM_H
#include <sonic.h>
#endif
