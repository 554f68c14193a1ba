// Package integration tests contextguard against real parts: ADK's SQL
// session service on SQLite and PostgreSQL (a process restart, two runner
// replicas on one database) and ADK's Gemini adapter speaking the Gemini
// wire format to a local HTTP server.
//
// It is a separate module so the library's own dependency set stays lean;
// it has no API of its own. See README.md for how to run the PostgreSQL
// tests locally.
package integration
