/* static-true.c - exits 0 at once, whatever its arguments: built with
 * -static where the static libc is installed (see the Makefile), its exec
 * runs no dynamic loader, so execsnoop reads its arguments from the stack
 * copy alone (the loader's uprobe never fires for it).
 *
 * usage: static-true [ARGS...] */
int main(void)
{
	return 0;
}
