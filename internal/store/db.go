// Package store is the Postgres data layer: connection pool, migrations and the queries
// for each table. Handlers and activities go through it; nothing else writes SQL.
package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"

	"github.com/sapagent/sapagent/schemas"
)

// ErrNotFound is returned when a row does not exist (or is not visible to the caller).
var ErrNotFound = errors.New("not found")

// Store is one Postgres pool and the aggregates that query it; their methods are the only SQL
// in the product. Consumers take the aggregate they need (st.Tenancy, st.Files...) or declare
// an interface of the few methods they call. The aggregates are embedded so that test fixtures
// and wiring that set up several of them keep one handle (st.CreateOrg).
type Store struct {
	Pool *pgxpool.Pool
	*Conversations
	*Tenancy
	*Deletions
	*Connections
	*Files
	*Actions
}

// New builds a Store over a pool the caller opened.
func New(pool *pgxpool.Pool) *Store {
	return &Store{
		Pool:          pool,
		Conversations: &Conversations{pool: pool},
		Tenancy:       &Tenancy{pool: pool},
		Deletions:     &Deletions{pool: pool},
		Connections:   &Connections{pool: pool},
		Files:         &Files{pool: pool},
		Actions:       &Actions{pool: pool},
	}
}

// Open connects a pool and checks the server answers.
func Open(ctx context.Context, databaseURL string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL is not a valid Postgres URL: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres at %s: %w", Redact(databaseURL), err)
	}
	return New(pool), nil
}

// Close releases the pool.
func (s *Store) Close() { s.Pool.Close() }

// Migrate applies every embedded migration not yet applied. tern holds an advisory lock,
// so concurrent starts (several api/worker replicas) are safe.
func Migrate(ctx context.Context, databaseURL string) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("postgres at %s: %w", Redact(databaseURL), err)
	}
	defer conn.Close(ctx)
	m, err := migrate.NewMigrator(ctx, conn, "schema_version")
	if err != nil {
		return err
	}
	sub, err := fs.Sub(schemas.Migrations, "migrations")
	if err != nil {
		return err
	}
	if err := m.LoadMigrations(sub); err != nil {
		return err
	}
	return m.Migrate(ctx)
}

// EnsureDatabase creates the database named in databaseURL when it does not exist yet,
// by connecting to the server's "postgres" database. Dev stack and tests use it so a fresh
// machine needs no manual createdb.
func EnsureDatabase(ctx context.Context, databaseURL string) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL is not a valid Postgres URL: %w", err)
	}
	name := cfg.Database
	if name == "" || name == "postgres" {
		return nil
	}
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres at %s: %w", Redact(databaseURL), err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database
		return nil
	}
	return err
}

// DropDatabase removes a database (tests clean up the one they created).
func DropDatabase(ctx context.Context, databaseURL string) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return err
	}
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// Redact removes a password from a connection URL so it can be logged or shown in an error.
func Redact(rawURL string) string {
	at := strings.LastIndex(rawURL, "@")
	scheme := strings.Index(rawURL, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return rawURL
	}
	creds := rawURL[scheme+3 : at]
	if user, _, ok := strings.Cut(creds, ":"); ok {
		return rawURL[:scheme+3] + user + ":***" + rawURL[at:]
	}
	return rawURL
}
