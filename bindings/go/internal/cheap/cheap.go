// Package cheap reports how many bytes the C heap (glibc malloc, every arena) has handed out and
// not taken back. Unlike the resident set size, this does not move when the allocator keeps
// freed pages or opens an arena for a new thread, so a leak test can hold it to a tight bound.
package cheap

/*
#include <malloc.h>

static size_t cheap_in_use(void) {
	struct mallinfo2 m = mallinfo2();
	return m.uordblks + m.hblkhd;
}
*/
import "C"

// InUse returns the bytes allocated by malloc and not yet freed, over all arenas and mmapped
// chunks.
func InUse() int64 { return int64(C.cheap_in_use()) }
