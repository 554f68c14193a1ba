package integration

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/database"
)

// pgDSNEnv names the environment variable holding the PostgreSQL DSN the
// tests use, e.g. postgres://user@127.0.0.1:5432/postgres?sslmode=disable.
const pgDSNEnv = "CONTEXTGUARD_PG_DSN"

// dbHandle is one process's view of a database: its own connection pool and
// its own ADK session service.
type dbHandle struct {
	sqlDB *sql.DB
	svc   session.Service
	once  sync.Once
}

// Close closes the connection pool; the session service is unusable after.
func (h *dbHandle) Close() error {
	var err error
	h.once.Do(func() { err = h.sqlDB.Close() })
	return err
}

// opener opens a new handle on one and the same database.
type opener func(t *testing.T) *dbHandle

// backend is a database kind the tests run against. setup prepares a fresh
// database for one test (skipping or failing the test when the kind is not
// available) and returns how to open handles on it.
type backend struct {
	name  string
	setup func(t *testing.T) opener
}

// backends are the databases every database test runs on.
var backends = []backend{
	{name: "sqlite", setup: sqliteDatabase},
	{name: "postgres", setup: postgresDatabase},
}

func newHandle(t *testing.T, sqlDB *sql.DB, dialector gorm.Dialector) *dbHandle {
	t.Helper()
	svc, err := database.NewSessionService(dialector, &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	require.NoError(t, err, "database.NewSessionService")
	require.NoError(t, database.AutoMigrate(svc), "database.AutoMigrate")
	h := &dbHandle{sqlDB: sqlDB, svc: svc}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// sqliteDatabase is a SQLite file in the test's temporary directory, opened
// through ADK's own pure-Go driver.
func sqliteDatabase(t *testing.T) opener {
	path := filepath.Join(t.TempDir(), "sessions.db")
	return func(t *testing.T) *dbHandle {
		t.Helper()
		sqlDB, err := sql.Open(sqlite.DriverName, path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
		require.NoError(t, err, "open sqlite")
		return newHandle(t, sqlDB, sqlite.Dialector{Conn: sqlDB})
	}
}

// postgresDSN returns the DSN from the environment. Without one the test is
// skipped locally and fails in CI (CI=true), where the server is part of the
// run (see .ci/run).
func postgresDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(pgDSNEnv)
	if dsn != "" {
		return dsn
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set: CI must run the PostgreSQL tests (.ci/run starts a server and exports it)", pgDSNEnv)
	}
	t.Skipf("PostgreSQL tests skipped: set %s to a server's DSN to run them (see integration/README.md)", pgDSNEnv)
	return ""
}

// postgresDatabase is a fresh schema on the server named by the DSN,
// dropped when the test ends. Every handle sets search_path to it.
func postgresDatabase(t *testing.T) opener {
	dsn := postgresDSN(t)
	cfg, err := pgx.ParseConfig(dsn)
	require.NoError(t, err, "parse %s", pgDSNEnv)
	admin := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = admin.Close() })
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	schema := "cg_test_" + hex.EncodeToString(suffix[:])
	ctx := context.Background()
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err, "create schema on %s", cfg.Host)
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	t.Logf("postgres: %s:%d, schema %s", cfg.Host, cfg.Port, schema)
	return func(t *testing.T) *dbHandle {
		t.Helper()
		c := cfg.Copy()
		c.RuntimeParams["search_path"] = schema
		sqlDB := stdlib.OpenDB(*c)
		return newHandle(t, sqlDB, postgres.New(postgres.Config{Conn: sqlDB}))
	}
}

// forEachBackend runs fn as one subtest per backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, open opener)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			fn(t, b.setup(t))
		})
	}
}
