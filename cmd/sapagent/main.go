// Command sapagent runs one production role: api, worker, migrate or offline-llm.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sapagent/sapagent/internal/app"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/worker"
)

const usage = `usage: sapagent <command>

commands:
  api          serve the HTTP API, WebSocket relay (HTTP_ADDR)
  worker       run the Temporal worker (workflows and activities)
  migrate      apply the Postgres migrations in schemas/
  offline-llm  serve the deterministic OpenAI-compatible model (OFFLINE_LLM_ADDR)
  token        print a development bearer token: sapagent token --user <id> [--ttl 24h]
  rotate-secrets  re-encrypt stored secrets under SECRETS_KEY (keep old keys in SECRETS_OLD_KEYS)

Configuration comes from environment variables; see README.md.`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := config.Load()
	if err == nil {
		err = runCommand(ctx, os.Args[1], cfg, log)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sapagent:", err)
		os.Exit(1)
	}
}

func runCommand(ctx context.Context, cmd string, cfg config.Config, log *slog.Logger) error {
	switch cmd {
	case "migrate":
		return store.Migrate(ctx, cfg.DatabaseURL)
	case "api":
		deps, err := app.Open(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer deps.Close()
		srv, err := deps.APIServer(ctx)
		if err != nil {
			return err
		}
		l, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			return err
		}
		log.Info("api listening", "addr", l.Addr().String())
		return app.Serve(ctx, l, srv.Router())
	case "worker":
		deps, err := app.Open(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer deps.Close()
		acts, err := deps.Activities()
		if err != nil {
			return err
		}
		w := worker.New(deps.Temporal, cfg.TaskQueue, acts, cfg.WorkerStopGrace)
		log.Info("worker running", "task_queue", cfg.TaskQueue, "temporal", cfg.TemporalAddress)
		return worker.Run(w, interruptOn(ctx))
	case "offline-llm":
		rules, err := offlineRules()
		if err != nil {
			return err
		}
		l, err := net.Listen("tcp", cfg.OfflineLLMAddr)
		if err != nil {
			return err
		}
		log.Info("offline model listening", "url", "http://"+l.Addr().String()+"/v1")
		return app.Serve(ctx, l, offlinellm.New(offlinellm.Options{
			TokenDelay: cfg.OfflineLLMDelay, Rules: rules, APIKey: os.Getenv("OFFLINE_LLM_API_KEY"),
		}).Handler())
	case "sapsim":
		return errors.New("the SAP simulator is its own binary now: run sapagent-sapsim [--abapgit <folder>] [--landscape-objects N] (make sapsim)")
	case "token":
		return printToken(cfg, os.Args[2:])
	case "rotate-secrets":
		deps, err := app.Open(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer deps.Close()
		keys, err := deps.Keyring()
		if err != nil {
			return err
		}
		n, err := secrets.Rotate(ctx, deps.Store.Connections, keys)
		fmt.Printf("re-encrypted %d values under key %s\n", n, keys.CurrentKeyID())
		return err
	default:
		return fmt.Errorf("unknown command %q\n\n%s", cmd, usage)
	}
}

// printToken mints an HS256 token with AUTH_JWT_SECRET (in development, the dev stack's
// generated secret in DATA_DIR), so the README's curl examples work.
func printToken(cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	user := fs.String("user", "", "the user id (token subject)")
	ttl := fs.Duration("ttl", 24*time.Hour, "how long the token is valid")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *user == "" {
		return fmt.Errorf("token: --user is required")
	}
	cfg, err := cfg.WithDevSecrets()
	if err != nil {
		return err
	}
	if cfg.AuthJWTSecret == "" {
		return fmt.Errorf("token: minting needs AUTH_JWT_SECRET (a JWKS setup gets tokens from its identity provider)")
	}
	tok, err := auth.Mint([]byte(cfg.AuthJWTSecret), *user, *ttl, cfg.AuthAudience, cfg.AuthIssuer)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

func offlineRules() ([]offlinellm.Rule, error) {
	if path := os.Getenv("OFFLINE_LLM_RULES"); path != "" {
		return offlinellm.LoadRules(path)
	}
	return nil, nil
}

// interruptOn adapts a context to the worker's interrupt channel.
func interruptOn(ctx context.Context) <-chan interface{} {
	ch := make(chan interface{})
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch
}
