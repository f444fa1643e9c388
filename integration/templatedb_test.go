package integration

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sapagent/sapagent/internal/store"
)

// Each test's database is a copy of one database migrated once per test process: Postgres
// copies a database in about the time it creates an empty one, while running the migrations
// costs seconds per test on a loaded machine. The copy is still the test's own; the stack's
// start finds it migrated and leaves it as it is.
var migrated struct {
	once sync.Once
	url  string // the template's URL, on the server the tests use
	err  error
}

// createMigratedDatabase creates the database named in databaseURL as a copy of the migrated
// template on the same server.
func createMigratedDatabase(ctx context.Context, databaseURL string) error {
	migrated.once.Do(func() { migrated.url, migrated.err = migrateTemplate(databaseURL) })
	if migrated.err != nil {
		return fmt.Errorf("migrated template database: %w", migrated.err)
	}
	// Both databases are on one server: the statement runs in its "postgres" database.
	server, err := url.Parse(databaseURL)
	if err != nil {
		return err
	}
	tmpl, err := url.Parse(migrated.url)
	if err != nil {
		return err
	}
	create := "CREATE DATABASE " + pgx.Identifier{strings.TrimPrefix(server.Path, "/")}.Sanitize() +
		" TEMPLATE " + pgx.Identifier{strings.TrimPrefix(tmpl.Path, "/")}.Sanitize()
	server.Path = "/postgres"
	conn, err := pgx.Connect(ctx, server.String())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for {
		_, err = conn.Exec(ctx, create)
		// The migration's own session may still be closing on the server: the copy needs the
		// template without sessions, so it waits for that one to end.
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55006" { // object_in_use
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// migrateTemplate creates and migrates the template next to the database named in databaseURL.
func migrateTemplate(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", err
	}
	u.Path = "/sapagent_test_template_" + randomSuffix()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := store.EnsureDatabase(ctx, u.String()); err != nil {
		return "", err
	}
	if err := store.Migrate(ctx, u.String()); err != nil {
		_ = store.DropDatabase(ctx, u.String())
		return "", err
	}
	return u.String(), nil
}

// dropMigratedTemplate removes the template when the package's tests are done.
func dropMigratedTemplate() {
	if migrated.url == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = store.DropDatabase(ctx, migrated.url)
}
