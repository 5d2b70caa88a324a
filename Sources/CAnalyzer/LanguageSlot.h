#ifndef REPLICA_LANGUAGE_SLOT_H
#define REPLICA_LANGUAGE_SLOT_H

// The analyzer's own: a language as a document's is kept and compared, in 16 bytes. "" for none, and
// for one too long to be a code.
#define REPLICA_LANGUAGE_SLOT 16
void replica_language_slot(const char *language, char into[REPLICA_LANGUAGE_SLOT]);

#endif
