// Command sapagent runs one production role: api, worker, migrate or offline-llm.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/sapagent/sapagent/internal/app"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devtoken"
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
	if len(os.Args) < 2 || isHelp(os.Args[1]) {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err := checkArgs(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "sapagent: %v\n\n%s\n", err, usage)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := config.Load()
	if err == nil {
		err = runCommand(ctx, os.Args[1], os.Args[2:], cfg, log)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sapagent:", err)
		os.Exit(1)
	}
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "help" }

// checkArgs refuses arguments a command does not take before anything starts: a mistyped
// command line must not run a server on the default ports.
func checkArgs(cmd string, args []string) error {
	switch cmd {
	case "token":
		return nil // parsed by devtoken.Run
	case "migrate", "api", "worker", "offline-llm", "rotate-secrets":
		if len(args) > 0 {
			return fmt.Errorf("%s takes no arguments (configuration comes from environment variables), got %q", cmd, args)
		}
		return nil
	case "sapsim":
		return nil // answered with where the simulator went
	default:
		return fmt.Errorf("unknown command %q", cmd)
	}
}

func runCommand(ctx context.Context, cmd string, args []string, cfg config.Config, log *slog.Logger) error {
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
		return devtoken.Run(cfg, args, os.Stdout)
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
