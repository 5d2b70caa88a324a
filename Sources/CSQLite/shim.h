#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro around a cast; Swift cannot import it.
static inline sqlite3_destructor_type replica_sqlite_transient(void) { return SQLITE_TRANSIENT; }
