// Command sapagent-connector serves the connector protocol for real SAP systems through SAP's
// own HTTP interfaces (docs/connector.md). Wiring only: the service is internal/connector.
//
//	sapagent-connector          serve (CONNECTOR_ADDR, CONNECTOR_CONFIG)
//	sapagent-connector health   probe each system's interfaces once, print JSON, exit 1 if one is unreachable
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/connector/sapbackend"
)

// DefaultAddr is where the connector listens without CONNECTOR_ADDR.
const DefaultAddr = ":8070"

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, log); err != nil {
		log.Error("sapagent-connector", "error", err.Error())
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, log *slog.Logger) error {
	cfg, err := connector.LoadConfig(getenv("CONNECTOR_CONFIG"), getenv)
	if err != nil {
		return err
	}
	backends := map[string]connector.Backend{}
	for _, sys := range cfg.Systems {
		backends[sys.ID] = sapbackend.New(sys, connector.NewHTTPClient(sys))
	}
	if len(args) > 0 {
		if args[0] != "health" || len(args) > 1 {
			return fmt.Errorf("unknown arguments %q: use no argument to serve or \"health\"", args)
		}
		return health(ctx, cfg, backends, stdout)
	}
	store, err := connector.OpenIdempotencyStore(cfg.IdempotencyStore)
	if err != nil {
		return err
	}
	defer store.Close()
	srv, err := connector.NewServer(cfg, backends, store, log)
	if err != nil {
		return err
	}
	addr := getenv("CONNECTOR_ADDR")
	if addr == "" {
		addr = DefaultAddr
	}
	hs := &http.Server{Addr: addr, Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	cert, key := getenv("CONNECTOR_TLS_CERT"), getenv("CONNECTOR_TLS_KEY")
	if (cert == "") != (key == "") {
		return errors.New("CONNECTOR_TLS_CERT and CONNECTOR_TLS_KEY are set together (or neither: plain HTTP behind a TLS proxy)")
	}
	errc := make(chan error, 1)
	go func() {
		if cert != "" {
			errc <- hs.ListenAndServeTLS(cert, key)
			return
		}
		errc <- hs.ListenAndServe()
	}()
	log.Info("sapagent-connector listening", "addr", addr, "tls", cert != "", "systems", len(cfg.Systems), "idempotency_store", cfg.IdempotencyStore)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func health(ctx context.Context, cfg *connector.Config, backends map[string]connector.Backend, stdout io.Writer) error {
	report := connector.CheckSystems(ctx, cfg.Systems, backends)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"systems": report}); err != nil {
		return err
	}
	for _, h := range report {
		if !h.Reachable {
			return fmt.Errorf("system %s is not reachable", h.ID)
		}
	}
	return nil
}
