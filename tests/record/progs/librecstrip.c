/* librecstrip.c - the shared library recstrip calls: one exported
 * function, found through the dynamic symbols once the library is
 * stripped as distributions ship libraries. */
__attribute__((noinline)) int lib_mix(int a, int b)
{
	return a * 31 + b;
}
