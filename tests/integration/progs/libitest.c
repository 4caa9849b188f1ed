/* libitest.c - the tests' own shared library (libitest.so). */
int lib_calls;

int lib_mul(int a, int b);
int lib_mul(int a, int b)
{
	int p = a * b;		/* MARK:lib-body */
	lib_calls++;		/* MARK:lib-after */
	return p;
}
