// libpq, PostgreSQL's client library (Debian's libpq-dev puts the header in /usr/include/postgresql,
// which `pkg-config --cflags libpq` gives). Swift calls all of it that replica uses directly.
#include <libpq-fe.h>
