// A preload library for a process the bench runs under valgrind (LD_PRELOAD). It has no API: it
// interposes sigsuspend, see SigsuspendCopy.c.
#pragma once
