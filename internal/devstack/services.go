// Package devstack runs the whole product in one process for development and tests: an
// embedded Temporal server (SQLite) with its Web UI, the worker, the API and the offline model.
// Only the dev binary and the integration tests link it (and with it the Temporal server).
package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// EnsureServices makes Postgres and Redis reachable: when one is down and its server is
// installed locally, it is started; otherwise the error says which URL and how to fix it.
func EnsureServices(ctx context.Context, databaseURL, redisURL string, log *slog.Logger) error {
	if err := ensureService(ctx, "Postgres", "DATABASE_URL", databaseURL, "5432", startPostgres, log); err != nil {
		return err
	}
	return ensureService(ctx, "Redis", "REDIS_URL", redisURL, "6379", startRedis, log)
}

func ensureService(ctx context.Context, name, envVar, rawURL, defaultPort string, start func(context.Context) error, log *slog.Logger) error {
	addr, local, err := serviceAddress(rawURL, defaultPort)
	if err != nil {
		return fmt.Errorf("%s is not a valid URL: %w", envVar, err)
	}
	if reachable(addr) {
		return nil
	}
	hint := fmt.Sprintf("%s is not reachable at %s: start it, or point %s at a running %s", name, addr, envVar, name)
	if !local {
		return fmt.Errorf("%s", hint)
	}
	log.Info("starting local "+name, "addr", addr)
	if err := start(ctx); err != nil {
		return fmt.Errorf("%s (starting the local one failed: %v)", hint, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if reachable(addr) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s (started it, but it did not answer within 20s)", hint)
}

func serviceAddress(rawURL, defaultPort string) (addr string, local bool, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false, err
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = defaultPort
	}
	local = host == "127.0.0.1" || host == "localhost" || host == "::1"
	return net.JoinHostPort(host, port), local, nil
}

func reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// startPostgres starts the Debian-packaged cluster (pg_ctlcluster), the way these machines run it.
func startPostgres(ctx context.Context) error {
	if _, err := exec.LookPath("pg_ctlcluster"); err != nil {
		return errors.New("no local PostgreSQL installation (pg_ctlcluster not found)")
	}
	versions, _ := filepath.Glob("/etc/postgresql/*")
	if len(versions) == 0 {
		return errors.New("no cluster under /etc/postgresql")
	}
	version := filepath.Base(versions[len(versions)-1])
	return run(ctx, "pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "start")
}

func startRedis(ctx context.Context) error {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return errors.New("no local Redis installation (redis-server not found)")
	}
	return run(ctx, "redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379",
		"--save", "", "--appendonly", "no")
}

func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
