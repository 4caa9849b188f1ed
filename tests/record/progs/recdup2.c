/* recdup2.c: the second static helper (see recdup1.c). */
__attribute__((noinline)) static int helper(int x)
{
	return x * 2;
}

int dup2(int x);
int dup2(int x)
{
	return helper(x);
}
