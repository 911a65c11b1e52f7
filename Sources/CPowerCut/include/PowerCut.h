// A preload library for redis-server (LD_PRELOAD), used by the drill to stand in for a power cut.
// It has no API: it interposes open/write/fsync on Redis's AOF files, see PowerCut.c.
#pragma once
