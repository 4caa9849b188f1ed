// tpplug.cpp - the C++ library tpdl.c loads during the run: it throws
// through the program's c_wrapper() and catches in plugin_run().
#include <stdexcept>
#include <string>

extern "C" {
#include "tpground.h"
}

static int plugin_thrower(int k)
{
	if (k % 2 == 0)
		throw std::runtime_error("even " + std::to_string(k));
	return k * 9;
}

extern "C" void plugin_run(int (*wrap)(int (*)(int), int))
{
	for (int k = 1; k <= 6; k++) {
		try {
			ground("plugin k=%d value=%d", k, wrap(plugin_thrower, k));
		} catch (const std::exception &e) {
			ground("plugin k=%d caught=%s", k, e.what());
		}
	}
}
