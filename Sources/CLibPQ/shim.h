#ifndef QUIRE_LIBPQ_SHIM_H
#define QUIRE_LIBPQ_SHIM_H

/*
 * libpq, PostgreSQL's own C client, for the one Swift module that reads an app's write-ahead log (QuireSources):
 * it speaks the replication protocol (CopyBoth) that postgres-nio does not. poll(2) comes along to wait on the
 * connection's socket with a timeout.
 */
#include <libpq-fe.h>
#include <poll.h>

/* The fields of an error result (PQresultErrorField) that Quire reads. libpq defines them as character constants,
 * which Swift does not import: spelled once here as values. */
static const int quire_pq_diag_severity = PG_DIAG_SEVERITY_NONLOCALIZED;
static const int quire_pq_diag_sqlstate = PG_DIAG_SQLSTATE;
static const int quire_pq_diag_message = PG_DIAG_MESSAGE_PRIMARY;
static const int quire_pq_diag_detail = PG_DIAG_MESSAGE_DETAIL;
static const int quire_pq_diag_hint = PG_DIAG_MESSAGE_HINT;

#endif
