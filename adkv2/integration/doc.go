// Package integration tests the ADK v2 plugin (module adkv2) against real
// parts, as the root's integration module tests the ADK v1 plugin: ADK's SQL
// session service on SQLite and PostgreSQL (a process restart, two runner
// replicas on one database) and ADK's Gemini adapter speaking the Gemini
// wire format to a local HTTP server.
//
// It is a separate module so the library's own dependency set stays lean;
// it has no API of its own. The root's integration/README.md says how to
// run the PostgreSQL tests locally.
package integration
