/* watch.c - a global written and read at known points, for watch, rwatch
 * and awatch.  Sequence on `watched`: write 1, write 2, read (into sink),
 * write 3. */
#include "ground.h"

int watched;
int sink;

int main(void)
{
	ground("&watched=%p", (void *)&watched);
	watched = 1;		/* MARK:write1 */
	watched = 2;		/* MARK:write2 */
	sink = watched;		/* MARK:read */
	watched = 3;		/* MARK:write3 */
	ground("watched=%d sink=%d", watched, sink);
	return 0;
}
