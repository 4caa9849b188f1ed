// tpexc.cpp - target of the return-probe exception test: exceptions
// propagate through functions whose returns are traced and are caught in
// their callers.  Its output must be the same with and without the agent.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

extern "C" {
#include "tpground.h"
}

struct guard {
	int k;
	~guard() { ground("unwound k=%d", k); }
};

// Throws for k % 3 == 0; a destructor runs on the way out (cleanup pad).
extern "C" int thrower(int k)
{
	guard g{ k };
	if (k % 3 == 0)
		throw std::runtime_error("k=" + std::to_string(k));
	return k * 11;
}

extern "C" int middle(int k)
{
	return thrower(k) + 1;
}

int main()
{
	for (int k = 1; k <= 9; k++) {
		try {
			int v = middle(k);
			ground("call k=%d value=%d", k, v);
		} catch (const std::exception &e) {
			ground("call k=%d caught=%s", k, e.what());
		}
	}
	try {
		thrower(12);
	} catch (const std::exception &e) {
		ground("direct caught=%s", e.what());
	}
	ground("last value=%d", thrower(4));
	ground("done");	/* MARK:exc-done */
	return 0;
}
