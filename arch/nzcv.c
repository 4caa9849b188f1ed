/*
 * nzcv.c - the condition codes the two Arm instruction sets share (see
 * nzcv.h).
 */
#include "config.h"

#include "arch/nzcv.h"

/* The conditions, written once: code, name, and the value from the
 * flags n z c v. */
#define NZCV_COND(X) \
	X(0x0, "eq", z) \
	X(0x1, "ne", !z) \
	X(0x2, "cs", c) \
	X(0x3, "cc", !c) \
	X(0x4, "mi", n) \
	X(0x5, "pl", !n) \
	X(0x6, "vs", v) \
	X(0x7, "vc", !v) \
	X(0x8, "hi", c && !z) \
	X(0x9, "ls", !(c && !z)) \
	X(0xa, "ge", n == v) \
	X(0xb, "lt", n != v) \
	X(0xc, "gt", !z && n == v) \
	X(0xd, "le", !(!z && n == v)) \
	X(0xe, "al", true) \
	X(0xf, "nv", true)

bool nzcv_cond_holds(unsigned int cond, uint64_t flags)
{
	bool n = flags & NZCV_N, z = flags & NZCV_Z;
	bool c = flags & NZCV_C, v = flags & NZCV_V;

	switch (cond & 15) {
#define X(cc, name, expr) case cc: return (expr);
	NZCV_COND(X)
#undef X
	}
	return false;
}

const char *nzcv_cond_name(unsigned int cond)
{
	static const char *const names[16] = {
#define X(cc, name, expr) [cc] = name,
		NZCV_COND(X)
#undef X
	};
	return names[cond & 15];
}
