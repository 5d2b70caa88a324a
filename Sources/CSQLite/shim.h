#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro around a cast; Swift cannot import it.
static inline sqlite3_destructor_type replica_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// SQLite keeps memory statistics by default, which takes a global mutex on every allocation; replica
// reads none of them. sqlite3_config is variadic, which Swift cannot call. Returns SQLITE_MISUSE, and
// changes nothing, once SQLite has been initialized in this process.
static inline int replica_sqlite_disable_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

// sqlite3_db_config is variadic too.
static inline int replica_sqlite_disable_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
