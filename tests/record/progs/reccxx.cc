// reccxx.cc - a C++ exception through a probed function, for
// probe-trace's return-probe tests.
//
//   reccxx OUT N
//
// For i < N: thrower(i) returns i + 1, or throws when i % 4 == 0 (the
// exception crosses relay(), which is probed too, and is caught in
// main).  OUT: "thrower I R" or "caught I WHAT", then "done".
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

__attribute__((noinline)) int thrower(int i)
{
	if (i % 4 == 0)
		throw std::runtime_error("four " + std::to_string(i));
	return i + 1;
}

__attribute__((noinline)) int relay(int i)
{
	return thrower(i) * 10;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	FILE *out = std::fopen(argv[1], "w");
	if (!out)
		return 2;
	int n = std::atoi(argv[2]);
	for (int i = 0; i < n; i++) {
		try {
			int r = relay(i);
			std::fprintf(out, "relay %d %d\n", i, r);
		} catch (const std::exception &e) {
			std::fprintf(out, "caught %d %s\n", i, e.what());
		}
	}
	std::fprintf(out, "done\n");
	return std::fclose(out) != 0;
}
