/* libtplib.so: a traced function in a shared library. */
int lib_calls;

__attribute__((noinline)) int lib_scale(int x, int k)
{
	int r = x * k; /* MARK:lib-body */

	lib_calls++;
	return r;
}
