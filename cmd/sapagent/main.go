// Command sapagent runs one production role: api, worker, migrate or offline-llm.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/sapagent/sapagent/internal/app"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/worker"
)

const usage = `usage: sapagent <command>

commands:
  api          serve the HTTP API, WebSocket relay (HTTP_ADDR)
  worker       run the Temporal worker (workflows and activities)
  migrate      apply the Postgres migrations in schemas/
  offline-llm  serve the deterministic OpenAI-compatible model (OFFLINE_LLM_ADDR)

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
		l, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			return err
		}
		log.Info("api listening", "addr", l.Addr().String())
		return app.Serve(ctx, l, deps.APIServer().Router())
	case "worker":
		deps, err := app.Open(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer deps.Close()
		w := worker.New(deps.Temporal, cfg.TaskQueue, deps.Activities())
		log.Info("worker running", "task_queue", cfg.TaskQueue, "temporal", cfg.TemporalAddress)
		return w.Run(interruptOn(ctx))
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
