/* recdup1.c, recdup2.c - two static functions of one name, for the
 * "ambiguous symbol" test. */
#include <stdio.h>

__attribute__((noinline)) static int helper(int x)
{
	return x + 1;
}

int dup1(int x);
int dup1(int x)
{
	return helper(x);
}

int dup2(int x);

int main(void)
{
	printf("%d\n", dup1(1) + dup2(2));
	return 0;
}
